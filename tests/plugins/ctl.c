/*
 * ctl: a test executor whose tasks do what their parameters say, completed
 * from its own worker threads (never from submit), for the integration
 * and crash tests.
 *
 * Instance settings: slots (workers, default 4), record (a file to which
 * every dispatch and completion is appended as a line
 * "dispatch|complete RUN_NS ATTEMPT"; an element of a map is
 * "RUN_NS[INDEX]").
 * Task parameters:
 *   mode        "ok" (default), "fail", "hang", "bad_output", "not_json",
 *               "deaf" (hangs and ignores cancel: a plugin bug)
 *   fail_times  fail the first N attempts, then behave as `mode`
 *   sleep_ms    work time
 *   output      a group: the output object (default {})
 *   echo        true: the output is the input context
 *   block_ms    submit() itself sleeps this long first (a plugin bug: the
 *               watchdog must name it)
 *   crash       "submit": submit() faults; "worker": the worker thread
 *               does, after sleep_ms (plugin bugs: the next start must
 *               name the plugin)
 *   twice       true: after completing, completes the same token again
 *               with the output {"wrong": NS} (a plugin bug: the host
 *               must refuse it, and no task may ever see that output)
 *   stamp       true: the output is {"attempt": N, "pid": PID}, saying which
 *               attempt, run by which host process, the result is from
 *   emit        an event name: on success, before complete(), the worker
 *               emits it (emit_event, ABI 1.5) with the output as payload
 *               and `emit_key` as key; a refusal fails the attempt with
 *               the host's status and reason, as the plugin saw them
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/executor.h>

typedef struct job {
    sy_completion *c;
    const sy_task *task;
    struct job *next;
    int cancelled;
    int running;
} job;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *head, *tail;
    job *active; /* running jobs, linked through next while running */
    pthread_t *threads;
    int64_t slots, busy;
    int stop;
    int record_fd;
    atomic_long submitted, succeeded, failed, cancelled;
};

static const sy_param_spec p_slots = {sizeof(sy_param_spec), 0, "slots", SY_PARAM_INT, "workers"};
static const sy_param_spec p_record = {sizeof(sy_param_spec), 0, "record", SY_PARAM_STRING,
                                       "dispatch log file"};
static const sy_param_spec *const instance_params[] = {&p_slots, &p_record, NULL};

static const sy_param_spec t_mode = {sizeof(sy_param_spec), 0, "mode", SY_PARAM_STRING, NULL};
static const sy_param_spec t_fail = {sizeof(sy_param_spec), 0, "fail_times", SY_PARAM_INT, NULL};
static const sy_param_spec t_sleep = {sizeof(sy_param_spec), 0, "sleep_ms", SY_PARAM_INT, NULL};
static const sy_param_spec t_output = {sizeof(sy_param_spec), 0, "output", SY_PARAM_GROUP, NULL};
static const sy_param_spec t_echo = {sizeof(sy_param_spec), 0, "echo", SY_PARAM_BOOL, NULL};
static const sy_param_spec t_block = {sizeof(sy_param_spec), 0, "block_ms", SY_PARAM_INT, NULL};
static const sy_param_spec t_crash = {sizeof(sy_param_spec), 0, "crash", SY_PARAM_STRING, NULL};
static const sy_param_spec t_stamp = {sizeof(sy_param_spec), 0, "stamp", SY_PARAM_BOOL, NULL};
static const sy_param_spec t_twice = {sizeof(sy_param_spec), 0, "twice", SY_PARAM_BOOL, NULL};
static const sy_param_spec t_emit = {sizeof(sy_param_spec), 0, "emit", SY_PARAM_STRING, NULL};
static const sy_param_spec t_emit_key = {sizeof(sy_param_spec), 0, "emit_key", SY_PARAM_STRING,
                                         NULL};
static const sy_param_spec *const task_params[] = {
    &t_mode, &t_fail, &t_sleep, &t_output, &t_echo, &t_block, &t_crash, &t_stamp, &t_twice,
    &t_emit, &t_emit_key, NULL};

/* The crash the tests ask for: a store to an address that is never
 * mapped, through a value the compiler cannot see, so that it is a real
 * fault in this plugin's code under every build (a NULL store would be
 * stopped by UBSan before it faults). */
static volatile uintptr_t nowhere = 16;
static void crash_now(void) { *(volatile int *)nowhere = 1; }

static bool crash_asked(const sy_host_api *api, const sy_task *t, const char *where)
{
    const char *crash = NULL;
    return api->param_string(t->params, "crash", &crash) == SY_OK && strcmp(crash, where) == 0;
}

static void record(struct sy_instance *in, const char *what, const sy_task *t)
{
    if (in->record_fd < 0)
        return;
    char line[512];
    /* An element of a map (its input has "map_index") is named NS[INDEX]. */
    const char *at = t->input ? strstr(t->input, "\"map_index\":") : NULL;
    int n = at ? snprintf(line, sizeof line, "%s %s[%ld] %u\n", what, t->ns,
                          strtol(at + 12, NULL, 10), t->attempt)
               : snprintf(line, sizeof line, "%s %s %u\n", what, t->ns, t->attempt);
    if (n > 0 && (size_t)n < sizeof line && write(in->record_fd, line, (size_t)n) < 0)
        in->api->log(in->host, SY_LOG_WARN, "record: %s", strerror(errno));
}

static void sleep_ms(int64_t ms, const job *j)
{
    while (ms > 0 && !j->cancelled) {
        int64_t step = ms > 5 ? 5 : ms;
        struct timespec ts = {0, (long)step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

static void finish(struct sy_instance *in, job *j, sy_outcome o, const char *out,
                   const char *error)
{
    sy_result r = {.size = sizeof r, .outcome = o, .output = out, .output_len = out ? strlen(out) : 0, .error = error};
    record(in, "complete", j->task);
    if (o == SY_OUTCOME_SUCCEEDED)
        atomic_fetch_add(&in->succeeded, 1);
    else if (o == SY_OUTCOME_CANCELLED)
        atomic_fetch_add(&in->cancelled, 1);
    else
        atomic_fetch_add(&in->failed, 1);
    in->api->complete(j->c, &r);
}

/* The task's `emit`, when it has one: true when emitted (or none asked),
 * else false with why in `why`. */
static bool emit_asked(struct sy_instance *in, const sy_params *p, const char *payload,
                       char *why, size_t why_len)
{
    const sy_host_api *api = in->api;
    const char *name = NULL, *key = NULL;
    if (api->param_string(p, "emit", &name) != SY_OK)
        return true;
    api->param_string(p, "emit_key", &key);
    if (!SY_HOST_HAS(api, emit_event)) {
        snprintf(why, why_len, "this host has no emit_event()");
        return false;
    }
    char err[600] = "";
    int64_t id = 0;
    int rc = api->emit_event(in->host, name, key, payload, payload ? strlen(payload) : 0, &id,
                             err, sizeof err);
    if (rc == SY_OK && id > 0)
        return true;
    snprintf(why, why_len, "emit_event refused (status %d, event %lld): %s", rc,
             (long long)id, err);
    return false;
}

static void work(struct sy_instance *in, job *j)
{
    const sy_host_api *api = in->api;
    const sy_params *p = j->task->params;
    const char *mode = "ok";
    int64_t fail_times = 0, ms = 0;
    int echo = 0, stamp = 0;
    api->param_string(p, "mode", &mode);
    api->param_bool(p, "stamp", &stamp);
    api->param_int(p, "fail_times", &fail_times);
    api->param_int(p, "sleep_ms", &ms);
    api->param_bool(p, "echo", &echo);
    if ((int64_t)j->task->attempt <= fail_times) {
        sleep_ms(ms, j);
        char msg[64];
        snprintf(msg, sizeof msg, "planned failure %u of %lld", j->task->attempt,
                 (long long)fail_times);
        finish(in, j, SY_OUTCOME_FAILED, NULL, msg);
        return;
    }
    if (strcmp(mode, "deaf") == 0)
        for (;;)
            pause(); /* never completes, whatever cancel() says */
    if (strcmp(mode, "hang") == 0)
        ms = INT64_MAX / 2;
    sleep_ms(ms, j);
    if (crash_asked(api, j->task, "worker"))
        crash_now();
    if (j->cancelled) {
        finish(in, j, SY_OUTCOME_CANCELLED, NULL, "cancelled");
    } else if (strcmp(mode, "fail") == 0) {
        finish(in, j, SY_OUTCOME_FAILED, NULL, "failed as asked (mode = \"fail\")");
    } else if (strcmp(mode, "bad_output") == 0) {
        finish(in, j, SY_OUTCOME_SUCCEEDED, "[1, 2, 3]", NULL);
    } else if (strcmp(mode, "not_json") == 0) {
        finish(in, j, SY_OUTCOME_SUCCEEDED, "this is not json", NULL);
    } else if (echo) {
        finish(in, j, SY_OUTCOME_SUCCEEDED, j->task->input, NULL);
    } else if (stamp) {
        char out[64];
        snprintf(out, sizeof out, "{\"attempt\": %u, \"pid\": %ld}", j->task->attempt,
                 (long)getpid());
        finish(in, j, SY_OUTCOME_SUCCEEDED, out, NULL);
    } else {
        const sy_params *out = NULL;
        char *text = api->param_group(p, "output", &out) == SY_OK ? api->param_json(out) : NULL;
        char why[800];
        if (emit_asked(in, p, text, why, sizeof why))
            finish(in, j, SY_OUTCOME_SUCCEEDED, text, NULL);
        else
            finish(in, j, SY_OUTCOME_FAILED, NULL, why);
        api->free_string(text);
    }
}

static void unlink_active(struct sy_instance *in, job *j)
{
    for (job **p = &in->active; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            return;
        }
}

static void *worker(void *arg)
{
    struct sy_instance *in = arg;
    pthread_mutex_lock(&in->mu);
    for (;;) {
        while (!in->head && !in->stop)
            pthread_cond_wait(&in->cv, &in->mu);
        if (!in->head && in->stop)
            break;
        job *j = in->head;
        in->head = j->next;
        if (!in->head)
            in->tail = NULL;
        j->running = 1;
        j->next = in->active;
        in->active = j;
        pthread_mutex_unlock(&in->mu);
        /* What `twice` needs is read before the first completion: after
         * it the task is the host's again. */
        int twice = 0;
        char wrong[320] = "";
        sy_completion *token = j->c;
        if (in->api->param_bool(j->task->params, "twice", &twice) == SY_OK && twice)
            snprintf(wrong, sizeof wrong, "{\"wrong\": \"%.256s\"}", j->task->ns);
        work(in, j);
        if (twice) {
            sy_result again = {.size = sizeof again, .outcome = SY_OUTCOME_SUCCEEDED,
                               .output = wrong, .output_len = strlen(wrong)};
            in->api->complete(token, &again); /* the bug */
        }
        pthread_mutex_lock(&in->mu);
        unlink_active(in, j);
        in->busy--;
        free(j);
        pthread_mutex_unlock(&in->mu);
        in->api->wake(in->host);
        pthread_mutex_lock(&in->mu);
    }
    pthread_mutex_unlock(&in->mu);
    return NULL;
}

static int ctl_create(const sy_host_api *api, sy_host *host, const sy_params *cfg,
                      sy_instance **out, char *err, size_t err_len)
{
    int64_t slots = 4;
    const char *rec = NULL;
    api->param_int(cfg, "slots", &slots);
    api->param_string(cfg, "record", &rec);
    if (slots < 1 || slots > 256) {
        snprintf(err, err_len, "slots: must be between 1 and 256, got %lld", (long long)slots);
        return SY_EINVAL;
    }
    struct sy_instance *in = calloc(1, sizeof *in);
    if (!in)
        return SY_ENOMEM;
    in->api = api;
    in->host = host;
    in->slots = slots;
    in->record_fd = -1;
    if (rec && (in->record_fd = open(rec, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0) {
        snprintf(err, err_len, "record: cannot open %s: %s", rec, strerror(errno));
        free(in);
        return SY_EIO;
    }
    pthread_mutex_init(&in->mu, NULL);
    pthread_cond_init(&in->cv, NULL);
    in->threads = calloc((size_t)slots, sizeof *in->threads);
    for (int64_t i = 0; i < slots; i++)
        pthread_create(&in->threads[i], NULL, worker, in);
    *out = in;
    return SY_OK;
}

static void ctl_destroy(sy_instance *in)
{
    pthread_mutex_lock(&in->mu);
    in->stop = 1;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
    for (int64_t i = 0; i < in->slots; i++)
        pthread_join(in->threads[i], NULL);
    if (in->record_fd >= 0)
        close(in->record_fd);
    free(in->threads);
    pthread_mutex_destroy(&in->mu);
    pthread_cond_destroy(&in->cv);
    free(in);
}

static int64_t ctl_capacity(sy_instance *in)
{
    pthread_mutex_lock(&in->mu);
    int64_t free_slots = in->slots - in->busy;
    pthread_mutex_unlock(&in->mu);
    return free_slots;
}

static int ctl_submit(sy_instance *in, const sy_task *task, sy_completion *c, char *err,
                      size_t err_len)
{
    (void)err;
    (void)err_len;
    int64_t block = 0;
    if (in->api->param_int(task->params, "block_ms", &block) == SY_OK && block > 0) {
        struct timespec ts = {(time_t)(block / 1000), (long)(block % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    if (crash_asked(in->api, task, "submit"))
        crash_now();
    job *j = calloc(1, sizeof *j);
    if (!j)
        return SY_ENOMEM;
    j->c = c;
    j->task = task;
    pthread_mutex_lock(&in->mu);
    if (in->busy >= in->slots) {
        pthread_mutex_unlock(&in->mu);
        free(j);
        return SY_EBUSY;
    }
    in->busy++;
    record(in, "dispatch", task);
    if (in->tail)
        in->tail->next = j;
    else
        in->head = j;
    in->tail = j;
    atomic_fetch_add(&in->submitted, 1);
    pthread_cond_signal(&in->cv);
    pthread_mutex_unlock(&in->mu);
    return SY_OK;
}

static int ctl_cancel(sy_instance *in, sy_completion *c)
{
    int rc = SY_ENOENT;
    pthread_mutex_lock(&in->mu);
    for (job *j = in->head; j; j = j->next)
        if (j->c == c) {
            j->cancelled = 1; /* the worker completes it promptly */
            rc = SY_OK;
        }
    for (job *j = in->active; j; j = j->next)
        if (j->c == c) {
            j->cancelled = 1;
            rc = SY_OK;
        }
    pthread_mutex_unlock(&in->mu);
    return rc;
}

static void ctl_metrics(sy_instance *in, sy_metric_fn emit, void *sink)
{
    pthread_mutex_lock(&in->mu);
    int64_t busy = in->busy;
    pthread_mutex_unlock(&in->mu);
    emit(sink, "active", busy);
    emit(sink, "capacity", in->slots - busy);
    emit(sink, "submitted", atomic_load(&in->submitted));
    emit(sink, "succeeded", atomic_load(&in->succeeded));
    emit(sink, "failed", atomic_load(&in->failed));
    emit(sink, "cancelled", atomic_load(&in->cancelled));
    emit(sink, "timed_out", 0);
}

static const sy_executor ctl = {
    SY_EXECUTOR_V1,
    .name = "ctl",
    .version = "1.0.0",
    .description = "test executor: tasks do what their parameters say",
    .instance_params = instance_params,
    .task_params = task_params,
    .create = ctl_create,
    .destroy = ctl_destroy,
    .capacity = ctl_capacity,
    .submit = ctl_submit,
    .cancel = ctl_cancel,
    .metrics = ctl_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &ctl; }
