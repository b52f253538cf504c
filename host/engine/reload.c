/* Reload: new routes, instances and workflows for tasks not yet started. */
#include "engine/reload.h"

#include <stdlib.h>

#include "base/log.h"
#include "engine/batch.h"
#include "engine/dispatch.h"
#include "engine/load.h"
#include "engine/route.h"
#include "engine/schedule.h"
#include "engine/start_triggers.h"

int sy_engine_reload(sy_engine *e, const sy_routes *routes, sy_instance_entry *instances,
                     size_t n_instances, sy_workflow *const *workflows, size_t n_workflows,
                     void (*retired)(void *arg), void *arg)
{
    sy_retired_table *old = calloc(1, sizeof *old);
    if (!old)
        return SY_ENOMEM;
    *old = (sy_retired_table){.queues = e->instances, .n = e->n_instances, .retired = retired,
                              .arg = arg, .next = e->retired};
    for (size_t i = 0; i < old->n; i++)
        old->queues[i].retired = true;
    /* What waited for an old instance's capacity is offered again, to be
     * routed anew. */
    sy_route_free(e, true);
    e->retired = old;
    e->gen++;
    e->o.routes = routes;
    e->o.instances = instances;
    e->o.n_instances = n_instances;
    e->o.workflows = workflows;
    e->o.n_workflows = n_workflows;
    e->instances = NULL;
    e->n_instances = 0;
    sy_dispatch_init(e);
    sy_schedule_reload(e);
    sy_start_triggers_reload(e);
    for (sy_live_run *r = e->runs; r; r = r->next)
        sy_live_route(e, r);
    sy_wake_send(&e->done);
    return SY_OK;
}

uint32_t sy_engine_oldest_generation(const sy_engine *e)
{
    uint32_t oldest = e->gen;
    for (const sy_live_run *r = e->runs; r; r = r->next)
        if (r->gen < oldest)
            oldest = r->gen;
    return oldest;
}

static bool in_use(const sy_engine *e, const sy_retired_table *t)
{
    for (const sy_attempt *a = e->live; a; a = a->live_next)
        if (a->queue >= t->queues && a->queue < t->queues + t->n)
            return true;
    return false;
}

static void free_table(sy_retired_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        t->queues[i].entry->host.on_wake = NULL;
    free(t->queues);
    free(t);
}

void sy_reload_collect(sy_engine *e)
{
    for (sy_retired_table **p = &e->retired; *p;) {
        sy_retired_table *t = *p;
        if (in_use(e, t)) {
            p = &t->next;
            continue;
        }
        *p = t->next;
        void (*retired)(void *) = t->retired;
        void *arg = t->arg;
        free_table(t);
        if (retired)
            retired(arg);
    }
}

void sy_reload_free(sy_engine *e)
{
    while (e->retired) {
        sy_retired_table *t = e->retired;
        e->retired = t->next;
        free_table(t);
    }
}
