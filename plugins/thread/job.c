/* One accepted attempt: created by submit(), run on a worker (or dequeued
 * by cancel()), completed exactly once, then freed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "thread.h"

int64_t sy_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

sy_job *sy_job_new(sy_instance *inst, const sy_task *task, sy_completion *c,
                   const sy_job_spec *spec)
{
    sy_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    job->inst = inst;
    job->task = task;
    job->c = c;
    job->spec = *spec;
    job->cancel_fd = job->kill_fd = -1;
    atomic_init(&job->cancelled, 0);
    atomic_init(&job->answer_owed, false);
    atomic_init(&job->refused, 0);
    if (task->timeout_ms > 0)
        job->deadline_ms = sy_now_ms() + task->timeout_ms;
    return job;
}

void sy_job_free(sy_job *job)
{
    if (!job)
        return;
    free(job->output);
    free(job->error);
    free(job->log_out);
    free(job->log_err);
    free(job);
}

void sy_job_fail(sy_job *job, sy_outcome outcome, const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    free(job->error);
    free(job->output);
    job->output = NULL;
    job->output_len = 0;
    job->error = msg;
    job->outcome = outcome;
}

void sy_job_succeed(sy_job *job, char *output, size_t len)
{
    free(job->output);
    free(job->error);
    job->error = NULL;
    job->output = output;
    job->output_len = output ? len : 0;
    job->outcome = SY_OUTCOME_SUCCEEDED;
}

bool sy_job_should_stop(const sy_job *job)
{
    if (atomic_load(&job->cancelled))
        return true;
    return job->deadline_ms && sy_now_ms() >= job->deadline_ms;
}

int64_t sy_job_time_left(const sy_job *job)
{
    if (!job->deadline_ms)
        return 0;
    int64_t left = job->deadline_ms - sy_now_ms();
    return left > 0 ? left : 1;
}

void sy_job_log(const sy_job *job, sy_log_level level, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const sy_instance *inst = job->inst;
    inst->api->log(inst->host, level, "%s (attempt %u): %s",
                   job->task->ns ? job->task->ns : "?", job->task->attempt,
                   buf);
}

/* Under inst->job_lock: writes a descriptor of a running job (-1: it is
 * not running, nothing to stop).  Non-blocking: a full counter already
 * says it. */
static void poke(int fd)
{
    if (fd < 0)
        return;
    uint64_t one = 1;
    ssize_t w = write(fd, &one, sizeof one);
    (void)w;
}

/* Makes the descriptors of a spawning job's run: 0, or an errno value. */
static int open_fds(sy_job *job)
{
    int c = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int k = c >= 0 && job->spec.kind == SY_JOB_COMMAND ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)
                                                      : -1;
    if (c < 0 || (job->spec.kind == SY_JOB_COMMAND && k < 0)) {
        int e = errno;
        if (c >= 0)
            close(c);
        return e ? e : EMFILE;
    }
    pthread_mutex_lock(&job->inst->job_lock);
    job->cancel_fd = c;
    job->kill_fd = k;
    pthread_mutex_unlock(&job->inst->job_lock);
    return 0;
}

/* After the run: nobody writes them from now on, then they are closed. */
static void close_fds(sy_job *job)
{
    pthread_mutex_lock(&job->inst->job_lock);
    int c = job->cancel_fd, k = job->kill_fd;
    job->cancel_fd = job->kill_fd = -1;
    pthread_mutex_unlock(&job->inst->job_lock);
    if (c >= 0)
        close(c);
    if (k >= 0)
        close(k);
}

void sy_job_on_answer(void *arg, int status)
{
    sy_job *job = arg;
    sy_instance *inst = job->inst;
    pthread_mutex_lock(&inst->job_lock);
    if (status != SY_OK && status != SY_ENOTSUP) {
        /* Nobody could find the group after a crash: it must not go on.
         * The kill descriptor stops it at once, while the command runs;
         * settle() or the report names why. */
        atomic_store(&job->refused, status);
        poke(job->kill_fd);
    }
    atomic_store(&job->answer_owed, false);
    pthread_cond_broadcast(&inst->job_cond);
    /* The job may be reported and freed once this is let go. */
    pthread_mutex_unlock(&inst->job_lock);
}

/* The record is written before the attempt's end (the ABI's order): by
 * the time a command has ended and the next one started, it almost always
 * is, and this costs one load. */
static void await_answer(sy_job *job)
{
    if (!atomic_load(&job->answer_owed))
        return;
    sy_instance *inst = job->inst;
    pthread_mutex_lock(&inst->job_lock);
    while (atomic_load(&job->answer_owed))
        pthread_cond_wait(&inst->job_cond, &inst->job_lock);
    pthread_mutex_unlock(&inst->job_lock);
    int refused = atomic_load(&job->refused);
    if (refused && job->outcome != SY_OUTCOME_CANCELLED && job->outcome != SY_OUTCOME_FAILED)
        /* The answer came after the command's end: what it did stands
         * for nobody (the host no longer runs this attempt, or cannot
         * write), and the report says so. */
        sy_job_fail_refused(job, refused, NULL);
}

void sy_job_fail_refused(sy_job *job, int refused, const char *prog)
{
    const char *why = refused == SY_ESTATE ? "no longer runs this attempt and did not record"
                                           : "could not record";
    sy_outcome outcome = refused == SY_ESTATE ? SY_OUTCOME_CANCELLED : SY_OUTCOME_FAILED;
    if (prog)
        sy_job_fail(job, outcome, "command %s was killed: the host %s its process group "
                    "(status %d)", prog, why, refused);
    else
        sy_job_fail(job, outcome, "the command had ended when the host answered: it %s "
                    "its process group (status %d)", why, refused);
}

/* Hands the result to the host, then says a place is free.  The pool has
 * already given the place back, so a submit racing with this one may take
 * it: wake() is a hint, and one per freed place is what was promised. */
static void report(sy_job *job)
{
    sy_instance *inst = job->inst;
    await_answer(job);
    static const char *const oom = "out of memory while describing how the "
                                   "attempt ended";
    sy_result res = {.size = sizeof res, .outcome = job->outcome, .output = job->output, .output_len = job->output_len, .error = job->error, .retry_after_ms = job->retry_after_ms};
    if (job->outcome != SY_OUTCOME_SUCCEEDED && !res.error)
        res.error = oom;
    res.log_stdout = job->log_out;
    res.log_stdout_len = job->log_out_len;
    res.log_stdout_dropped = job->log_out_dropped;
    res.log_stdout_cut = job->log_out_cut;
    res.log_stderr = job->log_err;
    res.log_stderr_len = job->log_err_len;
    res.log_stderr_dropped = job->log_err_dropped;
    res.log_stderr_cut = job->log_err_cut;
    inst->api->complete(job->c, &res);
    /* The instance outlives this: destroy() joins this worker first. */
    inst->api->wake(inst->host);
    sy_job_free(job);
}

void sy_job_complete_settled(sy_job *job) { report(job); }

/* The finished job whose report this worker holds back (see thread.h):
 * at most one, and only between two jobs of the same worker. */
static _Thread_local sy_job *held;

void sy_job_report_held(void *arg)
{
    (void)arg;
    sy_job *job = held;
    held = NULL;
    if (job)
        report(job);
}

static void run_spawning(sy_job *job)
{
    /* Made before the cancelled flag is read again: a cancel from then on
     * reaches the descriptor, one before it the flag. */
    int err = open_fds(job);
    if (err) {
        sy_job_fail(job, SY_OUTCOME_DEFERRED, "cannot make an eventfd: %s (the host "
                    "is short of descriptors or memory; tried again, not charged)",
                    strerror(err));
        job->retry_after_ms = SY_JOB_DEFER_MS;
        return;
    }
    if (atomic_load(&job->cancelled))
        sy_job_fail(job, SY_OUTCOME_CANCELLED, "cancelled before it started");
    else if (job->spec.kind == SY_JOB_COMMAND)
        sy_cmd_run(job);
    else
        sy_isolate_run(job);
    close_fds(job);
}

static void run_kind(sy_job *job)
{
    if (atomic_load(&job->cancelled)) {
        sy_job_fail(job, SY_OUTCOME_CANCELLED, "cancelled before it started");
        return;
    }
    if (job->deadline_ms && sy_now_ms() >= job->deadline_ms) {
        sy_job_fail(job, SY_OUTCOME_TIMED_OUT,
                    "timed out before it started (timeout %lld ms)",
                    (long long)job->task->timeout_ms);
        return;
    }
    if (job->spec.kind == SY_JOB_COMMAND || job->spec.isolate)
        run_spawning(job);
    else
        sy_fn_run(job);
}

void sy_job_run(sy_pool_item *it, void *arg)
{
    (void)arg;
    sy_job *job = (sy_job *)it;
    /* A command reports the held job once its process runs (cmd.c); a job
     * that starts none, or fails to, reports it here. */
    if (job->spec.kind != SY_JOB_COMMAND)
        sy_job_report_held(NULL);
    run_kind(job);
    sy_job_report_held(NULL);
    if (sy_pool_finish(job->pool, &job->item, job->outcome))
        held = job;
    else
        report(job);
}

void sy_job_interrupt(sy_pool_item *it, void *arg)
{
    (void)arg;
    sy_job *job = (sy_job *)it;
    atomic_store(&job->cancelled, 1);
    /* A job whose run has not made its descriptors yet reads the flag
     * after it has (run_spawning). */
    pthread_mutex_lock(&job->inst->job_lock);
    poke(job->cancel_fd);
    pthread_mutex_unlock(&job->inst->job_lock);
}

/* ------------------------------------------------------------------------ */
/* The environment of spawned work                                          */
/* ------------------------------------------------------------------------ */

void sy_strv_push(sy_strv *s, char *owned)
{
    if (!owned) {
        s->oom = true;
        return;
    }
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            free(owned);
            s->oom = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = owned;
    s->v[s->n] = NULL;
}

void sy_strv_pushf(sy_strv *s, const char *fmt, ...)
{
    char *str = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&str, fmt, ap) < 0)
        str = NULL;
    va_end(ap);
    sy_strv_push(s, str);
}

void sy_strv_free(sy_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static const char *or_empty(const char *s) { return s ? s : ""; }

void sy_job_env(const sy_job *job, sy_strv *env)
{
    const sy_task *t = job->task;
    sy_strv_pushf(env, "SWITCHYARD_TASK_NS=%s", or_empty(t->ns));
    sy_strv_pushf(env, "SWITCHYARD_RUN_ID=%s", or_empty(t->run_id));
    sy_strv_pushf(env, "SWITCHYARD_TASK_ID=%s", or_empty(t->task_id));
    sy_strv_pushf(env, "SWITCHYARD_WORKFLOW=%s", or_empty(t->workflow));
    sy_strv_pushf(env, "SWITCHYARD_BASE_DIR=%s", or_empty(t->base_dir));
    sy_strv_pushf(env, "SWITCHYARD_ATTEMPT=%u", t->attempt);
    sy_strv_pushf(env, "SWITCHYARD_TIMEOUT_MS=%lld", (long long)t->timeout_ms);
}

char *sy_path_resolve(const char *base, const char *rel)
{
    char *out = NULL;
    if (rel[0] == '/' || !base || !base[0])
        return strdup(rel);
    size_t n = strlen(base);
    const char *sep = (n && base[n - 1] == '/') ? "" : "/";
    return asprintf(&out, "%s%s%s", base, sep, rel) < 0 ? NULL : out;
}
