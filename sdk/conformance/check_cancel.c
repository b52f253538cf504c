/*
 * check_cancel.c -- cancel() of queued and of running work: it returns at
 * once, the attempt is completed exactly once (normally CANCELLED), and a
 * cancel after the completion answers SY_ENOENT and changes nothing.
 *
 * The kit cannot see a plugin's queue, so "queued" means "the newest of a
 * full load, cancelled at once" and "running" means "the oldest few,
 * cancelled after they had time to start".  With long_task in --params the
 * work is still there to cancel; without it, cancel() may race a
 * completion, which must work too.
 */
#include "checks.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct cancel_plan {
    const char *label;
    long want;         /* submits to make, at most (capacity permitting) */
    double settle_ms;  /* wait before cancelling, so the work starts */
    bool newest_first;
} cancel_plan;

typedef struct cancel_tally {
    long n, ok, enoent, cancelled, other, slow;
    double max_ms;
} cancel_tally;

static long how_many(kit_inst *ki, long want)
{
    int64_t cap = ki->d->capacity(ki->inst);
    if (cap >= 1 && cap < want)
        return (long)cap;
    return want;
}

/* Submits up to `want` calls into v; returns how many were accepted, or -1
 * with r failed. */
static long submit_batch(kit_inst *ki, long want, kit_call **v,
                         kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + KIT_BUDGET_MS * ki->k->scale;
    long n = 0;
    while (n < want && kit_now_ms() < until) {
        kit_call *call = NULL;
        int rc = kit_submit_patient(ki, kit_long_params(ki->k), until, NULL,
                                    &call, err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return -1;
        }
        v[n++] = call;
    }
    return n;
}

/* First round: every cancel returns SY_OK or SY_ENOENT, quickly. */
static bool cancel_each(kit_inst *ki, kit_call **v, long n, bool newest_first,
                        cancel_tally *t, kit_report *r)
{
    double bound = kit_scaled(ki->k, KIT_BLOCK_MS, 4);
    /* Two slow calls decide it: a cancel that sleeps need not be waited
     * out for every task. */
    for (long i = 0; i < n && t->slow < 2 && atomic_load(&ki->over_bound) == 0;
         i++) {
        kit_call *c = v[newest_first ? n - 1 - i : i];
        double ms = 0;
        int rc = kit_cancel(ki, c, &ms);
        if (ms > t->max_ms)
            t->max_ms = ms;
        t->slow += ms > bound;
        if (rc == SY_OK) {
            t->ok++;
        } else if (rc == SY_ENOENT) {
            t->enoent++;
        } else {
            kit_fail(r, "cancel() of %s returned %s: expected SY_OK, or "
                     "SY_ENOENT when it had completed", c->task_id,
                     kit_status_name(rc));
            return false;
        }
    }
    if (!kit_calls_in_bound(ki, r))
        return false;
    if (t->slow >= 2) {
        kit_fail(r, "cancel() blocks: %ld calls took longer than %.0f ms "
                 "(max %.1f ms); flag the work and return", t->slow, bound,
                 t->max_ms);
        return false;
    }
    return true;
}

/* Second round, after every completion: nothing left to cancel. */
static bool cancel_again(kit_inst *ki, kit_call **v, long n, kit_report *r)
{
    for (long i = 0; i < n; i++) {
        int rc = kit_cancel(ki, v[i], NULL);
        if (rc != SY_ENOENT) {
            kit_fail(r, "cancel() of %s after its completion returned %s: "
                     "expected SY_ENOENT", v[i]->task_id, kit_status_name(rc));
            return false;
        }
    }
    return true;
}

static void tally_outcomes(kit_call **v, long n, cancel_tally *t)
{
    for (long i = 0; i < n; i++) {
        if (atomic_load(&v[i]->outcome) == SY_OUTCOME_CANCELLED)
            t->cancelled++;
        else
            t->other++;
    }
}

static kit_verdict run_plan(kit_ctx *x, const cancel_plan *p, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, (size_t)p->want * 20 + 16, r))
        return KIT_FAIL;
    kit_call **v = calloc((size_t)p->want, sizeof *v);
    if (!v)
        return kit_fail(r, "out of memory");
    cancel_tally t = {0};
    t.n = submit_batch(&ki, how_many(&ki, p->want), v, r);
    if (t.n < 0)
        return KIT_FAIL;
    kit_sleep_ms(p->settle_ms);
    if (!cancel_each(&ki, v, t.n, p->newest_first, &t, r))
        return KIT_FAIL;
    char msg[400];
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS)) {
        kit_describe_missing(&ki, msg, sizeof msg);
        return kit_fail(r, "after cancel(): %s", msg);
    }
    if (!kit_once_ok(&ki, msg, sizeof msg))
        return kit_fail(r, "after cancel(): %s", msg);
    if (!cancel_again(&ki, v, t.n, r))
        return KIT_FAIL;
    tally_outcomes(v, t.n, &t);
    free(v);
    if (!x->k->in.long_task)
        kit_note(r, "no long_task in --params: work may end before its "
                 "cancel");
    kit_note(r, "cancel() returned SY_OK %ld times, SY_ENOENT %ld times; "
             "slowest %.2f ms", t.ok, t.enoent, t.max_ms);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%ld %s submits cancelled: %ld ended CANCELLED, %ld "
                    "otherwise, each exactly once", t.n, p->label,
                    t.cancelled, t.other);
}

kit_verdict kit_check_cancel_queued(kit_ctx *x, kit_report *r)
{
    static const cancel_plan plan = {"queued", 32, 0, true};
    return run_plan(x, &plan, r);
}

kit_verdict kit_check_cancel_running(kit_ctx *x, kit_report *r)
{
    static const cancel_plan plan = {"running", 4, 100, false};
    return run_plan(x, &plan, r);
}

/* ------------------------------------------------------------------------ */
/* cancel() must not block                                                  */
/* ------------------------------------------------------------------------ */

#define BLOCKING_BATCH 16

/* Measured like submit(): the calls are timed, on work that may still run
 * and again on work that has completed (the SY_ENOENT path). */
kit_verdict kit_check_cancel_blocking(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, BLOCKING_BATCH * 20 + 16, r))
        return KIT_FAIL;
    kit_call *v[BLOCKING_BATCH];
    cancel_tally t = {0};
    long n = submit_batch(&ki, how_many(&ki, BLOCKING_BATCH), v, r);
    if (n < 0 || !cancel_each(&ki, v, n, true, &t, r))
        return KIT_FAIL;
    char msg[400];
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS)) {
        kit_describe_missing(&ki, msg, sizeof msg);
        return kit_fail(r, "after cancel(): %s", msg);
    }
    if (!cancel_each(&ki, v, n, false, &t, r))
        return KIT_FAIL;
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%ld cancel() calls on running and completed work, "
                    "the slowest took %.2f ms", 2 * n, t.max_ms);
}
