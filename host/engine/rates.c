/* A task's rate limits at dispatch (engine/rates.h). */
#include "engine/rates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/fenced.h"
#include "store/rates.h"

void sy_rate_waits_clear(sy_rate_waits *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i].key);
    w->n = 0;
}

void sy_rate_waits_free(sy_rate_waits *w)
{
    sy_rate_waits_clear(w);
    free(w->v);
    *w = (sy_rate_waits){0};
}

/* When a task that found claim c's bucket empty, its next token due at
 * `due`, is offered again: after every task told before it in this turn,
 * one token period (rounded up) each. */
static int64_t queue_behind(sy_rate_waits *w, const sy_rate_claim *c,
                            int64_t due)
{
    for (size_t i = 0; i < w->n; i++) {
        if (strcmp(w->v[i].key, c->key) != 0)
            continue;
        if (w->v[i].due >= due)
            due = w->v[i].due + (c->interval_ms + c->rate - 1) / c->rate;
        w->v[i].due = due;
        return due;
    }
    w->v = sy_engine_grow(w->v, &w->cap, w->n + 1, sizeof *w->v);
    w->v[w->n++] = (struct sy_rate_wait){sy_xstrdup(c->key), due};
    return due;
}

int sy_rates_take(sy_live_run *r, size_t idx, int64_t now, const sy_rate_config *named,
                  size_t n_named, sy_rate_waits *waits, char *why, size_t why_len,
                  int64_t *retry_at)
{
    sy_engine *e = r->e;
    const sy_task_def *def = sy_live_def(r, idx);
    const sy_flow *f = def->flow;
    if (!f || !f->n_rates)
        return 1;
    char *keys[SY_RATE_CLAIMS_MAX];
    sy_rate_claim c[SY_RATE_CLAIMS_MAX];
    size_t n = 0;
    int result = 1;
    for (size_t i = 0; i < f->n_rates && i < SY_RATE_CLAIMS_MAX; i++) {
        const sy_rate_limit *rl = &f->rates[i];
        const sy_rate_config *nr = rl->name ? sy_config_rate_in(named, n_named, rl->name) : NULL;
        if (rl->name && !nr) {
            sy_log(SY_LOG_WARN, "engine", "%s: rate limit '%s' is not defined any more; not "
                   "limited", def->ns, rl->name);
            continue;
        }
        char err[512];
        char *key = rl->key ? sy_limit_key_render(rl->key, r->context, r->wf, def, err,
                                                  sizeof err)
                            : sy_xstrdup("");
        if (!key) {
            snprintf(why, why_len, "%s", err);
            result = -1;
            break;
        }
        /* A named one's buckets are its own ("rate:@crm", "rate:@crm:acme"),
         * never a workflow's key that happens to read the same. */
        if (nr)
            keys[n] = rl->key ? sy_xasprintf("rate:@%s:%s", nr->name, key)
                              : sy_xasprintf("rate:@%s", nr->name);
        else
            keys[n] = sy_xasprintf("rate:%s", key);
        free(key);
        c[n] = nr ? (sy_rate_claim){keys[n], nr->rate, nr->interval_ms, nr->burst}
                  : (sy_rate_claim){keys[n], rl->rate, rl->interval_ms, rl->burst};
        n++;
    }
    if (result == 1 && n > 0) {
        bool taken = false;
        size_t empty = 0;
        int64_t wait = 0;
        int rc = sy_store_take_rates(e->o.store, &r->fence, r->id, c, n, now, &taken, &empty,
                                     &wait);
        if (rc != SY_OK && sy_fenced_refused(r, rc)) {
            snprintf(why, why_len, "the run is held by another host");
            *retry_at = now + SY_RATES_BUSY_RETRY_MS;
            result = 0;
        } else if (rc != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot take rate tokens: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
            snprintf(why, why_len, "the store failed");
            result = -1;
        } else if (!taken && wait < 0) {
            /* Being taken by another host's batch, which ends within
             * milliseconds: offered again then, not Waiting, as a key
             * being taken (engine/limits.h, result 4). */
            *retry_at = now + SY_RATES_BUSY_RETRY_MS;
            result = 4;
        } else if (!taken) {
            *retry_at = queue_behind(waits, &c[empty], now + wait);
            snprintf(why, why_len, "waiting for %s (next token in %lld ms)", c[empty].key,
                     (long long)(*retry_at - now));
            result = 0;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    return result;
}
