/*
 * stub.h -- the functions of a descriptor that is never meant to run: the
 * loader fixtures that must be refused (or merely listed) share them.
 * `static inline` so a fixture that leaves one out (nofn.c) builds clean.
 */
#ifndef SY_TEST_PLUGIN_STUB_H
#define SY_TEST_PLUGIN_STUB_H

#include <switchyard/executor.h>

static inline int stub_create(const sy_host_api *api, sy_host *host,
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

static inline void stub_destroy(sy_instance *inst) { (void)inst; }

static inline int64_t stub_capacity(sy_instance *inst)
{
    (void)inst;
    return 0;
}

static inline int stub_submit(sy_instance *inst, const sy_task *task,
                       sy_completion *c, char *err, size_t err_len)
{
    (void)inst;
    (void)task;
    (void)c;
    (void)err;
    (void)err_len;
    return SY_ENOTSUP;
}

static inline int stub_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

#endif
