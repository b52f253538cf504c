/*
 * store/postgres/rates.c -- rate limits' token buckets (store/rates.h) in
 * the PostgreSQL store, where several hosts take tokens at once.
 *
 * Each key is first locked for the batch's transaction with
 * pg_try_advisory_xact_lock (class 21339; 21338 is the slots'): a key
 * another host's open batch holds counts as empty for this turn, so no
 * host waits on another's lock.  The read that follows takes a new
 * snapshot (READ COMMITTED), so it sees every take committed by a batch
 * that held the lock before, and it checks the run's claim FOR SHARE,
 * which then holds until the commit.  The arithmetic is C's
 * (sy_rate_bucket_take), and each write is a compare-and-set on the state
 * read: a batch replayed on a new connection (postgres/journal.c) that
 * finds a bucket moved changes no row, and the replay fails rather than
 * taking a token the bucket no longer has.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"

const char *const sy_pg_rate_sql[SY_PG_COUNT - SY_PG_RATE_FIRST] = {
    [SY_PG_RATE_LOCK - SY_PG_RATE_FIRST] =
        "SELECT k.i, pg_try_advisory_xact_lock(21339, hashtext(k.key))"
        " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i) ORDER BY k.key",
    [SY_PG_RATE_READ - SY_PG_RATE_FIRST] =
        "SELECT k.i, b.key IS NOT NULL, b.level, b.refilled, b.interval_ms,"
        SY_PG_FENCE("$2::bigint", "$3", "$4::bigint")
        " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i)"
        " LEFT JOIN rate_buckets b ON b.key = k.key ORDER BY k.i",
    [SY_PG_RATE_WRITE - SY_PG_RATE_FIRST] =
        "INSERT INTO rate_buckets (key, level, refilled, interval_ms, rate, burst)"
        " VALUES ($1, $2::bigint, $3::bigint, $4::bigint, $8::bigint, $9::bigint)"
        " ON CONFLICT (key) DO UPDATE SET level = excluded.level,"
        " refilled = excluded.refilled, interval_ms = excluded.interval_ms,"
        " rate = excluded.rate, burst = excluded.burst"
        " WHERE rate_buckets.level = $5::bigint AND rate_buckets.refilled = $6::bigint"
        " AND rate_buckets.interval_ms = $7::bigint",
};

/* The buckets of the keys, in their order, into b (found[i] whether key
 * i has one), and whether `fence` holds run `run_id`. */
static int read_buckets(sy_store_pg *q, const char *keys, int64_t run_id,
                        const sy_store_fence *fence, size_t n, sy_rate_bucket *b,
                        bool *found, bool *holds)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, keys);
    sy_pg_int(&p, 2, run_id);
    sy_pg_text(&p, 3, fence->owner);
    sy_pg_int(&p, 4, fence->epoch);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RATE_READ, &p, &r, "read rate buckets");
    *holds = false;
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        size_t k = (size_t)sy_pg_col_int(r, i, 0) - 1;
        const char *has = sy_pg_col(r, i, 1), *fenced = sy_pg_col(r, i, 5);
        if (k >= n)
            continue;
        found[k] = has && has[0] == 't';
        b[k] = (sy_rate_bucket){sy_pg_col_int(r, i, 2), sy_pg_col_int(r, i, 3),
                                sy_pg_col_int(r, i, 4)};
        *holds = fenced && fenced[0] == 't';
    }
    PQclear(r);
    return status;
}

/* Writes claim c's bucket's new state `b` over `was` (found: there was a
 * row), with c's rate and burst for a listing. */
static int write_bucket(sy_store_pg *q, const sy_rate_claim *c, const sy_rate_bucket *b,
                        const sy_rate_bucket *was, bool found)
{
    const char *key = c->key;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, b->level);
    sy_pg_int(&p, 3, b->refilled);
    sy_pg_int(&p, 4, b->interval_ms);
    if (found) {
        sy_pg_int(&p, 5, was->level);
        sy_pg_int(&p, 6, was->refilled);
        sy_pg_int(&p, 7, was->interval_ms);
    } else {
        sy_pg_text(&p, 5, NULL);
        sy_pg_text(&p, 6, NULL);
        sy_pg_text(&p, 7, NULL);
    }
    sy_pg_int(&p, 8, c->rate);
    sy_pg_int(&p, 9, c->burst);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RATE_WRITE, &p, &r, "write a rate bucket");
    if (status == SY_OK && sy_pg_changes(r) != 1)
        status = sy_store_fail(&q->base, SY_EBUSY, "%s: the bucket of '%s' changed under its "
                               "lock", q->where, key);
    PQclear(r);
    return status;
}

int sy_pg_take_rates(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                     const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                     size_t *empty, int64_t *wait_ms)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "take_rates: no batch is open");
    *taken = false;
    const char *key[SY_RATE_CLAIMS_MAX];
    for (size_t i = 0; i < n; i++)
        key[i] = c[i].key;
    char *keys = sy_pg_text_array(key, n);
    if (!keys)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    size_t busy = n;
    int status = sy_pg_lock_keys(q, SY_PG_RATE_LOCK, keys, n, &busy);
    sy_rate_bucket b[SY_RATE_CLAIMS_MAX] = {{0}}, was[SY_RATE_CLAIMS_MAX];
    bool found[SY_RATE_CLAIMS_MAX] = {false}, holds = false, all = status == SY_OK;
    if (status == SY_OK && busy < n) {
        /* Another host is taking it this moment: empty for this turn. */
        *empty = busy;
        *wait_ms = -1;
        all = false;
    } else if (status == SY_OK) {
        status = read_buckets(q, keys, run_id, fence, n, b, found, &holds);
        if (status == SY_OK && !holds) {
            status = sy_pg_fenced(q, run_id, fence, SY_PG_NO_TASK, 0, "take_rates");
            if (status == SY_ENOENT || status == SY_OK)
                status = sy_store_fail(s, SY_STORE_EFENCED, "take_rates: run %lld is not "
                                       "held by this claim", (long long)run_id);
        }
    }
    for (size_t i = 0; status == SY_OK && all && i < n; i++) {
        was[i] = b[i];
        if (!sy_rate_bucket_take(&b[i], !found[i], &c[i], now, wait_ms)) {
            *empty = i;
            all = false;
        }
    }
    for (size_t i = 0; status == SY_OK && all && i < n; i++)
        status = write_bucket(q, &c[i], &b[i], &was[i], found[i]);
    *taken = status == SY_OK && all;
    free(keys);
    return status;
}

int sy_pg_rate_bucket(sy_store *s, const char *key, sy_rate_bucket *b, bool *found)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    PGresult *r;
    int status = sy_pg_query(q, "SELECT level, refilled, interval_ms FROM rate_buckets"
                             " WHERE key = $1", &p, &r, "read a rate bucket");
    *found = status == SY_OK && PQntuples(r) == 1;
    if (*found)
        *b = (sy_rate_bucket){sy_pg_col_int(r, 0, 0), sy_pg_col_int(r, 0, 1),
                              sy_pg_col_int(r, 0, 2)};
    PQclear(r);
    return status;
}

int sy_pg_list_rate_buckets(sy_store *s, sy_rate_bucket_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    PGresult *r;
    int status = sy_pg_query(q, "SELECT key, level, refilled, interval_ms, rate, burst"
                             " FROM rate_buckets ORDER BY key COLLATE \"C\"", &p, &r,
                             "list the rate buckets");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_rate_bucket_row b = {
            sy_pg_col(r, i, 0),
            {sy_pg_col_int(r, i, 1), sy_pg_col_int(r, i, 2), sy_pg_col_int(r, i, 3)},
            sy_pg_col_int(r, i, 4), sy_pg_col_int(r, i, 5)};
        if (b.key && cb(arg, &b) != 0)
            break;
    }
    PQclear(r);
    return status;
}
