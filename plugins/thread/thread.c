/*
 * thread.c -- the `thread` executor: function tasks and command tasks on
 * bounded pools of worker threads in the host process.
 *
 * Capacity, exactly: the instance has two pools, `default` (`workers`
 * threads) and `blocking` (`blocking_workers` threads, for tasks with
 * blocking = true), each with workers + queue_depth places.  capacity()
 * answers the free places of the default pool.  A submit is accepted only
 * when its own pool has a free place, and an accepted submit holds that
 * place until its completion: so a blocking task may get SY_EBUSY while
 * capacity() is positive (its pool is full), and the host keeps it Ready
 * until wake().  wake() is called once for every place that frees, in
 * either pool, right after complete().
 *
 * Command tasks run with switchyard/spawn.h: no shell, the input context on
 * stdin, stdout (a JSON object) as the output unless output = "none", the
 * last line of stderr in the error and its first 32 KiB and last 64 KiB
 * (and the stdout of a failed command) in the attempt's logs
 * (sy_result.log_*),
 * cwd relative to the workflow file's
 * directory (which is also the default), and the environment of the host
 * plus SWITCHYARD_TASK_NS, SWITCHYARD_RUN_ID, SWITCHYARD_TASK_ID,
 * SWITCHYARD_WORKFLOW, SWITCHYARD_BASE_DIR, SWITCHYARD_ATTEMPT and
 * SWITCHYARD_TIMEOUT_MS, then the task's env (which may override them).
 *
 * Cancel: a queued attempt completes CANCELLED at once, from inside
 * cancel(); a running command (or isolated function) gets SIGTERM on its
 * process group, SIGKILL after kill_grace, and completes CANCELLED; a
 * running in-process function sees cancelled() turn true and completes
 * when it returns (it cannot be stopped by force).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "taskapi.h"
#include "thread.h"

#ifndef SY_TASK_RUNNER
#define SY_TASK_RUNNER "/usr/local/libexec/switchyard/switchyard-task-runner"
#endif

static const char *const pool_names[SY_N_POOLS] = {"default", "blocking"};

/* The CPUs this process may run on (empty when it cannot be read). */
static void read_cpus(cpu_set_t *set)
{
    if (sched_getaffinity(0, sizeof *set, set) != 0)
        CPU_ZERO(set);
}

static int64_t cpu_count(const cpu_set_t *set)
{
    if (CPU_COUNT(set) > 0)
        return CPU_COUNT(set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */
/* ------------------------------------------------------------------------ */

static int read_int(const sy_host_api *api, const sy_params *cfg,
                    const char *key, int64_t min, int64_t max, int64_t *out,
                    char *err, size_t err_len)
{
    int64_t v = 0;
    int rc = api->param_int(cfg, key, &v);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK || v < min || v > max) {
        snprintf(err, err_len, "%s must be an integer from %lld to %lld", key,
                 (long long)min, (long long)max);
        return SY_EINVAL;
    }
    *out = v;
    return SY_OK;
}

static int read_runner(const sy_host_api *api, const sy_params *cfg,
                       sy_instance *inst, char *err, size_t err_len)
{
    const char *path = NULL;
    int rc = api->param_string(cfg, "runner", &path);
    if (rc == SY_ETYPE || (rc == SY_OK && !path[0])) {
        snprintf(err, err_len, "runner must be the path of "
                               "switchyard-task-runner");
        return SY_EINVAL;
    }
    if (rc != SY_OK)
        path = getenv("SWITCHYARD_TASK_RUNNER");
    if (!path || !path[0])
        path = SY_TASK_RUNNER;
    inst->runner = strdup(path);
    if (!inst->runner) {
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    if (inst->isolate && access(inst->runner, X_OK) != 0) {
        snprintf(err, err_len, "isolate = true, but the task runner %s "
                               "cannot be run (set runner, or "
                               "SWITCHYARD_TASK_RUNNER)", inst->runner);
        return SY_EINVAL;
    }
    return SY_OK;
}

static int read_settings(const sy_host_api *api, const sy_params *cfg,
                         sy_instance *inst, char *err, size_t err_len)
{
    int isolate = 0;
    int rc = read_int(api, cfg, "workers", 1, SY_THREAD_MAX_WORKERS,
                      &inst->workers, err, err_len);
    if (rc == SY_OK)
        rc = read_int(api, cfg, "blocking_workers", 1, SY_THREAD_MAX_WORKERS,
                      &inst->blocking_workers, err, err_len);
    if (rc == SY_OK)
        rc = read_int(api, cfg, "queue_depth", 0, 65536, &inst->queue_depth,
                      err, err_len);
    if (rc == SY_OK)
        rc = read_int(api, cfg, "max_output_bytes", 1, INT64_MAX / 2,
                      &inst->max_output_bytes, err, err_len);
    if (rc == SY_OK && api->param_type(cfg, "kill_grace") != SY_PARAM_NONE &&
        (api->param_duration_ms(cfg, "kill_grace", &inst->kill_grace_ms) !=
         SY_OK)) {
        snprintf(err, err_len, "kill_grace must be a duration (\"5s\") or "
                               "milliseconds");
        rc = SY_EINVAL;
    }
    int brc = rc == SY_OK ? api->param_bool(cfg, "isolate", &isolate) : SY_OK;
    if (brc != SY_OK && brc != SY_ENOENT) {
        snprintf(err, err_len, "isolate must be a boolean");
        rc = SY_EINVAL;
    }
    inst->isolate = isolate != 0;
    int pin = 0;
    brc = rc == SY_OK ? api->param_bool(cfg, "pin_workers", &pin) : SY_OK;
    if (brc != SY_OK && brc != SY_ENOENT) {
        snprintf(err, err_len, "pin_workers must be a boolean");
        rc = SY_EINVAL;
    }
    inst->pin_workers = pin != 0;
    if (rc == SY_OK)
        rc = read_runner(api, cfg, inst, err, err_len);
    return rc;
}

static void set_defaults(sy_instance *inst)
{
    read_cpus(&inst->cpus);
    inst->workers = cpu_count(&inst->cpus);
    if (inst->workers > SY_THREAD_MAX_WORKERS)
        inst->workers = SY_THREAD_MAX_WORKERS;
    inst->blocking_workers = SY_THREAD_DEFAULT_BLOCKING;
    inst->queue_depth = 0;
    inst->kill_grace_ms = SY_THREAD_DEFAULT_GRACE_MS;
    inst->max_output_bytes = SY_THREAD_DEFAULT_MAX_OUTPUT;
}

/* ------------------------------------------------------------------------ */
/* create / destroy                                                         */
/* ------------------------------------------------------------------------ */

static void thread_destroy(sy_instance *inst)
{
    if (!inst)
        return;
    for (int i = 0; i < SY_N_POOLS; i++)
        sy_pool_stop(&inst->pools[i]);
    sy_libs_free(&inst->libs);
    pthread_mutex_destroy(&inst->job_lock);
    pthread_cond_destroy(&inst->job_cond);
    free(inst->runner);
    free(inst);
}

/* pin_workers: the default pool's workers are bound to CPUs, and what
 * they spawn inherits the binding.  A small command then starts, execs
 * and ends on its worker's CPU instead of being moved to another at exec,
 * which on busy CPUs costs more than the rest of its start (bench/README).
 * The blocking pool, which holds long waits, is never pinned. */
static const cpu_set_t *pin_set(const sy_instance *inst, int pool)
{
    if (pool != SY_POOL_DEFAULT || !inst->pin_workers ||
        CPU_COUNT(&inst->cpus) == 0)
        return NULL;
    return &inst->cpus;
}

static int start_pools(sy_instance *inst, char *err, size_t err_len)
{
    const int64_t workers[SY_N_POOLS] = {inst->workers,
                                         inst->blocking_workers};
    for (int i = 0; i < SY_N_POOLS; i++) {
        int rc = sy_pool_start(&inst->pools[i], pool_names[i], workers[i],
                               inst->queue_depth, pin_set(inst, i),
                               sy_job_run, sy_job_interrupt,
                               sy_job_report_held, inst, err, err_len);
        if (rc != SY_OK)
            return rc;
    }
    return SY_OK;
}

static int thread_create(const sy_host_api *api, sy_host *host,
                         const sy_params *config, sy_instance **out,
                         char *err, size_t err_len)
{
    if (!api || !out || !config) {
        snprintf(err, err_len, "create() needs the host api, the settings "
                               "and an out pointer");
        return SY_EINVAL;
    }
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    sy_libs_init(&inst->libs);
    pthread_mutex_init(&inst->job_lock, NULL);
    pthread_cond_init(&inst->job_cond, NULL);
    sy_task_api_fill(&inst->task_api, api);
    set_defaults(inst);
    int rc = read_settings(api, config, inst, err, err_len);
    if (rc == SY_OK)
        rc = start_pools(inst, err, err_len);
    if (rc != SY_OK) {
        thread_destroy(inst);
        return rc;
    }
    *out = inst;
    return SY_OK;
}

/* ------------------------------------------------------------------------ */
/* The dispatch path                                                        */
/* ------------------------------------------------------------------------ */

static int64_t thread_capacity(sy_instance *inst)
{
    return sy_pool_capacity(&inst->pools[SY_POOL_DEFAULT]);
}

static int thread_submit(sy_instance *inst, const sy_task *task,
                         sy_completion *c, char *err, size_t err_len)
{
    if (!task || !SY_HAS_FIELD(task, sy_task, base_dir) || !task->params) {
        snprintf(err, err_len, "the task lacks fields this executor needs "
                               "(a host older than ABI 1.0?)");
        return SY_EINVAL;
    }
    sy_job_spec spec;
    int rc = sy_spec_parse(inst, task->params, &spec, err, err_len);
    if (rc != SY_OK)
        return rc;
    sy_pool *pool = &inst->pools[spec.blocking ? SY_POOL_BLOCKING
                                               : SY_POOL_DEFAULT];
    if (sy_pool_capacity(pool) == 0)
        return SY_EBUSY;
    sy_job *job = sy_job_new(inst, task, c, &spec);
    if (!job && (errno == EMFILE || errno == ENFILE || errno == ENOMEM)) {
        /* Out of memory for the attempt (its descriptors are made only
         * when it runs, job.c): the machine's shortage, not the task's.  Accepted and deferred at
         * once (ABI 1.1), so it is offered again, uncharged, without
         * waiting for a wake() that nothing in flight may ever send. */
        char why[160];
        snprintf(why, sizeof why, "cannot set up the attempt: %s (the host "
                 "is short of descriptors or memory; tried again, not "
                 "charged)", strerror(errno));
        sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_DEFERRED,
                         .error = why, .retry_after_ms = 500};
        inst->api->complete(c, &res);
        return SY_OK;
    }
    if (!job) {
        snprintf(err, err_len, "cannot set up the attempt: %s",
                 strerror(errno));
        return SY_EIO;
    }
    job->pool = pool;
    rc = sy_pool_submit(pool, &job->item, c);
    if (rc != SY_OK)
        sy_job_free(job);
    /* On SY_OK a worker may already have completed and freed the job. */
    return rc;
}

static int thread_cancel(sy_instance *inst, sy_completion *c)
{
    for (int i = 0; i < SY_N_POOLS; i++) {
        sy_pool_item *it = NULL;
        switch (sy_pool_cancel(&inst->pools[i], c, &it)) {
        case SY_POOL_DEQUEUED: {
            sy_job *job = (sy_job *)it;
            sy_job_fail(job, SY_OUTCOME_CANCELLED, "cancelled while queued, "
                        "before it started");
            sy_job_complete_settled(job);
            return SY_OK;
        }
        case SY_POOL_INTERRUPTED:
            return SY_OK;
        case SY_POOL_ABSENT:
            break;
        }
    }
    return SY_ENOENT;
}

static int thread_validate(sy_instance *inst, const sy_params *task_params,
                           const char *base_dir, char *err, size_t err_len)
{
    sy_job_spec spec;
    int rc = sy_spec_parse(inst, task_params, &spec, err, err_len);
    if (rc != SY_OK || spec.kind != SY_JOB_FUNCTION)
        return rc;
    if (spec.isolate)
        return sy_isolate_check(inst, base_dir, spec.function, err, err_len);
    sy_task_fn fn = NULL;
    return sy_fn_resolve(&inst->libs, base_dir, spec.function, &fn, err,
                         err_len);
}

/* ------------------------------------------------------------------------ */
/* Metrics                                                                  */
/* ------------------------------------------------------------------------ */

static void emit_pool(sy_metric_fn emit, void *sink, const char *pool,
                      const sy_pool_counts *k)
{
    const struct { const char *name; int64_t v; } m[] = {
        {"workers", k->workers},     {"pinned", k->pinned},
        {"active", k->active},
        {"queued", k->queued},       {"running", k->running},
        {"capacity", k->capacity},   {"submitted", k->submitted},
        {"succeeded", k->succeeded}, {"failed", k->failed},
        {"timed_out", k->timed_out}, {"cancelled", k->cancelled}};
    char name[64];
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        snprintf(name, sizeof name, "%s.%s", pool, m[i].name);
        emit(sink, name, m[i].v);
    }
}

static void thread_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_pool_counts k[SY_N_POOLS], sum;
    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < SY_N_POOLS; i++) {
        sy_pool_counts_get(&inst->pools[i], &k[i]);
        sum.active += k[i].active;
        sum.queued += k[i].queued;
        sum.submitted += k[i].submitted;
        sum.succeeded += k[i].succeeded;
        sum.failed += k[i].failed;
        sum.timed_out += k[i].timed_out;
        sum.cancelled += k[i].cancelled;
    }
    emit(sink, "active", sum.active);
    emit(sink, "queued", sum.queued);
    emit(sink, "capacity", k[SY_POOL_DEFAULT].capacity);
    emit(sink, "submitted", sum.submitted);
    emit(sink, "succeeded", sum.succeeded);
    emit(sink, "failed", sum.failed);
    emit(sink, "timed_out", sum.timed_out);
    emit(sink, "cancelled", sum.cancelled);
    for (int i = 0; i < SY_N_POOLS; i++)
        emit_pool(emit, sink, pool_names[i], &k[i]);
    emit(sink, "commands.started",
         atomic_load_explicit(&inst->commands_started, memory_order_relaxed));
    emit(sink, "commands.spawn_us",
         atomic_load_explicit(&inst->commands_spawn_ns, memory_order_relaxed) /
             1000);
    emit(sink, "commands.run_us",
         atomic_load_explicit(&inst->commands_run_ns, memory_order_relaxed) /
             1000);
}

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

static const sy_executor thread_executor = {
    SY_EXECUTOR_V1,
    .name = "thread",
    .version = "1.0.0",
    .description = "C function tasks and command tasks on bounded pools of "
                   "worker threads",
    .instance_params = sy_thread_instance_params,
    .task_params = sy_thread_task_params,
    .create = thread_create,
    .destroy = thread_destroy,
    .capacity = thread_capacity,
    .submit = thread_submit,
    .cancel = thread_cancel,
    .validate = thread_validate,
    .metrics = thread_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void)
{
    return &thread_executor;
}
