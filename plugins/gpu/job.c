/* One accepted attempt of the gpu executor: created by submit(), placed
 * by the scheduler, run on its own thread through switchyard/spawn.h with
 * its devices in the environment, completed exactly once, then joined
 * and freed by the instance's loop. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/sdk.h>
#include <switchyard/spawn.h>

#include "gpu.h"

int64_t sy_gpu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

sy_gpu_job *sy_gpu_job_new(sy_instance *inst, const sy_task *task,
                           sy_completion *c, const sy_gpu_spec *spec)
{
    sy_gpu_job *job = calloc(1, sizeof *job);
    if (!job)
        return NULL;
    job->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (job->cancel_fd < 0) {
        free(job);
        return NULL;
    }
    job->inst = inst;
    job->task = task;
    job->c = c;
    job->spec = *spec;
    atomic_init(&job->cancelled, 0);
    if (task->timeout_ms > 0)
        job->deadline_ms = sy_gpu_now_ms() + task->timeout_ms;
    sy_gs_job *g = &job->gs;
    g->gpus = spec->gpus;
    g->mem_mib = spec->mem_mib;
    g->model = spec->model;
    g->priority = spec->priority;
    g->expected_ms = spec->expected_ms;
    g->timeout_ms = task->timeout_ms;
    g->share = spec->mem_mib > 0;
    g->owner = job;
    return job;
}

void sy_gpu_job_free(sy_gpu_job *job)
{
    if (!job)
        return;
    if (job->cancel_fd >= 0)
        close(job->cancel_fd);
    free(job);
}

void sy_gpu_job_interrupt(sy_gpu_job *job)
{
    uint64_t one = 1;
    /* Non-blocking: a full counter already means "stop". */
    ssize_t w = write(job->cancel_fd, &one, sizeof one);
    (void)w;
}

/* ------------------------------------------------------------------------ */
/* The end of a job                                                         */
/* ------------------------------------------------------------------------ */

static void count(sy_instance *inst, sy_outcome o)
{
    switch (o) {
    case SY_OUTCOME_SUCCEEDED: inst->succeeded++; break;
    case SY_OUTCOME_TIMED_OUT: inst->timed_out++; break;
    case SY_OUTCOME_CANCELLED: inst->cancelled++; break;
    case SY_OUTCOME_DEFERRED: inst->deferred++; break;
    default: inst->failed++; break;
    }
}

/* Unlinks the job so cancel() no longer finds it, counts the outcome. */
static void unlink_job(sy_gpu_job *job, sy_outcome o)
{
    sy_instance *inst = job->inst;
    pthread_mutex_lock(&inst->mu);
    if (job->prev)
        job->prev->next = job->next;
    else if (inst->jobs == job)
        inst->jobs = job->next;
    if (job->next)
        job->next->prev = job->prev;
    job->next = job->prev = NULL;
    job->done = true;
    count(inst, o);
    pthread_mutex_unlock(&inst->mu);
}

/* Hands the result to the host; then frees the devices and the place in
 * the queue (after complete(): the host counts the attempt in flight
 * until its result arrives), and says so with wake(). */
static void finish(sy_gpu_job *job, const sy_result *res, bool started)
{
    sy_instance *inst = job->inst;
    unlink_job(job, res->outcome);
    inst->api->complete(job->c, res);
    pthread_mutex_lock(&inst->mu);
    if (started) {
        sy_gs_release(&inst->sched, &job->gs);
        job->zombie_next = inst->zombies;
        inst->zombies = job;
    }
    inst->active--;
    inst->kick = true;
    pthread_cond_signal(&inst->cond);
    pthread_mutex_unlock(&inst->mu);
    inst->api->wake(inst->host);
    if (!started)
        sy_gpu_job_free(job);
}

void sy_gpu_job_finish_unstarted(sy_gpu_job *job, sy_outcome outcome,
                                 const char *why)
{
    sy_result res = {.size = sizeof res, .outcome = outcome, .error = why};
    finish(job, &res, false);
}

/* ------------------------------------------------------------------------ */
/* Running the command                                                      */
/* ------------------------------------------------------------------------ */

typedef struct strv {
    char *v[512];
    size_t n;
    bool full;
} strv;

static void pushf(strv *s, const char *fmt, ...) SY_PRINTF(2, 3);
static void pushf(strv *s, const char *fmt, ...)
{
    char *str = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&str, fmt, ap) < 0)
        str = NULL;
    va_end(ap);
    if (!str || s->n + 1 >= sizeof s->v / sizeof s->v[0]) {
        free(str);
        s->full = true;
        return;
    }
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

static void strv_free(strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static const char *or_empty(const char *s) { return s ? s : ""; }

/* The attempt's SWITCHYARD_* variables, the devices, then the task's env
 * (which may override any of them). */
static void build_env(const sy_gpu_job *job, strv *env)
{
    const sy_task *t = job->task;
    const sy_host_api *api = job->inst->api;
    pushf(env, "SWITCHYARD_TASK_NS=%s", or_empty(t->ns));
    pushf(env, "SWITCHYARD_RUN_ID=%s", or_empty(t->run_id));
    pushf(env, "SWITCHYARD_TASK_ID=%s", or_empty(t->task_id));
    pushf(env, "SWITCHYARD_WORKFLOW=%s", or_empty(t->workflow));
    pushf(env, "SWITCHYARD_BASE_DIR=%s", or_empty(t->base_dir));
    pushf(env, "SWITCHYARD_ATTEMPT=%u", t->attempt);
    pushf(env, "SWITCHYARD_TIMEOUT_MS=%lld", (long long)t->timeout_ms);
    /* UUIDs, not indexes: indexes change with CUDA_DEVICE_ORDER and
     * across reboots. */
    pushf(env, "CUDA_VISIBLE_DEVICES=%s", job->uuids);
    pushf(env, "NVIDIA_VISIBLE_DEVICES=%s", job->uuids);
    pushf(env, "SWITCHYARD_GPU_UUIDS=%s", job->uuids);
    const sy_params *group = NULL;
    if (api->param_group(t->params, "env", &group) != SY_OK)
        return;
    size_t n = api->param_count(group);
    for (size_t i = 0; i < n; i++) {
        const char *name = api->param_name(group, i), *v = NULL;
        if (name && api->param_string(group, name, &v) == SY_OK)
            pushf(env, "%s=%s", name, v);
    }
}

static char *resolve_cwd(const sy_gpu_job *job)
{
    const char *base = job->task->base_dir, *rel = job->spec.cwd;
    char *out = NULL;
    if (!rel)
        return base && base[0] ? strdup(base) : NULL;
    if (rel[0] == '/' || !base || !base[0])
        return strdup(rel);
    return asprintf(&out, "%s/%s", base, rel) < 0 ? NULL : out;
}

static void trim(sy_spawn_result *r)
{
    while (r->err_len && (r->err[r->err_len - 1] == '\n' ||
                          r->err[r->err_len - 1] == '\r'))
        r->err[--r->err_len] = '\0';
}

/* Records the command's process group with the host (ABI 1.2), so that a
 * host killed from now on leaves a record from which the next one kills
 * the group before the retry starts. */
static int record_process(void *arg, pid_t pgid, uint64_t start_time)
{
    sy_gpu_job *job = arg;
    const sy_host_api *api = job->inst->api;
    if (!SY_HOST_HAS(api, attempt_process))
        return 0;
    int rc = api->attempt_process(job->c, (int64_t)pgid, start_time);
    return rc == SY_ENOTSUP ? 0 : rc;
}

/* How the run ended, as a result (the strings live in r, msg, job). */
static void settle(sy_gpu_job *job, const char *prog, sy_spawn_result *r,
                   sy_result *res, char *msg, size_t len)
{
    char how[128];
    sy_spawn_describe(r, how, sizeof how);
    trim(r);
    const char *tail = r->err[0] ? r->err : "(no stderr)";
    res->note = job->uuids;
    if (r->process_refused) {
        res->outcome = r->process_refused == SY_ESTATE ? SY_OUTCOME_CANCELLED
                                                      : SY_OUTCOME_FAILED;
        snprintf(msg, len, "command %s was killed at its start: the host "
                 "could not record its process group (status %d)", prog,
                 r->process_refused);
    } else if (job->deferring) {
        /* Stopped for a broken device: not the task's fault. */
        bool v11 = job->inst->api->abi_minor >= 1;
        res->outcome = v11 ? SY_OUTCOME_DEFERRED : SY_OUTCOME_FAILED;
        res->retry_after_ms = job->inst->retry_after_ms;
        res->note = job->note;
        snprintf(msg, len, "stopped: %s", job->note);
    } else if (atomic_load(&job->cancelled) || r->cancelled) {
        res->outcome = SY_OUTCOME_CANCELLED;
        snprintf(msg, len, "cancelled: the process group of %s was "
                 "terminated", prog);
    } else if (r->timed_out) {
        res->outcome = SY_OUTCOME_TIMED_OUT;
        snprintf(msg, len, "command %s timed out after %lld ms; its process "
                 "group was terminated; stderr:\n%s", prog,
                 (long long)job->task->timeout_ms, tail);
    } else if (r->output_too_large) {
        res->outcome = SY_OUTCOME_FAILED;
        snprintf(msg, len, "command %s wrote more than %zu bytes on stdout",
                 prog, (size_t)SY_SPAWN_DEFAULT_MAX_OUTPUT);
    } else if (!r->exited || r->exit_code != 0) {
        res->outcome = SY_OUTCOME_FAILED;
        snprintf(msg, len, "command %s %s; stderr:\n%s", prog, how, tail);
    } else {
        res->outcome = SY_OUTCOME_SUCCEEDED;
        size_t i = 0;
        while (i < r->out_len && strchr(" \t\r\n", r->out[i]))
            i++;
        res->output = i < r->out_len ? r->out : NULL;
        res->output_len = i < r->out_len ? r->out_len : 0;
        return;
    }
    res->error = msg;
}

static void run_command(sy_gpu_job *job)
{
    const sy_host_api *api = job->inst->api;
    const sy_params *p = job->task->params;
    const char *argv[256] = {NULL};
    size_t n = 0;
    char msg[4096];
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_FAILED};
    if (api->param_array_len(p, "command", &n) != SY_OK || n == 0 ||
        n >= sizeof argv / sizeof argv[0])
        n = 0;
    for (size_t i = 0; i < n; i++)
        if (api->param_array_string(p, "command", i, &argv[i]) != SY_OK)
            n = 0;
    strv env = {.n = 0};
    build_env(job, &env);
    char *cwd = resolve_cwd(job);
    int64_t left = job->deadline_ms ? job->deadline_ms - sy_gpu_now_ms() : 0;
    sy_spawn_result r;
    char err[1024];
    memset(&r, 0, sizeof r);
    if (n == 0 || env.full) {
        res.error = n ? "out of memory" : "command must be a non-empty list "
                                          "of at most 255 strings";
    } else if (job->deadline_ms && left <= 0) {
        res.outcome = SY_OUTCOME_TIMED_OUT;
        res.error = "timed out while waiting for GPUs";
    } else {
        argv[n] = NULL;
        sy_spawn_opts o;
        sy_spawn_opts_init(&o, argv);
        o.env = (const char *const *)env.v;
        o.cwd = cwd;
        o.input = job->task->input;
        o.input_len = job->task->input ? job->task->input_len : 0;
        o.timeout_ms = job->deadline_ms ? left : 0;
        o.kill_grace_ms = job->spec.kill_grace_ms;
        o.cancel_fd = job->cancel_fd;
        o.on_process = record_process;
        o.on_process_arg = job;
        if (sy_spawn_run(&o, &r, err, sizeof err) != 0) {
            snprintf(msg, sizeof msg, "command: %s", err);
            res.error = msg;
        } else {
            pthread_mutex_lock(&job->inst->mu);
            settle(job, argv[0], &r, &res, msg, sizeof msg);
            pthread_mutex_unlock(&job->inst->mu);
        }
    }
    finish(job, &res, true);
    sy_spawn_result_free(&r);
    strv_free(&env);
    free(cwd);
}

static void *job_main(void *arg)
{
    run_command(arg);
    return NULL;
}

int sy_gpu_job_start(sy_gpu_job *job)
{
    size_t off = 0;
    job->uuids[0] = '\0';
    for (int i = 0; i < job->gs.ndevs; i++) {
        const sy_nvml_dev_info *d = sy_nvml_dev(job->inst->nvml,
                                                (size_t)job->gs.devs[i]);
        int w = snprintf(job->uuids + off, sizeof job->uuids - off, "%s%s",
                         i ? "," : "", d ? d->uuid : "?");
        if (w > 0 && (size_t)w < sizeof job->uuids - off)
            off += (size_t)w;
        job->inst->gdev[job->gs.devs[i]].tasks_run++;
    }
    if (pthread_create(&job->thread, NULL, job_main, job) != 0)
        return -1;
    job->has_thread = true;
    return 0;
}
