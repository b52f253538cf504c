/* Cached task results at dispatch (engine/cache.h). */
#include "engine/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/cache_put.h"
#include "engine/fenced.h"
#include "engine/input.h"
#include "engine/observe.h"
#include "engine/run.h"
#include "store/cache.h"
#include "workflow/context.h"

/* The key of task idx over its input; NULL with why in err. */
static char *render(sy_live_run *r, size_t idx, char *err, size_t err_len)
{
    const sy_task_def *d = &r->wf->tasks[idx];
    json_t *ctx = sy_engine_input_json(r, idx);
    if (!ctx)
        sy_oom("building the input of %s", d->ns);
    char *key = sy_limit_key_render(d->cache->key, ctx, r->wf, d, err, err_len);
    json_decref(ctx);
    return key;
}

bool sy_cache_try(sy_live_run *r, size_t idx, int64_t now)
{
    sy_engine *e = r->e;
    const sy_task_def *d = &r->wf->tasks[idx];
    sy_live_task *t = &r->t[idx];
    char err[300];
    char *key = render(r, idx, err, sizeof err);
    if (!key) {
        char msg[400];
        snprintf(msg, sizeof msg, "not looked up in the cache: %s", err);
        sy_live_event(r, idx, t->attempts + 1, "cache", msg);
        return false;
    }
    char *output = NULL;
    int64_t from = 0;
    /* A run retried with --no-cache runs its tasks, and puts afresh. */
    int rc = r->no_cache ? SY_ENOENT
                         : sy_store_cache_get(e->o.store, d->ns, key,
                                              now - d->cache->lifetime_ms, &output, &from);
    if (rc != SY_OK) {
        /* A read that failed may have spoilt the batch (PostgreSQL ends
         * the transaction): the turn stops, as for a write. */
        if (rc != SY_ENOENT) {
            sy_log(SY_LOG_ERROR, "store", "cannot look up the cache of %s: %s", d->ns,
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
        e->metrics.cache_misses++;
        sy_cache_keep_key(r, idx, key);
        return false;
    }
    free(key);
    char perr[256];
    json_t *out = sy_output_parse(output, strlen(output), e->o.max_context_bytes, perr,
                                  sizeof perr);
    free(output);
    /* An entry that no longer fits (max_context_bytes lowered) is a miss
     * that runs the task and replaces it. */
    if (!out) {
        e->metrics.cache_misses++;
        sy_cache_keep_key(r, idx, render(r, idx, err, sizeof err));
        return false;
    }
    /* Through Running, as an attempt goes: the same transitions, counts
     * and writes as one that ran. */
    if (!sy_live_set_state(r, idx, SY_TASK_RUNNING)) {
        json_decref(out);
        return true;
    }
    e->metrics.cache_hits++;
    t->attempts++;
    t->started = now;
    sy_live_set_state(r, idx, SY_TASK_COMPLETED);
    sy_live_set_error(t, NULL);
    if (json_object_size(out) > 0) {
        t->output = out;
        t->output_text = json_dumps(out, JSON_COMPACT);
        r->n_with_output++;
    } else {
        json_decref(out);
    }
    char msg[96];
    snprintf(msg, sizeof msg, "completed from the cache: the output of run %lld",
             (long long)from);
    sy_live_event(r, idx, t->attempts, "cached", msg);
    sy_observe_cached(e, r, idx, from);
    sy_live_task_terminal(r, idx);
    return true;
}
