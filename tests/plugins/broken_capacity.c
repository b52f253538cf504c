/*
 * broken_capacity.c -- breaks one rule: capacity() says 2 slots (minus the
 * busy ones), but submit() accepts everything.  Each task is held for
 * 300 ms by a completer thread, then succeeds with its input; cancel()
 * ends a held task at once.  Otherwise correct: exactly-once completion,
 * wake(), metrics, destroy() joins its thread.  The conformance kit must
 * fail capacity, saying the submits were "in flight at once".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <switchyard/sdk.h>

#define SLOTS 2
#define HOLD_MS 300

typedef struct held {
    struct held *prev, *next;
    sy_completion *c;
    const sy_task *task;
    struct timespec due;
} held;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    pthread_mutex_t lock; /* guards the list and stopping */
    pthread_cond_t cond;
    held *head, *tail;    /* oldest first, so due times ascend */
    bool stopping;
    pthread_t thread;
    sy_sdk_inflight inflight;
    sy_sdk_stats stats;
    _Atomic int64_t active;
};

static const sy_param_spec *const no_params[] = {NULL};

static void unlink_held(sy_instance *inst, held *h)
{
    if (h->prev)
        h->prev->next = h->next;
    else
        inst->head = h->next;
    if (h->next)
        h->next->prev = h->prev;
    else
        inst->tail = h->prev;
}

static bool due(const held *h)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > h->due.tv_sec ||
           (now.tv_sec == h->due.tv_sec && now.tv_nsec >= h->due.tv_nsec);
}

/* Completes `h` (taken from the table by the caller) and frees it. */
static void finish(sy_instance *inst, held *h, sy_outcome o)
{
    sy_sdk_stats_outcome(&inst->stats, o);
    if (o == SY_OUTCOME_CANCELLED)
        sy_sdk_complete_cancelled(inst->api, h->c, "cancelled");
    else
        sy_sdk_complete_ok_len(inst->api, h->c, h->task->input,
                               h->task->input_len);
    free(h);
    atomic_fetch_sub(&inst->active, 1);
    inst->api->wake(inst->host);
}

static void *completer(void *arg)
{
    sy_instance *inst = arg;
    pthread_mutex_lock(&inst->lock);
    while (!inst->stopping || inst->head) {
        held *h = inst->head;
        if (!h) {
            pthread_cond_wait(&inst->cond, &inst->lock);
        } else if (!due(h) && !inst->stopping) {
            pthread_cond_timedwait(&inst->cond, &inst->lock, &h->due);
        } else {
            unlink_held(inst, h);
            sy_sdk_inflight_take(&inst->inflight, h->c, NULL);
            pthread_mutex_unlock(&inst->lock);
            finish(inst, h, SY_OUTCOME_SUCCEEDED);
            pthread_mutex_lock(&inst->lock);
        }
    }
    pthread_mutex_unlock(&inst->lock);
    return NULL;
}

static int cap_create(const sy_host_api *api, sy_host *host,
                      const sy_params *config, sy_instance **out, char *err,
                      size_t err_len)
{
    (void)config;
    sy_instance *inst = calloc(1, sizeof *inst);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (!inst || sy_sdk_inflight_init(&inst->inflight) != SY_OK) {
        free(inst);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    sy_sdk_stats_init(&inst->stats);
    pthread_mutex_init(&inst->lock, NULL);
    pthread_cond_init(&inst->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&inst->thread, NULL, completer, inst) != 0) {
        sy_sdk_inflight_fini(&inst->inflight);
        free(inst);
        sy_sdk_errf(err, err_len, "cannot start a thread");
        return SY_EIO;
    }
    *out = inst;
    return SY_OK;
}

static void cap_destroy(sy_instance *inst)
{
    pthread_mutex_lock(&inst->lock);
    inst->stopping = true;
    pthread_cond_signal(&inst->cond);
    pthread_mutex_unlock(&inst->lock);
    pthread_join(inst->thread, NULL);
    pthread_cond_destroy(&inst->cond);
    pthread_mutex_destroy(&inst->lock);
    sy_sdk_inflight_fini(&inst->inflight);
    free(inst);
}

/* Looks honest... */
static int64_t cap_capacity(sy_instance *inst)
{
    int64_t left = SLOTS - atomic_load(&inst->active);
    return left > 0 ? left : 0;
}

/* ...but never says SY_EBUSY: the bug. */
static int cap_submit(sy_instance *inst, const sy_task *task,
                      sy_completion *c, char *err, size_t err_len)
{
    held *h = calloc(1, sizeof *h);
    if (!h) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    h->c = c;
    h->task = task;
    clock_gettime(CLOCK_MONOTONIC, &h->due);
    h->due.tv_nsec += HOLD_MS * 1000000L;
    h->due.tv_sec += h->due.tv_nsec / 1000000000L;
    h->due.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&inst->lock);
    int rc = sy_sdk_inflight_add(&inst->inflight, c, h);
    if (rc == SY_OK) {
        atomic_fetch_add(&inst->active, 1);
        sy_sdk_stats_submitted(&inst->stats);
        h->prev = inst->tail;
        if (inst->tail)
            inst->tail->next = h;
        else
            inst->head = h;
        inst->tail = h;
        pthread_cond_signal(&inst->cond);
    }
    pthread_mutex_unlock(&inst->lock);
    if (rc != SY_OK) {
        free(h);
        sy_sdk_errf(err, err_len, "cannot track the task");
    }
    return rc;
}

static int cap_cancel(sy_instance *inst, sy_completion *c)
{
    void *v = NULL;
    pthread_mutex_lock(&inst->lock);
    int rc = sy_sdk_inflight_take(&inst->inflight, c, &v);
    if (rc == SY_OK)
        unlink_held(inst, v);
    pthread_mutex_unlock(&inst->lock);
    if (rc == SY_OK)
        finish(inst, v, SY_OUTCOME_CANCELLED);
    return rc;
}

static void cap_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_sdk_stats_emit(&inst->stats, 0, cap_capacity(inst), emit, sink);
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "broken_capacity",
    .version = "1.0.0",
    .description = "accepts more than its capacity (conformance kit test)",
    .instance_params = no_params,
    .task_params = NULL,
    .create = cap_create,
    .destroy = cap_destroy,
    .capacity = cap_capacity,
    .submit = cap_submit,
    .cancel = cap_cancel,
    .validate = NULL,
    .metrics = cap_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
