/*
 * template.c -- a complete Switchyard executor to copy and change.
 *
 * It runs each task on a bounded pool of worker threads: the worker
 * "sleeps" for the task parameter `sleep_ms`, then succeeds with the task's
 * input as its output.  Replace run_job() with your work and keep the rest:
 * the queue, the capacity counter, cancel, metrics and shutdown are the
 * parts every executor needs and the conformance kit checks.
 *
 * Instance settings (switchyard.cfg):
 *   workers  INT  worker threads, 1-1024 (default 4)
 *   queue    INT  tasks that may wait for a worker, 0-100000 (default 16)
 * Task parameters (workflow file):
 *   sleep_ms INT  how long the task "works", 0-3600000 (default 0)
 *
 * The rules this file follows (all from switchyard/executor.h):
 *   - submit() and cancel() never wait: they take a lock for a few list
 *     operations and return.
 *   - Every accepted submit is completed exactly once.  The in-flight
 *     table (sy_sdk_inflight) decides who completes: whoever takes the
 *     entry out, a worker or cancel().
 *   - capacity() is honest: workers + queue slots, minus the busy ones; a
 *     slot is released only after complete(), and the host is woken.
 *   - destroy() stops and joins every thread before freeing.
 *
 * Build: see Makefile (cc -shared -fPIC -fvisibility=hidden
 * $(pkg-config --cflags switchyard-sdk) template.c -o template.so).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, pthread_condattr_setclock */
#endif

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <switchyard/sdk.h>

/* ------------------------------------------------------------------------ */
/* What the plugin declares                                                 */
/* ------------------------------------------------------------------------ */

/* The host checks these before create() and validate() see anything: an
 * unknown key or a wrong type is an error at its file and line. */
static const sy_param_spec workers_spec = {
    sizeof(sy_param_spec), 0, "workers", SY_PARAM_INT,
    "worker threads, 1-1024 (default 4)"};
static const sy_param_spec queue_spec = {
    sizeof(sy_param_spec), 0, "queue", SY_PARAM_INT,
    "tasks that may wait for a worker, 0-100000 (default 16)"};
static const sy_param_spec sleep_spec = {
    sizeof(sy_param_spec), 0, "sleep_ms", SY_PARAM_INT,
    "milliseconds the task works, 0-3600000 (default 0)"};

static const sy_param_spec *const instance_params[] = {&workers_spec,
                                                       &queue_spec, NULL};
static const sy_param_spec *const task_params[] = {&sleep_spec, NULL};

#define MAX_WORKERS 1024
#define MAX_SLEEP_MS 3600000

/* ------------------------------------------------------------------------ */
/* State                                                                    */
/* ------------------------------------------------------------------------ */

/* One accepted attempt.  Owned by the queue while queued, then by the
 * worker that runs it; freed by whoever holds it last (see cancel). */
typedef struct job {
    struct job *prev, *next; /* queue links, while queued */
    sy_completion *c;        /* the host's; the in-flight table's key */
    const sy_task *task;     /* the host's; valid until c is completed */
    int64_t sleep_ms;
    bool running;            /* a worker took it (guarded by inst->lock) */
    bool cancelled;          /* cancel() completed it while it ran */
} job;

struct sy_instance {
    const sy_host_api *api; /* the host's table; lives until destroy() */
    sy_host *host;

    pthread_mutex_t lock;   /* guards the queue, job flags, stopping */
    pthread_cond_t work;    /* signalled when a job is queued or on stop */
    pthread_cond_t nudge;   /* wakes sleeping workers on cancel or stop */
    job *head, *tail;       /* the queue, oldest first */
    bool stopping;

    sy_sdk_inflight inflight; /* c -> job, for exactly-once completion */
    sy_sdk_slots slots;       /* workers + queue */
    sy_sdk_stats stats;
    _Atomic int64_t queued;   /* for metrics, read without the lock */

    pthread_t *threads;
    int nthreads;
};

/* ------------------------------------------------------------------------ */
/* The queue (called with inst->lock held)                                  */
/* ------------------------------------------------------------------------ */

static void queue_push(sy_instance *inst, job *j)
{
    j->prev = inst->tail;
    j->next = NULL;
    if (inst->tail)
        inst->tail->next = j;
    else
        inst->head = j;
    inst->tail = j;
    atomic_fetch_add(&inst->queued, 1);
}

static void queue_unlink(sy_instance *inst, job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        inst->head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        inst->tail = j->prev;
    j->prev = j->next = NULL;
    atomic_fetch_sub(&inst->queued, 1);
}

/* ------------------------------------------------------------------------ */
/* The work                                                                 */
/* ------------------------------------------------------------------------ */

static struct timespec deadline_after(int64_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* The task's work: replace this.  Called with inst->lock held; it waits on
 * a condition variable, which releases the lock while it sleeps, so a
 * cancel() can flag the job and wake it early.  Real work that does not
 * wait on inst->lock would unlock, work, and lock again; cancelling it
 * then means checking j->cancelled (or killing a child, closing a socket)
 * now and then. */
static void run_job(sy_instance *inst, job *j)
{
    struct timespec until = deadline_after(j->sleep_ms);
    while (!j->cancelled && !inst->stopping) {
        int rc = pthread_cond_timedwait(&inst->nudge, &inst->lock, &until);
        if (rc == ETIMEDOUT)
            break;
    }
}

/* Reports a finished job, unless cancel() got there first.  Called with
 * the lock held; returns with it held. */
static void finish_job(sy_instance *inst, job *j)
{
    /* Taking the entry under inst->lock is what makes the race with
     * cancel() safe: cancel() takes it under the same lock, and only the
     * taker completes. */
    bool mine = sy_sdk_inflight_take(&inst->inflight, j->c, NULL) == SY_OK;
    pthread_mutex_unlock(&inst->lock);
    if (mine) {
        sy_sdk_stats_outcome(&inst->stats, SY_OUTCOME_SUCCEEDED);
        /* The output must be a JSON object; the input is one. */
        sy_sdk_complete_ok_len(inst->api, j->c, j->task->input,
                               j->task->input_len);
    }
    /* From here on j->c and j->task may be gone: only our own memory. */
    free(j);
    sy_sdk_slots_release(&inst->slots); /* after complete(): see sdk.h */
    pthread_mutex_lock(&inst->lock);
}

static void *worker_main(void *arg)
{
    sy_instance *inst = arg;
    pthread_mutex_lock(&inst->lock);
    for (;;) {
        while (!inst->head && !inst->stopping)
            pthread_cond_wait(&inst->work, &inst->lock);
        if (!inst->head)
            break; /* stopping, and nothing left to do */
        job *j = inst->head;
        queue_unlink(inst, j);
        j->running = true;
        run_job(inst, j);
        finish_job(inst, j);
    }
    pthread_mutex_unlock(&inst->lock);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The ABI functions                                                        */
/* ------------------------------------------------------------------------ */

/* Stops and joins the first n workers. */
static void stop_workers(sy_instance *inst, int n)
{
    pthread_mutex_lock(&inst->lock);
    inst->stopping = true;
    pthread_cond_broadcast(&inst->work);
    pthread_cond_broadcast(&inst->nudge);
    pthread_mutex_unlock(&inst->lock);
    for (int i = 0; i < n; i++)
        pthread_join(inst->threads[i], NULL);
}

static void free_instance(sy_instance *inst)
{
    pthread_cond_destroy(&inst->nudge);
    pthread_cond_destroy(&inst->work);
    pthread_mutex_destroy(&inst->lock);
    sy_sdk_inflight_fini(&inst->inflight);
    free(inst->threads);
    free(inst);
}

/* Everything but the threads; on failure frees what it made.  (Default
 * mutexes and condition variables cannot fail to initialise on Linux.) */
static int init_instance(sy_instance *inst, int64_t workers, char *err,
                         size_t err_len)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    /* Sleeps are measured on the monotonic clock: a wall-clock step must
     * not stretch a task. */
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&inst->lock, NULL);
    pthread_cond_init(&inst->work, NULL);
    pthread_cond_init(&inst->nudge, &attr);
    pthread_condattr_destroy(&attr);
    inst->threads = calloc((size_t)workers, sizeof *inst->threads);
    if (!inst->threads || sy_sdk_inflight_init(&inst->inflight) != SY_OK) {
        free(inst->threads);
        pthread_cond_destroy(&inst->nudge);
        pthread_cond_destroy(&inst->work);
        pthread_mutex_destroy(&inst->lock);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    return SY_OK;
}

static int tpl_create(const sy_host_api *api, sy_host *host,
                      const sy_params *config, sy_instance **out, char *err,
                      size_t err_len)
{
    int64_t workers = 0, queue = 0;
    int rc = sy_sdk_param_int(api, config, "workers", 4, 1, MAX_WORKERS,
                              &workers, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, config, "queue", 16, 0, 100000, &queue,
                              err, err_len);
    if (rc != SY_OK)
        return rc;

    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    rc = init_instance(inst, workers, err, err_len);
    if (rc != SY_OK) {
        free(inst);
        return rc;
    }
    sy_sdk_slots_init(&inst->slots, api, host, workers + queue);
    sy_sdk_stats_init(&inst->stats);
    atomic_init(&inst->queued, 0);

    for (; inst->nthreads < workers; inst->nthreads++) {
        if (pthread_create(&inst->threads[inst->nthreads], NULL, worker_main,
                           inst) != 0) {
            sy_sdk_errf(err, err_len, "cannot start worker %d of %lld",
                        inst->nthreads + 1, (long long)workers);
            stop_workers(inst, inst->nthreads);
            free_instance(inst);
            return SY_EIO;
        }
    }
    *out = inst;
    return SY_OK;
}

/* The host calls destroy() only after every submit has completed, so the
 * queue is empty; workers still finishing a cancelled job are woken and
 * joined. */
static void tpl_destroy(sy_instance *inst)
{
    stop_workers(inst, inst->nthreads);
    free_instance(inst);
}

static int64_t tpl_capacity(sy_instance *inst)
{
    return sy_sdk_slots_available(&inst->slots);
}

static int tpl_submit(sy_instance *inst, const sy_task *task,
                      sy_completion *c, char *err, size_t err_len)
{
    int64_t sleep_ms = 0;
    int rc = sy_sdk_param_int(inst->api, task->params, "sleep_ms", 0, 0,
                              MAX_SLEEP_MS, &sleep_ms, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (!sy_sdk_slots_try_acquire(&inst->slots))
        return SY_EBUSY; /* the host retries after wake() */

    job *j = calloc(1, sizeof *j);
    if (!j) {
        sy_sdk_slots_undo(&inst->slots);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    j->c = c;
    j->task = task;
    j->sleep_ms = sleep_ms;

    pthread_mutex_lock(&inst->lock);
    /* Into the table before any worker can see the job. */
    rc = sy_sdk_inflight_add(&inst->inflight, c, j);
    if (rc == SY_OK) {
        sy_sdk_stats_submitted(&inst->stats);
        queue_push(inst, j);
        pthread_cond_signal(&inst->work);
    }
    pthread_mutex_unlock(&inst->lock);
    if (rc != SY_OK) {
        free(j);
        sy_sdk_slots_undo(&inst->slots);
        sy_sdk_errf(err, err_len, "cannot track the task: %s",
                    rc == SY_ENOMEM ? "out of memory" : "already submitted");
        return rc;
    }
    return SY_OK;
}

static int tpl_cancel(sy_instance *inst, sy_completion *c)
{
    void *v = NULL;
    pthread_mutex_lock(&inst->lock);
    if (sy_sdk_inflight_take(&inst->inflight, c, &v) != SY_OK) {
        pthread_mutex_unlock(&inst->lock);
        return SY_ENOENT; /* completed already: nothing to do */
    }
    job *j = v;
    bool queued = !j->running;
    if (queued) {
        queue_unlink(inst, j); /* ours now: no worker will see it */
    } else {
        j->cancelled = true; /* its worker frees it when it wakes */
        pthread_cond_broadcast(&inst->nudge);
    }
    pthread_mutex_unlock(&inst->lock);

    sy_sdk_stats_outcome(&inst->stats, SY_OUTCOME_CANCELLED);
    sy_sdk_complete_cancelled(inst->api, c, "cancelled while %s",
                              queued ? "queued" : "running");
    if (queued) {
        free(j);
        sy_sdk_slots_release(&inst->slots);
    }
    return SY_OK;
}

/* Load-time judgement of a task's parameters: a bad sleep_ms is a config
 * error with the workflow's file and line, not a failed attempt later. */
static int tpl_validate(sy_instance *inst, const sy_params *params,
                        const char *base_dir, char *err, size_t err_len)
{
    (void)base_dir;
    int64_t ms = 0;
    return sy_sdk_param_int(inst->api, params, "sleep_ms", 0, 0,
                            MAX_SLEEP_MS, &ms, err, err_len);
}

static void tpl_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_sdk_stats_emit(&inst->stats, atomic_load(&inst->queued),
                      tpl_capacity(inst), emit, sink);
    emit(sink, "workers", inst->nthreads);
}

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

static const sy_executor descriptor = {
    SY_EXECUTOR_V1,
    .name = "template", /* change this: it is what `plugin = "..."` names */
    .version = "1.0.0",
    .description = "sleeps sleep_ms on a worker pool and echoes the input",
    .instance_params = instance_params,
    .task_params = task_params,
    .create = tpl_create,
    .destroy = tpl_destroy,
    .capacity = tpl_capacity,
    .submit = tpl_submit,
    .cancel = tpl_cancel,
    .validate = tpl_validate,
    .metrics = tpl_metrics,
};

/* The one exported symbol (SY_EXPORT overrides -fvisibility=hidden). */
SY_EXPORT const sy_executor *sy_executor_entry(void) { return &descriptor; }
