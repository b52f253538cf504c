/*
 * nofn.c -- a descriptor without its required submit().
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

static int stub_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "nofn",
    .version = "1.0.0",
    .create = stub_create,
    .destroy = stub_destroy,
    .capacity = stub_capacity,
    .submit = NULL,
    .cancel = stub_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
