/* The thread executor's settings and task parameters: declared for the
 * host's checks (unknown keys, types, lines), then parsed and judged here
 * (values, combinations) for validate() and submit(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread.h"

#define SPEC(n, t, d) \
    static const sy_param_spec n##_spec = {sizeof(sy_param_spec), 0, #n, t, d}

SPEC(workers, SY_PARAM_INT, "tasks run at once (default: the number of CPUs)");
SPEC(blocking_workers, SY_PARAM_INT,
     "tasks with blocking = true run at once, on their own pool (default 2)");
SPEC(queue_depth, SY_PARAM_INT,
     "accepted tasks that may wait for a worker, per pool (default 0)");
SPEC(pin_workers, SY_PARAM_BOOL,
     "bind each worker of the default pool, and what it spawns, to one CPU "
     "(default false)");
SPEC(runner, SY_PARAM_STRING,
     "path of switchyard-task-runner, for isolated functions");
SPEC(function, SY_PARAM_STRING,
     "\"lib.so:symbol\": a task function, path relative to the workflow file");
SPEC(command, SY_PARAM_ARRAY, "[\"prog\", \"arg\", ...]: run without a shell");
SPEC(env, SY_PARAM_GROUP, "{ NAME = \"value\"; }: added to a command's "
                          "environment");
SPEC(cwd, SY_PARAM_STRING,
     "a command's directory, relative to the workflow file (default: it)");
SPEC(output, SY_PARAM_STRING,
     "\"json\" (stdout is the output object, the default) or \"none\"");
SPEC(max_output_bytes, SY_PARAM_INT,
     "stdout beyond this fails the attempt (default 16 MiB)");
SPEC(kill_grace, SY_PARAM_DURATION,
     "between SIGTERM and SIGKILL on timeout or cancel (default 5s)");
SPEC(isolate, SY_PARAM_BOOL,
     "run a function in its own process, so a crash fails only the attempt");
SPEC(blocking, SY_PARAM_BOOL,
     "run on the blocking pool, so long waits never starve short tasks");

const sy_param_spec *const sy_thread_instance_params[] = {
    &workers_spec,    &blocking_workers_spec, &queue_depth_spec,
    &isolate_spec,    &runner_spec,           &kill_grace_spec,
    &max_output_bytes_spec, &pin_workers_spec, NULL};

const sy_param_spec *const sy_thread_task_params[] = {
    &function_spec, &command_spec,          &env_spec,
    &cwd_spec,      &output_spec,           &max_output_bytes_spec,
    &kill_grace_spec, &isolate_spec,        &blocking_spec,
    NULL};

static int type_error(const char *key, const char *want, char *err,
                      size_t err_len)
{
    snprintf(err, err_len, "%s must be %s", key, want);
    return SY_EINVAL;
}

/* Reads an optional boolean into *out (left alone when absent). */
static int opt_bool(const sy_instance *inst, const sy_params *p,
                    const char *key, bool *out, char *err, size_t err_len)
{
    int v = 0;
    int rc = inst->api->param_bool(p, key, &v);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK)
        return type_error(key, "a boolean (true or false)", err, err_len);
    *out = v != 0;
    return SY_OK;
}

static int opt_positive(const sy_instance *inst, const sy_params *p,
                        const char *key, int64_t *out, char *err,
                        size_t err_len)
{
    int64_t v = 0;
    int rc = inst->api->param_int(p, key, &v);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK || v <= 0)
        return type_error(key, "a positive integer", err, err_len);
    *out = v;
    return SY_OK;
}

static int opt_duration(const sy_instance *inst, const sy_params *p,
                        const char *key, int64_t *out, char *err,
                        size_t err_len)
{
    int64_t v = 0;
    int rc = inst->api->param_duration_ms(p, key, &v);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK || v < 0)
        return type_error(key, "a duration (\"250ms\", \"5s\", \"1m\") or "
                               "milliseconds",
                          err, err_len);
    *out = v;
    return SY_OK;
}

static bool present(const sy_instance *inst, const sy_params *p,
                    const char *key)
{
    return inst->api->param_type(p, key) != SY_PARAM_NONE;
}

static int parse_function(const sy_instance *inst, const sy_params *p,
                          sy_job_spec *s, char *err, size_t err_len)
{
    if (inst->api->param_string(p, "function", &s->function) != SY_OK)
        return type_error("function", "a string \"lib.so:symbol\"", err,
                          err_len);
    char *path = NULL, *symbol = NULL;
    int rc = sy_fn_split(s->function, &path, &symbol, err, err_len);
    free(path);
    free(symbol);
    if (rc != SY_OK)
        return rc;
    static const char *const command_only[] = {"env", "cwd", "output"};
    for (size_t i = 0; i < 3; i++)
        if (present(inst, p, command_only[i])) {
            snprintf(err, err_len, "%s applies only to command tasks, not "
                                   "to function = \"%s\"",
                     command_only[i], s->function);
            return SY_EINVAL;
        }
    s->kind = SY_JOB_FUNCTION;
    return opt_bool(inst, p, "isolate", &s->isolate, err, err_len);
}

static int check_argv(const sy_instance *inst, const sy_params *p, char *err,
                      size_t err_len)
{
    size_t n = 0;
    if (inst->api->param_array_len(p, "command", &n) != SY_OK)
        return type_error("command", "a list of strings [\"prog\", \"arg\"]",
                          err, err_len);
    if (n == 0) {
        snprintf(err, err_len, "command is empty: name a program to run");
        return SY_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *a = NULL;
        if (inst->api->param_array_string(p, "command", i, &a) != SY_OK) {
            snprintf(err, err_len, "command[%zu] must be a string", i);
            return SY_EINVAL;
        }
        if (i == 0 && !a[0]) {
            snprintf(err, err_len, "command[0] is empty: name a program");
            return SY_EINVAL;
        }
    }
    return SY_OK;
}

static int check_env(const sy_instance *inst, const sy_params *p, char *err,
                     size_t err_len)
{
    const sy_params *env = NULL;
    int rc = inst->api->param_group(p, "env", &env);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc != SY_OK)
        return type_error("env", "a group { NAME = \"value\"; }", err,
                          err_len);
    size_t n = inst->api->param_count(env);
    for (size_t i = 0; i < n; i++) {
        const char *name = inst->api->param_name(env, i), *v = NULL;
        if (!name || !name[0] || strchr(name, '=')) {
            snprintf(err, err_len, "env: invalid variable name \"%s\"",
                     name ? name : "");
            return SY_EINVAL;
        }
        if (inst->api->param_string(env, name, &v) != SY_OK) {
            snprintf(err, err_len, "env.%s must be a string", name);
            return SY_EINVAL;
        }
    }
    return SY_OK;
}

static int parse_output(const sy_instance *inst, const sy_params *p,
                        sy_job_spec *s, char *err, size_t err_len)
{
    const char *v = NULL;
    int rc = inst->api->param_string(p, "output", &v);
    if (rc == SY_ENOENT)
        return SY_OK;
    if (rc == SY_OK && strcmp(v, "none") == 0) {
        s->output_none = true;
        return SY_OK;
    }
    if (rc == SY_OK && strcmp(v, "json") == 0)
        return SY_OK;
    snprintf(err, err_len, "output must be \"json\" or \"none\"%s%s%s",
             v ? ", not \"" : "", v ? v : "", v ? "\"" : "");
    return SY_EINVAL;
}

static int parse_command(const sy_instance *inst, const sy_params *p,
                         sy_job_spec *s, char *err, size_t err_len)
{
    int rc = check_argv(inst, p, err, err_len);
    if (rc == SY_OK)
        rc = check_env(inst, p, err, err_len);
    if (rc == SY_OK && present(inst, p, "cwd") &&
        (inst->api->param_string(p, "cwd", &s->cwd) != SY_OK || !s->cwd[0]))
        rc = type_error("cwd", "a non-empty string", err, err_len);
    if (rc == SY_OK)
        rc = parse_output(inst, p, s, err, err_len);
    if (rc == SY_OK && present(inst, p, "isolate")) {
        snprintf(err, err_len, "isolate applies only to function tasks (a "
                               "command always runs in its own process)");
        rc = SY_EINVAL;
    }
    s->kind = SY_JOB_COMMAND;
    s->isolate = false;
    return rc;
}

int sy_spec_parse(const sy_instance *inst, const sy_params *p,
                  sy_job_spec *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->isolate = inst->isolate;
    out->kill_grace_ms = inst->kill_grace_ms;
    out->max_output_bytes = inst->max_output_bytes;
    bool fn = present(inst, p, "function"), cmd = present(inst, p, "command");
    if (fn && cmd) {
        snprintf(err, err_len, "function and command are exclusive: a task "
                               "runs one or the other");
        return SY_EINVAL;
    }
    if (!fn && !cmd) {
        snprintf(err, err_len, "a task on the thread executor needs "
                               "function = \"lib.so:symbol\" or command = "
                               "[\"prog\", ...]");
        return SY_EINVAL;
    }
    int rc = fn ? parse_function(inst, p, out, err, err_len)
                : parse_command(inst, p, out, err, err_len);
    if (rc == SY_OK)
        rc = opt_bool(inst, p, "blocking", &out->blocking, err, err_len);
    if (rc == SY_OK)
        rc = opt_positive(inst, p, "max_output_bytes", &out->max_output_bytes,
                          err, err_len);
    if (rc == SY_OK)
        rc = opt_duration(inst, p, "kill_grace", &out->kill_grace_ms, err,
                          err_len);
    return rc;
}
