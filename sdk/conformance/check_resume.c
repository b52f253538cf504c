/*
 * check_resume.c -- resume() (executor ABI 1.4), for a plugin that has it.
 *
 * The kit has no earlier host whose work could still run, so it checks
 * what every resume() must do when there is none: the host hands over an
 * attempt whose work does not exist (its first host died before making
 * it), and the plugin starts it, completes it exactly once, returns at
 * once, and takes cancel() for it as for a submit.  Finding work that
 * does exist is the plugin's own tests' to show against its backend.
 */
#include "checks.h"

#include <stdio.h>

#define RESUMES 10

kit_verdict kit_check_resume(kit_ctx *x, kit_report *r)
{
    kit_inst ki;
    if (!kit_open(x, &ki, RESUMES + 2, r))
        return KIT_FAIL;
    if (!SY_HAS_FIELD(ki.d, sy_executor, resume) || !ki.d->resume) {
        if (!kit_close(&ki, r))
            return KIT_FAIL;
        return kit_skip(r, "no resume(): the host abandons an attempt whose host stopped, "
                           "and retries it");
    }
    ki.resume_calls = true;
    double until = kit_now_ms() + KIT_BUDGET_MS * x->k->scale;
    double bound = kit_scaled(x->k, KIT_BLOCK_MS, 4), slowest = 0;
    char err[512], msg[400];
    int sent = 0, slow = 0;
    while (sent < RESUMES && kit_now_ms() < until) {
        double ms = 0;
        int rc = kit_submit_patient(&ki, x->k->in.task, until, &ms, NULL, err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK)
            return kit_fail(r, "resume() of an attempt that was never started returned %s "
                            "(%s): it must start it, as submit() would",
                            kit_status_name(rc), err[0] ? err : "no error text");
        slowest = ms > slowest ? ms : slowest;
        slow += ms > bound;
        sent++;
        if (!kit_once_ok(&ki, msg, sizeof msg))
            return kit_fail(r, "%s", msg);
    }
    if (slow >= 2)
        return kit_fail(r, "resume() blocks: %d calls took longer than %.0f ms (max %.1f "
                        "ms); find the work on your own thread", slow, bound, slowest);
    if (sent == 0)
        return kit_fail(r, "no resume() was accepted within %.1fs",
                        KIT_BUDGET_MS * x->k->scale / 1000);
    /* One resumed attempt of long work, cancelled. */
    kit_call *call = NULL;
    int rc = kit_submit_patient(&ki, kit_long_params(x->k), until, NULL, &call, err,
                                sizeof err);
    if (rc == SY_OK) {
        rc = kit_cancel(&ki, call, NULL);
        if (rc != SY_OK && rc != SY_ENOENT)
            return kit_fail(r, "cancel() of a resumed attempt returned %s",
                            kit_status_name(rc));
    }
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS)) {
        kit_describe_missing(&ki, msg, sizeof msg);
        return kit_fail(r, "%s", msg);
    }
    kit_sleep_ms(50);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "%d resumes of attempts never started, each started and completed once "
                       "(resume() at most %.1f ms)%s",
                    sent, slowest, call ? ", one cancelled" : "");
}
