/*
 * plugin_1_0.c -- an executor built against the frozen ABI 1.0 header
 * (tests/abi/executor-1.0.h, a verbatim copy of api/switchyard/executor.h
 * as 1.0 was frozen: size first in every struct, fixed-width types for the
 * named values, abi_minor the lowest host minor needed, SY_EXECUTOR_V1),
 * never against the current one.  The copy never changes again: a later
 * 1.x header only appends to it.
 *
 * tests/sdk/conformance.sh runs the conformance kit against it on the current
 * host.  If a change to api/ moves a field, changes a signature or a
 * status value, this plugin reads the wrong memory or calls the wrong
 * function, and the kit fails: an incompatible ABI change fails CI.
 *
 * So it touches all of 1.0: every descriptor field, every sy_task field
 * (and refuses a task whose fields do not hang together), every host
 * function, every sy_result field.  A worker thread completes the tasks
 * (task parameter `hold`, a duration, keeps one waiting), so completion
 * also comes from a thread that is not the submitter.
 *
 * Settings: slots INT (1-10000, default 8), label STRING, tags ARRAY of
 * strings, weights ARRAY of integers, ratio FLOAT, verbose BOOL,
 * extra GROUP.  Task parameters: hold DURATION, fail BOOL.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor-1.0.h"

#if SY_EXECUTOR_ABI_MAJOR != 1 || SY_EXECUTOR_ABI_MINOR != 0
#error "plugin_1_0.c must build against the frozen 1.0 header (-I tests/abi)"
#endif

typedef struct job {
    struct job *next;
    sy_completion *c;
    const sy_task *task;
    struct timespec due;
    bool fail;
} job;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    int64_t slots;
    _Atomic int64_t busy;
    _Atomic int64_t submitted, done[4];
    pthread_mutex_t lock; /* guards the list and stopping */
    pthread_cond_t cond;
    job *head, **tail;
    bool stopping;
    pthread_t worker;
};

#define SPEC(n, t, d) {sizeof(sy_param_spec), 0, n, t, d}
static const sy_param_spec s_slots = SPEC("slots", SY_PARAM_INT, "slots");
static const sy_param_spec s_label = SPEC("label", SY_PARAM_STRING, "label");
static const sy_param_spec s_tags = SPEC("tags", SY_PARAM_ARRAY, "strings");
static const sy_param_spec s_weights = SPEC("weights", SY_PARAM_ARRAY, "ints");
static const sy_param_spec s_ratio = SPEC("ratio", SY_PARAM_FLOAT, "number");
static const sy_param_spec s_verbose = SPEC("verbose", SY_PARAM_BOOL, "bool");
static const sy_param_spec s_extra = SPEC("extra", SY_PARAM_GROUP, "group");
static const sy_param_spec s_hold = SPEC("hold", SY_PARAM_DURATION, "wait");
static const sy_param_spec s_fail = SPEC("fail", SY_PARAM_BOOL, "fail it");
static const sy_param_spec *const instance_params[] = {
    &s_slots, &s_label, &s_tags, &s_weights, &s_ratio, &s_verbose, &s_extra,
    NULL};
static const sy_param_spec *const task_params[] = {&s_hold, &s_fail, NULL};

/* ------------------------------------------------------------------------ */
/* Settings: every getter of the 1.0 table                                  */
/* ------------------------------------------------------------------------ */

/* A present key of the wrong type is an error; absent is fine. */
static bool bad(int rc) { return rc != SY_OK && rc != SY_ENOENT; }

static int read_arrays(const sy_host_api *api, const sy_params *p, char *err,
                       size_t err_len)
{
    size_t n = 0;
    const char *s;
    int64_t v;
    int rc = api->param_array_len(p, "tags", &n);
    for (size_t i = 0; rc == SY_OK && i < n; i++)
        rc = api->param_array_string(p, "tags", i, &s);
    if (bad(rc)) {
        snprintf(err, err_len, "tags: must be a list of strings");
        return SY_EINVAL;
    }
    rc = api->param_array_len(p, "weights", &n);
    for (size_t i = 0; rc == SY_OK && i < n; i++)
        rc = api->param_array_int(p, "weights", i, &v);
    if (bad(rc)) {
        snprintf(err, err_len, "weights: must be a list of integers");
        return SY_EINVAL;
    }
    return SY_OK;
}

static int read_scalars(const sy_host_api *api, const sy_params *p,
                        int64_t *slots, char *err, size_t err_len)
{
    const char *label = NULL;
    double ratio = 0;
    int verbose = 0;
    const sy_params *extra = NULL;
    *slots = 8;
    int rc = api->param_int(p, "slots", slots);
    if (bad(rc) || *slots < 1 || *slots > 10000) {
        snprintf(err, err_len, "slots: must be an integer from 1 to 10000");
        return SY_EINVAL;
    }
    if (bad(api->param_string(p, "label", &label)) ||
        bad(api->param_float(p, "ratio", &ratio)) ||
        bad(api->param_bool(p, "verbose", &verbose)) ||
        bad(api->param_group(p, "extra", &extra))) {
        snprintf(err, err_len, "label, ratio, verbose or extra has the "
                               "wrong type");
        return SY_EINVAL;
    }
    for (size_t i = 0; extra && i < api->param_count(extra); i++) {
        const char *key = api->param_name(extra, i);
        if (!key || api->param_type(extra, key) == SY_PARAM_NONE) {
            snprintf(err, err_len, "extra: key %zu has no name or value", i);
            return SY_EINVAL;
        }
    }
    return SY_OK;
}

/* The host's table must be at least 1.0's, from a 1.x host. */
static int check_api(const sy_host_api *api, char *err, size_t err_len)
{
    if (!api || api->abi_major != 1 ||
        !SY_HAS_FIELD(api, sy_host_api, free_string)) {
        snprintf(err, err_len, "host function table is not ABI 1.x, or "
                               "smaller than 1.0's");
        return SY_EINVAL;
    }
    return SY_OK;
}

/* ------------------------------------------------------------------------ */
/* The worker                                                               */
/* ------------------------------------------------------------------------ */

static void finish(sy_instance *inst, job *j, sy_outcome o, const char *why)
{
    sy_result res = {sizeof res, o, NULL, 0, why};
    if (o == SY_OUTCOME_SUCCEEDED) {
        res.output = j->task->input;
        res.output_len = j->task->input_len;
    }
    atomic_fetch_add(&inst->done[o], 1);
    inst->api->complete(j->c, &res);
    free(j);
    atomic_fetch_sub(&inst->busy, 1);
    inst->api->wake(inst->host);
}

static bool is_due(const job *j)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > j->due.tv_sec ||
           (now.tv_sec == j->due.tv_sec && now.tv_nsec >= j->due.tv_nsec);
}

static job *pop(sy_instance *inst)
{
    job *j = inst->head;
    inst->head = j->next;
    if (!inst->head)
        inst->tail = &inst->head;
    return j;
}

static void *worker(void *arg)
{
    sy_instance *inst = arg;
    pthread_mutex_lock(&inst->lock);
    while (!inst->stopping || inst->head) {
        if (!inst->head) {
            pthread_cond_wait(&inst->cond, &inst->lock);
        } else if (!inst->stopping && !is_due(inst->head)) {
            pthread_cond_timedwait(&inst->cond, &inst->lock,
                                   &inst->head->due);
        } else {
            job *j = pop(inst);
            pthread_mutex_unlock(&inst->lock);
            finish(inst, j, j->fail ? SY_OUTCOME_FAILED : SY_OUTCOME_SUCCEEDED,
                   j->fail ? "failed: the task asked for it" : NULL);
            pthread_mutex_lock(&inst->lock);
        }
    }
    pthread_mutex_unlock(&inst->lock);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The ABI functions                                                        */
/* ------------------------------------------------------------------------ */

static int p_create(const sy_host_api *api, sy_host *host,
                    const sy_params *config, sy_instance **out, char *err,
                    size_t err_len)
{
    int64_t slots = 0;
    int rc = check_api(api, err, err_len);
    if (rc == SY_OK)
        rc = read_scalars(api, config, &slots, err, err_len);
    if (rc == SY_OK)
        rc = read_arrays(api, config, err, err_len);
    if (rc != SY_OK)
        return rc;
    char *json = api->param_json(config);
    api->log(host, SY_LOG_DEBUG, "abi 1.0 plugin settings: %s",
             json ? json : "(none)");
    api->free_string(json);
    sy_instance *inst = calloc(1, sizeof *inst);
    pthread_condattr_t attr;
    if (!inst || pthread_condattr_init(&attr) != 0) {
        free(inst);
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    inst->api = api;
    inst->host = host;
    inst->slots = slots;
    inst->tail = &inst->head;
    pthread_mutex_init(&inst->lock, NULL);
    pthread_cond_init(&inst->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&inst->worker, NULL, worker, inst) != 0) {
        free(inst);
        snprintf(err, err_len, "cannot start the worker thread");
        return SY_EIO;
    }
    *out = inst;
    return SY_OK;
}

static void p_destroy(sy_instance *inst)
{
    pthread_mutex_lock(&inst->lock);
    inst->stopping = true;
    pthread_cond_signal(&inst->cond);
    pthread_mutex_unlock(&inst->lock);
    pthread_join(inst->worker, NULL);
    pthread_cond_destroy(&inst->cond);
    pthread_mutex_destroy(&inst->lock);
    free(inst);
}

static int64_t p_capacity(sy_instance *inst)
{
    int64_t left = inst->slots - atomic_load(&inst->busy);
    return left > 0 ? left : 0;
}

/* Every 1.0 field of the task, checked for sense: a field moved by an
 * incompatible header change reads as garbage here. */
static const char *task_problem(const sy_task *t)
{
    if (!SY_HAS_FIELD(t, sy_task, base_dir))
        return "sy_task is smaller than 1.0's";
    if (t->attempt < 1)
        return "attempt is 0";
    if (!t->ns || !strstr(t->ns, "::") || !t->run_id || !t->task_id ||
        !t->workflow || !t->base_dir)
        return "a string field is NULL or ns has no '::'";
    if (!t->input || strlen(t->input) != t->input_len || t->input[0] != '{')
        return "input is not a JSON object of input_len bytes";
    if (!t->params || t->timeout_ms < 0)
        return "params is NULL or timeout_ms is negative";
    return NULL;
}

static bool take_slot(sy_instance *inst)
{
    int64_t cur = atomic_load(&inst->busy);
    do {
        if (cur >= inst->slots)
            return false;
    } while (!atomic_compare_exchange_weak(&inst->busy, &cur, cur + 1));
    return true;
}

static struct timespec due_in(int64_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static int p_submit(sy_instance *inst, const sy_task *task, sy_completion *c,
                    char *err, size_t err_len)
{
    const char *problem = task_problem(task);
    int64_t hold = 0;
    int fail = 0;
    if (problem) {
        snprintf(err, err_len, "ABI mismatch: %s", problem);
        return SY_EINVAL;
    }
    if (bad(inst->api->param_duration_ms(task->params, "hold", &hold)) ||
        bad(inst->api->param_bool(task->params, "fail", &fail))) {
        snprintf(err, err_len, "hold must be a duration, fail a boolean");
        return SY_EINVAL;
    }
    if (!take_slot(inst))
        return SY_EBUSY;
    job *j = calloc(1, sizeof *j);
    if (!j) {
        atomic_fetch_sub(&inst->busy, 1);
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    j->c = c;
    j->task = task;
    j->fail = fail != 0;
    j->due = due_in(hold);
    atomic_fetch_add(&inst->submitted, 1);
    pthread_mutex_lock(&inst->lock);
    *inst->tail = j;
    inst->tail = &j->next;
    pthread_cond_signal(&inst->cond);
    pthread_mutex_unlock(&inst->lock);
    return SY_OK;
}

/* A job still in the list has not been completed: unlinking it under the
 * lock makes this the one completion. */
static int p_cancel(sy_instance *inst, sy_completion *c)
{
    job *found = NULL;
    pthread_mutex_lock(&inst->lock);
    for (job **pp = &inst->head; *pp; pp = &(*pp)->next) {
        if ((*pp)->c != c)
            continue;
        found = *pp;
        *pp = found->next;
        if (!*pp)
            inst->tail = pp;
        break;
    }
    pthread_mutex_unlock(&inst->lock);
    if (!found)
        return SY_ENOENT;
    finish(inst, found, SY_OUTCOME_CANCELLED, "cancelled");
    return SY_OK;
}

static int p_validate(sy_instance *inst, const sy_params *params,
                      const char *base_dir, char *err, size_t err_len)
{
    int64_t hold = 0;
    (void)base_dir;
    int rc = inst->api->param_duration_ms(params, "hold", &hold);
    if (bad(rc)) {
        snprintf(err, err_len, "hold: must be a duration such as \"5s\"");
        return SY_EINVAL;
    }
    return SY_OK;
}

static void p_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    int64_t done = 0;
    for (int i = 0; i < 4; i++)
        done += atomic_load(&inst->done[i]);
    int64_t submitted = atomic_load(&inst->submitted);
    emit(sink, "active", submitted - done);
    emit(sink, "capacity", p_capacity(inst));
    emit(sink, "submitted", submitted);
    emit(sink, "succeeded", atomic_load(&inst->done[SY_OUTCOME_SUCCEEDED]));
    emit(sink, "failed", atomic_load(&inst->done[SY_OUTCOME_FAILED]));
    emit(sink, "timed_out", atomic_load(&inst->done[SY_OUTCOME_TIMED_OUT]));
    emit(sink, "cancelled", atomic_load(&inst->done[SY_OUTCOME_CANCELLED]));
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "abi_1_0",
    .version = "1.0.0",
    .description = "built against the frozen ABI 1.0 header (tests)",
    .instance_params = instance_params,
    .task_params = task_params,
    .create = p_create,
    .destroy = p_destroy,
    .capacity = p_capacity,
    .submit = p_submit,
    .cancel = p_cancel,
    .validate = p_validate,
    .metrics = p_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
