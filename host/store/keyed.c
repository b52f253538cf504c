/* Runs recorded under a key (store/keyed.h) and cached results
 * (store/cache.h): the arguments checked once here, for both
 * implementations. */
#include <string.h>

#include "store/driver.h"

int sy_store_cache_put(sy_store *s, const char *ns, const char *key, const char *output,
                       int64_t run_id, uint32_t idx, int64_t now)
{
    if (!s)
        return SY_EINVAL;
    if (!ns || !key || !*key || strlen(key) > SY_STORE_CACHE_KEY_MAX || !output)
        return sy_store_fail(s, SY_EINVAL, "cache_put: a namespace, a key of 1 to %d bytes "
                             "and an output are required", SY_STORE_CACHE_KEY_MAX);
    return s->ops->cache_put(s, ns, key, output, run_id, idx, now);
}

int sy_store_cache_get(sy_store *s, const char *ns, const char *key, int64_t since,
                       char **output, int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    if (!ns || !key || !output)
        return sy_store_fail(s, SY_EINVAL, "cache_get: a namespace, a key and output are "
                             "required");
    *output = NULL;
    int64_t id = 0;
    int rc = s->ops->cache_get(s, ns, key, since, output, &id);
    if (run_id)
        *run_id = rc == SY_OK ? id : 0;
    return rc;
}

static int check(sy_store *s, const char *fn, const sy_store_new_run *r)
{
    if (!r || !r->hash || !r->tenant || !r->workflow || r->n_tasks > UINT32_MAX ||
        (r->n_tasks && (!r->task_ids || !r->ns)))
        return sy_store_fail(s, SY_EINVAL, "%s: hash, tenant, workflow and the tasks' names "
                             "are required", fn);
    for (size_t i = 0; i < r->n_tasks; i++)
        if (!r->task_ids[i] || !r->ns[i])
            return sy_store_fail(s, SY_EINVAL, "%s: task %zu has no name", fn, i);
    return SY_OK;
}

int sy_store_create_run_keyed(sy_store *s, const sy_store_new_run *r, const char *key,
                              int64_t window_ms, int64_t now, int64_t *run_id, bool *created)
{
    if (!s)
        return SY_EINVAL;
    int rc = check(s, "create_run_keyed", r);
    if (rc != SY_OK)
        return rc;
    if (!key || !*key || strlen(key) > SY_STORE_KEY_MAX || window_ms < 0 || !run_id || !created)
        return sy_store_fail(s, SY_EINVAL, "create_run_keyed: a key of 1 to %d bytes, a window "
                             ">= 0, run_id and created are required", SY_STORE_KEY_MAX);
    *run_id = 0;
    *created = false;
    return s->ops->create_run_keyed(s, r, key, window_ms, now, run_id, created);
}

int sy_store_tick_run(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                      bool *claimed, int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    if (!tenant || !workflow || !claimed || !run_id)
        return sy_store_fail(s, SY_EINVAL, "tick_run: tenant, workflow, claimed and run_id "
                             "are required");
    *claimed = false;
    *run_id = 0;
    return s->ops->tick_run(s, tenant, workflow, tick, claimed, run_id);
}

int sy_store_backfill_tick(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                           bool *fired, int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    int rc = check(s, "backfill_tick", r);
    if (rc != SY_OK)
        return rc;
    if (!fired || !run_id)
        return sy_store_fail(s, SY_EINVAL, "backfill_tick: fired and run_id are required");
    *fired = false;
    *run_id = 0;
    return s->ops->backfill_tick(s, r, tick, now, fired, run_id);
}
