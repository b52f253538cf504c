/*
 * good.c -- a small, correct executor used by the loader tests.
 *
 * Every submit completes synchronously, from inside submit(), with the
 * task's input as its output (or a failure when the task asks for one), so
 * tests can drive it with no threads.  Settings:
 *
 *   slots        INT   how many attempts may be in flight (default: no limit)
 *   fail_create  BOOL  make create() fail, to test the host's error path
 *
 * Task parameters:
 *
 *   echo  STRING  logged at INFO when the attempt starts
 *   fail  BOOL    complete the attempt as failed
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <switchyard/executor.h>

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    int64_t slots; /* SY_CAPACITY_UNLIMITED for no limit */
    _Atomic int64_t active;
    _Atomic int64_t submitted, succeeded, failed;
};

static const sy_param_spec slots_spec = {
    sizeof(sy_param_spec), 0, "slots", SY_PARAM_INT,
    "attempts in flight at once (default: no limit)"};
static const sy_param_spec fail_create_spec = {
    sizeof(sy_param_spec), 0, "fail_create", SY_PARAM_BOOL,
    "make create() fail (for tests)"};
static const sy_param_spec echo_spec = {
    sizeof(sy_param_spec), 0, "echo", SY_PARAM_STRING,
    "a line to log when the attempt starts"};
static const sy_param_spec fail_spec = {
    sizeof(sy_param_spec), 0, "fail", SY_PARAM_BOOL,
    "complete the attempt as failed"};

static const sy_param_spec *const instance_params[] = {
    &slots_spec, &fail_create_spec, NULL};
static const sy_param_spec *const task_params[] = {&echo_spec, &fail_spec,
                                                   NULL};

/* Reads `slots`; absent means no limit. */
static int read_slots(const sy_host_api *api, const sy_params *config,
                      int64_t *out, char *err, size_t err_len)
{
    int64_t v = 0;
    int rc = api->param_int(config, "slots", &v);
    if (rc == SY_ENOENT) {
        *out = SY_CAPACITY_UNLIMITED;
        return SY_OK;
    }
    if (rc != SY_OK) {
        snprintf(err, err_len, "slots must be an integer");
        return SY_EINVAL;
    }
    if (v < 0) {
        snprintf(err, err_len, "slots must be 0 or more, got %lld",
                 (long long)v);
        return SY_EINVAL;
    }
    *out = v;
    return SY_OK;
}

static int read_fail_create(const sy_host_api *api, const sy_params *config,
                            char *err, size_t err_len)
{
    int b = 0;
    int rc = api->param_bool(config, "fail_create", &b);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK) {
        snprintf(err, err_len, "fail_create must be a boolean");
        return SY_EINVAL;
    }
    if (b) {
        snprintf(err, err_len, "fail_create is true: refusing to create "
                               "an instance, as asked");
        return SY_EINVAL;
    }
    return SY_OK;
}

static int good_create(const sy_host_api *api, sy_host *host,
                       const sy_params *config, sy_instance **out, char *err,
                       size_t err_len)
{
    if (!api || !out) {
        snprintf(err, err_len, "create() needs the host api and an out "
                               "pointer");
        return SY_EINVAL;
    }
    int64_t slots = 0;
    int rc = read_slots(api, config, &slots, err, err_len);
    if (rc == SY_OK)
        rc = read_fail_create(api, config, err, err_len);
    if (rc != SY_OK)
        return rc;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    inst->slots = slots;
    *out = inst;
    return SY_OK;
}

static void good_destroy(sy_instance *inst) { free(inst); }

static int64_t good_capacity(sy_instance *inst)
{
    if (inst->slots == SY_CAPACITY_UNLIMITED)
        return SY_CAPACITY_UNLIMITED;
    int64_t left = inst->slots - atomic_load(&inst->active);
    return left > 0 ? left : 0;
}

/* Takes a slot; false when none is free.  A compare-and-swap keeps
 * capacity() honest when submits race. */
static bool take_slot(sy_instance *inst)
{
    int64_t cur = atomic_load(&inst->active);
    do {
        if (inst->slots != SY_CAPACITY_UNLIMITED && cur >= inst->slots)
            return false;
    } while (!atomic_compare_exchange_weak(&inst->active, &cur, cur + 1));
    return true;
}

static bool task_fails(const sy_host_api *api, const sy_task *task)
{
    int b = 0;
    return api->param_bool(task->params, "fail", &b) == SY_OK && b;
}

static void log_echo(sy_instance *inst, const sy_task *task)
{
    const char *echo = NULL;
    if (inst->api->param_string(task->params, "echo", &echo) == SY_OK &&
        echo)
        inst->api->log(inst->host, SY_LOG_INFO, "echo: %s", echo);
}

static int good_submit(sy_instance *inst, const sy_task *task,
                       sy_completion *c, char *err, size_t err_len)
{
    if (!SY_HAS_FIELD(task, sy_task, params) || !task->params) {
        snprintf(err, err_len, "task without parameters");
        return SY_EINVAL;
    }
    if (!take_slot(inst))
        return SY_EBUSY;
    atomic_fetch_add(&inst->submitted, 1);
    log_echo(inst, task);
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = task->input, .output_len = task->input ? task->input_len : 0, .error = NULL};
    if (task_fails(inst->api, task)) {
        res = (sy_result){.size = sizeof res, .outcome = SY_OUTCOME_FAILED, .output = NULL, .output_len = 0, .error = "failed because task parameter fail is true"};
        atomic_fetch_add(&inst->failed, 1);
    } else {
        atomic_fetch_add(&inst->succeeded, 1);
    }
    /* The host may destroy the instance as soon as complete() is called,
     * so the counters are settled first and nothing of it is touched
     * after. */
    void (*complete)(sy_completion *, const sy_result *) = inst->api->complete;
    atomic_fetch_sub(&inst->active, 1);
    complete(c, &res);
    return SY_OK;
}

/* Every attempt completed inside its submit(), so none is left to stop. */
static int good_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

static void good_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    emit(sink, "active", atomic_load(&inst->active));
    emit(sink, "queued", 0);
    emit(sink, "capacity", good_capacity(inst));
    emit(sink, "submitted", atomic_load(&inst->submitted));
    emit(sink, "succeeded", atomic_load(&inst->succeeded));
    emit(sink, "failed", atomic_load(&inst->failed));
    emit(sink, "timed_out", 0);
    emit(sink, "cancelled", 0);
}

static const sy_executor good = {
    SY_EXECUTOR_V1,
    .name = "good",
    .version = "1.0.0",
    .description = "completes every task at once with its input (tests)",
    .instance_params = instance_params,
    .task_params = task_params,
    .create = good_create,
    .destroy = good_destroy,
    .capacity = good_capacity,
    .submit = good_submit,
    .cancel = good_cancel,
    .validate = NULL,
    .metrics = good_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &good; }
