/*
 * broken_never.c -- breaks one rule: it accepts every submit and never
 * completes it (not even when cancelled).  The conformance kit must fail
 * complete-once, saying the submits "never completed".
 */
#include <stdlib.h>

#include <switchyard/executor.h>

struct sy_instance {
    int unused;
};

static const sy_param_spec *const no_params[] = {NULL};

static int never_create(const sy_host_api *api, sy_host *host,
                        const sy_params *config, sy_instance **out,
                        char *err, size_t err_len)
{
    (void)api;
    (void)host;
    (void)config;
    (void)err;
    (void)err_len;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return SY_ENOMEM;
    *out = inst;
    return SY_OK;
}

static void never_destroy(sy_instance *inst) { free(inst); }

static int64_t never_capacity(sy_instance *inst)
{
    (void)inst;
    return SY_CAPACITY_UNLIMITED;
}

static int never_submit(sy_instance *inst, const sy_task *task,
                        sy_completion *c, char *err, size_t err_len)
{
    (void)inst;
    (void)task;
    (void)c; /* the bug: dropped */
    (void)err;
    (void)err_len;
    return SY_OK;
}

static int never_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_OK;
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "broken_never",
    .version = "1.0.0",
    .description = "never completes a submit (conformance kit test)",
    .instance_params = no_params,
    .task_params = NULL,
    .create = never_create,
    .destroy = never_destroy,
    .capacity = never_capacity,
    .submit = never_submit,
    .cancel = never_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
