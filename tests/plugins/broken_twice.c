/*
 * broken_twice.c -- breaks one rule: it calls complete() twice for every
 * accepted submit.  Otherwise a correct synchronous executor (no settings,
 * no parameters, unlimited capacity).  The conformance kit must fail
 * complete-once, saying "complete() called twice".
 */
#include <stdlib.h>

#include <switchyard/executor.h>

struct sy_instance {
    const sy_host_api *api;
};

static const sy_param_spec *const no_params[] = {NULL};

static int twice_create(const sy_host_api *api, sy_host *host,
                        const sy_params *config, sy_instance **out,
                        char *err, size_t err_len)
{
    (void)host;
    (void)config;
    (void)err;
    (void)err_len;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return SY_ENOMEM;
    inst->api = api;
    *out = inst;
    return SY_OK;
}

static void twice_destroy(sy_instance *inst) { free(inst); }

static int64_t twice_capacity(sy_instance *inst)
{
    (void)inst;
    return SY_CAPACITY_UNLIMITED;
}

static int twice_submit(sy_instance *inst, const sy_task *task,
                        sy_completion *c, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = task->input, .output_len = task->input_len, .error = NULL};
    inst->api->complete(c, &res);
    inst->api->complete(c, &res); /* the bug */
    return SY_OK;
}

static int twice_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "broken_twice",
    .version = "1.0.0",
    .description = "completes every submit twice (conformance kit test)",
    .instance_params = no_params,
    .task_params = NULL,
    .create = twice_create,
    .destroy = twice_destroy,
    .capacity = twice_capacity,
    .submit = twice_submit,
    .cancel = twice_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
