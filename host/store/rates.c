/* The store's interface for rate limits (store/rates.h): the token
 * bucket's arithmetic, and the arguments checked once here for both
 * implementations. */
#include <string.h>

#include "store/driver.h"
#include "store/rates.h"

/* Upper bounds of a claim: the workflow's (workflow.h), so that every
 * product below fits in 63 bits (1e6 tokens * 8.64e7 units). */
#define RATE_MAX 1000000
#define INTERVAL_MAX 86400000

/* Brings bucket b (fresh: never seen, full) up to `now` under claim c;
 * the units of its level that came after `now` (owed to a later clock),
 * which a take at `now` may not use. */
static int64_t bring_up_to_date(sy_rate_bucket *b, bool fresh, const sy_rate_claim *c,
                                int64_t now)
{
    int64_t unit = c->interval_ms, full = c->burst * unit;
    if (fresh) {
        *b = (sy_rate_bucket){full, now, unit};
    } else if (b->interval_ms != unit && b->interval_ms > 0) {
        /* Whole tokens, then the part of one, each product in range. */
        int64_t old = b->interval_ms;
        b->level = (b->level / old) * unit + (b->level % old) * unit / old;
        b->interval_ms = unit;
    }
    b->interval_ms = unit;
    if (b->level > full || b->level < 0)
        b->level = b->level < 0 ? 0 : full;
    if (now > b->refilled) {
        int64_t elapsed = now - b->refilled;
        /* Past the time that fills it from empty: full (and no overflow). */
        if (elapsed >= full / c->rate + 1)
            b->level = full;
        else
            b->level = b->level + elapsed * c->rate > full ? full : b->level + elapsed * c->rate;
        b->refilled = now;
    }
    /* A clock behind the bucket's (another host read its clock later but
     * took first): the tokens that came after `now` are not this take's,
     * so that no window of the starts' recorded times sees more than the
     * bound.  (A level capped at full may have lost some of those: this
     * errs on the side of fewer.) */
    int64_t ahead = b->refilled - now;
    return ahead <= 0 ? 0 : ahead >= full / c->rate + 1 ? full : ahead * c->rate;
}

bool sy_rate_bucket_take(sy_rate_bucket *b, bool fresh, const sy_rate_claim *c, int64_t now,
                         int64_t *wait_ms)
{
    int64_t owed = bring_up_to_date(b, fresh, c, now), unit = c->interval_ms;
    if (b->level - owed >= unit) {
        b->level -= unit;
        return true;
    }
    *wait_ms = (unit - (b->level - owed) + c->rate - 1) / c->rate;
    return false;
}

bool sy_rate_bucket_at(const sy_rate_bucket_row *row, int64_t now, int64_t *tokens,
                       int64_t *next_ms)
{
    if (row->rate < 1 || row->rate > RATE_MAX || row->burst < 1 || row->burst > RATE_MAX ||
        row->state.interval_ms < 1 || row->state.interval_ms > INTERVAL_MAX)
        return false;
    sy_rate_claim c = {row->key, row->rate, row->state.interval_ms, row->burst};
    sy_rate_bucket b = row->state;
    int64_t owed = bring_up_to_date(&b, false, &c, now), unit = c.interval_ms;
    int64_t level = b.level - owed < 0 ? 0 : b.level - owed;
    *tokens = level / unit;
    /* The next whole token: the units it lacks, at `rate` a millisecond;
     * none while full. */
    *next_ms = level >= c.burst * unit ? -1
                                       : ((*tokens + 1) * unit - level + c.rate - 1) / c.rate;
    return true;
}

int sy_store_take_rates(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                        const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                        size_t *empty, int64_t *wait_ms)
{
    if (!s)
        return SY_EINVAL;
    if (!fence || !fence->owner || run_id <= 0 || (n && !c) || !taken || !empty || !wait_ms ||
        n > SY_RATE_CLAIMS_MAX)
        return sy_store_fail(s, SY_EINVAL, "take_rates: a fence with its owner, a run and at "
                                           "most %d claims", SY_RATE_CLAIMS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!c[i].key || !c[i].key[0] || strlen(c[i].key) > SY_SLOT_KEY_MAX ||
            c[i].rate < 1 || c[i].rate > RATE_MAX || c[i].interval_ms < 1 ||
            c[i].interval_ms > INTERVAL_MAX || c[i].burst < 1 || c[i].burst > RATE_MAX)
            return sy_store_fail(s, SY_EINVAL, "take_rates: claim %zu: a key of 1 to %d bytes, "
                                               "a rate and a burst of 1 to %d, an interval of "
                                               "1 to %d ms",
                                 i, SY_SLOT_KEY_MAX, RATE_MAX, INTERVAL_MAX);
        for (size_t k = 0; k < i; k++)
            if (strcmp(c[k].key, c[i].key) == 0)
                return sy_store_fail(s, SY_EINVAL, "take_rates: key '%s' twice", c[i].key);
    }
    *taken = n == 0;
    if (n == 0)
        return SY_OK;
    return s->ops->take_rates(s, fence, run_id, c, n, now, taken, empty, wait_ms);
}

int sy_store_rate_bucket(sy_store *s, const char *key, sy_rate_bucket *b, bool *found)
{
    if (!s)
        return SY_EINVAL;
    if (!key || !b || !found)
        return sy_store_fail(s, SY_EINVAL, "rate_bucket: a key, a bucket and found");
    return s->ops->rate_bucket(s, key, b, found);
}

int sy_store_list_rate_buckets(sy_store *s, sy_rate_bucket_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!cb)
        return sy_store_fail(s, SY_EINVAL, "list_rate_buckets: a callback");
    return s->ops->list_rate_buckets(s, cb, arg);
}
