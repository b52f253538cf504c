/*
 * broken_blocks.c -- breaks one rule: submit() blocks (it sleeps 200 ms,
 * as if it made a network round trip) before completing the task with its
 * input.  The conformance kit must fail nonblocking, saying "submit()
 * blocks".
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <switchyard/executor.h>

struct sy_instance {
    const sy_host_api *api;
};

static const sy_param_spec *const no_params[] = {NULL};

static int blocks_create(const sy_host_api *api, sy_host *host,
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

static void blocks_destroy(sy_instance *inst) { free(inst); }

static int64_t blocks_capacity(sy_instance *inst)
{
    (void)inst;
    return SY_CAPACITY_UNLIMITED;
}

static int blocks_submit(sy_instance *inst, const sy_task *task,
                         sy_completion *c, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    struct timespec t = {0, 200 * 1000000L}; /* the bug */
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = task->input, .output_len = task->input_len, .error = NULL};
    inst->api->complete(c, &res);
    return SY_OK;
}

static int blocks_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "broken_blocks",
    .version = "1.0.0",
    .description = "sleeps 200 ms in submit() (conformance kit test)",
    .instance_params = no_params,
    .task_params = NULL,
    .create = blocks_create,
    .destroy = blocks_destroy,
    .capacity = blocks_capacity,
    .submit = blocks_submit,
    .cancel = blocks_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
