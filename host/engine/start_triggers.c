/* Workflows' triggers: reading what may fire them, settling it through
 * the store (engine/start_triggers.h). */
#include "engine/start_triggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/lease.h"
#include "engine/metrics.h"
#include "engine/observe.h"
#include "engine/serve.h"
#include "store/named_events.h"
#include "workflow/start_trigger.h"

/* Items read per part and pass: a backlog is worked off over passes. */
#define SY_TRIGGERS_BATCH 64

struct sy_trig_watch {
    const sy_workflow *wf;      /* borrowed: e->o.workflows */
    const sy_start_trigger *t;  /* borrowed: wf->triggers */
    char *key;                  /* owned: the store's name for it */
};

struct sy_triggers {
    uv_timer_t timer;
    struct sy_trig_watch *v;
    size_t n;
    uint64_t fired, passed, taken;
};

/* An item read for a part: what the store settles, and what the run's
 * context says of it. */
typedef struct cand {
    sy_trigger_item item;
    char *reason;   /* owned: passed over, why; NULL when it matched */
    json_t *json;   /* owned */
} cand;

/* Out of memory anywhere in a pass gives the pass up, said at warn level,
 * and the next pass tries again: what the store holds is unchanged
 * (nothing is settled but by sy_store_fire, whole). */
typedef struct cands {
    cand *v;
    size_t n, cap;
    bool oom;
} cands;

static void push(cands *c, sy_item_source source, int64_t id, char *reason, json_t *json)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        cand *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->oom = true;
            free(reason);
            json_decref(json);
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (cand){{source, id, reason}, reason, json};
}

static void cands_free(cands *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].reason);
        json_decref(c->v[i].json);
    }
    free(c->v);
    *c = (cands){0};
}

typedef struct collect {
    const sy_trigger_part *p;
    cands *match, *passed;
    sy_store *st;
    const char *tenant;
} collect;

static int on_event(void *arg, const sy_named_event *ev)
{
    collect *c = arg;
    json_t *data = json_loads(ev->data, 0, NULL);
    char why[400];
    bool ok = json_is_object(data);
    if (!ok)
        snprintf(why, sizeof why, "its payload is not a JSON object");
    else
        ok = sy_trigger_part_matches(c->p, data, why, sizeof why);
    json_t *item = json_pack("{s:I, s:s, s:s?, s:o, s:I}", "id", (json_int_t)ev->id, "name",
                             ev->name, "key", ev->key, "data", data ? data : json_object(),
                             "created", (json_int_t)ev->created);
    char *reason = ok ? NULL : strdup(why);
    if (!item || (!ok && !reason)) {
        json_decref(item);
        free(reason);
        c->match->oom = true;
        return 0;
    }
    push(ok ? c->match : c->passed, SY_ITEM_EVENT, ev->id, reason, item);
    return 0;
}

static int on_run(void *arg, const sy_finished_run *r)
{
    collect *c = arg;
    json_t *item = json_pack("{s:I, s:s, s:s, s:I}", "id", (json_int_t)r->id, "workflow",
                             c->p->run, "state", sy_run_state_name(r->state), "finished",
                             (json_int_t)r->finished);
    if (!item) {
        c->match->oom = true;
        return 0;
    }
    push(c->match, SY_ITEM_RUN, r->id, NULL, item);
    return 0;
}

static int on_task(void *arg, const sy_task_record *t)
{
    json_t *output = arg;
    json_t *v = t->state == SY_TASK_COMPLETED && t->output ? json_loads(t->output, 0, NULL)
                                                           : NULL;
    if (v)
        json_object_set_new(output, t->task_id, v);
    return 0;
}

/* A run item's "output": each Completed task's output by its id. */
static void add_outputs(sy_store *st, cands *c)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].item.source != SY_ITEM_RUN)
            continue;
        json_t *output = json_object();
        if (sy_store_list_tasks(st, c->v[i].item.id, on_task, output) != SY_OK)
            sy_log(SY_LOG_WARN, "trigger", "cannot read the output of run %lld: %s",
                   (long long)c->v[i].item.id, sy_store_errmsg(st));
        json_object_set_new(c->v[i].json, "output", output);
    }
}

/* Reads a part's unsettled items since `since` into match and passed. */
static int read_part(sy_store *st, const char *key, const sy_workflow *wf,
                     const sy_trigger_part *p, int64_t since, cands *match, cands *passed)
{
    collect c = {p, match, passed, st, wf->tenant};
    if (p->event)
        return sy_store_trigger_events(st, key, p->event, since, SY_TRIGGERS_BATCH, on_event,
                                       &c);
    int rc = sy_store_trigger_runs(st, key, wf->tenant, p->run, p->states, since,
                                   SY_TRIGGERS_BATCH, on_run, &c);
    if (rc == SY_OK)
        add_outputs(st, match);
    return rc;
}

/* {"trigger": {"name", "event", "run", "parts"}} for the items of
 * `parts` (one list per part) it consumes. */
static char *context_of(const sy_start_trigger *t, cands *parts, size_t n)
{
    json_t *trig = json_pack("{s:s, s:[]}", "name", t->name, "parts");
    json_t *list = json_object_get(trig, "parts");
    for (size_t i = 0; i < n; i++) {
        json_t *all = json_array();
        for (size_t j = 0; j < parts[i].n; j++) {
            json_t *item = parts[i].v[j].json;
            json_array_append(all, item);
            json_object_set(trig, parts[i].v[j].item.source == SY_ITEM_EVENT ? "event" : "run",
                            item);
        }
        if (t->all_payloads || !parts[i].n)
            json_array_append_new(list, all);
        else {
            json_array_append(list, json_array_get(all, parts[i].n - 1));
            json_decref(all);
        }
    }
    json_t *ctx = trig ? json_pack("{s:o}", "trigger", trig) : NULL;
    char *text = ctx ? json_dumps(ctx, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(ctx);
    return text; /* NULL: out of memory */
}

/* Settles `items` (and starts a run with `ctx` when one is consumed). */
static int fire(sy_engine *e, const struct sy_trig_watch *w, const sy_trigger_item *items,
                size_t n, const char *ctx, sy_fire_outcome *out, int64_t *run)
{
    const sy_workflow *wf = w->wf;
    sy_store *st = e->o.store;
    const char **ids = malloc((wf->n_tasks + 1) * sizeof *ids);
    const char **ns = malloc((wf->n_tasks + 1) * sizeof *ns);
    if (!ids || !ns) {
        free(ids);
        free(ns);
        sy_log(SY_LOG_WARN, "trigger", "%s: trigger %s: out of memory; tried again at the "
               "next pass", wf->name, w->t->name);
        return SY_ENOMEM;
    }
    for (size_t i = 0; i < wf->n_tasks; i++) {
        ids[i] = wf->tasks[i].id;
        ns[i] = wf->tasks[i].ns;
    }
    char hash[65], *built = NULL;
    const char *def = ctx ? sy_workflow_definition(wf, &built, hash) : NULL;
    int rc = !ctx || def ? SY_OK : SY_ENOMEM;
    if (rc == SY_OK && def)
        rc = sy_store_put_definition(st, hash, wf->tenant, wf->name, def);
    sy_trigger_firing f = {.key = w->key, .items = items, .n_items = n,
                           .debounce_ms = w->t->debounce_ms,
                           .max_in_flight = w->t->max_in_flight, .hash = def ? hash : NULL,
                           .tenant = wf->tenant, .workflow = wf->name, .context = ctx,
                           .n_tasks = wf->n_tasks, .task_ids = ids, .ns = ns};
    if (rc == SY_OK)
        rc = sy_store_fire(st, &f, e->now(), out, run);
    free(built);
    free(ids);
    free(ns);
    if (rc != SY_OK)
        sy_log(rc == SY_ENOMEM ? SY_LOG_WARN : SY_LOG_ERROR, "trigger",
               "%s: trigger %s: cannot fire: %s", wf->name,
               w->t->name, rc == SY_ENOMEM ? "out of memory" : sy_store_errmsg(st));
    return rc;
}

static void note(sy_engine *e, const struct sy_trig_watch *w, sy_fire_outcome out,
                 int64_t run, size_t n)
{
    struct sy_triggers *T = e->start_triggers;
    if (out == SY_FIRE_STARTED) {
        T->fired++;
        sy_log(SY_LOG_INFO, "trigger", "%s: trigger %s fired on %zu item%s: run %lld",
               w->wf->name, w->t->name, n, n == 1 ? "" : "s", (long long)run);
        sy_observe_trigger(e, run, w->wf->name, w->t->name);
        sy_serve_poll_soon(e);
    } else if (out == SY_FIRE_TAKEN) {
        T->taken++;
    }
}

/* Settles what did not match; true unless the store failed. */
static bool settle_passed(sy_engine *e, const struct sy_trig_watch *w, cands *passed)
{
    if (!passed->n)
        return true;
    sy_trigger_item *items = malloc(passed->n * sizeof *items);
    if (!items)
        return false;
    for (size_t i = 0; i < passed->n; i++)
        items[i] = passed->v[i].item;
    sy_fire_outcome out;
    int64_t run;
    int rc = fire(e, w, items, passed->n, NULL, &out, &run);
    free(items);
    if (rc == SY_OK && out == SY_FIRE_SETTLED)
        e->start_triggers->passed += passed->n;
    return rc == SY_OK;
}

/* One run per matching item: a trigger of one part without debounce. */
static void fire_each(sy_engine *e, const struct sy_trig_watch *w, cands *match)
{
    for (size_t i = 0; i < match->n; i++) {
        cands one = {&match->v[i], 1, 1, false};
        char *ctx = context_of(w->t, &one, 1);
        if (!ctx) {
            sy_log(SY_LOG_WARN, "trigger", "%s: trigger %s: out of memory; tried again at the "
                   "next pass", w->wf->name, w->t->name);
            return;
        }
        sy_fire_outcome out = SY_FIRE_TAKEN;
        int64_t run = 0;
        int rc = fire(e, w, &match->v[i].item, 1, ctx, &out, &run);
        free(ctx);
        if (rc != SY_OK || out == SY_FIRE_BUSY || out == SY_FIRE_EARLY)
            return;
        note(e, w, out, run, 1);
    }
}

/* One run for every part's items, once each part has one. */
static void fire_together(sy_engine *e, const struct sy_trig_watch *w, cands *parts)
{
    size_t n = 0;
    for (size_t i = 0; i < w->t->n_parts; i++) {
        if (!parts[i].n)
            return;
        n += parts[i].n;
    }
    sy_trigger_item *items = malloc(n * sizeof *items);
    char *ctx = items ? context_of(w->t, parts, w->t->n_parts) : NULL;
    if (!ctx) {
        free(items);
        sy_log(SY_LOG_WARN, "trigger", "%s: trigger %s: out of memory; tried again at the "
               "next pass", w->wf->name, w->t->name);
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->t->n_parts; i++)
        for (size_t j = 0; j < parts[i].n; j++)
            items[k++] = parts[i].v[j].item;
    sy_fire_outcome out = SY_FIRE_TAKEN;
    int64_t run = 0;
    if (fire(e, w, items, n, ctx, &out, &run) == SY_OK)
        note(e, w, out, run, n);
    free(ctx);
    free(items);
}

static void pass_one(sy_engine *e, const struct sy_trig_watch *w)
{
    sy_store *st = e->o.store;
    sy_trigger_record rec;
    if (sy_store_trigger_open(st, w->key, e->now(), &rec) != SY_OK) {
        sy_log(SY_LOG_ERROR, "trigger", "%s: trigger %s: %s", w->wf->name, w->t->name,
               sy_store_errmsg(st));
        return;
    }
    const sy_start_trigger *t = w->t;
    cands match[SY_TRIGGER_PARTS_MAX] = {{0}}, passed = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < t->n_parts; i++)
        if (read_part(st, w->key, w->wf, &t->parts[i], rec.since, &match[i], &passed) != SY_OK) {
            sy_log(SY_LOG_ERROR, "trigger", "%s: trigger %s: %s", w->wf->name, t->name,
                   sy_store_errmsg(st));
            ok = false;
        }
    for (size_t i = 0; ok && i < t->n_parts; i++)
        if (match[i].oom || passed.oom) {
            sy_log(SY_LOG_WARN, "trigger", "%s: trigger %s: out of memory; tried again at the "
                   "next pass", w->wf->name, t->name);
            ok = false;
        }
    if (ok && settle_passed(e, w, &passed)) {
        if (!t->all && !t->debounce_ms)
            fire_each(e, w, &match[0]);
        else
            fire_together(e, w, match);
    }
    for (size_t i = 0; i < t->n_parts; i++)
        cands_free(&match[i]);
    cands_free(&passed);
}

void sy_start_triggers_pass(sy_engine *e)
{
    struct sy_triggers *T = e->start_triggers;
    if (!T || e->drain || sy_lease_lapsed(e, e->now()))
        return;
    for (size_t i = 0; i < T->n; i++)
        pass_one(e, &T->v[i]);
}

static void on_timer(uv_timer_t *t)
{
    sy_start_triggers_pass(t->data);
}

static void free_watches(struct sy_triggers *T)
{
    for (size_t i = 0; i < T->n; i++)
        free(T->v[i].key);
    free(T->v);
    T->v = NULL;
    T->n = 0;
}

static void build(sy_engine *e)
{
    struct sy_triggers *T = e->start_triggers;
    if (!T)
        return;
    free_watches(T);
    for (size_t i = 0; i < e->o.n_workflows; i++) {
        const sy_workflow *wf = e->o.workflows[i];
        for (size_t j = 0; j < wf->n_triggers; j++) {
            struct sy_trig_watch *v = realloc(T->v, (T->n + 1) * sizeof *v);
            char *key = v ? sy_start_trigger_key(wf, &wf->triggers[j]) : NULL;
            if (v)
                T->v = v;
            if (!key) {
                sy_log(SY_LOG_WARN, "trigger", "%s: trigger %s: out of memory: not fired",
                       wf->name, wf->triggers[j].name);
                continue;
            }
            T->v[T->n++] = (struct sy_trig_watch){wf, &wf->triggers[j], key};
        }
    }
}

void sy_start_triggers_init(sy_engine *e)
{
    struct sy_triggers *T = calloc(1, sizeof *T);
    if (!T) {
        sy_log(SY_LOG_WARN, "trigger", "out of memory: this host fires no trigger");
        return;
    }
    uv_timer_init(e->loop, &T->timer);
    T->timer.data = e;
    e->start_triggers = T;
}

static void arm(sy_engine *e)
{
    struct sy_triggers *T = e->start_triggers;
    if (!T)
        return;
    uv_timer_stop(&T->timer);
    if (T->n)
        uv_timer_start(&T->timer, on_timer, 0, SY_TRIGGERS_POLL_MS);
}

void sy_start_triggers_start(sy_engine *e)
{
    if (!e->o.serve)
        return;
    build(e);
    for (size_t i = 0; e->start_triggers && i < e->start_triggers->n; i++)
        sy_log(SY_LOG_INFO, "trigger", "%s: trigger %s listens", e->start_triggers->v[i].wf->name,
               e->start_triggers->v[i].t->name);
    arm(e);
}

void sy_start_triggers_reload(sy_engine *e)
{
    if (!e->o.serve)
        return;
    build(e);
    arm(e);
}

void sy_start_triggers_soon(sy_engine *e)
{
    struct sy_triggers *T = e->start_triggers;
    if (T && T->n && e->o.serve && !e->drain)
        uv_timer_start(&T->timer, on_timer, 0, SY_TRIGGERS_POLL_MS);
}

void sy_engine_triggers_soon(sy_engine *e)
{
    sy_start_triggers_soon(e);
}

void sy_start_triggers_stop(sy_engine *e)
{
    if (e->start_triggers)
        uv_timer_stop(&e->start_triggers->timer);
}

static void closed(uv_handle_t *h)
{
    free(h); /* the timer is the struct's first member */
}

void sy_start_triggers_close(sy_engine *e)
{
    struct sy_triggers *T = e->start_triggers;
    if (!T)
        return;
    free_watches(T);
    uv_close((uv_handle_t *)&T->timer, closed);
    e->start_triggers = NULL;
}

void sy_engine_trigger_counts(const sy_engine *e, uint64_t *fired, uint64_t *passed,
                              uint64_t *taken)
{
    const struct sy_triggers *T = e->start_triggers;
    *fired = T ? T->fired : 0;
    *passed = T ? T->passed : 0;
    *taken = T ? T->taken : 0;
}
