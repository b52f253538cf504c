/* Server-sent events of task and run state changes: the engine's
 * observer (engine/observe.h) is set while at least one client listens,
 * and each change is queued to every client that wants its run.  Named
 * events (admin/named_feed.h) go to the clients of every run. */
#include "admin/api.h"
#include "admin/named_feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEPALIVE_MS 15000

typedef struct sub {
    sy_admin_stream *s;
    int64_t run_id;             /* 0: every run */
    struct sub *next;
} sub;

struct sy_admin_events {
    sy_admin *admin;
    sub *subs;
    uv_timer_t *keepalive;      /* owned while there are subscribers */
    sy_admin_named_feed *named; /* owned while there are subscribers */
    uint64_t seq;               /* the id of the last event sent */
};

/* Queues stream event `kind` with `data` (JSON text: no raw newline, so
 * one data: line carries it) to every client of run_id (0: of every run
 * only). */
static void send_all(struct sy_admin_events *E, const char *kind, int64_t run_id,
                     const char *data)
{
    E->seq++;
    size_t cap = strlen(data) + 64;
    char *msg = malloc(cap);
    int n = msg ? snprintf(msg, cap, "id: %llu\nevent: %s\ndata: %s\n\n",
                           (unsigned long long)E->seq, kind, data)
                : -1;
    for (sub *s = E->subs; n > 0 && s; s = s->next)
        if (!s->run_id || s->run_id == run_id)
            sy_admin_stream_write(s->s, msg, (size_t)n);
    free(msg);
}

static void on_event(void *arg, const sy_engine_event *ev)
{
    struct sy_admin_events *E = arg;
    json_t *o = json_pack("{s:I, s:s, s:s?, s:s, s:s?}", "run_id", (json_int_t)ev->run_id,
                          "workflow", ev->workflow, "task", ev->task, "state", ev->state,
                          "error", ev->error);
    if (ev->task)
        json_object_set_new(o, "attempt", json_integer(ev->attempt));
    if (ev->element >= 0)
        json_object_set_new(o, "element", json_integer(ev->element));
    if (ev->trigger)
        json_object_set_new(o, "trigger", json_string(ev->trigger));
    if (ev->waiting_for)
        json_object_set_new(o, "waiting_for", json_string(ev->waiting_for));
    if (ev->cached_from)
        json_object_set_new(o, "from_run", json_integer(ev->cached_from));
    char *data = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!data)
        return;
    send_all(E, ev->trigger ? "trigger" : ev->cached_from ? "cached" : ev->task ? "task" : "run",
             ev->run_id, data);
    free(data);
}

static void on_named(void *arg, const char *json)
{
    send_all(arg, "named", 0, json);
}

void sy_admin_events_named_soon(sy_admin *a)
{
    if (a->events)
        sy_admin_named_feed_soon(a->events->named);
}

static void on_keepalive(uv_timer_t *t)
{
    struct sy_admin_events *E = t->data;
    /* A comment line: keeps proxies from closing the stream, and finds
     * clients that went away (their write fails). */
    for (sub *s = E->subs; s; s = s->next)
        sy_admin_stream_write(s->s, ": keepalive\n\n", 13);
}

static void free_timer(uv_handle_t *h) { free(h); }

static void stream_gone(sy_admin_stream *st)
{
    sub *me = st->owner;
    struct sy_admin_events *E = st->admin->events;
    if (!E) {
        free(me);
        return;
    }
    for (sub **p = &E->subs; *p; p = &(*p)->next)
        if (*p == me) {
            *p = me->next;
            break;
        }
    free(me);
    if (E->subs)
        return;
    /* Nobody listens: the engine keeps nothing for us. */
    if (st->admin->sv->engine)
        sy_engine_observe(st->admin->sv->engine, NULL, NULL);
    uv_close((uv_handle_t *)E->keepalive, free_timer);
    sy_admin_named_feed_stop(E->named);
    st->admin->events = NULL;
    free(E);
}

int sy_api_events(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    long long run;
    if (!sy_admin_query_int(rq, "run", 1, INT64_MAX, 0, &run, &res))
        return res;
    sy_admin *a = rq->admin;
    if (!a->sv->engine)
        return sy_admin_error(rq, 503, "the host is not running an engine");
    sub *me = calloc(1, sizeof *me);
    if (!me)
        return sy_admin_error(rq, 500, "out of memory");
    me->s = sy_admin_stream_open(rq, "text/event-stream", &res);
    if (!me->s) {
        free(me);
        return res;
    }
    me->run_id = run;
    me->s->owner = me;
    me->s->on_free = stream_gone;
    if (!a->events) {
        struct sy_admin_events *E = calloc(1, sizeof *E);
        uv_timer_t *t = malloc(sizeof *t);
        if (!E || !t) {
            free(E);
            free(t);
            sy_admin_stream_end(me->s);
            return res;
        }
        E->admin = a;
        E->keepalive = t;
        uv_timer_init(&a->sv->loop, t);
        t->data = E;
        uv_timer_start(t, on_keepalive, KEEPALIVE_MS, KEEPALIVE_MS);
        /* Without it the stream still tells runs and tasks. */
        E->named = sy_admin_named_feed_start(a, on_named, E);
        a->events = E;
        sy_engine_observe(a->sv->engine, on_event, E);
    } else {
        /* What was recorded before it came goes to the others only. */
        sy_admin_named_feed_now(a->events->named);
    }
    me->next = a->events->subs;
    a->events->subs = me;
    sy_admin_stream_write(me->s, ": switchyard events\n\n", 21);
    return res;
}
