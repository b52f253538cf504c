/*
 * checks.h -- the checks and the steps they share.
 *
 * Every check runs in its own child process (harness.c) with the plugin
 * freshly loaded, makes its own instance, and reports one verdict.
 */
#ifndef SY_KIT_CHECKS_H
#define SY_KIT_CHECKS_H

#include "kit.h"

/* check_load.c */
kit_verdict kit_check_load(kit_ctx *x, kit_report *r);
kit_verdict kit_check_descriptor(kit_ctx *x, kit_report *r);
/* check_create.c */
kit_verdict kit_check_create(kit_ctx *x, kit_report *r);
kit_verdict kit_check_bad_params(kit_ctx *x, kit_report *r);
kit_verdict kit_check_validate(kit_ctx *x, kit_report *r);
/* check_complete.c */
kit_verdict kit_check_complete_once(kit_ctx *x, kit_report *r);
kit_verdict kit_check_nonblocking(kit_ctx *x, kit_report *r);
kit_verdict kit_check_concurrency(kit_ctx *x, kit_report *r);
kit_verdict kit_check_result_stable(kit_ctx *x, kit_report *r);
/* check_capacity.c */
kit_verdict kit_check_capacity(kit_ctx *x, kit_report *r);
kit_verdict kit_check_wake(kit_ctx *x, kit_report *r);
/* check_cancel.c */
kit_verdict kit_check_cancel_queued(kit_ctx *x, kit_report *r);
kit_verdict kit_check_cancel_running(kit_ctx *x, kit_report *r);
kit_verdict kit_check_cancel_blocking(kit_ctx *x, kit_report *r);
/* check_resume.c */
kit_verdict kit_check_resume(kit_ctx *x, kit_report *r);
/* check_late.c */
kit_verdict kit_check_late(kit_ctx *x, kit_report *r);
/* check_leaks.c */
kit_verdict kit_check_fd_leak(kit_ctx *x, kit_report *r);
kit_verdict kit_check_thread_leak(kit_ctx *x, kit_report *r);
kit_verdict kit_check_memory(kit_ctx *x, kit_report *r);
/* check_data.c */
kit_verdict kit_check_output_size(kit_ctx *x, kit_report *r);
kit_verdict kit_check_input(kit_ctx *x, kit_report *r);
/* check_lifecycle.c */
kit_verdict kit_check_destroy(kit_ctx *x, kit_report *r);
kit_verdict kit_check_metrics(kit_ctx *x, kit_report *r);

/* ------------------------------------------------------------------------ */
/* Shared steps (checks.c)                                                  */
/* ------------------------------------------------------------------------ */

/* Makes ki with room for `ncalls` submits and creates the instance from
 * the run's settings.  False with r failed when create() refuses. */
bool kit_open(kit_ctx *x, kit_inst *ki, size_t ncalls, kit_report *r);

/* False with r failed when a submit() or cancel() took longer than
 * SY_CALL_BOUND_MS, the bound the host enforces. */
bool kit_calls_in_bound(kit_inst *ki, kit_report *r);

/* Waits for every completion, checks the exactly-once rules and the
 * bound on calls, destroys the instance and frees ki.  False with r failed (the instance is then
 * left as it is: the child exits without tearing down). */
bool kit_close(kit_inst *ki, kit_report *r);

/* Fails r with what never completed. */
kit_verdict kit_fail_undrained(kit_inst *ki, kit_report *r);

/* The task parameters for work that should run until cancelled:
 * long_task when given, else task. */
const json_t *kit_long_params(const kit *k);

/* One submit with the host's patience: on SY_EBUSY it waits (until a wake
 * or a completion, at most 50 ms) and tries again, until `until` (an
 * absolute kit_now_ms() time).  Returns what the last submit returned
 * (SY_EBUSY when time ran out, SY_ENOMEM when the records ran out); *ms
 * gets the slowest submit's wall time, *out the accepted call. */
int kit_submit_patient(kit_inst *ki, const json_t *params, double until,
                       double *ms, kit_call **out, char *err, size_t len);

/* Fails r for a submit that was refused with an error other than
 * SY_EBUSY: the kit's task does not suit the plugin. */
kit_verdict kit_fail_refused(kit_report *r, int rc, const char *err);

/* Cancels every accepted call that has not completed, newest first. */
void kit_cancel_all(kit_inst *ki);

/* 8 threads submitting `params` until `target` are accepted or `budget_ms`
 * (scaled) passes, calling capacity() before each submit as a host does
 * and submitting even when it answers 0.  With `judge_capacity`, the
 * number in flight is compared with the most capacity() ever answered;
 * an excess that lasts (still in flight 50 ms later) is a violation. */
typedef struct kit_stress {
    /* in */
    const json_t *params;
    long target;
    double budget_ms;
    bool judge_capacity;
    int64_t promised;         /* a capacity() answered earlier with nothing
                                 in flight (counts as answered), or -1 */
    /* out */
    long accepted, busy, refused;
    int refused_status;
    char refused_err[256];
    int64_t max_capacity;     /* the most capacity() answered */
    bool unlimited;           /* capacity() answered SY_CAPACITY_UNLIMITED */
    long negative_capacity;   /* answers below 0 */
    long peak;                /* the most in flight at an accept */
    long violation;           /* > 0: that many confirmed in flight at once,
                                 more than max_capacity */
    double max_submit_ms;
} kit_stress;

void kit_stress_run(kit_inst *ki, kit_stress *s);

/* `target` submits, fewer when time is scaled (valgrind): the stress is
 * about racing threads, and a slowed run races as much with fewer. */
long kit_stress_target(const kit *k, long target);

#define KIT_THREADS 8

#endif
