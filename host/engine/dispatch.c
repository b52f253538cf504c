/* Dispatch: deciding what starts, capacity, submitting, wake-ups. */
#include "engine/dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/attempt.h"
#include "engine/batch.h"
#include "engine/cache.h"
#include "engine/completion.h"
#include "engine/fair.h"
#include "engine/limits.h"
#include "engine/map.h"
#include "engine/priority.h"
#include "engine/resume.h"
#include "engine/route.h"
#include "engine/run.h"
#include "engine/waiting.h"
#include "executor/call_record.h"

/* Any thread: capacity freed; the loop re-offers after its next wake. */
static void on_plugin_wake(sy_host *h)
{
    sy_instance_queue *q = h->data;
    atomic_store(&q->woken, 1);
    sy_wake_send(&q->e->done);
}

void sy_dispatch_init(sy_engine *e)
{
    size_t n = e->o.n_instances;
    e->instances = sy_xmalloc((n ? n : 1) * sizeof *e->instances);
    for (size_t i = 0; i < n; i++) {
        sy_instance_entry *entry = &e->o.instances[i];
        if (!entry->inst)
            continue;
        sy_instance_queue *q = &e->instances[e->n_instances++];
        *q = (sy_instance_queue){.entry = entry, .e = e, .cap = -1,
                                 .metrics = sy_engine_metrics_instance(&e->metrics, entry)};
        atomic_init(&q->woken, 0);
        entry->host.on_wake = on_plugin_wake;
        entry->host.data = q;
    }
    sy_route_init(e);
}

void sy_dispatch_free(sy_engine *e)
{
    sy_route_free(e, false);
    for (size_t i = 0; i < e->n_instances; i++)
        e->instances[i].entry->host.on_wake = NULL;
    free(e->instances);
    e->instances = NULL;
    e->n_instances = 0;
}

void sy_dispatch_begin_turn(sy_engine *e)
{
    for (size_t i = 0; i < e->n_instances; i++) {
        e->instances[i].cap = -1;
        e->instances[i].reserved = 0;
    }
}

static bool has_capacity(sy_instance_queue *q) { return sy_route_room(q) > 0; }

void sy_dispatch_decide(sy_engine *e, int64_t now)
{
    size_t n = e->ready.n;
    /* Higher priority first, when there are priorities (priority.h). */
    sy_priority_order(e, n, (uint32_t)uv_now(e->loop));
    /* Every key the turn may take, read in one go (engine/ledger.h). */
    sy_limits_prepare(e, now);
    /* A refused write (e->fatal) rolled the batch back: what this loop
     * would write next would only be refused again, each with a line. */
    for (size_t i = 0; i < n && !e->drain && !e->winding_down && !e->fatal; i++) {
        sy_task_ref ref = sy_ready_pop(e);
        sy_live_run *r = ref.run;
        sy_live_task *t = &r->t[ref.idx];
        if (!sy_task_state_offerable(t->state) || r->cancelling || r->finished)
            continue;
        if (t->ready_at > now) {
            sy_live_arm_backoff(r, ref.idx, t->ready_at);
            continue;
        }
        if (!t->route->n) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "routed to executor '%s', which is not defined in this configuration",
                     t->route->first);
            sy_live_fail_now(r, ref.idx, msg);
            continue;
        }
        if (!sy_live_is_slot(r, ref.idx) && r->wf->tasks[ref.idx].mapped) {
            sy_map_start(r, ref.idx, now);
            continue;
        }
        /* One test per task without a cache; a map's element never has
         * one (`check` refuses a cache on a mapped task). */
        if (!sy_live_is_slot(r, ref.idx) && r->wf->tasks[ref.idx].cache &&
            sy_cache_try(r, ref.idx, now))
            continue;
        /* Overflow: the first instance of the route with capacity. */
        sy_instance_queue *q = NULL;
        for (size_t k = 0; k < t->route->n && !q; k++)
            if (has_capacity(t->route->q[k]))
                q = t->route->q[k];
        if (!q) {
            if (t->state == SY_TASK_WAITING) {
                /* It waited for a slot and was offered again (a slot came
                 * back, or its retry): what holds it now is capacity, and
                 * its old reason would name a key that may have room. */
                char why[300];
                if (t->route->n > 1)
                    snprintf(why, sizeof why, "waiting for capacity: executor '%s' and the "
                             "%zu after it are full", t->route->first, t->route->n - 1);
                else
                    snprintf(why, sizeof why, "waiting for capacity: executor '%s' is full",
                             t->route->first);
                sy_waiting_enter(r, ref.idx, why);
            }
            sy_route_park(r, ref.idx);
            continue;
        }
        /* The task's keys, pool and tenant bound, taken in this turn's
         * batch for the attempt about to start (its token is the next). */
        char why[1200];
        int took = sy_limits_take(r, ref.idx, t->token + 1, now, why, sizeof why);
        if (took == 4) {
            /* A key another host's batch is taking: that batch ends
             * within milliseconds, so the task is offered again then,
             * without a Waiting state written and cleared for it (on
             * two hosts sharing a pool, most tasks met the other's
             * batch once). */
            sy_live_arm_backoff(r, ref.idx, sy_limits_retry_at(e));
            continue;
        }
        if (took == 0) {
            sy_waiting_enter(r, ref.idx, why);
            sy_live_arm_backoff(r, ref.idx, sy_limits_retry_at(e));
            sy_limits_wait(r, ref.idx);
            continue;
        }
        if (took < 0) {
            if (!e->fatal)
                sy_live_fail_now(r, ref.idx, why);
            continue;
        }
        if (took >= 2) {
            /* drop: a state of its own; cancel_newest: Skipped. */
            if (sy_live_set_state(r, ref.idx, took == 3 ? SY_TASK_DROPPED : SY_TASK_SKIPPED)) {
                sy_live_set_error(t, why);
                sy_live_task_terminal(r, ref.idx);
            }
            continue;
        }
        t->queue = q;
        t->instance_name = q->entry->name;
        char err[256];
        sy_attempt *a = sy_attempt_new(e, r, ref.idx, err, sizeof err);
        if (!a) {
            if (t->holds_slots) {
                /* Given back under the token it was taken under. */
                t->token++;
                sy_limits_release(r, ref.idx);
                t->token--;
            }
            sy_live_fail_now(r, ref.idx, err);
            continue;
        }
        r->inflight++;
        if (!sy_live_set_state(r, ref.idx, SY_TASK_RUNNING)) {
            sy_attempt_release(a);
            continue;
        }
        t->attempts++;
        /* A task holding slots is stamped after its take: the take saw
         * every earlier holder's give-back committed, and each holder's
         * end was stamped before its commit, so the stamps of a key's
         * holders never overlap (the turn's `now` was read before the
         * batch began, maybe before the give-back it waited for). */
        t->started = t->holds_slots ? e->now() : now;
        sy_fair_started(e, r);
        r->n_running++;
        t->queue->reserved++;
        t->current = a;
        e->submit = sy_engine_grow(e->submit, &e->cap_submit, e->n_submit + 1,
                                   sizeof *e->submit);
        e->submit[e->n_submit++] = a;
    }
    /* The slots the turn took, written together before the attempts'
     * starts are. */
    sy_limits_write(e, now);
}

void sy_dispatch_submit(sy_engine *e)
{
    int64_t now = 0;
    bool have_now = false; /* one clock reading for the turn's deadlines */
    if (e->n_submit > 0) {
        /* One reading of the loop clock for the turn's dispatch latencies:
         * the commit before may have taken a while. */
        uv_update_time(e->loop);
        e->metrics.submit_ms = uv_now(e->loop);
    }
    for (size_t i = 0; i < e->n_submit; i++) {
        sy_attempt *a = e->submit[i];
        sy_live_run *r = a->run;
        const sy_instance_entry *entry = a->queue->entry;
        if (r->fenced) {
            /* The store refused the run's writes this turn: another host
             * holds it, and the attempt never starts. */
            r->t[a->idx].current = NULL;
            r->n_running--;
            sy_attempt_release(a);
            continue;
        }
        char err[512] = "";
        int rc = SY_EBUSY;
        /* One decided before the watchdog caught the instance stuck in an
         * earlier submit of this turn is not sent: busy, not charged. */
        if (!atomic_load_explicit(&a->queue->entry->unhealthy, memory_order_relaxed)) {
            if (a->task.timeout_ms > 0) {
                if (!have_now) {
                    now = e->now();
                    have_now = true;
                }
                a->deadline.fire = sy_engine_on_deadline;
                a->deadline.data = a;
                sy_timer_start(&e->timers, &a->deadline, now + a->task.timeout_ms);
            }
            /* A take-over goes to resume() (engine/resume.h), which the
             * queue's plugin was checked to have. */
            sy_call_begin(a->queue->entry, a->resumed_from ? "resume" : "submit", a->task.ns,
                          r->id, sy_live_call_idx(r, a->idx), a->number);
            rc = (a->resumed_from ? entry->desc->resume : entry->desc->submit)(
                entry->inst, &a->task, sy_completion_token(&a->c), err, sizeof err);
            int64_t took = sy_call_end_ns();
            if (took >= 0)
                sy_histogram_observe(&a->queue->metrics->call, took);
        }
        if (rc == SY_OK && a->resumed_from) {
            a->submitted_ms = e->metrics.submit_ms; /* no dispatch latency: not offered */
            sy_resume_taken(a);
            continue;
        }
        if (rc == SY_OK) {
            sy_live_task *t = &r->t[a->idx];
            a->submitted_ms = e->metrics.submit_ms;
            e->metrics.submitted++;
            /* Modulo 2^32 ms: a wait under 49 days comes out right. */
            sy_histogram_observe(&e->metrics.dispatch,
                                 (int64_t)(uint32_t)((uint32_t)e->metrics.submit_ms -
                                                     t->ready_ms));
            continue;
        }
        /* Not accepted: the attempt never started.  Its token is retired
         * first, so a complete() for it from now on is refused; one that
         * came before (a plugin bug) has queued the attempt, which is then
         * freed where completions are, as stale. */
        bool queued = sy_completion_retire(&a->c);
        sy_live_task *t = &r->t[a->idx];
        if (t->current == a) {
            t->current = NULL;
            r->n_running--;
            if (a->resumed_from) {
                sy_resume_refused(a, rc, err);
            } else if (rc == SY_EBUSY) {
                /* Busy is no attempt: the task waits, Ready, to be
                 * offered the same attempt number again. */
                a->queue->metrics->busy++;
                t->attempts--;
                sy_live_set_state(r, a->idx, SY_TASK_READY);
                sy_route_park(r, a->idx);
            } else {
                char msg[600];
                a->queue->metrics->failed++;
                snprintf(msg, sizeof msg, "executor '%s' refused the task: %s", entry->name,
                         err[0] ? err : "no reason given");
                sy_live_fail_or_retry(r, a->idx, false, msg);
            }
        }
        if (!queued)
            sy_attempt_release(a);
    }
    e->n_submit = 0;
}

void sy_dispatch_discard(sy_engine *e)
{
    for (size_t i = 0; i < e->n_submit; i++) {
        sy_attempt *a = e->submit[i];
        sy_live_run *r = a->run;
        if (r->t[a->idx].current == a) {
            r->t[a->idx].current = NULL;
            r->n_running--;
        }
        sy_attempt_release(a);
    }
    e->n_submit = 0;
}

void sy_dispatch_take_wakes(sy_engine *e)
{
    bool any = false;
    for (size_t i = 0; i < e->n_instances; i++) {
        sy_instance_queue *q = &e->instances[i];
        q->woke = atomic_exchange(&q->woken, 0) != 0;
        any |= q->woke;
    }
    if (any)
        sy_route_take_wakes(e);
}

void sy_dispatch_offer_waiting(sy_engine *e)
{
    size_t n = 0;
    sy_task_ref *w = sy_limits_waiting(e, &n);
    for (size_t i = 0; i < n; i++) {
        sy_live_run *r = w[i].run;
        sy_live_task *t = &r->t[w[i].idx];
        if (!sy_task_state_offerable(t->state) || r->lost || r->finished)
            continue;
        sy_timer_stop(&e->timers, &t->backoff);
        sy_live_offer(r, w[i].idx);
    }
}

void sy_dispatch_offer_rate_waiting(sy_engine *e)
{
    /* Those waiting for a token sit on their timer, in no list: found
     * here, once a reload (not at every turn). */
    for (sy_live_run *r = e->runs; r; r = r->next) {
        if (r->lost || r->finished)
            continue;
        for (size_t i = 0; i < r->n_t; i++) {
            sy_live_task *t = &r->t[i];
            const sy_task_def *def = sy_live_def(r, i);
            if (t->state != SY_TASK_WAITING || t->waits_slot || !t->backoff.slot ||
                !def->flow || !def->flow->n_rates)
                continue;
            sy_timer_stop(&e->timers, &t->backoff);
            t->ready_at = 0;
            sy_live_offer(r, i);
        }
    }
    sy_dispatch_offer_waiting(e);
}

void sy_dispatch_forget_run(sy_engine *e, const sy_live_run *r)
{
    sy_limits_forget_run(e, r);
    sy_ready_forget_run(e, r);
    sy_route_forget_run(e, r);
}
