/* Cached task results: the keys misses rendered, kept for the put once
 * the task is written Completed (engine/cache_put.h). */
#include "engine/cache_put.h"

#include <stdlib.h>

#include "base/log.h"
#include "base/util.h"
#include "store/cache.h"

/* Kept for the put: the key a miss rendered. */
void sy_cache_keep_key(sy_live_run *r, size_t idx, char *key)
{
    if (!r->cache_keys && !(r->cache_keys = calloc(r->wf->n_tasks, sizeof *r->cache_keys)))
        sy_oom("keeping the cache keys of run %lld", (long long)r->id);
    free(r->cache_keys[idx]);
    r->cache_keys[idx] = key;
}

void sy_cache_put_completed(sy_live_run *r, size_t idx, int64_t now)
{
    if (!r->cache_keys || idx >= r->wf->n_tasks || !r->cache_keys[idx])
        return;
    char *key = r->cache_keys[idx];
    r->cache_keys[idx] = NULL;
    const sy_live_task *t = &r->t[idx];
    const char *ns = r->wf->tasks[idx].ns;
    if (sy_store_cache_put(r->e->o.store, ns, key, t->output_text ? t->output_text : "{}",
                           r->id, (uint32_t)idx, now) != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "cannot keep the output of %s in the cache: %s", ns,
               sy_store_errmsg(r->e->o.store));
        r->e->fatal = true;
    }
    free(key);
}

void sy_cache_free(sy_live_run *r)
{
    if (!r->cache_keys)
        return;
    for (size_t i = 0; i < r->wf->n_tasks; i++)
        free(r->cache_keys[i]);
    free(r->cache_keys);
    r->cache_keys = NULL;
}
