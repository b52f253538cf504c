/*
 * broken_badparams.c -- breaks one rule: create() crashes on bad settings.
 * It declares `slots` (an integer) and, when `slots` holds anything else,
 * writes through the NULL pointer it forgot to check.  Otherwise a correct
 * synchronous executor.  The conformance kit must fail bad-params, saying
 * it "crashed".
 */
#include <stdlib.h>

#include <switchyard/executor.h>

struct sy_instance {
    const sy_host_api *api;
    int64_t slots;
};

static const sy_param_spec slots_spec = {
    sizeof(sy_param_spec), 0, "slots", SY_PARAM_INT,
    "ignored, but read (badly)"};
static const sy_param_spec *const instance_params[] = {&slots_spec, NULL};

/* Where the slot count "goes": NULL unless the setting read well. */
static int64_t *slot_target(sy_instance *inst, int rc)
{
    return rc == SY_OK || rc == SY_ENOENT ? &inst->slots : NULL;
}

static int bad_create(const sy_host_api *api, sy_host *host,
                      const sy_params *config, sy_instance **out, char *err,
                      size_t err_len)
{
    (void)host;
    (void)err;
    (void)err_len;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return SY_ENOMEM;
    int64_t v = 0;
    int rc = api->param_int(config, "slots", &v);
    volatile int64_t *target = slot_target(inst, rc);
    *target = v; /* the bug: NULL when slots has the wrong type */
    inst->api = api;
    *out = inst;
    return SY_OK;
}

static void bad_destroy(sy_instance *inst) { free(inst); }

static int64_t bad_capacity(sy_instance *inst)
{
    (void)inst;
    return SY_CAPACITY_UNLIMITED;
}

static int bad_submit(sy_instance *inst, const sy_task *task,
                      sy_completion *c, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = task->input, .output_len = task->input_len, .error = NULL};
    inst->api->complete(c, &res);
    return SY_OK;
}

static int bad_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
    return SY_ENOENT;
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "broken_badparams",
    .version = "1.0.0",
    .description = "crashes in create() on bad settings (conformance kit "
                   "test)",
    .instance_params = instance_params,
    .task_params = NULL,
    .create = bad_create,
    .destroy = bad_destroy,
    .capacity = bad_capacity,
    .submit = bad_submit,
    .cancel = bad_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
