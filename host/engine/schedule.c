/* Schedules: when each workflow's next tick is due, which ticks a host
 * that was down missed, and firing them through the store. */
#include "engine/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/lease.h"
#include "engine/serve.h"
#include "workflow/cron.h"
#include "workflow/tick.h"

/* The longest the timer sleeps: a clock stepped forward, or a fake one,
 * is noticed within it. */
#define SY_SCHED_MAX_SLEEP_MS 30000
/* Catch-up ticks fired per wake. */
#define SY_SCHED_BATCH 20
/* The window last_ticks() looks back through first, and the longest it
 * grows to before it takes everything back to the cursor. */
#define SY_SCHED_FIRST_WINDOW_MS ((int64_t)3600 * 1000)
#define SY_SCHED_LONGEST_WINDOW_MS ((int64_t)100 * 366 * 86400 * 1000)

struct sy_sched {
    const sy_workflow *wf; /* borrowed: e->o.workflows */
    sy_cron cron;
    sy_tz *tz;             /* owned */
    int64_t cursor;        /* ms: every tick at or before it is done with */
    int64_t backlog;       /* ms: missed ticks up to this one are fired in
                              order (the catch-up), not just the latest */
    bool caught_up;        /* the catch-up on start was planned */
    bool failed;           /* the store failed its last firing */
};

static void free_scheds(struct sy_sched *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sy_tz_free(v[i].tz);
    free(v);
}

/* The next tick after `ms`, in ms; INT64_MAX when none. */
static int64_t next_tick(const struct sy_sched *s, int64_t ms)
{
    int64_t t = sy_cron_next(&s->cron, s->tz, ms >= 0 ? ms / 1000 : -((999 - ms) / 1000));
    return t == INT64_MAX ? INT64_MAX : t * 1000;
}

/* Fires one tick; false after a store failure (tried again at the next
 * wake, from the same tick). */
static bool fire(sy_engine *e, const struct sy_sched *s, int64_t tick)
{
    const sy_workflow *wf = s->wf;
    sy_store *st = e->o.store;
    char *ctx = sy_tick_context(s->wf, s->tz, tick), when[40];
    sy_time_format(tick / 1000, 0, when, sizeof when);
    const char **ids = sy_xmalloc((wf->n_tasks + 1) * sizeof *ids);
    const char **ns = sy_xmalloc((wf->n_tasks + 1) * sizeof *ns);
    for (size_t i = 0; i < wf->n_tasks; i++) {
        ids[i] = wf->tasks[i].id;
        ns[i] = wf->tasks[i].ns;
    }
    bool fired = false;
    int64_t run = 0;
    char hash[65], *built = NULL;
    const char *def = ctx ? sy_workflow_definition(wf, &built, hash) : NULL;
    int rc = def ? sy_store_put_definition(st, hash, wf->tenant, wf->name, def) : SY_ENOMEM;
    if (rc == SY_OK)
        rc = sy_store_fire_tick(st, hash, wf->tenant, wf->name, tick, ctx, wf->n_tasks,
                                ids, ns, e->now(), &fired, &run);
    free(built);
    free(ids);
    free(ns);
    free(ctx);
    if (rc != SY_OK) {
        sy_log(SY_LOG_ERROR, "schedule", "%s: cannot fire the tick of %s: %s", wf->name, when,
               rc == SY_ENOMEM ? "out of memory" : sy_store_errmsg(st));
        return false;
    }
    if (fired) {
        e->ticks_fired++;
        sy_log(SY_LOG_INFO, "schedule", "%s: tick %s fired: run %lld", wf->name, when,
               (long long)run);
        sy_serve_poll_soon(e);
    } else {
        e->ticks_refused++;
        sy_log(SY_LOG_DEBUG, "schedule", "%s: tick %s was fired already, by another host",
               wf->name, when);
    }
    return true;
}

/* The last `keep` ticks after s->cursor up to `now`, oldest first, into
 * out; *older says how many earlier ones were left out (-1: some, not
 * counted).  The window grows back from `now` until it holds `keep` ticks
 * or reaches the cursor, so a host down for years walks about `keep`
 * ticks, not every one it missed. */
static size_t last_ticks(const struct sy_sched *s, int64_t now, size_t keep, int64_t *out,
                         int64_t *older)
{
    size_t n = 0;
    for (int64_t w = SY_SCHED_FIRST_WINDOW_MS;; w *= 4) {
        int64_t from =
            now - w <= s->cursor || w > SY_SCHED_LONGEST_WINDOW_MS ? s->cursor : now - w;
        size_t head = 0, total = 0;
        for (int64_t t = next_tick(s, from); t <= now; t = next_tick(s, t), total++) {
            out[(head + (total < keep ? total : 0)) % keep] = t;
            if (total >= keep)
                head = (head + 1) % keep;
        }
        n = total < keep ? total : keep;
        if (n == keep || from == s->cursor) {
            /* The ring, oldest first. */
            int64_t *tmp = sy_xmalloc((n ? n : 1) * sizeof *tmp);
            for (size_t i = 0; i < n; i++)
                tmp[i] = out[(head + i) % keep];
            memcpy(out, tmp, n * sizeof *out);
            free(tmp);
            *older = from == s->cursor ? (int64_t)(total - n) : -1;
            return n;
        }
    }
}

/* On start, the catch-up: the missed ticks to fire become the backlog. */
static void plan_catchup(struct sy_sched *s, int64_t now)
{
    size_t keep = s->wf->catchup == SY_CATCHUP_ALL ? s->wf->catchup_max : 1;
    int64_t *ticks = sy_xmalloc(keep * sizeof *ticks), older = 0;
    size_t n = s->wf->catchup == SY_CATCHUP_NONE ? 0 : last_ticks(s, now, keep, ticks, &older);
    if (older > 0)
        sy_log(SY_LOG_WARN, "schedule", "%s: %lld missed tick%s not fired (catchup \"%s\")",
               s->wf->name, (long long)older, older == 1 ? "" : "s",
               sy_catchup_name(s->wf->catchup));
    else if (older < 0)
        sy_log(SY_LOG_WARN, "schedule", "%s: missed ticks before %d fired ones not fired "
               "(catchup \"%s\")", s->wf->name, (int)n, sy_catchup_name(s->wf->catchup));
    if (n > 0) {
        s->cursor = ticks[0] - 1;
        s->backlog = ticks[n - 1];
    }
    free(ticks);
}

/* Fires the due ticks of one schedule: the backlog first, a batch per
 * wake so that the loop (leases, completions) is never held up long;
 * then the latest tick due, when the loop was held up past several. */
static void run_one(sy_engine *e, struct sy_sched *s, int64_t now)
{
    if (!s->caught_up) {
        plan_catchup(s, now);
        s->caught_up = true;
    }
    int64_t ticks[SY_SCHED_BATCH], older = 0;
    size_t n = 0;
    if (s->cursor < s->backlog) {
        for (int64_t t = next_tick(s, s->cursor); t <= s->backlog && n < SY_SCHED_BATCH;
             t = next_tick(s, t))
            ticks[n++] = t;
    } else {
        n = last_ticks(s, now, 1, ticks, &older);
        if (older != 0)
            sy_log(SY_LOG_WARN, "schedule", "%s: the loop was held up past several ticks: "
                   "the latest fired, the others not", s->wf->name);
    }
    s->failed = false;
    for (size_t i = 0; i < n && !s->failed; i++) {
        s->failed = !fire(e, s, ticks[i]);
        if (!s->failed)
            s->cursor = ticks[i];
    }
}

static void on_sched(uv_timer_t *t);

static void arm(sy_engine *e, int64_t now)
{
    int64_t next = INT64_MAX;
    for (size_t i = 0; i < e->n_sched; i++) {
        int64_t n = next_tick(&e->sched[i], e->sched[i].cursor);
        if (n < next)
            next = n;
        /* More of the catch-up: at the next turn, after what waits. */
        if (e->sched[i].cursor < e->sched[i].backlog && n <= now && !e->sched[i].failed) {
            uv_timer_start(&e->sched_timer, on_sched, 0, 0);
            return;
        }
    }
    /* The fake clock's rate turns its milliseconds into real ones; an
     * injected clock is the test's to move. */
    double rate = e->o.schedule_clock ? 1 : sy_clock_schedule_rate();
    double wait = next == INT64_MAX ? SY_SCHED_MAX_SLEEP_MS : (double)(next - now) / rate;
    /* A tick still due after this wake failed to fire: the store is
     * asked again in a second, not in a loop. */
    if (next <= now)
        wait = 1000;
    if (wait > SY_SCHED_MAX_SLEEP_MS)
        wait = SY_SCHED_MAX_SLEEP_MS;
    uv_timer_start(&e->sched_timer, on_sched, wait < 1 ? 1 : (uint64_t)wait + 1, 0);
}

static void fire_due(sy_engine *e, int64_t now)
{
    /* A host whose lease lapsed stands aside until it is back. */
    if (!sy_lease_lapsed(e, e->now()))
        for (size_t i = 0; i < e->n_sched; i++)
            run_one(e, &e->sched[i], now);
}

void sy_schedule_fire_due(sy_engine *e)
{
    fire_due(e, e->sched_now());
}

static void on_sched(uv_timer_t *t)
{
    sy_engine *e = t->data;
    if (e->drain)
        return;
    int64_t now = e->sched_now();
    fire_due(e, now);
    arm(e, now);
}

/* Where a schedule starts: its catch-up decides from the last tick the
 * store holds. */
static void place(sy_engine *e, struct sy_sched *s, int64_t now)
{
    int64_t last = 0;
    s->cursor = now;
    if (s->wf->catchup == SY_CATCHUP_NONE)
        return;
    if (sy_store_last_tick(e->o.store, s->wf->tenant, s->wf->name, &last, NULL) != SY_OK)
        sy_log(SY_LOG_WARN, "schedule", "%s: cannot read its last tick (%s): missed ticks "
               "are not fired", s->wf->name, sy_store_errmsg(e->o.store));
    else if (last > 0 && last < now)
        s->cursor = last;
}

static bool same_schedule(const sy_workflow *a, const sy_workflow *b)
{
    return strcmp(a->tenant, b->tenant) == 0 && strcmp(a->name, b->name) == 0 &&
           strcmp(a->schedule, b->schedule) == 0 &&
           strcmp(a->timezone ? a->timezone : "UTC", b->timezone ? b->timezone : "UTC") == 0;
}

static void build(sy_engine *e, int64_t now)
{
    struct sy_sched *old = e->sched;
    size_t n_old = e->n_sched;
    e->sched = NULL;
    e->n_sched = 0;
    for (size_t i = 0; i < e->o.n_workflows; i++) {
        const sy_workflow *wf = e->o.workflows[i];
        if (!wf->schedule)
            continue;
        struct sy_sched s = {.wf = wf};
        char err[512];
        if (sy_cron_parse(wf->schedule, &s.cron, err, sizeof err) ||
            !(s.tz = sy_tz_load(wf->timezone, err, sizeof err))) {
            sy_log(SY_LOG_ERROR, "schedule", "%s: not scheduled: %s", wf->name, err);
            continue;
        }
        bool kept = false;
        for (size_t j = 0; j < n_old && !kept; j++)
            if (same_schedule(old[j].wf, wf)) {
                s.cursor = old[j].cursor;
                s.backlog = old[j].backlog;
                s.caught_up = old[j].caught_up;
                kept = true;
            }
        if (!kept)
            place(e, &s, now);
        struct sy_sched *v = realloc(e->sched, (e->n_sched + 1) * sizeof *v);
        if (!v) {
            sy_log(SY_LOG_ERROR, "schedule", "%s: not scheduled: out of memory", wf->name);
            sy_tz_free(s.tz);
            continue;
        }
        e->sched = v;
        e->sched[e->n_sched++] = s;
    }
    free_scheds(old, n_old);
}

void sy_schedule_init(sy_engine *e)
{
    uv_timer_init(e->loop, &e->sched_timer);
    e->sched_timer.data = e;
    e->sched_now = e->o.schedule_clock ? e->o.schedule_clock : sy_clock_schedule_ms;
}

void sy_schedule_start(sy_engine *e)
{
    if (!e->o.serve)
        return;
    build(e, e->sched_now());
    for (size_t i = 0; i < e->n_sched; i++)
        sy_log(SY_LOG_INFO, "schedule", "%s: \"%s\" in %s, catchup \"%s\"",
               e->sched[i].wf->name, e->sched[i].wf->schedule, e->sched[i].tz->name,
               sy_catchup_name(e->sched[i].wf->catchup));
    if (e->n_sched)
        uv_timer_start(&e->sched_timer, on_sched, 0, 0);
}

void sy_schedule_reload(sy_engine *e)
{
    if (!e->o.serve)
        return;
    int64_t now = e->sched_now();
    build(e, now);
    uv_timer_stop(&e->sched_timer);
    if (e->n_sched)
        uv_timer_start(&e->sched_timer, on_sched, 0, 0);
}

void sy_schedule_stop(sy_engine *e)
{
    uv_timer_stop(&e->sched_timer);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_schedule_close(sy_engine *e)
{
    uv_close((uv_handle_t *)&e->sched_timer, close_noop);
    free_scheds(e->sched, e->n_sched);
    e->sched = NULL;
    e->n_sched = 0;
}

void sy_schedule_counts(const sy_engine *e, uint64_t *fired, uint64_t *refused)
{
    *fired = e->ticks_fired;
    *refused = e->ticks_refused;
}
