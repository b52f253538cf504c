/*
 * check_late.c -- nothing completes a task once it has ended: no second
 * complete() a while after the first (a stray timer or thread), and none
 * after cancel() answered SY_ENOENT ("it had completed").
 *
 * complete-once sees a second complete() that follows the first at once;
 * a late one comes when the instance has gone quiet, so this check lets
 * the instance sit idle, with every task completed, for longer than a
 * plugin's stray timer plausibly waits, and watches.  The host refuses
 * either call, but a plugin that makes one has lost track of its work.
 */
#include "checks.h"

#include <stdio.h>

#define LATE_BATCH 20
#define QUIET_MS 700.0 /* the idle wait, scaled at most 4 times */

/* complete() calls so far, over every record. */
static long all_calls(kit_inst *ki)
{
    size_t n = atomic_load(&ki->next);
    if (n > ki->ncalls)
        n = ki->ncalls;
    long sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += atomic_load(&ki->calls[i].c.calls);
    return sum;
}

/* The first record called more than once, or NULL. */
static kit_call *first_twice(kit_inst *ki, long n)
{
    for (long i = 0; i < n; i++)
        if (atomic_load(&ki->calls[i].c.calls) > 1)
            return &ki->calls[i];
    return NULL;
}

static long submit_all(kit_inst *ki, kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + KIT_BUDGET_MS * ki->k->scale;
    long n = 0;
    while (n < LATE_BATCH && kit_now_ms() < until) {
        int rc = kit_submit_patient(ki, ki->k->in.task, until, NULL, NULL,
                                    err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return -1;
        }
        n++;
    }
    return n;
}

/* Cancels every record (each completed): all must answer SY_ENOENT. */
static bool cancel_completed(kit_inst *ki, kit_report *r)
{
    size_t n = atomic_load(&ki->next);
    for (size_t i = 0; i < n && i < ki->ncalls; i++) {
        kit_call *c = &ki->calls[i];
        if (atomic_load(&c->state) != CALL_ACCEPTED)
            continue;
        int rc = kit_cancel(ki, c, NULL);
        if (rc != SY_ENOENT) {
            kit_fail(r, "cancel() of %s after its completion returned %s: "
                     "expected SY_ENOENT", c->task_id, kit_status_name(rc));
            return false;
        }
    }
    return true;
}

kit_verdict kit_check_late(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    /* Room for the patient submits' SY_EBUSY retries. */
    if (!kit_open(x, &ki, LATE_BATCH * 50, r))
        return KIT_FAIL;
    long n = submit_all(&ki, r);
    if (n < 0)
        return KIT_FAIL;
    if (n == 0)
        return kit_fail(r, "no submit was accepted");
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS))
        return kit_fail_undrained(&ki, r);
    char msg[400];
    if (!kit_once_ok(&ki, msg, sizeof msg))
        return kit_fail(r, "%s", msg);
    double quiet = kit_scaled(x->k, QUIET_MS, 4);
    long before = all_calls(&ki);
    kit_sleep_ms(quiet);
    long late = all_calls(&ki) - before;
    kit_call *c = first_twice(&ki, (long)ki.ncalls);
    if (late > 0)
        return kit_fail(r, "complete() called again after the task ended: "
                        "%ld late call%s within %.0f ms of an idle instance "
                        "(first: %s); a timer or thread outlived its task",
                        late, late == 1 ? "" : "s", quiet,
                        c ? c->task_id : "?");
    if (!cancel_completed(&ki, r))
        return KIT_FAIL;
    before = all_calls(&ki);
    kit_sleep_ms(quiet);
    late = all_calls(&ki) - before;
    c = first_twice(&ki, (long)ki.ncalls);
    if (late > 0)
        return kit_fail(r, "complete() called after cancel() returned "
                        "SY_ENOENT: %ld call%s within %.0f ms (first: %s); "
                        "SY_ENOENT says the task has ended", late,
                        late == 1 ? "" : "s", quiet, c ? c->task_id : "?");
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%ld tasks: none completed again in %.0f ms idle, "
                    "nor after cancel() said SY_ENOENT", n, 2 * quiet);
}
