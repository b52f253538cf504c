/* State changes told to an observer once written (engine/observe.h). */
#include "engine/observe.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

typedef struct sy_observed {
    int64_t run_id;
    char *workflow, *task, *error;  /* owned */
    char *waiting_for;              /* owned: the task's, while Waiting */
    int64_t element;
    int state;                      /* sy_task_state, or sy_run_state with !task */
    uint32_t attempt;
    int64_t cached_from;            /* 0: a state change */
} sy_observed;

struct sy_observe {
    void (*fn)(void *arg, const sy_engine_event *ev);
    void *arg;
    sy_observed *v;
    size_t n, cap;
};

void sy_engine_observe(sy_engine *e, void (*fn)(void *arg, const sy_engine_event *ev),
                       void *arg)
{
    if (!fn) {
        sy_observe_free(e);
        return;
    }
    if (!e->observe) {
        e->observe = sy_xmalloc(sizeof *e->observe);
        memset(e->observe, 0, sizeof *e->observe);
    }
    e->observe->fn = fn;
    e->observe->arg = arg;
}

static sy_observed *note(sy_engine *e, const sy_live_run *r)
{
    struct sy_observe *o = e->observe;
    /* Not sy_engine_grow: batch.c calls here, and files never call each
     * other both ways. */
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        o->v = realloc(o->v, cap * sizeof *o->v);
        if (!o->v)
            sy_oom("keeping the turn's observations");
        o->cap = cap;
    }
    sy_observed *ev = &o->v[o->n++];
    memset(ev, 0, sizeof *ev);
    ev->run_id = r->id;
    ev->workflow = sy_xstrdup(r->wf->name);
    ev->element = -1;
    return ev;
}

void sy_observe_task(sy_engine *e, const sy_live_run *r, size_t idx)
{
    if (!e->observe)
        return;
    const sy_live_task *t = &r->t[idx];
    sy_observed *ev = note(e, r);
    ev->task = sy_xstrdup(sy_live_def(r, idx)->id);
    if (sy_live_is_slot(r, idx))
        ev->element = t->elem;
    ev->state = (int)t->state;
    ev->attempt = t->attempts;
    ev->error = t->error && sy_task_state_terminal(t->state) ? sy_xstrdup(t->error) : NULL;
    ev->waiting_for = t->waiting_for ? sy_xstrdup(t->waiting_for) : NULL;
}

void sy_observe_cached(sy_engine *e, const sy_live_run *r, size_t idx, int64_t from)
{
    if (!e->observe)
        return;
    sy_observe_task(e, r, idx);
    /* A hit always names its run; 0 stays "a state change". */
    e->observe->v[e->observe->n - 1].cached_from = from > 0 ? from : -1;
}

void sy_observe_run(sy_engine *e, const sy_live_run *r)
{
    if (!e->observe)
        return;
    sy_observed *ev = note(e, r);
    ev->state = (int)r->state;
    ev->error = r->error ? sy_xstrdup(r->error) : NULL;
}

void sy_observe_trigger(sy_engine *e, int64_t run_id, const char *workflow,
                        const char *trigger)
{
    if (!e->observe)
        return;
    sy_engine_event ev = {.run_id = run_id, .workflow = workflow, .element = -1,
                          .state = sy_run_state_name(SY_RUN_PENDING), .trigger = trigger};
    e->observe->fn(e->observe->arg, &ev);
}

static void clear(struct sy_observe *o, bool tell)
{
    for (size_t i = 0; i < o->n; i++) {
        sy_observed *v = &o->v[i];
        if (tell) {
            sy_engine_event ev = {
                .run_id = v->run_id,
                .workflow = v->workflow,
                .task = v->task,
                .element = v->element,
                .state = v->task ? sy_task_state_name((sy_task_state)v->state)
                                 : sy_run_state_name((sy_run_state)v->state),
                .attempt = v->attempt,
                .error = v->error,
                .waiting_for = v->waiting_for,
                .cached_from = v->cached_from,
            };
            o->fn(o->arg, &ev);
        }
        free(v->workflow);
        free(v->task);
        free(v->error);
        free(v->waiting_for);
    }
    o->n = 0;
}

void sy_observe_flush(sy_engine *e)
{
    if (e->observe && e->observe->n)
        clear(e->observe, true);
}

void sy_observe_discard(sy_engine *e)
{
    if (e->observe)
        clear(e->observe, false);
}

void sy_observe_free(sy_engine *e)
{
    if (!e->observe)
        return;
    clear(e->observe, false);
    free(e->observe->v);
    free(e->observe);
    e->observe = NULL;
}
