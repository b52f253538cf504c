/* A live run's tasks: transitions, triggers, retries, cancelling, the end. */
#include "engine/run.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/attempt.h"
#include "engine/batch.h"
#include "engine/limits.h"
#include "engine/fenced.h"
#include "engine/input.h"
#include "workflow/context.h"
#include "workflow/trigger.h"

void sy_live_fill_view(const sy_live_run *r, sy_engine_view *v)
{
    *v = (sy_engine_view){
        .run_id = r->id,
        .wf = r->wf,
        .state = r->state,
        .n_tasks = r->wf->n_tasks,
        .n_done = r->n_terminal,
        .n_failed = r->n_failed,
        .n_skipped = r->n_skipped,
        .n_running = r->n_running,
    };
}

static void report(sy_live_run *r, size_t idx)
{
    sy_engine *e = r->e;
    /* What happens to a run this host lost (its cancelled attempts coming
     * back) is nobody's progress: another host may be running it. */
    if (!e->o.on_task || r->lost || sy_live_is_slot(r, idx))
        return;
    sy_engine_view v;
    sy_live_fill_view(r, &v);
    const sy_live_task *t = &r->t[idx];
    e->o.on_task(e->o.arg, &v, r->wf->tasks[idx].id, t->state, t->attempts, t->error);
}

/* Every change of state goes through here: an illegal one is a bug that is
 * logged, never applied. */
bool sy_live_set_state(sy_live_run *r, size_t idx, sy_task_state to)
{
    sy_live_task *t = &r->t[idx];
    if (!sy_task_transition_ok(t->state, to)) {
        sy_log(SY_LOG_ERROR, "engine",
               "bug: illegal transition %s -> %s for %s in run %lld; not applied",
               sy_task_state_name(t->state), sy_task_state_name(to), sy_live_def(r, idx)->ns,
               (long long)r->id);
        return false;
    }
    if (t->state == SY_TASK_RUNNING && to != SY_TASK_RUNNING)
        sy_limits_release(r, idx); /* its slots, in the batch writing this */
    if (to != SY_TASK_WAITING) {
        /* What it waited for (engine/waiting.h) goes: written NULL with
         * the new state. */
        free(t->waiting_for);
        t->waiting_for = NULL;
    }
    t->state = to;
    if (sy_task_state_terminal(to) && sy_live_is_slot(r, idx)) {
        /* An element: its map counts it (engine/map.h); the run counts
         * the map as one task when the map ends. */
        sy_live_map *m = &r->maps[t->map];
        m->ended++;
        m->failed += to == SY_TASK_FAILED;
        m->cancelled +=
            to == SY_TASK_CANCELLED || to == SY_TASK_SKIPPED || to == SY_TASK_DROPPED;
        t->finished = r->e->now();
    } else if (sy_task_state_terminal(to)) {
        r->n_terminal++;
        r->n_failed += to == SY_TASK_FAILED;
        r->n_skipped += to == SY_TASK_SKIPPED || to == SY_TASK_DROPPED;
        t->finished = r->e->now();
    }
    sy_batch_mark_task(r, idx);
    return true;
}

void sy_live_set_error(sy_live_task *t, const char *msg)
{
    free(t->error);
    t->error = msg ? sy_xstrdup(msg) : NULL;
}

static void on_backoff(sy_timer *timer)
{
    sy_live_run *r = timer->data;
    sy_live_task *t = (sy_live_task *)((char *)timer - offsetof(sy_live_task, backoff));
    /* Its time has come by the timers' word (which, on the real clock,
     * includes libuv's monotonic one): dispatch must not wait again. */
    t->ready_at = 0;
    t->ready_ms = (uint32_t)uv_now(r->e->loop);
    sy_ready_push(r->e, r, (size_t)(t - r->t));
}

void sy_live_arm_backoff(sy_live_run *r, size_t idx, int64_t due)
{
    sy_timer *timer = &r->t[idx].backoff;
    timer->fire = on_backoff;
    timer->data = r;
    sy_timer_start(&r->e->timers, timer, due);
}

void sy_live_offer(sy_live_run *r, size_t idx)
{
    int64_t ready_at = r->t[idx].ready_at;
    if (ready_at > 0 && ready_at > r->e->now()) {
        sy_live_arm_backoff(r, idx, ready_at);
    } else {
        r->t[idx].ready_ms = (uint32_t)uv_now(r->e->loop);
        sy_ready_push(r->e, r, idx);
    }
}

void sy_live_task_ready(sy_live_run *r, size_t idx, int64_t ready_at)
{
    if (!sy_live_set_state(r, idx, SY_TASK_READY))
        return;
    r->t[idx].ready_at = ready_at;
    sy_live_offer(r, idx);
}

void sy_live_fail_now(sy_live_run *r, size_t idx, const char *error)
{
    if (!sy_live_set_state(r, idx, SY_TASK_FAILED))
        return;
    sy_live_set_error(&r->t[idx], error);
    sy_live_task_terminal(r, idx);
}

void sy_live_fail_or_retry(sy_live_run *r, size_t idx, bool timeout, const char *error)
{
    sy_live_task *t = &r->t[idx];
    const sy_retry *p = &sy_live_def(r, idx)->retry;
    t->failures++;
    sy_live_set_error(t, error);
    bool wanted = (p->retry_on & (timeout ? SY_RETRY_ON_TIMEOUT : SY_RETRY_ON_FAILED)) != 0;
    if (wanted && t->failures < p->attempts && !r->cancelling) {
        int64_t delay = sy_retry_delay_ms(p, t->attempts + 1, drand48());
        char detail[1024];
        snprintf(detail, sizeof detail, "%s; retry %u of %u in %lldms", error ? error : "",
                 t->failures, p->attempts - 1, (long long)delay);
        sy_live_event(r, idx, t->attempts, timeout ? "timed_out" : "failed", detail);
        sy_live_task_ready(r, idx, r->e->now() + delay);
        report(r, idx);
        return;
    }
    sy_live_event(r, idx, t->attempts, timeout ? "timed_out" : "failed", error);
    if (!sy_live_set_state(r, idx, SY_TASK_FAILED))
        return;
    sy_live_task_terminal(r, idx);
}

void sy_live_defer(sy_live_run *r, size_t idx, const char *instance, int64_t retry_after_ms,
                   const char *why)
{
    sy_live_task *t = &r->t[idx];
    int64_t now = r->e->now();
    char detail[1024];
    t->attempts--;
    if (++t->deferrals > SY_DEFER_MAX) {
        snprintf(detail, sizeof detail,
                 "executor instance '%s' deferred the task %d times in a row (the last: %s)",
                 instance, SY_DEFER_MAX, why && *why ? why : "no reason given");
        t->failures++;
        sy_live_event(r, idx, t->attempts + 1, "failed", detail);
        sy_live_fail_now(r, idx, detail);
        report(r, idx);
        return;
    }
    int64_t delay = retry_after_ms;
    if (delay <= 0) {
        uint32_t shift = t->deferrals - 1 < 9 ? t->deferrals - 1 : 9;
        delay = (int64_t)10 << shift;
        if (delay > 5000)
            delay = 5000;
    } else if (delay > 3600 * 1000) {
        delay = 3600 * 1000;
    }
    snprintf(detail, sizeof detail, "%s; offered again in %lldms",
             why && *why ? why : "deferred by the executor", (long long)delay);
    sy_live_event(r, idx, t->attempts + 1, "deferred", detail);
    sy_live_task_ready(r, idx, now + delay);
    report(r, idx);
}

/* Why a trigger rule did not hold, for the Skipped task's error. */
static void skip_reason(const sy_live_run *r, size_t idx, char *buf, size_t len)
{
    const sy_task_def *d = &r->wf->tasks[idx];
    size_t off = (size_t)snprintf(buf, len, "trigger %s does not hold:",
                                  sy_trigger_name(d->trigger));
    for (size_t i = 0; i < d->n_deps && off < len; i++) {
        size_t dep = d->deps[i];
        off += (size_t)snprintf(buf + off, len - off, "%s %s %s", i ? "," : "",
                                r->wf->tasks[dep].id,
                                sy_task_state_name(r->t[dep].state));
    }
}

/* Names the first `when` condition that does not hold, and what the
 * context had there, so a Skipped task explains itself. */
static void when_reason(const sy_task_def *d, const json_t *ctx, char *buf, size_t len)
{
    for (size_t i = 0; ctx && i < d->n_when; i++) {
        const sy_cond *c = &d->when[i];
        if (sy_conds_hold(c, 1, ctx))
            continue;
        char *want = json_dumps(c->value, JSON_COMPACT | JSON_ENCODE_ANY);
        const json_t *have = sy_json_path(ctx, c->path);
        char *got = have ? json_dumps(have, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        snprintf(buf, len, "when: %s %s %s does not hold (%s is %.200s)", c->path,
                 sy_cond_op_name(c->op), want ? want : "?", c->path, got ? got : "absent");
        free(want);
        free(got);
        return;
    }
    snprintf(buf, len, "when: a condition does not hold on the input context");
}

/* Decides a NotStarted task whose dependencies may all have ended:
 * Ready, Skipped, or (still waiting) nothing.  Returns true when it
 * became Skipped, so its own children need deciding too. */
static bool decide_task(sy_live_run *r, size_t idx)
{
    const sy_task_def *d = &r->wf->tasks[idx];
    if (r->t[idx].state != SY_TASK_NOT_STARTED)
        return false;
    sy_task_state deps[64] = {0}, *dep_states = deps;
    if (d->n_deps > 64)
        dep_states = sy_xmalloc(d->n_deps * sizeof *dep_states);
    for (size_t i = 0; i < d->n_deps; i++)
        dep_states[i] = r->t[d->deps[i]].state;
    sy_trig_verdict v = sy_trigger_eval(d->trigger, dep_states, d->n_deps);
    if (dep_states != deps)
        free(dep_states);
    if (v == SY_TRIG_WAIT)
        return false;
    char why[512];
    if (v == SY_TRIG_RUN && d->n_when > 0) {
        json_t *ctx = sy_engine_input_json(r, idx);
        if (!ctx || !sy_conds_hold(d->when, d->n_when, ctx)) {
            v = SY_TRIG_SKIP;
            when_reason(d, ctx, why, sizeof why);
        }
        json_decref(ctx);
    } else if (v == SY_TRIG_SKIP) {
        skip_reason(r, idx, why, sizeof why);
    }
    if (v == SY_TRIG_RUN) {
        sy_live_task_ready(r, idx, 0);
        return false;
    }
    if (!sy_live_set_state(r, idx, SY_TASK_SKIPPED))
        return false;
    sy_live_set_error(&r->t[idx], why);
    report(r, idx);
    return true;
}

void sy_live_task_terminal(sy_live_run *r, size_t idx)
{
    /* An element's end is its map's business (engine/map.c). */
    if (sy_live_is_slot(r, idx))
        return;
    report(r, idx);
    /* Skipping propagates down the graph; an explicit stack keeps a deep
     * chain from exhausting the C stack. */
    size_t cap = 64, n = 0;
    size_t *stack = sy_xmalloc(cap * sizeof *stack);
    stack[n++] = idx;
    while (n > 0) {
        const sy_task_def *d = &r->wf->tasks[stack[--n]];
        for (size_t i = 0; i < d->n_children; i++) {
            size_t c = d->children[i];
            if (r->t[c].deps_left > 0)
                r->t[c].deps_left--;
            if (r->t[c].deps_left > 0 || !decide_task(r, c))
                continue;
            if (n == cap)
                stack = realloc(stack, (cap *= 2) * sizeof *stack);
            if (!stack)
                sy_oom("deciding a run's tasks");
            stack[n++] = c;
        }
    }
    free(stack);
    sy_live_finish_if_done(r);
}

void sy_live_start_roots(sy_live_run *r)
{
    for (size_t i = 0; i < r->wf->n_tasks; i++) {
        size_t idx = r->wf->topo[i];
        if (r->t[idx].deps_left == 0 && decide_task(r, idx))
            sy_live_task_terminal(r, idx);
    }
}

void sy_live_finish_if_done(sy_live_run *r)
{
    if (r->finished || r->n_terminal < r->wf->n_tasks)
        return;
    sy_engine *e = r->e;
    r->finished = true;
    r->state = r->cancelling ? SY_RUN_CANCELLED
               : r->n_failed ? SY_RUN_FAILED
                             : SY_RUN_COMPLETED;
    if (r->state == SY_RUN_FAILED && !r->error) {
        char msg[256];
        snprintf(msg, sizeof msg, "%zu task%s failed", r->n_failed,
                 r->n_failed == 1 ? "" : "s");
        r->error = sy_xstrdup(msg);
    }
    sy_batch_mark_run(r);
    e->metrics.runs_ended[r->state]++;
    if (e->o.on_run) {
        sy_engine_view v;
        sy_live_fill_view(r, &v);
        e->o.on_run(e->o.arg, &v);
    }
    if (r->watched) {
        r->watched = false;
        e->watched_left--;
    }
}

int sy_live_cancel_by_id(sy_engine *e, int64_t run_id, const char *why)
{
    for (sy_live_run *r = e->runs; r; r = r->next)
        if (r->id == run_id && !r->finished) {
            sy_live_cancel(r, why);
            return SY_OK;
        }
    return SY_ENOENT;
}

void sy_live_cancel(sy_live_run *r, const char *why)
{
    if (r->finished || r->cancelling)
        return;
    r->cancelling = true;
    free(r->error);
    r->error = sy_xstrdup(why);
    for (size_t i = 0; i < r->n_t; i++) {
        sy_live_task *t = &r->t[i];
        if (sy_live_is_slot(r, i) && t->elem < 0)
            continue;
        if (t->state == SY_TASK_NOT_STARTED || sy_task_state_offerable(t->state)) {
            sy_timer_stop(&r->e->timers, &t->backoff);
            if (sy_live_set_state(r, i, SY_TASK_SKIPPED))
                sy_live_set_error(t, "run cancelled");
        } else if (t->state == SY_TASK_RUNNING && t->current) {
            sy_attempt_cancel(t->current);
        }
    }
    /* A map running ends once its elements in flight are back. */
    for (size_t k = 0; k < r->n_maps; k++) {
        r->maps[k].pending = true;
        r->maps_pending = r->e->maps_pending = true;
    }
    sy_batch_mark_run(r);
    sy_live_finish_if_done(r);
}

