/* Function tasks in their own process: switchyard-task-runner, spawned with
 * switchyard/spawn.h, so a crash fails only that attempt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/spawn.h>

#include "runner.h"
#include "thread.h"

/* What the runner's stderr says: log records are forwarded to the host's
 * log (job may be NULL: dropped), the error record is returned, and every
 * other line is kept, in place, as `other`. */
typedef struct runner_says {
    const char *error;  /* NULL when the runner wrote none */
    const char *other;  /* the function's own stderr, trimmed */
} runner_says;

static void forward_log(const sy_job *job, const char *line)
{
    int level = line[2] - '0';
    if (level < SY_LOG_ERROR || level > SY_LOG_DEBUG)
        level = SY_LOG_INFO;
    const char *msg = line[3] == ' ' ? line + 4 : line + 3;
    if (job)
        sy_job_log(job, (sy_log_level)level, "%s", msg);
}

static runner_says parse_stderr(const sy_job *job, char *buf)
{
    runner_says s = {NULL, buf};
    size_t w = 0;
    char *line = buf;
    while (*line) {
        if (strncmp(line, SY_RUNNER_ERROR_MARK, 2) == 0) {
            s.error = line + 2;
            break;
        }
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (strncmp(line, SY_RUNNER_LOG_MARK, 2) == 0 && line[2]) {
            if (nl)
                *nl = '\0';
            forward_log(job, line);
        } else {
            memmove(buf + w, line, n);
            w += n;
        }
        line += n;
    }
    while (w && (buf[w - 1] == '\n' || buf[w - 1] == '\r'))
        w--;
    buf[w] = '\0';
    return s;
}

static void fail_with(sy_job *job, sy_outcome o, const char *what,
                      const char *other)
{
    if (other && other[0])
        sy_job_fail(job, o, "%s; stderr:\n%s", what, other);
    else
        sy_job_fail(job, o, "%s", what);
}

static void settle(sy_job *job, sy_spawn_result *r)
{
    char what[512], how[128];
    runner_says s = parse_stderr(job, r->err);
    const char *fn = job->spec.function;
    sy_spawn_describe(r, how, sizeof how);
    if (atomic_load(&job->cancelled) || r->cancelled) {
        sy_job_fail(job, SY_OUTCOME_CANCELLED, "cancelled: the isolated "
                    "function %s was terminated", fn);
    } else if (r->timed_out) {
        snprintf(what, sizeof what, "isolated function %s timed out after "
                 "%lld ms and was terminated", fn,
                 (long long)job->task->timeout_ms);
        fail_with(job, SY_OUTCOME_TIMED_OUT, what, s.other);
    } else if (r->output_too_large) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "isolated function %s set an "
                    "output larger than max_output_bytes = %lld", fn,
                    (long long)job->spec.max_output_bytes);
    } else if (r->signaled) {
        snprintf(what, sizeof what, "isolated function crashed: signal %d "
                 "(%s)", r->signal_no, sy_spawn_signal_name(r->signal_no));
        fail_with(job, SY_OUTCOME_FAILED, what, s.other);
    } else if (r->exited && r->exit_code == SY_RUNNER_EXIT_OK) {
        sy_job_succeed(job, r->out_len ? r->out : NULL, r->out_len);
        if (r->out_len)
            r->out = NULL;
    } else if (s.error && r->exited && r->exit_code == SY_RUNNER_EXIT_SETUP) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "task runner: %s", s.error);
    } else if (s.error) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "%s", s.error);
    } else {
        snprintf(what, sizeof what, "isolated function %s: the runner %s",
                 fn, how);
        fail_with(job, SY_OUTCOME_FAILED, what, s.other);
    }
}

static void runner_missing(char *err, size_t err_len, const char *runner,
                           const char *why)
{
    snprintf(err, err_len, "cannot start the task runner %s: %s (set the "
                           "executor's runner, or SWITCHYARD_TASK_RUNNER)",
             runner, why);
}

/* argv = runner [--check] LIB SYMBOL, strings owned by `keep`. */
static int runner_argv(const sy_instance *inst, const char *base_dir,
                       const char *function, bool check, const char *argv[5],
                       sy_strv *keep, char *err, size_t err_len)
{
    char *path = NULL, *symbol = NULL;
    int rc = sy_fn_split(function, &path, &symbol, err, err_len);
    if (rc != SY_OK)
        return rc;
    sy_strv_push(keep, sy_path_resolve(base_dir, path));
    sy_strv_push(keep, symbol);
    free(path);
    if (keep->oom) {
        snprintf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    size_t k = 0;
    argv[k++] = inst->runner;
    if (check)
        argv[k++] = "--check";
    argv[k++] = keep->v[0];
    argv[k++] = keep->v[1];
    argv[k] = NULL;
    return SY_OK;
}

int sy_isolate_check(const sy_instance *inst, const char *base_dir,
                     const char *function, char *err, size_t err_len)
{
    const char *argv[5];
    sy_strv keep = {0};
    int rc = runner_argv(inst, base_dir, function, true, argv, &keep, err,
                         err_len);
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.timeout_ms = 30000;
    o.kill_grace_ms = 1000;
    sy_spawn_result r;
    char why[512];
    if (rc == SY_OK && sy_spawn_run(&o, &r, why, sizeof why) != 0) {
        runner_missing(err, err_len, inst->runner, why);
        rc = SY_EIO;
    } else if (rc == SY_OK) {
        runner_says s = parse_stderr(NULL, r.err);
        if (!r.exited || r.exit_code != 0) {
            char how[128];
            sy_spawn_describe(&r, how, sizeof how);
            snprintf(err, err_len, "%s", s.error ? s.error : how);
            rc = SY_ENOENT;
        }
        sy_spawn_result_free(&r);
    }
    sy_strv_free(&keep);
    return rc;
}

static void run(sy_job *job, const char *const *argv, sy_strv *env)
{
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.env = (const char *const *)env->v;
    o.input = job->task->input ? job->task->input : "{}";
    o.input_len = job->task->input ? job->task->input_len : 2;
    o.max_output_bytes = (size_t)job->spec.max_output_bytes;
    o.timeout_ms = sy_job_time_left(job);
    o.kill_grace_ms = job->spec.kill_grace_ms;
    o.cancel_fd = job->cancel_fd;
    sy_spawn_result r;
    char err[1024], why[512];
    if (sy_spawn_run(&o, &r, why, sizeof why) != 0) {
        runner_missing(err, sizeof err, argv[0], why);
        sy_job_fail(job, SY_OUTCOME_FAILED, "%s", err);
        return;
    }
    settle(job, &r);
    sy_spawn_result_free(&r);
}

void sy_isolate_run(sy_job *job)
{
    const sy_task *t = job->task;
    const char *argv[5];
    sy_strv keep = {0}, env = {0};
    char err[1024];
    int rc = runner_argv(job->inst, t->base_dir, job->spec.function, false,
                         argv, &keep, err, sizeof err);
    if (rc != SY_OK) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "%s", err);
        sy_strv_free(&keep);
        return;
    }
    sy_job_env(job, &env);
    char *params = job->inst->api->param_json(t->params);
    if (params)
        sy_strv_pushf(&env, "%s=%s", SY_RUNNER_PARAMS_ENV, params);
    if (!params || env.oom)
        sy_job_fail(job, SY_OUTCOME_FAILED, "out of memory");
    else
        run(job, argv, &env);
    if (params)
        job->inst->api->free_string(params);
    sy_strv_free(&keep);
    sy_strv_free(&env);
}
