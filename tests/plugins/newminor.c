/*
 * newminor.c -- needs executor ABI 1.(host minor + 1): it may call host
 * functions this host lacks.
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
    .size = sizeof(sy_executor),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = (SY_EXECUTOR_ABI_MINOR + 1),
    .name = "newminor",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = stub_submit,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
