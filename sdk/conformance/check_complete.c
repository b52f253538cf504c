/*
 * check_complete.c -- every accepted submit completes exactly once, alone
 * and under 8 submitting threads, submit() never blocks, and a result
 * stays the plugin's, unchanged, until complete() returns.
 */
#include "checks.h"

#include <stdio.h>

#define SEQUENTIAL 200
#define STRESS_TARGET 4000

/* Where completions came from, for --verbose: inside submit() on the
 * submitting thread, or from another thread (a worker, a loop). */
static void note_threads(kit_inst *ki, kit_report *r)
{
    long inside = atomic_load(&ki->inside_submit);
    long all = atomic_load(&ki->completed);
    kit_note(r, "completions: %ld from inside submit(), %ld from other "
             "threads", inside, all - inside);
    kit_note(r, "outcomes: %ld succeeded, %ld failed, %ld timed out, %ld "
             "cancelled, %ld deferred", atomic_load(&ki->outcomes[0]),
             atomic_load(&ki->outcomes[1]), atomic_load(&ki->outcomes[2]),
             atomic_load(&ki->outcomes[3]), atomic_load(&ki->outcomes[4]));
    pthread_mutex_lock(&ki->lock);
    if (ki->first_error[0])
        kit_note(r, "first error: %s", ki->first_error);
    pthread_mutex_unlock(&ki->lock);
}

kit_verdict kit_check_complete_once(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, SEQUENTIAL * 20, r))
        return KIT_FAIL;
    /* nonblocking, next and needing this check, judges how long submit()
     * takes, so that a blocking submit() fails there, by that name. */
    ki.bound_judged_later = true;
    double until = kit_now_ms() + KIT_BUDGET_MS * x->k->scale;
    char err[512], msg[400];
    int sent = 0;
    while (sent < SEQUENTIAL && kit_now_ms() < until) {
        int rc = kit_submit_patient(&ki, x->k->in.task, until, NULL, NULL,
                                    err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK)
            return kit_fail_refused(r, rc, err);
        sent++;
        /* Stop at the first double: the host logs each one. */
        if (!kit_once_ok(&ki, msg, sizeof msg))
            return kit_fail(r, "%s", msg);
    }
    if (sent == 0)
        return kit_fail(r, "no submit was accepted within %.1fs (SY_EBUSY "
                        "every time, with nothing in flight)",
                        KIT_BUDGET_MS * x->k->scale / 1000);
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS)) {
        kit_describe_missing(&ki, msg, sizeof msg);
        return kit_fail(r, "%s", msg);
    }
    /* A late second completion (a timer, a straggling worker) shows up
     * after a moment. */
    kit_sleep_ms(50);
    note_threads(&ki, r);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%d submits, each completed once", sent);
}

/* ------------------------------------------------------------------------ */
/* submit() must not block                                                  */
/* ------------------------------------------------------------------------ */

/* One slow call may be the scheduler's doing; two are the plugin's. */
#define SLOW_CALLS_TO_FAIL 2

kit_verdict kit_check_nonblocking(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, SEQUENTIAL * 20, r))
        return KIT_FAIL;
    double bound = kit_scaled(x->k, KIT_BLOCK_MS, 4);
    double until = kit_now_ms() + KIT_BUDGET_MS * x->k->scale;
    double max = 0;
    int sent = 0, slow = 0;
    char err[512];
    while (sent < SEQUENTIAL && slow < SLOW_CALLS_TO_FAIL &&
           atomic_load(&ki.over_bound) == 0 && kit_now_ms() < until) {
        double ms = 0;
        int rc = kit_submit_patient(&ki, x->k->in.task, until, &ms, NULL,
                                    err, sizeof err);
        if (ms > max)
            max = ms;
        if (ms > bound)
            slow++;
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK)
            return kit_fail_refused(r, rc, err);
        sent++;
    }
    /* One call over the host's own bound is enough: the host would have
     * taken the instance out of dispatch for it. */
    if (!kit_calls_in_bound(&ki, r))
        return KIT_FAIL;
    if (slow >= SLOW_CALLS_TO_FAIL)
        return kit_fail(r, "submit() blocks: %d calls took longer than "
                        "%.0f ms (max %.1f ms); queue the work and return",
                        slow, bound, max);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%d submits, the slowest took %.2f ms", sent, max);
}

/* ------------------------------------------------------------------------ */
/* Under concurrency                                                        */
/* ------------------------------------------------------------------------ */

kit_verdict kit_check_concurrency(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, STRESS_TARGET * 10, r))
        return KIT_FAIL;
    kit_stress s = {0};
    s.params = x->k->in.task;
    s.target = kit_stress_target(x->k, STRESS_TARGET);
    s.budget_ms = KIT_BUDGET_MS;
    s.promised = -1;
    kit_stress_run(&ki, &s);
    if (s.refused > 0)
        return kit_fail_refused(r, s.refused_status, s.refused_err);
    if (s.accepted == 0)
        return kit_fail(r, "no submit was accepted under 8 threads");
    kit_note(r, "%ld accepted, %ld SY_EBUSY, slowest submit %.2f ms",
             s.accepted, s.busy, s.max_submit_ms);
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS))
        return kit_fail_undrained(&ki, r);
    note_threads(&ki, r);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%ld submits from %d threads, each completed once",
                    s.accepted, KIT_THREADS);
}

/* ------------------------------------------------------------------------ */
/* Results stay put until complete() returns                                */
/* ------------------------------------------------------------------------ */

/* Fewer submits than `concurrency`: each completion pauses on purpose. */
#define STABLE_TARGET 1000

kit_verdict kit_check_result_stable(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, STABLE_TARGET * 10, r))
        return KIT_FAIL;
    ki.probe_stable = true;
    kit_stress s = {0};
    s.params = x->k->in.task;
    s.target = kit_stress_target(x->k, STABLE_TARGET);
    s.budget_ms = KIT_BUDGET_MS;
    s.promised = -1;
    kit_stress_run(&ki, &s);
    if (s.refused > 0)
        return kit_fail_refused(r, s.refused_status, s.refused_err);
    if (s.accepted == 0)
        return kit_fail(r, "no submit was accepted under 8 threads");
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS))
        return kit_fail_undrained(&ki, r);
    long unstable = atomic_load(&ki.unstable);
    if (unstable > 0) {
        char why[sizeof ki.unstable_why];
        pthread_mutex_lock(&ki.lock);
        snprintf(why, sizeof why, "%s", ki.unstable_why);
        pthread_mutex_unlock(&ki.lock);
        return kit_fail(r, "%ld of %ld results changed before complete() "
                        "returned, so a task can get another task's output: "
                        "%s; the result is yours until complete() returns: "
                        "give each task its own buffer, or hold your lock "
                        "from writing it until complete() returns",
                        unstable, atomic_load(&ki.completed), why);
    }
    note_threads(&ki, r);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%ld results from %d threads, each unchanged until "
                    "complete() returned", s.accepted, KIT_THREADS);
}
