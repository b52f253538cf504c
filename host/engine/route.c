/* The engine's routes: each rule's instances in order, and what waits for
 * one of them to free capacity. */
#include "engine/route.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/batch.h"
#include "executor/call_record.h"

static sy_instance_queue *queue_named(sy_engine *e, const char *name)
{
    for (size_t i = 0; i < e->n_instances; i++)
        if (strcmp(e->instances[i].entry->name, name) == 0)
            return &e->instances[i];
    return NULL;
}

static void build(sy_engine *e, sy_route_queue *rq, const char *const *to, size_t n)
{
    rq->q = sy_xmalloc((n ? n : 1) * sizeof *rq->q);
    rq->first = to[0];
    /* An instance that does not exist is left out; a route left with none
     * fails its tasks with the first name (dispatch.c). */
    for (size_t k = 0; k < n; k++) {
        sy_instance_queue *q = queue_named(e, to[k]);
        if (q)
            rq->q[rq->n++] = q;
    }
}

void sy_route_init(sy_engine *e)
{
    static const sy_routes none;
    const sy_routes *routes = e->o.routes ? e->o.routes : &none;
    e->n_routes = routes->n + 1;
    e->routes = sy_xmalloc(e->n_routes * sizeof *e->routes);
    memset(e->routes, 0, e->n_routes * sizeof *e->routes);
    for (size_t i = 0; i <= routes->n; i++) {
        size_t n = 0;
        const char *const *to = sy_routes_targets(routes, i < routes->n ? &routes->rules[i] : NULL,
                                                  &n);
        build(e, &e->routes[i], to, n);
    }
}

void sy_route_free(sy_engine *e, bool offer)
{
    for (size_t i = 0; i < e->n_routes; i++) {
        sy_route_queue *rq = &e->routes[i];
        for (size_t j = 0; offer && j < rq->n_waiting; j++)
            sy_ready_push(e, rq->waiting[j].run, rq->waiting[j].idx);
        free(rq->waiting);
        free(rq->q);
    }
    free(e->routes);
    e->routes = NULL;
    e->n_routes = 0;
}

/* Points task t at the first instance of its route, unless an attempt of
 * it is in flight (it keeps the instance it runs on).  A task that ended
 * keeps the name it is recorded with: a reload may come between its
 * completion and the write that records it. */
static void point_at_first(sy_live_task *t)
{
    if (t->current)
        return;
    t->queue = t->route->n ? t->route->q[0] : NULL;
    if (!sy_task_state_terminal(t->state) || !t->instance_name)
        t->instance_name = t->route->first;
}

void sy_route_task(sy_engine *e, sy_live_run *r, size_t idx)
{
    static const sy_routes none;
    const sy_routes *routes = e->o.routes ? e->o.routes : &none;
    const sy_route_rule *win = sy_routes_resolve(routes, sy_live_def(r, idx)->ns, NULL, NULL);
    size_t k = win ? (size_t)(win - routes->rules) : routes->n;
    sy_live_task *t = &r->t[idx];
    t->route = &e->routes[k];
    point_at_first(t);
}

void sy_route_copy(sy_live_run *r, size_t slot, size_t owner)
{
    sy_live_task *t = &r->t[slot];
    const sy_live_task *o = &r->t[owner];
    t->route = o->route;
    point_at_first(t);
}

int64_t sy_route_room(sy_instance_queue *q)
{
    if (atomic_load_explicit(&q->entry->unhealthy, memory_order_relaxed))
        return 0; /* the watchdog caught it stuck: no new task */
    if (q->cap < 0) {
        sy_call_begin(q->entry, "capacity", NULL, 0, 0, 0);
        q->cap = q->entry->desc->capacity(q->entry->inst);
        sy_call_end();
        if (q->cap < 0)
            q->cap = 0;
    }
    if (q->cap == SY_CAPACITY_UNLIMITED)
        return INT64_MAX;
    return q->reserved < q->cap ? q->cap - q->reserved : 0;
}

void sy_route_park(sy_live_run *r, size_t idx)
{
    sy_route_queue *rq = r->t[idx].route;
    rq->waiting = sy_engine_grow(rq->waiting, &rq->cap_waiting, rq->n_waiting + 1,
                                 sizeof *rq->waiting);
    rq->waiting[rq->n_waiting++] = (sy_task_ref){r, idx};
}

void sy_route_take_wakes(sy_engine *e)
{
    for (size_t i = 0; i < e->n_routes; i++) {
        sy_route_queue *rq = &e->routes[i];
        bool woke = false;
        for (size_t k = 0; k < rq->n && !woke; k++)
            woke = rq->q[k]->woke;
        if (!woke)
            continue;
        for (size_t j = 0; j < rq->n_waiting; j++)
            sy_ready_push(e, rq->waiting[j].run, rq->waiting[j].idx);
        rq->n_waiting = 0;
    }
}

void sy_route_forget_run(sy_engine *e, const sy_live_run *r)
{
    for (size_t i = 0; i < e->n_routes; i++) {
        sy_route_queue *rq = &e->routes[i];
        size_t keep = 0;
        for (size_t j = 0; j < rq->n_waiting; j++)
            if (rq->waiting[j].run != r)
                rq->waiting[keep++] = rq->waiting[j];
        rq->n_waiting = keep;
    }
}
