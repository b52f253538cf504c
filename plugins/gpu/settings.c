/* The gpu executor's settings and task parameters: declared for the
 * host's checks (unknown keys, types, lines), then read and judged here
 * (values, ranges), each bad value in one line naming the key. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "gpu.h"

#define SPEC(n, t, d) \
    static const sy_param_spec n##_spec = {sizeof(sy_param_spec), 0, #n, t, d}

SPEC(nvml_library, SY_PARAM_STRING,
     "the NVML library to open (default libnvidia-ml.so.1)");
SPEC(devices, SY_PARAM_ARRAY,
     "[\"GPU-...\", ...]: use only these devices, by UUID (default: all)");
SPEC(queue_length, SY_PARAM_INT,
     "attempts the instance holds, waiting or running (default 64)");
SPEC(share, SY_PARAM_BOOL,
     "tasks that declare gpu_memory share a device while their sum fits "
     "(default false)");
SPEC(policy, SY_PARAM_STRING,
     "\"easy\" (priority, reservation and backfill; the default), \"fifo\" "
     "or \"first_fit\"");
SPEC(health_interval, SY_PARAM_DURATION,
     "how often health events and the control file are read (default 1s)");
SPEC(mig, SY_PARAM_BOOL,
     "a GPU in MIG mode is handed out as its MIG instances (default false: "
     "whole)");
SPEC(control_file, SY_PARAM_STRING,
     "lines \"drain UUID\" / \"resume UUID\" appended by the operator "
     "(switchyard-gpu)");
SPEC(max_wait, SY_PARAM_GROUP,
     "{ gpus_8 = \"1h\"; default = \"4h\"; }: wait bound by task size, after "
     "which a task goes first");
SPEC(default_expected_time, SY_PARAM_DURATION,
     "the run time assumed for a task with neither expected_time nor "
     "timeout (default 1h)");
SPEC(retry_after, SY_PARAM_DURATION,
     "when a task stopped by a broken device is offered again (default 1s)");
SPEC(kill_grace, SY_PARAM_DURATION,
     "between SIGTERM and SIGKILL on cancel or drain (default 5s)");
SPEC(command, SY_PARAM_ARRAY, "[\"prog\", \"arg\", ...]: run without a shell");
SPEC(env, SY_PARAM_GROUP, "{ NAME = \"value\"; }: added to the command's "
                          "environment");
SPEC(cwd, SY_PARAM_STRING,
     "the command's directory, relative to the workflow file (default: it)");
SPEC(gpus, SY_PARAM_INT, "whole devices the task needs (default 1)");
SPEC(gpu_memory, SY_PARAM_STRING,
     "memory the task needs on each device: \"20G\", \"512M\"");
SPEC(gpu_model, SY_PARAM_STRING,
     "a glob on the device name, e.g. \"*H100*\"");
SPEC(priority, SY_PARAM_INT, "higher runs first (default 0)");
SPEC(expected_time, SY_PARAM_DURATION,
     "how long the task runs, for reservations and backfill");

const sy_param_spec *const sy_gpu_instance_params[] = {
    &nvml_library_spec, &devices_spec, &queue_length_spec, &share_spec,
    &policy_spec, &mig_spec, &health_interval_spec, &control_file_spec, &max_wait_spec,
    &default_expected_time_spec, &retry_after_spec, &kill_grace_spec, NULL};

const sy_param_spec *const sy_gpu_task_params[] = {
    &command_spec, &env_spec, &cwd_spec, &gpus_spec, &gpu_memory_spec,
    &gpu_model_spec, &priority_spec, &expected_time_spec, &kill_grace_spec,
    NULL};

int sy_gpu_parse_size(const char *s, int64_t *mib)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || v > 1e12)
        return -1;
    while (*end == ' ')
        end++;
    double mult = 1;   /* MiB */
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': mult = 1.0 / 1024; end++; break;
    case 'M': end++; break;
    case 'G': mult = 1024; end++; break;
    case 'T': mult = 1024.0 * 1024; end++; break;
    default: return -1;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    double m = v * mult;
    *mib = m < 1 ? 1 : (int64_t)(m + 0.5);
    return 0;
}

static int read_policy(sy_instance *inst, const sy_params *cfg, char *err,
                       size_t err_len)
{
    const char *p = NULL;
    int rc = sy_sdk_param_string(inst->api, cfg, "policy", "easy", &p, err,
                                 err_len);
    if (rc != SY_OK)
        return rc;
    if (strcmp(p, "easy") == 0)
        inst->sched.policy = SY_GS_EASY;
    else if (strcmp(p, "fifo") == 0)
        inst->sched.policy = SY_GS_FIFO;
    else if (strcmp(p, "first_fit") == 0)
        inst->sched.policy = SY_GS_FIRST_FIT;
    else {
        sy_sdk_errf(err, err_len, "policy: must be \"easy\", \"fifo\" or "
                    "\"first_fit\", got \"%s\"", p);
        return SY_EINVAL;
    }
    return SY_OK;
}

static int read_devices(sy_instance *inst, const sy_params *cfg,
                        const char ***only, size_t *n_only, char *err,
                        size_t err_len)
{
    const sy_host_api *api = inst->api;
    size_t n = 0;
    int rc = api->param_array_len(cfg, "devices", &n);
    if (rc == SY_ENOENT || (rc == SY_OK && n == 0))
        return SY_OK;
    if (rc != SY_OK) {
        sy_sdk_errf(err, err_len, "devices: must be a list of UUIDs");
        return SY_EINVAL;
    }
    *only = calloc(n, sizeof **only);
    if (!*only) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        if (api->param_array_string(cfg, "devices", i, &(*only)[i]) != SY_OK ||
            !(*only)[i][0]) {
            sy_sdk_errf(err, err_len, "devices: element %zu must be a UUID "
                        "string (\"GPU-...\")", i + 1);
            return SY_EINVAL;
        }
    *n_only = n;
    return SY_OK;
}

int sy_gpu_settings(sy_instance *inst, const sy_params *cfg,
                    const char ***only, size_t *n_only,
                    const char **library, char *err, size_t err_len)
{
    const sy_host_api *api = inst->api;
    const char *ctl = NULL;
    bool share = false;
    int rc = sy_sdk_param_int(api, cfg, "queue_length", SY_GPU_DEFAULT_QUEUE,
                              1, 1 << 20, &inst->queue_length, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_bool(api, cfg, "share", false, &share, err,
                               err_len);
    inst->sched.share = share;
    if (rc == SY_OK)
        rc = sy_sdk_param_bool(api, cfg, "mig", false, &inst->mig, err,
                               err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "health_interval",
                                      SY_GPU_DEFAULT_INTERVAL_MS, 10,
                                      3600 * 1000, &inst->interval_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "default_expected_time",
                                      3600 * 1000, 1, INT64_MAX / 4,
                                      &inst->sched.default_run_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "retry_after",
                                      SY_GPU_DEFAULT_RETRY_MS, 0,
                                      3600 * 1000, &inst->retry_after_ms,
                                      err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "kill_grace",
                                      SY_GPU_DEFAULT_GRACE_MS, 0,
                                      3600 * 1000, &inst->kill_grace_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = read_policy(inst, cfg, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, cfg, "nvml_library", NULL, library, err,
                                 err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, cfg, "control_file", NULL, &ctl, err,
                                 err_len);
    if (rc == SY_OK && ctl && !ctl[0]) {
        sy_sdk_errf(err, err_len, "control_file: must be a path, got \"\"");
        rc = SY_EINVAL;
    }
    if (rc == SY_OK && ctl && !(inst->control_file = strdup(ctl))) {
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
    }
    if (rc == SY_OK)
        rc = read_devices(inst, cfg, only, n_only, err, err_len);
    return rc;
}

int sy_gpu_wait_bounds(sy_instance *inst, const sy_params *cfg, char *err,
                       size_t err_len)
{
    const sy_host_api *api = inst->api;
    const sy_params *g = NULL;
    int rc = api->param_group(cfg, "max_wait", &g);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK) {
        sy_sdk_errf(err, err_len, "max_wait: must be a group, e.g. "
                    "{ gpus_8 = \"1h\"; default = \"4h\"; }");
        return SY_EINVAL;
    }
    int64_t by_size[SY_GS_MAX_DEVS + 1] = {0}, def = 0;
    size_t n = api->param_count(g);
    for (size_t i = 0; i < n; i++) {
        const char *k = api->param_name(g, i);
        int size = 0, used = 0;
        int64_t ms = 0;
        bool is_def = k && strcmp(k, "default") == 0;
        if (!k || (!is_def && (sscanf(k, "gpus_%d%n", &size, &used) != 1 ||
                               k[used] || size < 1 ||
                               size > SY_GS_MAX_DEVS))) {
            sy_sdk_errf(err, err_len, "max_wait: unknown key \"%s\" (use "
                        "gpus_N with N from 1 to %d, or default)",
                        k ? k : "?", SY_GS_MAX_DEVS);
            return SY_EINVAL;
        }
        char label[64];
        snprintf(label, sizeof label, "max_wait.%s", k);
        if (api->param_duration_ms(g, k, &ms) != SY_OK || ms <= 0) {
            sy_sdk_errf(err, err_len, "%s: must be a positive duration "
                        "(\"30m\")", label);
            return SY_EINVAL;
        }
        if (is_def)
            def = ms;
        else
            by_size[size] = ms;
    }
    /* A size without its own key takes the nearest smaller one's. */
    int64_t cur = def;
    for (int s = 1; s <= SY_GS_MAX_DEVS; s++) {
        if (by_size[s])
            cur = by_size[s];
        inst->sched.wait_bound[s] = cur;
    }
    return SY_OK;
}

int sy_gpu_spec_parse(const sy_instance *inst, const sy_params *p,
                      sy_gpu_spec *out, char *err, size_t err_len)
{
    const sy_host_api *api = inst->api;
    int64_t gpus = 1;
    const char *mem = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    if (api->param_array_len(p, "command", &n) != SY_OK || n == 0) {
        sy_sdk_errf(err, err_len, "command: required, a non-empty list of "
                    "strings ([\"prog\", \"arg\"])");
        return SY_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = NULL;
        if (api->param_array_string(p, "command", i, &s) != SY_OK) {
            sy_sdk_errf(err, err_len, "command: element %zu must be a "
                        "string", i + 1);
            return SY_EINVAL;
        }
    }
    int rc = sy_sdk_param_int(api, p, "gpus", 1, 1, SY_GS_MAX_DEVS, &gpus,
                              err, err_len);
    out->gpus = (int)gpus;
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, p, "gpu_memory", NULL, &mem, err,
                                 err_len);
    if (rc == SY_OK && mem && sy_gpu_parse_size(mem, &out->mem_mib) != 0) {
        sy_sdk_errf(err, err_len, "gpu_memory: must be a size such as "
                    "\"20G\" or \"512M\", got \"%s\"", mem);
        rc = SY_EINVAL;
    }
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, p, "gpu_model", NULL, &out->model, err,
                                 err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, p, "priority", 0, -1000000, 1000000,
                              &out->priority, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, p, "expected_time", 0, 0,
                                      INT64_MAX / 4, &out->expected_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, p, "kill_grace",
                                      inst->kill_grace_ms, 0, 3600 * 1000,
                                      &out->kill_grace_ms, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, p, "cwd", NULL, &out->cwd, err,
                                 err_len);
    const sy_params *env = NULL;
    int erc = api->param_group(p, "env", &env);
    if (rc == SY_OK && erc != SY_OK && erc != SY_ENOENT) {
        sy_sdk_errf(err, err_len, "env: must be a group { NAME = \"value\"; }");
        rc = SY_EINVAL;
    }
    return rc;
}
