/*
 * check_capacity.c -- capacity() is honest, and wake() follows when
 * capacity frees after a refusal.
 */
#include "checks.h"

#include <stdio.h>

#define PROBES 20
#define STRESS_TARGET 4000
#define FILL_MAX 5000

/* The ABI's definition of honest: a positive answer, then a submit with
 * no other submit in between, is accepted.  Probed from one thread. */
static bool positive_means_accepted(kit_inst *ki, kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + KIT_BUDGET_MS / 2 * ki->k->scale;
    for (int i = 0; i < PROBES && kit_now_ms() < until; i++) {
        int64_t cap = ki->d->capacity(ki->inst);
        if (cap < 0) {
            kit_fail(r, "capacity() answered %lld: it must be 0 or more",
                     (long long)cap);
            return false;
        }
        if (cap == 0)
            break;
        kit_call *call = kit_call_new(ki, ki->k->in.task);
        if (!call)
            break;
        int rc = kit_submit(ki, call, NULL, err, sizeof err);
        if (rc == SY_EBUSY) {
            kit_fail(r, "capacity() answered %lld, but the next submit "
                     "returned SY_EBUSY", (long long)cap);
            return false;
        }
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return false;
        }
    }
    return true;
}

/* One stress round; false with r failed. */
static bool stress_round(kit_inst *ki, const json_t *params, double budget,
                         int64_t promised, const char *label, kit_report *r)
{
    kit_stress s = {0};
    s.params = params;
    s.promised = promised;
    s.target = kit_stress_target(ki->k, STRESS_TARGET);
    s.budget_ms = budget;
    s.judge_capacity = true;
    kit_stress_run(ki, &s);
    if (s.refused > 0) {
        kit_fail_refused(r, s.refused_status, s.refused_err);
        return false;
    }
    if (s.negative_capacity > 0) {
        kit_fail(r, "capacity() answered a negative number %ld times",
                 s.negative_capacity);
        return false;
    }
    if (s.unlimited)
        kit_note(r, "%s: %ld accepted, %ld SY_EBUSY, at most %ld in flight, "
                 "capacity() unlimited", label, s.accepted, s.busy, s.peak);
    else
        kit_note(r, "%s: %ld accepted, %ld SY_EBUSY, at most %ld in flight, "
                 "capacity() at most %lld", label, s.accepted, s.busy, s.peak,
                 (long long)s.max_capacity);
    if (s.violation > 0) {
        kit_fail(r, "%ld submits were accepted and in flight at once, but "
                 "capacity() never answered more than %lld (%s)",
                 s.violation, (long long)s.max_capacity, label);
        return false;
    }
    return true;
}

kit_verdict kit_check_capacity(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, STRESS_TARGET * 10, r))
        return KIT_FAIL;
    const kit_inputs *in = &x->k->in;
    int64_t idle = x->d->capacity(ki.inst);
    if (!positive_means_accepted(&ki, r) ||
        !stress_round(&ki, in->task, KIT_BUDGET_MS, idle, "task", r))
        return KIT_FAIL;
    if (in->long_task) {
        /* Work that stays in flight: capacity must run out and stay out. */
        if (!kit_wait_all(&ki, KIT_DEADLINE_MS))
            return kit_fail_undrained(&ki, r);
        bool ok = stress_round(&ki, in->long_task, KIT_BUDGET_MS / 2, idle,
                               "long_task", r);
        kit_cancel_all(&ki);
        if (!ok)
            return KIT_FAIL;
    }
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "never more in flight than capacity() promised");
}

/* ------------------------------------------------------------------------ */
/* wake                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct wake_wait {
    long wakes;
} wake_wait;

static bool woke(kit_inst *ki, void *arg)
{
    return atomic_load(&ki->host.wakes) > ((wake_wait *)arg)->wakes;
}

/* Submits until SY_EBUSY.  Returns the wake count read just before the
 * refused submit (any wake after it announces freed capacity), or -1 when
 * no submit was refused; -2 with r failed. */
static long fill(kit_inst *ki, const json_t *params, long *accepted,
                 kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + KIT_BUDGET_MS * ki->k->scale;
    while (*accepted < FILL_MAX && kit_now_ms() < until) {
        kit_call *call = kit_call_new(ki, params);
        if (!call)
            break;
        long w0 = atomic_load(&ki->host.wakes);
        int rc = kit_submit(ki, call, NULL, err, sizeof err);
        if (rc == SY_EBUSY)
            return w0;
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return -2;
        }
        (*accepted)++;
    }
    return -1;
}

/* Frees one slot: cancels the oldest long task, or lets quick work end. */
static void free_one(kit_inst *ki)
{
    if (!ki->k->in.long_task)
        return;
    size_t n = atomic_load(&ki->next);
    for (size_t i = 0; i < n && i < ki->ncalls; i++) {
        kit_call *c = &ki->calls[i];
        if (atomic_load(&c->state) == CALL_ACCEPTED &&
            atomic_load(&c->c.calls) == 0) {
            kit_cancel(ki, c, NULL);
            return;
        }
    }
}

kit_verdict kit_check_wake(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, FILL_MAX + 16, r))
        return KIT_FAIL;
    int64_t cap = x->d->capacity(ki.inst);
    if (cap == SY_CAPACITY_UNLIMITED) {
        kit_destroy(&ki);
        kit_inst_fini(&ki);
        return kit_skip(r, "unlimited capacity: the plugin never refuses, "
                        "so it never needs to wake the host");
    }
    long accepted = 0;
    long w0 = fill(&ki, kit_long_params(x->k), &accepted, r);
    if (w0 == -2)
        return KIT_FAIL;
    if (w0 == -1) {
        kit_cancel_all(&ki);
        if (!kit_close(&ki, r))
            return KIT_FAIL;
        return kit_skip(r, "no submit was refused (%ld accepted, capacity() "
                        "said %lld): tasks end too fast to fill it; give "
                        "long_task = { ... } in --params", accepted,
                        (long long)cap);
    }
    free_one(&ki);
    wake_wait w = {w0};
    bool ok = kit_wait_for(&ki, KIT_DEADLINE_MS, woke, &w);
    kit_cancel_all(&ki);
    if (!ok)
        return kit_fail(r, "no wake() within %.0fs after capacity freed "
                        "(SY_EBUSY at %ld in flight, then %ld completed): "
                        "call host->wake() whenever a slot frees",
                        KIT_DEADLINE_MS * x->k->scale / 1000, accepted,
                        atomic_load(&ki.completed));
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "SY_EBUSY at %ld in flight, then wake() when a slot "
                    "freed", accepted);
}
