/*
 * checks.c -- the table of checks and the steps several of them share:
 * opening and closing an instance, a patient submit, the 8-thread stress.
 */
#include "checks.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A number's digits as a string literal, for --list. */
#define KIT_STR_(x) #x
#define KIT_STR(x) KIT_STR_(x)

const kit_check kit_checks[] = {
    {"load", NULL, kit_check_load,
     "loads through the host's loader (file checks, ABI, descriptor)"},
    {"descriptor", "load", kit_check_descriptor,
     "descriptor fields, sizes and parameter declarations"},
    {"create", "load", kit_check_create,
     "create() with the settings, capacity(), destroy(), twice and side by "
     "side"},
    /* Bad settings are derived from the declarations: they must be
     * sound first. */
    {"bad-params", "descriptor", kit_check_bad_params,
     "create() refuses bad settings with a clear one-line error, no crash, "
     "no leak"},
    {"validate", "create", kit_check_validate,
     "the task fits the declarations; validate() accepts it and refuses "
     "bad_task"},
    {"complete-once", "create", kit_check_complete_once,
     "every accepted submit is completed exactly once, with a well-formed "
     "result"},
    {"nonblocking", "complete-once", kit_check_nonblocking,
     "submit() returns at once (calls under 50 ms; none over the host's "
     "bound, " KIT_STR(SY_CALL_BOUND_MS) " ms)"},
    {"concurrency", "nonblocking", kit_check_concurrency,
     "exactly once under 8 submitting threads, thousands of submits"},
    {"result-stable", "concurrency", kit_check_result_stable,
     "a result stays unchanged until complete() returns, with completions "
     "from 8 threads at once"},
    {"capacity", "nonblocking", kit_check_capacity,
     "never more in flight than capacity() promised, under 8 threads"},
    {"cancel-blocking", "nonblocking", kit_check_cancel_blocking,
     "cancel() returns at once (calls under 50 ms; none over the host's "
     "bound, " KIT_STR(SY_CALL_BOUND_MS) " ms)"},
    {"cancel-queued", "cancel-blocking", kit_check_cancel_queued,
     "cancel() of work just submitted completes it exactly once"},
    {"cancel-running", "cancel-blocking", kit_check_cancel_running,
     "cancel() of running work completes it exactly once"},
    {"late-completion", "cancel-blocking", kit_check_late,
     "no complete() once a task ended, nor after cancel() said SY_ENOENT"},
    {"output-size", "nonblocking", kit_check_output_size,
     "outputs fit max_context_bytes (default 16 MiB), error texts 64 KiB"},
    {"input", "nonblocking", kit_check_input,
     "the task's input is never written (it lies in read-only pages)"},
    {"fd-leak", "nonblocking", kit_check_fd_leak,
     "no file descriptor left open per task"},
    {"thread-leak", "nonblocking", kit_check_thread_leak,
     "no thread left running per task"},
    /* A thread left per task is memory left per task, and a thread left
     * after destroy(): one reason is enough. */
    {"memory", "thread-leak", kit_check_memory,
     "no memory kept per task, over a thousand tasks after a warm-up"},
    {"destroy", "thread-leak", kit_check_destroy,
     "destroy() leaves no thread behind and nothing completes after it"},
    {"metrics", "nonblocking", kit_check_metrics,
     "metrics() agree with what the kit submitted and saw completed"},
    {"wake", "nonblocking", kit_check_wake,
     "wake() is called when capacity frees after SY_EBUSY"},
    {"resume", "cancel-blocking", kit_check_resume,
     "resume() (ABI 1.4) of an attempt never started starts it, completes "
     "it once, and cancels"},
    {NULL, NULL, NULL, NULL},
};

/* ------------------------------------------------------------------------ */
/* Opening and closing                                                      */
/* ------------------------------------------------------------------------ */

bool kit_open(kit_ctx *x, kit_inst *ki, size_t ncalls, kit_report *r)
{
    char err[512] = "";
    if (kit_inst_init(ki, x, ncalls) != 0) {
        kit_fail(r, "out of memory");
        return false;
    }
    int rc = kit_create(ki, x->k->in.instance, err, sizeof err);
    if (rc != SY_OK || !ki->inst) {
        kit_fail(r, "create() refused the instance settings with %s: %s "
                 "(give working settings as instance = { ... } in --params)",
                 rc == SY_OK ? "SY_OK and no instance" : kit_status_name(rc),
                 err[0] ? err : "(no message)");
        return false;
    }
    return true;
}

void kit_note_duration(kit_inst *ki, const kit_call *call,
                          const char *what, double ms)
{
    /* A slow machine (valgrind) slows the host's calls as it does the
     * kit's: the bound scales with --time-scale. */
    if (ms <= SY_CALL_BOUND_MS * ki->k->scale)
        return;
    pthread_mutex_lock(&ki->lock);
    if (atomic_fetch_add(&ki->over_bound, 1) == 0)
        snprintf(ki->over_bound_why, sizeof ki->over_bound_why,
                 "%s() of %s took %.1f ms", what, call->task_id, ms);
    pthread_mutex_unlock(&ki->lock);
}

int kit_cancel(kit_inst *ki, kit_call *call, double *ms)
{
    double t0 = kit_now_ms();
    int rc = ki->d->cancel(ki->inst, &call->c);
    double t = kit_now_ms() - t0;
    kit_note_duration(ki, call, "cancel", t);
    if (ms)
        *ms = t;
    return rc;
}

bool kit_calls_in_bound(kit_inst *ki, kit_report *r)
{
    long n = atomic_load(&ki->over_bound);
    if (n == 0)
        return true;
    char scaled[64] = "";
    if (ki->k->scale != 1.0)
        snprintf(scaled, sizeof scaled, " (%.0f ms with --time-scale %g)",
                 SY_CALL_BOUND_MS * ki->k->scale, ki->k->scale);
    pthread_mutex_lock(&ki->lock);
    kit_fail(r, "%s, over the host's bound of %d ms%s (%ld such calls): "
             "the host's watchdog reports the call stuck and the instance "
             "gets no new task; return at once and do the work on a thread",
             ki->over_bound_why, SY_CALL_BOUND_MS, scaled, n);
    pthread_mutex_unlock(&ki->lock);
    return false;
}

bool kit_close(kit_inst *ki, kit_report *r)
{
    char msg[400];
    if (!ki->bound_judged_later && !kit_calls_in_bound(ki, r))
        return false;
    if (!kit_wait_all(ki, KIT_DEADLINE_MS)) {
        kit_fail_undrained(ki, r);
        return false;
    }
    if (!kit_once_ok(ki, msg, sizeof msg)) {
        kit_fail(r, "%s", msg);
        return false;
    }
    kit_destroy(ki);
    kit_inst_fini(ki);
    return true;
}

kit_verdict kit_fail_undrained(kit_inst *ki, kit_report *r)
{
    char msg[400];
    kit_describe_missing(ki, msg, sizeof msg);
    return kit_fail(r, "%s", msg);
}

const json_t *kit_long_params(const kit *k)
{
    return k->in.long_task ? k->in.long_task : k->in.task;
}

kit_verdict kit_fail_refused(kit_report *r, int rc, const char *err)
{
    return kit_fail(r, "submit() refused the kit's task with %s: %s (give "
                    "the task's parameters as task = { ... } in --params)",
                    kit_status_name(rc), err && *err ? err : "(no message)");
}

/* ------------------------------------------------------------------------ */
/* Submitting                                                               */
/* ------------------------------------------------------------------------ */

typedef struct progress {
    long wakes, completed;
} progress;

static bool moved(kit_inst *ki, void *arg)
{
    const progress *p = arg;
    return atomic_load(&ki->host.wakes) != p->wakes ||
           atomic_load(&ki->completed) != p->completed;
}

/* After SY_EBUSY a host waits for wake(); the kit also wakes on any
 * completion and every few milliseconds, so a plugin that forgets wake()
 * is slowed, not stalled (the wake check judges that). */
static void wait_progress(kit_inst *ki, const progress *since, double ms)
{
    progress p = *since;
    kit_wait_for(ki, ms, moved, &p);
}

int kit_submit_patient(kit_inst *ki, const json_t *params, double until,
                       double *ms, kit_call **out, char *err, size_t len)
{
    for (;;) {
        kit_call *call = kit_call_new(ki, params);
        if (!call)
            return SY_ENOMEM;
        progress p = {atomic_load(&ki->host.wakes),
                      atomic_load(&ki->completed)};
        double t = 0;
        int rc = kit_submit(ki, call, &t, err, len);
        if (ms && t > *ms)
            *ms = t;
        if (rc == SY_OK && out)
            *out = call;
        if (rc != SY_EBUSY || kit_now_ms() >= until)
            return rc;
        wait_progress(ki, &p, 50);
    }
}

void kit_cancel_all(kit_inst *ki)
{
    size_t n = atomic_load(&ki->next);
    if (n > ki->ncalls)
        n = ki->ncalls;
    while (n-- > 0) {
        kit_call *c = &ki->calls[n];
        if (atomic_load(&c->state) == CALL_ACCEPTED &&
            atomic_load(&c->c.calls) == 0)
            kit_cancel(ki, c, NULL);
    }
}

/* ------------------------------------------------------------------------ */
/* The stress                                                               */
/* ------------------------------------------------------------------------ */

typedef struct stress_run {
    kit_inst *ki;
    kit_stress *s;
    double until;
    atomic_long accepted, busy, refused, negative, peak;
    atomic_bool stop, unlimited;
    _Atomic int64_t max_cap;
    _Atomic double max_ms;
    pthread_mutex_t lock;   /* guards what follows */
    int confirms;
    long violation;
    int refused_status;
    char refused_err[256];
} stress_run;

static void raise_to(_Atomic int64_t *v, int64_t x)
{
    int64_t cur = atomic_load(v);
    while (x > cur && !atomic_compare_exchange_weak(v, &cur, x))
        ;
}

static void raise_long(atomic_long *v, long x)
{
    long cur = atomic_load(v);
    while (x > cur && !atomic_compare_exchange_weak(v, &cur, x))
        ;
}

static void raise_double(_Atomic double *v, double x)
{
    double cur = atomic_load(v);
    while (x > cur && !atomic_compare_exchange_weak(v, &cur, x))
        ;
}

/* The kit counts a submit in flight from submit()'s return to the
 * completion's arrival; a plugin that frees its slot a moment before
 * calling complete() can look one over for that moment.  So an excess is
 * a violation only when the submits behind it are still in flight 50 ms
 * later: each of them was then in flight all along. */
static void confirm_excess(stress_run *run)
{
    if (pthread_mutex_trylock(&run->lock) != 0)
        return;
    kit_inst *ki = run->ki;
    int64_t bound = atomic_load(&run->max_cap);
    size_t n = atomic_load(&ki->next);
    if (n > ki->ncalls)
        n = ki->ncalls;
    size_t *idx = run->violation || run->confirms >= 3
                      ? NULL
                      : malloc((n ? n : 1) * sizeof *idx);
    size_t m = 0;
    for (size_t i = 0; idx && i < n; i++)
        if (atomic_load(&ki->calls[i].state) == CALL_ACCEPTED &&
            atomic_load(&ki->calls[i].c.calls) == 0)
            idx[m++] = i;
    if (idx && (int64_t)m > bound) {
        run->confirms++;
        kit_sleep_ms(kit_scaled(ki->k, 50, 2));
        long still = 0;
        for (size_t j = 0; j < m; j++)
            still += atomic_load(&ki->calls[idx[j]].c.calls) == 0;
        if (still > atomic_load(&run->max_cap)) {
            run->violation = still;
            atomic_store(&run->stop, true);
        }
    }
    free(idx);
    pthread_mutex_unlock(&run->lock);
}

static void observe_capacity(stress_run *run, int64_t cap)
{
    if (cap < 0)
        atomic_fetch_add(&run->negative, 1);
    else if (cap == SY_CAPACITY_UNLIMITED)
        atomic_store(&run->unlimited, true);
    else
        raise_to(&run->max_cap, cap);
}

static void note_refusal(stress_run *run, int rc, const char *err)
{
    pthread_mutex_lock(&run->lock);
    if (atomic_fetch_add(&run->refused, 1) == 0) {
        run->refused_status = rc;
        snprintf(run->refused_err, sizeof run->refused_err, "%s", err);
    }
    pthread_mutex_unlock(&run->lock);
    atomic_store(&run->stop, true);
}

static bool stress_going(stress_run *run)
{
    return !atomic_load(&run->stop) && kit_now_ms() < run->until &&
           atomic_load(&run->accepted) < run->s->target;
}

static void *stress_thread(void *arg)
{
    stress_run *run = arg;
    kit_inst *ki = run->ki;
    char err[256];
    while (stress_going(run)) {
        observe_capacity(run, ki->d->capacity(ki->inst));
        kit_call *call = kit_call_new(ki, run->s->params);
        if (!call)
            break;
        progress p = {atomic_load(&ki->host.wakes),
                      atomic_load(&ki->completed)};
        double ms = 0;
        int rc = kit_submit(ki, call, &ms, err, sizeof err);
        raise_double(&run->max_ms, ms);
        if (rc == SY_OK) {
            atomic_fetch_add(&run->accepted, 1);
            long k = kit_in_flight(ki);
            raise_long(&run->peak, k);
            if (run->s->judge_capacity && !atomic_load(&run->unlimited) &&
                k > atomic_load(&run->max_cap))
                confirm_excess(run);
        } else if (rc == SY_EBUSY) {
            atomic_fetch_add(&run->busy, 1);
            wait_progress(ki, &p, 5);
        } else {
            note_refusal(run, rc, err);
        }
    }
    return NULL;
}

static void stress_report(stress_run *run, kit_stress *s)
{
    s->accepted = atomic_load(&run->accepted);
    s->busy = atomic_load(&run->busy);
    s->refused = atomic_load(&run->refused);
    s->refused_status = run->refused_status;
    snprintf(s->refused_err, sizeof s->refused_err, "%s", run->refused_err);
    s->max_capacity = atomic_load(&run->max_cap);
    s->unlimited = atomic_load(&run->unlimited);
    s->negative_capacity = atomic_load(&run->negative);
    s->peak = atomic_load(&run->peak);
    s->violation = run->violation;
    s->max_submit_ms = atomic_load(&run->max_ms);
}

long kit_stress_target(const kit *k, long target)
{
    long t = (long)((double)target / k->scale);
    return t < 400 ? 400 : t;
}

void kit_stress_run(kit_inst *ki, kit_stress *s)
{
    stress_run run;
    memset(&run, 0, sizeof run);
    run.ki = ki;
    run.s = s;
    run.until = kit_now_ms() + s->budget_ms * ki->k->scale;
    pthread_mutex_init(&run.lock, NULL);
    atomic_init(&run.max_cap, 0);
    /* What the instance promised when idle counts too: a slot freed just
     * after its completion may still be busy when this round starts. */
    if (s->promised >= 0)
        observe_capacity(&run, s->promised);
    observe_capacity(&run, ki->d->capacity(ki->inst));
    pthread_t t[KIT_THREADS];
    int started = 0;
    for (; started < KIT_THREADS; started++)
        if (pthread_create(&t[started], NULL, stress_thread, &run) != 0)
            break;
    if (started == 0)
        stress_thread(&run);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    stress_report(&run, s);
    pthread_mutex_destroy(&run.lock);
}
