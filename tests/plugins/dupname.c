/*
 * dupname.c -- a second, otherwise valid plugin that calls itself "good".
 * Loader test fixture: the host must refuse it.
 */
#include <stddef.h>

#include <switchyard/executor.h>

static int stub_create(const sy_host_api *api, sy_host *host,
                       const sy_params *config, sy_instance **out, char *err,
                       size_t err_len)
{
    (void)api;
    (void)host;
    (void)config;
    (void)out;
    if (err && err_len)
        err[0] = '\0';
    return SY_ENOTSUP;
}

static void stub_destroy(sy_instance *inst) { (void)inst; }

static int64_t stub_capacity(sy_instance *inst)
{
    (void)inst;
    return 0;
}

static int stub_submit(sy_instance *inst, const sy_task *task,
                       sy_completion *c, char *err, size_t err_len)
{
    (void)inst;
    (void)task;
    (void)c;
    (void)err;
    (void)err_len;
    return SY_ENOTSUP;
}

static int stub_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "good",
    .version = "2.0.0-dup",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
