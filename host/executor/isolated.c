/* The proxy of an isolated instance: executor.h's calls as messages to a
 * worker process, and the worker restarted when it dies. */
#include "executor/isolated.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/json_params.h>

#include "base/log.h"
#include "executor/isolated_state.h"
#include "executor/wire.h"

#ifndef SY_PLUGIN_WORKER
#define SY_PLUGIN_WORKER "/usr/local/libexec/switchyard/switchyard-plugin-worker"
#endif

const char *sy_isolated_worker_path(void)
{
    const char *p = getenv("SWITCHYARD_PLUGIN_WORKER");
    return p && *p ? p : SY_PLUGIN_WORKER;
}

/* --- the worker process ------------------------------------------------ */

/* Starts a worker and hands it the plugin and settings; on its answer the
 * instance is up.  Caller holds nothing; the reader is not running. */
static int start_worker(sy_instance *in, char *err, size_t err_len)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return snprintf(err, err_len, "socketpair: %s", strerror(errno)), -1;
    const char *path = sy_isolated_worker_path();
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return snprintf(err, err_len, "fork: %s", strerror(errno)), -1;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls until exec. */
        if (dup2(sv[1], 3) < 0)
            _exit(127);
        close_range(4, ~0U, 0);
        setpgid(0, 0); /* a terminal's Ctrl-C is the host's to handle */
        execl(path, "switchyard-plugin-worker", (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    if (sy_wire_send(sv[0], in->start) != 0) {
        snprintf(err, err_len, "cannot start %s: %s", path, strerror(errno));
        goto fail;
    }
    char why[256];
    json_t *m = sy_wire_recv(sv[0], why, sizeof why);
    if (!m) {
        snprintf(err, err_len, "%s ended before it answered%s%s", path, why[0] ? ": " : "",
                 why);
        goto fail;
    }
    if (!json_is_true(json_object_get(m, "ok"))) {
        const char *e = json_string_value(json_object_get(m, "error"));
        snprintf(err, err_len, "%s", e ? e : "the worker refused without a reason");
        json_decref(m);
        goto fail;
    }
    json_decref(m);
    pthread_mutex_lock(&in->lock);
    in->fd = sv[0];
    in->pid = pid;
    in->up = true;
    in->reported = 0;
    in->reported_after = in->next_id - 1;
    pthread_mutex_unlock(&in->lock);
    return 0;
fail:
    close(sv[0]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

/* How a worker ended, for the attempts it takes down. */
static void describe_end(pid_t pid, char *buf, size_t len)
{
    int status = 0;
    pid_t got = 0;
    for (int i = 0; i < 50 && (got = waitpid(pid, &status, WNOHANG)) == 0; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (got == 0) { /* it closed the socket but lives on: ended here */
        kill(pid, SIGKILL);
        got = waitpid(pid, &status, 0);
    }
    if (got != pid)
        snprintf(buf, len, "ended");
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
}

/* --- messages from the worker ------------------------------------------ */

static void on_done(sy_instance *in, json_t *m)
{
    sy_completion *c = sy_isolated_take(in, (uint64_t)json_integer_value(json_object_get(m, "id")));
    if (!c)
        return;
    const char *output = json_string_value(json_object_get(m, "output"));
    sy_result r = {
        .size = sizeof r,
        .outcome = (sy_outcome)json_integer_value(json_object_get(m, "outcome")),
        .output = output,
        .output_len = output ? json_string_length(json_object_get(m, "output")) : 0,
        .error = json_string_value(json_object_get(m, "error")),
        .retry_after_ms = json_integer_value(json_object_get(m, "retry_after_ms")),
        .note = json_string_value(json_object_get(m, "note")),
    };
    const json_t *lo = json_object_get(m, "log_stdout"), *le = json_object_get(m, "log_stderr");
    r.log_stdout = json_string_value(json_object_get(lo, "text"));
    r.log_stdout_len = r.log_stdout ? json_string_length(json_object_get(lo, "text")) : 0;
    r.log_stdout_dropped = (size_t)json_integer_value(json_object_get(lo, "dropped"));
    r.log_stdout_cut = (size_t)json_integer_value(json_object_get(lo, "cut"));
    r.log_stderr = json_string_value(json_object_get(le, "text"));
    r.log_stderr_len = r.log_stderr ? json_string_length(json_object_get(le, "text")) : 0;
    r.log_stderr_dropped = (size_t)json_integer_value(json_object_get(le, "dropped"));
    r.log_stderr_cut = (size_t)json_integer_value(json_object_get(le, "cut"));
    if (json_is_true(json_object_get(m, "output_not_utf8"))) {
        r.outcome = SY_OUTCOME_FAILED;
        r.error = "the plugin's output is not UTF-8 text";
    }
    pthread_mutex_lock(&in->lock);
    in->backoff_ms = SY_ISOLATED_BACKOFF_MIN_MS; /* a worker that works */
    pthread_mutex_unlock(&in->lock);
    in->api->complete(c, &r);
}

static void on_refused(sy_instance *in, json_t *m)
{
    sy_completion *c = sy_isolated_take(in, (uint64_t)json_integer_value(json_object_get(m, "id")));
    if (!c)
        return;
    int rc = (int)json_integer_value(json_object_get(m, "rc"));
    const char *why = json_string_value(json_object_get(m, "error"));
    char text[1200];
    sy_result r = {.size = sizeof r, .error = text};
    if (rc == SY_EBUSY) {
        /* The host saw room that was gone by the time the worker had the
         * task: not an attempt. */
        r.outcome = SY_OUTCOME_DEFERRED;
        snprintf(text, sizeof text, "isolated instance '%s' was busy", in->name);
    } else {
        r.outcome = SY_OUTCOME_FAILED;
        snprintf(text, sizeof text, "executor '%s' refused the task: %s", in->name,
                 why && *why ? why : "no reason given");
    }
    in->api->complete(c, &r);
}

/* The worker's plugin reports a process group (ABI 1.2): recorded through
 * the host's own call, which waits for the store, and answered.  The
 * reader waits with it: the worker's later messages wait a batch. */
static void on_process(sy_instance *in, json_t *m)
{
    sy_completion *c = sy_isolated_peek(in, (uint64_t)json_integer_value(json_object_get(m, "id")));
    int rc = !c ? SY_ESTATE
             : !SY_HOST_HAS(in->api, attempt_process)
                 ? SY_ENOTSUP
                 : in->api->attempt_process(c, json_integer_value(json_object_get(m, "pgid")),
                                            (uint64_t)json_integer_value(
                                                json_object_get(m, "start")));
    sy_isolated_send(in, json_pack("{s:s, s:O, s:i}", "t", "process_ack", "seq",
                                   json_object_get(m, "seq"), "rc", rc));
}

/* The worker's plugin emits a named event (ABI 1.5): recorded through the
 * host's own call, which waits for the store, and answered, as on_process. */
static void on_emit(sy_instance *in, json_t *m)
{
    const json_t *data = json_object_get(m, "data");
    int64_t id = 0;
    char err[512] = "";
    int rc = !SY_HOST_HAS(in->api, emit_event)
                 ? SY_ENOTSUP
                 : in->api->emit_event(in->host, json_string_value(json_object_get(m, "name")),
                                       json_string_value(json_object_get(m, "key")),
                                       json_string_value(data),
                                       data ? json_string_length(data) : 0, &id, err,
                                       sizeof err);
    json_t *ack = json_pack("{s:s, s:O, s:i, s:I}", "t", "emit_ack", "seq",
                            json_object_get(m, "seq"), "rc", rc, "event_id", (json_int_t)id);
    /* A reason cut inside a character is not UTF-8: then it goes without. */
    json_t *why = json_string(err);
    if (ack)
        json_object_set_new(ack, "error", why ? why : json_string("(not UTF-8 text)"));
    sy_isolated_send(in, ack);
}

static void handle(sy_instance *in, json_t *m)
{
    const char *t = json_string_value(json_object_get(m, "t"));
    if (!t)
        return;
    if (strcmp(t, "done") == 0) {
        on_done(in, m);
    } else if (strcmp(t, "refused") == 0) {
        on_refused(in, m);
    } else if (strcmp(t, "process") == 0) {
        on_process(in, m);
    } else if (strcmp(t, "emit") == 0) {
        on_emit(in, m);
    } else if (strcmp(t, "log") == 0) {
        const char *text = json_string_value(json_object_get(m, "text"));
        in->api->log(in->host, (sy_log_level)json_integer_value(json_object_get(m, "level")),
                     "%s", text ? text : "");
    } else if (strcmp(t, "capacity") == 0) {
        pthread_mutex_lock(&in->lock);
        in->reported = json_integer_value(json_object_get(m, "n"));
        in->reported_after = (uint64_t)json_integer_value(json_object_get(m, "after"));
        pthread_mutex_unlock(&in->lock);
        in->api->wake(in->host);
    } else if (strcmp(t, "validated") == 0) {
        pthread_mutex_lock(&in->lock);
        json_decref(in->validated);
        in->validated = json_incref(m);
        pthread_cond_broadcast(&in->cond);
        pthread_mutex_unlock(&in->lock);
    }
}

/* The worker is gone: its attempts fail with the cause, and, unless the
 * instance is being destroyed, another worker starts after the backoff. */
static bool restart(sy_instance *in)
{
    pthread_mutex_lock(&in->lock);
    in->up = false;
    int fd = in->fd;
    pid_t pid = in->pid;
    in->fd = -1;
    sy_isolated_queue_clear(in);
    bool stopping = in->stopping;
    pthread_mutex_unlock(&in->lock);
    close(fd);
    char how[128], why[512];
    describe_end(pid, how, sizeof how);
    snprintf(why, sizeof why, "the isolated worker of plugin '%s' (instance '%s') %s", in->plugin,
             in->name, how);
    size_t n = sy_isolated_fail_all(in, why);
    if (stopping)
        return false;
    in->restarts++;
    for (;;) {
        pthread_mutex_lock(&in->lock);
        int64_t wait = in->backoff_ms;
        in->backoff_ms = wait * 2 > SY_ISOLATED_BACKOFF_MAX_MS ? SY_ISOLATED_BACKOFF_MAX_MS
                                                               : wait * 2;
        sy_log(SY_LOG_ERROR, in->name, "%s; %zu attempt%s failed; a new worker starts in %lld ms",
               why, n, n == 1 ? "" : "s", (long long)wait);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += wait / 1000;
        until.tv_nsec += (wait % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!in->stopping && pthread_cond_timedwait(&in->cond, &in->lock, &until) == 0)
            ;
        stopping = in->stopping;
        pthread_mutex_unlock(&in->lock);
        if (stopping)
            return false;
        char err[1024];
        if (start_worker(in, err, sizeof err) == 0) {
            sy_log(SY_LOG_INFO, in->name, "a new isolated worker of plugin '%s' runs", in->plugin);
            in->api->wake(in->host);
            return true;
        }
        snprintf(why, sizeof why, "the isolated worker of plugin '%s' (instance '%s') did not "
                 "start: %.300s", in->plugin, in->name, err);
        n = 0;
    }
}

static void *reader(void *arg)
{
    sy_instance *in = arg;
    for (;;) {
        pthread_mutex_lock(&in->lock);
        int fd = in->fd;
        pthread_mutex_unlock(&in->lock);
        char err[256];
        json_t *m = sy_wire_recv(fd, err, sizeof err);
        if (m) {
            handle(in, m);
            json_decref(m);
            continue;
        }
        if (!restart(in))
            return NULL;
    }
}

/* --- the executor ---------------------------------------------------------- */

static int iso_create(const sy_host_api *api, sy_host *host, const sy_params *config,
                      sy_instance **out, char *err, size_t err_len)
{
    const json_t *cfg = sy_sdk_params_json(config);
    sy_instance *in = sy_isolated_new(api, host, cfg);
    if (!in)
        return snprintf(err, err_len, "out of memory"), SY_ENOMEM;
    if (start_worker(in, err, err_len) != 0) {
        sy_isolated_free(in);
        return SY_EIO;
    }
    if (sy_isolated_start_threads(in, reader, err, err_len) != 0) {
        sy_isolated_stop(in);
        sy_isolated_free(in);
        return SY_EINTERNAL;
    }
    *out = in;
    return SY_OK;
}

static void iso_destroy(sy_instance *in)
{
    sy_isolated_stop(in);
    sy_isolated_free(in);
}

static int64_t iso_capacity(sy_instance *in)
{
    pthread_mutex_lock(&in->lock);
    int64_t cap = 0;
    if (in->up && !in->stopping) {
        uint64_t in_transit = in->next_id - 1 - in->reported_after;
        cap = in->reported == SY_CAPACITY_UNLIMITED ? SY_CAPACITY_UNLIMITED
              : in->reported > (int64_t)in_transit  ? in->reported - (int64_t)in_transit
                                                    : 0;
    }
    pthread_mutex_unlock(&in->lock);
    return cap;
}

/* A submit, or (resume) the take-over of an earlier host's attempt: one
 * message, which the worker hands to the plugin's submit() or resume(). */
static int send_task(sy_instance *in, const sy_task *task, sy_completion *c, bool resume,
                     char *err, size_t err_len)
{
    const json_t *params = sy_sdk_params_json(task->params);
    json_t *m = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s%, s:o, s:I, s:s, s:s, s:b, s:I}", "t",
                          "submit",
                          "attempt", (json_int_t)task->attempt, "ns", task->ns, "run_id",
                          task->run_id, "task_id", task->task_id, "input", task->input,
                          task->input_len, "params",
                          params ? json_incref((json_t *)params) : json_object(), "timeout_ms",
                          (json_int_t)task->timeout_ms, "workflow", task->workflow, "base_dir",
                          task->base_dir, "resume", resume, "element",
                          (json_int_t)task->element);
    if (!m)
        return snprintf(err, err_len, "the task cannot be sent to the worker"), SY_EINVAL;
    int rc = sy_isolated_send_submit(in, c, m);
    if (rc == SY_EBUSY && err_len)
        err[0] = '\0';
    return rc;
}

static int iso_submit(sy_instance *in, const sy_task *task, sy_completion *c, char *err,
                      size_t err_len)
{
    return send_task(in, task, c, false, err, err_len);
}

static int iso_resume(sy_instance *in, const sy_task *task, sy_completion *c, char *err,
                      size_t err_len)
{
    return send_task(in, task, c, true, err, err_len);
}

static int iso_cancel(sy_instance *in, sy_completion *c) { return sy_isolated_send_cancel(in, c); }

static int iso_validate(sy_instance *in, const sy_params *task_params, const char *base_dir,
                        char *err, size_t err_len)
{
    return sy_isolated_call_validate(in, sy_sdk_params_json(task_params), base_dir, err,
                                     err_len);
}

static void iso_metrics(sy_instance *in, sy_metric_fn emit, void *sink)
{
    pthread_mutex_lock(&in->lock);
    int64_t active = (int64_t)in->n_pending, restarts = in->restarts, up = in->up;
    pthread_mutex_unlock(&in->lock);
    emit(sink, "active", active);
    emit(sink, "capacity", iso_capacity(in));
    emit(sink, "isolated.up", up);
    emit(sink, "isolated.restarts", restarts);
}

/* The proxy's descriptor; a plugin that resumes attempts (ABI 1.4) gets
 * the same with resume(). */
#define PROXY_FIELDS                                                           \
    SY_EXECUTOR_V1, .name = "isolated", .version = "1",                       \
    .description = "a plugin run in a worker process of its own (isolate_plugin = true)", \
    .create = iso_create, .destroy = iso_destroy, .capacity = iso_capacity,   \
    .submit = iso_submit, .cancel = iso_cancel, .validate = iso_validate,     \
    .metrics = iso_metrics
static const sy_executor proxy = {PROXY_FIELDS};
static const sy_executor proxy_resuming = {PROXY_FIELDS, .resume = iso_resume};
#undef PROXY_FIELDS

void sy_isolated_wrap(sy_instance_entry *e, const sy_plugin *plugin)
{
    json_t *start = json_pack("{s:s, s:s, s:s, s:s, s:o}", "t", "create", "path", plugin->path,
                              "plugin", plugin->name ? plugin->name : "?", "instance", e->name,
                              "settings", e->settings ? e->settings : json_object());
    e->settings = start;
    e->desc = SY_HAS_FIELD(plugin->desc, sy_executor, resume) && plugin->desc->resume
                  ? &proxy_resuming
                  : &proxy;
    /* Logs and records name the plugin the operator configured. */
    e->host.plugin = plugin->name;
}
