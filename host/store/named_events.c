/* The argument checks of store/named_events.h, then the implementation's
 * table (store/named_driver.h). */
#include "store/named_events.h"

#include "store/driver.h"
#include "store/named_driver.h"

#define NEED(s, cond, fn, what)                                               \
    do {                                                                      \
        if (!(cond))                                                          \
            return sy_store_fail((s), SY_EINVAL, "%s: %s", (fn), (what));     \
    } while (0)

int sy_store_emit(sy_store *s, const char *name, const char *key, const char *data,
                  int64_t window_ms, int64_t now, int64_t *id, bool *duplicate)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, name && *name && data && id && duplicate, "emit",
         "name, data, id and duplicate are required");
    NEED(s, window_ms >= 0, "emit", "the window is negative");
    *id = 0;
    *duplicate = false;
    return s->ops->named->emit(s, name, key, data, window_ms, now, id, duplicate);
}

int sy_store_list_named_events(sy_store *s, const char *name, size_t limit,
                               sy_named_event_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "list_named_events", "the callback is required");
    return s->ops->named->list(s, name, limit, cb, arg);
}

int sy_store_trigger_open(sy_store *s, const char *key, int64_t now, sy_trigger_record *out)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, key && out, "trigger_open", "key and out are required");
    *out = (sy_trigger_record){0};
    return s->ops->named->trigger_open(s, key, now, out);
}

int sy_store_trigger_events(sy_store *s, const char *key, const char *name, int64_t since,
                            size_t limit, sy_named_event_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, key && name && cb, "trigger_events", "key, name and cb are required");
    return s->ops->named->trigger_events(s, key, name, since, limit, cb, arg);
}

int sy_store_trigger_runs(sy_store *s, const char *key, const char *tenant,
                          const char *workflow, unsigned states, int64_t since,
                          size_t limit, int (*cb)(void *arg, const sy_finished_run *r),
                          void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, key && tenant && workflow && cb, "trigger_runs",
         "key, tenant, workflow and cb are required");
    return s->ops->named->trigger_runs(s, key, tenant, workflow, states, since, limit, cb,
                                       arg);
}

int sy_store_fire(sy_store *s, const sy_trigger_firing *f, int64_t now,
                  sy_fire_outcome *outcome, int64_t *run_id)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, f && f->key && outcome && (f->items || !f->n_items), "fire",
         "the firing, its key and outcome are required");
    bool consumes = false;
    for (size_t i = 0; i < f->n_items; i++) {
        NEED(s, f->items[i].source == SY_ITEM_EVENT || f->items[i].source == SY_ITEM_RUN,
             "fire", "an item of an unknown source");
        consumes |= !f->items[i].reason;
    }
    NEED(s, !consumes || (f->hash && f->tenant && f->workflow), "fire",
         "a firing that consumes items needs its run's hash, tenant and workflow");
    NEED(s, !f->n_tasks || (f->task_ids && f->ns), "fire", "task_ids and ns are required");
    for (size_t i = 0; i < f->n_tasks; i++)
        NEED(s, f->task_ids[i] && f->ns[i], "fire", "a task id or namespace is NULL");
    int64_t id = 0;
    *outcome = SY_FIRE_TAKEN;
    int rc = s->ops->named->fire(s, f, now, outcome, &id);
    if (run_id)
        *run_id = rc == SY_OK && *outcome == SY_FIRE_STARTED ? id : 0;
    return rc;
}

int sy_store_trigger_passed(sy_store *s, const char *key, size_t limit,
                            int (*cb)(void *arg, sy_item_source source, int64_t id,
                                      const char *reason, int64_t at),
                            void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, key && cb, "trigger_passed", "key and cb are required");
    return s->ops->named->trigger_passed(s, key, limit, cb, arg);
}

int sy_store_event_settlements(sy_store *s, int64_t from, int64_t to,
                               sy_event_settlement_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    NEED(s, cb, "event_settlements", "the callback is required");
    if (from > to)
        return SY_OK;
    return s->ops->named->settlements(s, from, to, cb, arg);
}
