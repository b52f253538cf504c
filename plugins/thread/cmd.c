/* Command tasks: `command = [...]` run with posix_spawn (switchyard/spawn.h),
 * the input context on stdin, stdout as the output object. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <switchyard/spawn.h>

#include "thread.h"

/* The head of a stdout that is not the output (output = "none") kept for
 * the attempt's logs. */
#define STDOUT_LOG_MAX (64 * 1024)

/* argv borrowed from the task's parameters (valid until complete()). */
static const char **build_argv(const sy_job *job)
{
    const sy_host_api *api = job->inst->api;
    const sy_params *p = job->task->params;
    size_t n = 0;
    if (api->param_array_len(p, "command", &n) != SY_OK || n == 0)
        return NULL;
    const char **argv = calloc(n + 1, sizeof *argv);
    for (size_t i = 0; argv && i < n; i++)
        if (api->param_array_string(p, "command", i, &argv[i]) != SY_OK) {
            free(argv);
            return NULL;
        }
    return argv;
}

/* The SWITCHYARD_* variables, then the task's env (which may override
 * them). */
static void build_env(const sy_job *job, sy_strv *env)
{
    const sy_host_api *api = job->inst->api;
    const sy_params *group = NULL;
    sy_job_env(job, env);
    if (api->param_group(job->task->params, "env", &group) != SY_OK)
        return;
    size_t n = api->param_count(group);
    for (size_t i = 0; i < n; i++) {
        const char *name = api->param_name(group, i), *v = NULL;
        if (name && api->param_string(group, name, &v) == SY_OK)
            sy_strv_pushf(env, "%s=%s", name, v);
    }
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

/* The last line of stderr, for the error: the whole of it goes to the
 * attempt's logs (`switchyard logs`), so that the error stays one line
 * that `switchyard status` can show. */
static const char *last_line(const sy_spawn_result *r, int *len)
{
    size_t end = r->err_len;
    while (end && (r->err[end - 1] == '\n' || r->err[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start && r->err[start - 1] != '\n')
        start--;
    /* A very long line is cut to its end. */
    if (end - start > 400)
        start = end - 400;
    *len = (int)(end - start);
    return r->err + start;
}

static void fail_with_stderr(sy_job *job, sy_outcome outcome,
                             sy_spawn_result *r, const char *what)
{
    int len = 0;
    const char *tail = last_line(r, &len);
    if (!len)
        sy_job_fail(job, outcome, "%s (no stderr)", what);
    else
        sy_job_fail(job, outcome, "%s: %.*s", what, len, tail);
}

/* Records the command's process group with the host (ABI 1.2) before it
 * goes on, so that a host killed from now on leaves a record from which
 * the next one kills the group before the retry starts. */
static int record_process(void *arg, pid_t pgid, uint64_t start_time)
{
    sy_job *job = arg;
    const sy_host_api *api = job->inst->api;
    if (!SY_HOST_HAS(api, attempt_process))
        return 0;
    /* The job held back is reported with this request, so that the host's
     * one turn writes both (2,545 commits for 2,000 commands became about
     * 2,050). */
    sy_job_report_held(NULL);
    if (SY_HOST_HAS(api, attempt_process_async)) {
        /* The command runs while the host writes the record; the answer
         * is waited for only before this job's report, by when it is
         * almost always in.  A refusal stops the command then. */
        atomic_store(&job->answer_owed, true);
        int rc = api->attempt_process_async(job->c, (int64_t)pgid, start_time,
                                            sy_job_on_answer, job);
        if (rc == SY_OK)
            return 0;
        atomic_store(&job->answer_owed, false);
        return rc == SY_ENOTSUP ? 0 : rc;
    }
    int rc = api->attempt_process(job->c, (int64_t)pgid, start_time);
    return rc == SY_ENOTSUP ? 0 : rc;
}

static void settle(sy_job *job, const char *prog, sy_spawn_result *r)
{
    char what[512], how[128];
    sy_spawn_describe(r, how, sizeof how);
    int refused = r->process_refused ? r->process_refused : atomic_load(&job->refused);
    if (refused) {
        sy_job_fail_refused(job, refused, prog);
    } else if (atomic_load(&job->cancelled) || r->cancelled) {
        sy_job_fail(job, SY_OUTCOME_CANCELLED, "cancelled: the process group "
                    "of %s was terminated", prog);
    } else if (r->timed_out) {
        snprintf(what, sizeof what, "command %s timed out after %lld ms; its "
                 "process group was terminated", prog,
                 (long long)job->task->timeout_ms);
        fail_with_stderr(job, SY_OUTCOME_TIMED_OUT, r, what);
    } else if (r->output_too_large) {
        sy_job_fail(job, SY_OUTCOME_FAILED, "command %s wrote more than "
                    "max_output_bytes = %lld bytes on stdout; its process "
                    "group was killed (raise max_output_bytes, or set output "
                    "= \"none\")", prog, (long long)job->spec.max_output_bytes);
    } else if (!r->exited || r->exit_code != 0) {
        snprintf(what, sizeof what, "command %s %s", prog, how);
        fail_with_stderr(job, SY_OUTCOME_FAILED, r, what);
    } else if (job->spec.output_none || blank(r->out, r->out_len)) {
        sy_job_succeed(job, NULL, 0);
    } else {
        /* The host parses it and rejects anything but an object. */
        sy_job_succeed(job, r->out, r->out_len);
        r->out = NULL;
    }
}

static void log_stderr(const sy_job *job, const sy_spawn_result *r)
{
    if (!r->err_len)
        return;
    char *save = NULL, *copy = strdup(r->err);
    for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save))
        sy_job_log(job, SY_LOG_DEBUG, "stderr: %s", line);
    free(copy);
}

/* Stderr always, stdout when it is not the output (output = "none", or
 * the attempt failed): the host keeps them with the attempt. */
static void keep_logs(sy_job *job, sy_spawn_result *r)
{
    if (r->err_head_len) {
        /* Its start and its end, the bytes between them left out. */
        char *both = malloc(r->err_head_len + r->err_len + 1);
        if (both) {
            memcpy(both, r->err_head, r->err_head_len);
            memcpy(both + r->err_head_len, r->err, r->err_len + 1);
            job->log_err = both;
            job->log_err_len = r->err_head_len + r->err_len;
            job->log_err_dropped = r->err_dropped - r->err_head_len;
            job->log_err_cut = r->err_head_len;
        }
    } else if (r->err_len) {
        job->log_err = r->err;
        job->log_err_len = r->err_len;
        r->err = NULL;
        r->err_len = 0;
    }
    if ((job->spec.output_none || job->outcome != SY_OUTCOME_SUCCEEDED) && r->out &&
        r->out_len) {
        job->log_out = r->out;
        job->log_out_len = r->out_len;
        job->log_out_dropped = r->out_dropped;
        job->log_out_cut = r->out_len; /* what was not kept came after */
        r->out = NULL;
    }
}

static char *command_cwd(const sy_job *job)
{
    const char *base = job->task->base_dir;
    if (job->spec.cwd)
        return sy_path_resolve(base, job->spec.cwd);
    return base && base[0] ? strdup(base) : NULL;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* When the command runs: the end of its spawn, for the instance's
 * figures, then the finished job held back for this moment is reported. */
typedef struct started_at {
    int64_t ns;
} started_at;

static void on_start(void *arg)
{
    ((started_at *)arg)->ns = now_ns();
    sy_job_report_held(NULL);
}

static void count_time(sy_instance *inst, int64_t begun, int64_t started)
{
    if (!started)
        return;
    int64_t ended = now_ns();
    atomic_fetch_add_explicit(&inst->commands_started, 1,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&inst->commands_spawn_ns, started - begun,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&inst->commands_run_ns, ended - started,
                              memory_order_relaxed);
}

static void run(sy_job *job, const char **argv, char *cwd, sy_strv *env)
{
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.env = (const char *const *)env->v;
    o.cwd = cwd;
    o.input = job->task->input;
    o.input_len = job->task->input ? job->task->input_len : 0;
    o.max_output_bytes = (size_t)job->spec.max_output_bytes;
    if (job->spec.output_none) {
        /* Not the output: a log, its head kept (the host keeps at most its
         * log_limit of it anyway), never a reason to end the command. */
        o.stdout_as_log = true;
        o.max_output_bytes = STDOUT_LOG_MAX;
    }
    o.timeout_ms = sy_job_time_left(job);
    o.kill_grace_ms = job->spec.kill_grace_ms;
    o.cancel_fd = job->cancel_fd;
    o.kill_fd = job->kill_fd;
    started_at at = {0};
    o.on_start = on_start;
    o.on_start_arg = &at;
    o.on_process = record_process;
    o.on_process_arg = job;
    sy_spawn_result r;
    char err[1024];
    int64_t begun = now_ns();
    int src = sy_spawn_run(&o, &r, err, sizeof err);
    count_time(job->inst, begun, at.ns);
    if (src != 0) {
        int why = errno;
        if (why == EAGAIN || why == EMFILE || why == ENFILE || why == ENOMEM) {
            /* The machine is out of processes, descriptors or memory: the
             * command never started, which is not the task's doing.  It
             * goes back Ready uncharged, and is tried again when the
             * shortage has passed (ABI 1.1). */
            sy_job_fail(job, SY_OUTCOME_DEFERRED, "command: %s (the host is "
                        "short of processes, descriptors or memory; tried "
                        "again, not charged)", err);
            job->retry_after_ms = SY_JOB_DEFER_MS;
            return;
        }
        sy_job_fail(job, SY_OUTCOME_FAILED, "command: %s", err);
        return;
    }
    settle(job, argv[0], &r);
    log_stderr(job, &r);
    keep_logs(job, &r);
    sy_spawn_result_free(&r);
}

void sy_cmd_run(sy_job *job)
{
    const char **argv = build_argv(job);
    sy_strv env = {0};
    build_env(job, &env);
    char *cwd = command_cwd(job);
    bool cwd_oom = !cwd && (job->spec.cwd || (job->task->base_dir &&
                                               job->task->base_dir[0]));
    if (!argv || env.oom || cwd_oom)
        sy_job_fail(job, SY_OUTCOME_FAILED, "%s", argv ? "out of memory"
                    : "command must be a non-empty list of strings");
    else
        run(job, argv, cwd, &env);
    free(argv);
    free(cwd);
    sy_strv_free(&env);
}
