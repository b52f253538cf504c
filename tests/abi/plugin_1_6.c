/*
 * plugin_1_6.c -- an executor rebuilt against a newer 1.x header (the
 * simulated tests/abi/executor-1.6.h, never the current one), built three
 * ways for tests/executor/test_plugin.c:
 *
 *   abi16_plain  uses nothing newer than 1.0: SY_EXECUTOR_V1 leaves its
 *                minor at 0 and it calls the 1.6 host function progress()
 *                only under SY_HOST_HAS().  A 1.5 host must load it, and it
 *                must find progress() absent there.
 *   abi16_field  (SY_TEST_SET_DRAIN) also sets the 1.6 descriptor field
 *                drain, but forgets to say it needs 1.6.  A 1.5 host does
 *                not know the field and must refuse it.
 *   abi16_minor  (SY_TEST_NEEDS_1_6) sets drain and says so with
 *                SY_EXECUTOR_MIN_MINOR 6.  A 1.5 host must refuse it,
 *                naming 1.6.
 */
#ifdef SY_TEST_NEEDS_1_6
#define SY_EXECUTOR_MIN_MINOR 6
#define SY_TEST_SET_DRAIN 1
#endif

#include <stdio.h>
#include <stdlib.h>

#include "executor-1.6.h"

#if SY_EXECUTOR_ABI_MAJOR != 1 || SY_EXECUTOR_ABI_MINOR != 6
#error "plugin_1_6.c must build against the simulated 1.6 header (-I tests/abi)"
#endif

#if defined(SY_TEST_NEEDS_1_6)
#define PLUGIN_NAME "abi16_minor"
#elif defined(SY_TEST_SET_DRAIN)
#define PLUGIN_NAME "abi16_field"
#else
#define PLUGIN_NAME "abi16_plain"
#endif

struct sy_instance {
    const sy_host_api *api;
    int has_progress; /* the host lends progress() (1.6 and later) */
};

static int p_create(const sy_host_api *api, sy_host *host,
                    const sy_params *config, sy_instance **out, char *err,
                    size_t err_len)
{
    (void)config;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->has_progress = SY_HOST_HAS(api, progress);
    api->log(host, SY_LOG_INFO, "%s on a host with%s progress()",
             PLUGIN_NAME, inst->has_progress ? "" : "out");
    *out = inst;
    return SY_OK;
}

static void p_destroy(sy_instance *inst) { free(inst); }

static int64_t p_capacity(sy_instance *inst)
{
    (void)inst;
    return SY_CAPACITY_UNLIMITED;
}

static int p_submit(sy_instance *inst, const sy_task *task, sy_completion *c,
                    char *err, size_t err_len)
{
    (void)task;
    (void)err;
    (void)err_len;
    if (inst->has_progress)
        inst->api->progress(c, 1, 1);
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = NULL, .output_len = 0, .error = NULL};
    inst->api->complete(c, &res);
    return SY_OK;
}

static int p_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

#ifdef SY_TEST_SET_DRAIN
static void p_drain(sy_instance *inst) { (void)inst; }
#endif

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = PLUGIN_NAME,
    .version = "1.6.0",
    .description = "built against a simulated ABI 1.6 header (tests)",
    .create = p_create,
    .destroy = p_destroy,
    .capacity = p_capacity,
    .submit = p_submit,
    .cancel = p_cancel,
#ifdef SY_TEST_SET_DRAIN
    .drain = p_drain,
#endif
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
