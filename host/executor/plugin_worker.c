/*
 * switchyard-plugin-worker -- one plugin instance in a process of its own,
 * for an instance with `isolate_plugin = true` (isolated.h).
 *
 * The host starts it with a socket on descriptor 3 and sends the plugin's
 * path and the instance's settings; the worker loads the plugin, creates
 * the instance, and then turns each message into the executor.h call it
 * names (submit, cancel, validate, destroy), and each call the plugin makes
 * back (complete, log, wake) into a message.  A crash here ends only this
 * process: the host fails the attempts it had and starts another worker.
 *
 * The worker is the plugin's host, so it keeps the host's promises to it:
 * a task and its strings live until the plugin completes it; a completion
 * token is an id looked up in a table, never an address, so a second or
 * late complete() is refused (and logged) here too.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/json_params.h>
#include <switchyard/loader.h>

#include "executor/wire.h"

#define SOCKET_FD 3
#define BUCKETS 4096

/* One accepted submit: what the plugin may read until it completes. */
typedef struct job {
    uint64_t id;
    sy_task task;
    json_t *msg; /* owns every string task points to, and the params */
    struct job *next;
} job;

static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static job *buckets[BUCKETS];
static sy_sdk_plugin plugin;
static sy_instance *instance;
static struct sy_host { int unused; } host_handle;
static uint64_t last_submit; /* the last submit id handed to the plugin */

/* Sends and frees `m`.  A host that has gone away ends the worker: there
 * is nobody left to report to. */
static void send_msg(json_t *m)
{
    if (!m)
        return; /* not representable (text that is not UTF-8): dropped */
    pthread_mutex_lock(&send_lock);
    int rc = sy_wire_send(SOCKET_FD, m);
    pthread_mutex_unlock(&send_lock);
    json_decref(m);
    if (rc != 0)
        _exit(0);
}

static void send_capacity(void)
{
    int64_t n = instance ? plugin.desc->capacity(instance) : 0;
    send_msg(json_pack("{s:s, s:I, s:I}", "t", "capacity", "n", (json_int_t)n, "after",
                       (json_int_t)__atomic_load_n(&last_submit, __ATOMIC_ACQUIRE)));
}

static job **slot_of(uint64_t id) { return &buckets[id % BUCKETS]; }

static void jobs_add(job *j)
{
    pthread_mutex_lock(&jobs_lock);
    job **b = slot_of(j->id);
    j->next = *b;
    *b = j;
    pthread_mutex_unlock(&jobs_lock);
}

/* Unlinks and returns the job, or NULL when there is none (already
 * completed, or never accepted). */
static job *jobs_take(uint64_t id)
{
    pthread_mutex_lock(&jobs_lock);
    job *found = NULL;
    for (job **p = slot_of(id); *p; p = &(*p)->next)
        if ((*p)->id == id) {
            found = *p;
            *p = found->next;
            break;
        }
    pthread_mutex_unlock(&jobs_lock);
    return found;
}

static bool jobs_has(uint64_t id)
{
    pthread_mutex_lock(&jobs_lock);
    bool has = false;
    for (job *j = *slot_of(id); j && !has; j = j->next)
        has = j->id == id;
    pthread_mutex_unlock(&jobs_lock);
    return has;
}

static size_t jobs_left(void)
{
    size_t n = 0;
    pthread_mutex_lock(&jobs_lock);
    for (size_t b = 0; b < BUCKETS; b++)
        for (job *j = buckets[b]; j; j = j->next)
            n++;
    pthread_mutex_unlock(&jobs_lock);
    return n;
}

static void free_job(job *j)
{
    json_decref(j->msg);
    free(j);
}

/* --- the host functions the plugin calls -------------------------------- */

static void w_log(sy_host *h, sy_log_level level, const char *fmt, ...)
{
    (void)h;
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    send_msg(json_pack("{s:s, s:i, s:s}", "t", "log", "level", (int)level, "text", text));
}

/* The most of one log a frame carries: its end, the rest counted as
 * dropped before it (the host keeps far less: log_limit). */
#define LOG_FRAME_MAX ((size_t)16 << 20)

static void put_log(json_t *m, const char *key, const char *text, size_t len, size_t dropped,
                    size_t cut)
{
    if (!text || !len)
        return;
    if (len > LOG_FRAME_MAX) {
        text += len - LOG_FRAME_MAX;
        dropped += len - LOG_FRAME_MAX;
        len = LOG_FRAME_MAX;
        cut = 0;
    }
    json_t *v = json_stringn(text, len);
    if (!v) {
        char *copy = malloc(len);
        if (!copy)
            return;
        for (size_t i = 0; i < len; i++)
            copy[i] = (unsigned char)text[i] < 0x80 && text[i] ? text[i] : '?';
        v = json_stringn(copy, len);
        free(copy);
    }
    json_object_set_new(m, key, json_pack("{s:o, s:I, s:I}", "text", v, "dropped",
                                          (json_int_t)dropped, "cut", (json_int_t)cut));
}

static void w_complete(sy_completion *c, const sy_result *r)
{
    uint64_t id = (uint64_t)(uintptr_t)c;
    job *j = jobs_take(id);
    if (!j) {
        w_log(NULL, SY_LOG_ERROR, "plugin bug: complete() for a submit that is over or "
                                  "unknown; refused");
        return;
    }
    json_t *m = json_pack("{s:s, s:I}", "t", "done", "id", (json_int_t)id);
    if (!r || !SY_HAS_FIELD(r, sy_result, error)) {
        json_object_set_new(m, "outcome", json_integer(SY_OUTCOME_FAILED));
        json_object_set_new(m, "error",
                            json_string("plugin bug: complete() with a NULL or unsized result"));
    } else {
        json_object_set_new(m, "outcome", json_integer(r->outcome));
        /* Text that is not UTF-8 cannot travel as JSON: an output is then
         * marked (the host fails the attempt for it), an error or a note
         * replaced by a word. */
        if (r->output && r->output_len) {
            json_t *out = json_stringn(r->output, r->output_len);
            json_object_set_new(m, out ? "output" : "output_not_utf8", out ? out : json_true());
        }
        if (r->error) {
            json_t *e = json_string(r->error);
            json_object_set_new(m, "error", e ? e : json_string("(an error that is not UTF-8)"));
        }
        if (SY_HAS_FIELD(r, sy_result, retry_after_ms) && r->retry_after_ms)
            json_object_set_new(m, "retry_after_ms", json_integer(r->retry_after_ms));
        if (SY_HAS_FIELD(r, sy_result, note) && r->note) {
            json_t *n = json_string(r->note);
            if (n)
                json_object_set_new(m, "note", n);
        }
        /* Logs that are not UTF-8 travel as "?" for each byte that is
         * not: the host would clean them the same way. */
        if (SY_HAS_FIELD(r, sy_result, log_stderr_cut)) {
            put_log(m, "log_stdout", r->log_stdout, r->log_stdout_len, r->log_stdout_dropped,
                    r->log_stdout_cut);
            put_log(m, "log_stderr", r->log_stderr, r->log_stderr_len, r->log_stderr_dropped,
                    r->log_stderr_cut);
        }
    }
    send_msg(m);
    free_job(j);
    send_capacity();
}

static void w_wake(sy_host *h)
{
    (void)h;
    send_capacity();
}

/* attempt_process (1.2): the host records the group and answers; the
 * plugin's thread waits for that answer, which the main thread reads. */
typedef struct ack_wait {
    uint64_t seq;
    int rc;
    bool done;
    int64_t id;       /* emit_event: the event's */
    char err[512];    /* emit_event: the host's reason */
    struct ack_wait *next;
} ack_wait;

static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ack_cond = PTHREAD_COND_INITIALIZER;
static ack_wait *acks;
static uint64_t ack_seq;
static bool host_gone;
static pthread_t main_thread;

/* Sends `m` (numbered with a new "seq") and waits for its answer, which
 * the main thread reads (on_ack); w->rc is the answer's. */
static int ask(ack_wait *w, json_t *m)
{
    pthread_mutex_lock(&ack_lock);
    if (host_gone) {
        pthread_mutex_unlock(&ack_lock);
        json_decref(m);
        return SY_ESTATE;
    }
    w->seq = ++ack_seq;
    w->next = acks;
    acks = w;
    pthread_mutex_unlock(&ack_lock);
    json_object_set_new(m, "seq", json_integer((json_int_t)w->seq));
    send_msg(m);
    pthread_mutex_lock(&ack_lock);
    while (!w->done)
        pthread_cond_wait(&ack_cond, &ack_lock);
    for (ack_wait **p = &acks; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    pthread_mutex_unlock(&ack_lock);
    return w->rc;
}

static int w_attempt_process(sy_completion *c, int64_t pgid, uint64_t start_time)
{
    uint64_t id = (uint64_t)(uintptr_t)c;
    if (pgid <= 1)
        return SY_EINVAL;
    if (!jobs_has(id))
        return SY_ESTATE;
    /* From inside submit() or cancel() the answer could never be read. */
    if (pthread_equal(pthread_self(), main_thread))
        return SY_ENOTSUP;
    ack_wait w = {.rc = SY_ESTATE};
    return ask(&w, json_pack("{s:s, s:I, s:I, s:I}", "t", "process", "id", (json_int_t)id,
                             "pgid", (json_int_t)pgid, "start", (json_int_t)start_time));
}

/* emit_event (1.5): the host records the event and answers, as for
 * attempt_process. */
static int w_emit_event(sy_host *h, const char *name, const char *key, const char *data,
                        size_t data_len, int64_t *event_id, char *err, size_t err_len)
{
    (void)h;
    if (err_len)
        err[0] = '\0';
    if (pthread_equal(pthread_self(), main_thread)) {
        snprintf(err, err_len, "emit_event() from inside a call of the host (submit, cancel, "
                 "...): call it from a thread of the plugin's own");
        return SY_ESTATE;
    }
    if (!name) {
        snprintf(err, err_len, "emit_event() without an event name");
        return SY_EINVAL;
    }
    /* Each string travels only when it is UTF-8 text (json_pack refuses
     * others); the host judges the rest. */
    json_t *m = json_pack("{s:s, s:s, s:s?}", "t", "emit", "name", name, "key", key);
    json_t *d = data ? json_stringn(data, data_len) : NULL;
    if (!m || (data && !d)) {
        json_decref(m);
        snprintf(err, err_len, "emit_event(): the name, key or payload is not UTF-8 text");
        return SY_EINVAL;
    }
    if (d)
        json_object_set_new(m, "data", d);
    ack_wait w = {.rc = SY_ESTATE};
    snprintf(w.err, sizeof w.err, "the host went away");
    int rc = ask(&w, m);
    if (rc == SY_OK && event_id)
        *event_id = w.id;
    if (rc != SY_OK)
        snprintf(err, err_len, "%s", w.err);
    return rc;
}

/* attempt_process_async (1.3): an isolated plugin's host is across a
 * socket, and its answer comes back to this process's main thread; the
 * asking thread waits for it as attempt_process does, then answers
 * itself.  Isolation already costs far more than the wait. */
static int w_attempt_process_async(sy_completion *c, int64_t pgid, uint64_t start_time,
                                   void (*answer)(void *arg, int status), void *arg)
{
    if (!answer)
        return SY_EINVAL;
    answer(arg, w_attempt_process(c, pgid, start_time));
    return SY_OK;
}

/* Main thread: an answer `m`, or (host_gone) the end of all of them. */
static void on_ack(json_t *m, bool gone)
{
    uint64_t seq = m ? (uint64_t)json_integer_value(json_object_get(m, "seq")) : 0;
    pthread_mutex_lock(&ack_lock);
    host_gone |= gone;
    for (ack_wait *w = acks; w; w = w->next)
        if (gone || w->seq == seq) {
            if (!gone) {
                const char *why = json_string_value(json_object_get(m, "error"));
                w->rc = (int)json_integer_value(json_object_get(m, "rc"));
                w->id = json_integer_value(json_object_get(m, "event_id"));
                snprintf(w->err, sizeof w->err, "%s", why ? why : "");
            }
            w->done = true;
        }
    pthread_cond_broadcast(&ack_cond);
    pthread_mutex_unlock(&ack_lock);
}

static const sy_host_api api = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .complete = w_complete,
    .log = w_log,
    .wake = w_wake,
    SY_SDK_JSON_PARAMS_INIT,
    .attempt_process = w_attempt_process,
    .attempt_process_async = w_attempt_process_async,
    .emit_event = w_emit_event,
};

/* --- the calls the host asks for ----------------------------------------- */

static const char *str(json_t *m, const char *key)
{
    const char *s = json_string_value(json_object_get(m, key));
    return s ? s : "";
}

static void on_submit(json_t *m)
{
    job *j = calloc(1, sizeof *j);
    uint64_t id = (uint64_t)json_integer_value(json_object_get(m, "id"));
    if (!j) {
        send_msg(json_pack("{s:s, s:I, s:i, s:s}", "t", "refused", "id", (json_int_t)id, "rc",
                           SY_ENOMEM, "error", "the worker is out of memory"));
        return;
    }
    j->id = id;
    j->msg = json_incref(m);
    json_t *params = json_object_get(m, "params");
    const char *input = str(m, "input");
    j->task = (sy_task){
        .size = sizeof(sy_task),
        .attempt = (uint32_t)json_integer_value(json_object_get(m, "attempt")),
        .ns = str(m, "ns"),
        .run_id = str(m, "run_id"),
        .task_id = str(m, "task_id"),
        .input = input,
        .input_len = strlen(input),
        .params = sy_sdk_params_view(json_is_object(params) ? params : NULL),
        .timeout_ms = json_integer_value(json_object_get(m, "timeout_ms")),
        .workflow = str(m, "workflow"),
        .base_dir = str(m, "base_dir"),
        .element = json_is_integer(json_object_get(m, "element"))
                       ? json_integer_value(json_object_get(m, "element"))
                       : -1,
    };
    jobs_add(j);
    __atomic_store_n(&last_submit, id, __ATOMIC_RELEASE);
    char err[1024] = "";
    /* The host sends a resume only when the plugin has resume(). */
    bool resume = json_is_true(json_object_get(m, "resume")) &&
                  SY_HAS_FIELD(plugin.desc, sy_executor, resume) && plugin.desc->resume;
    int rc = (resume ? plugin.desc->resume : plugin.desc->submit)(
        instance, &j->task, (sy_completion *)(uintptr_t)id, err, sizeof err);
    if (rc == SY_OK)
        return;
    /* Not accepted: a complete() the plugin made anyway was refused above
     * or took the job; either way it is gone or to be dropped now. */
    job *left = jobs_take(id);
    if (left)
        free_job(left);
    send_msg(json_pack("{s:s, s:I, s:i, s:s}", "t", "refused", "id", (json_int_t)id, "rc", rc,
                       "error", err));
    send_capacity();
}

static void on_cancel(json_t *m)
{
    uint64_t id = (uint64_t)json_integer_value(json_object_get(m, "id"));
    if (jobs_has(id))
        plugin.desc->cancel(instance, (sy_completion *)(uintptr_t)id);
}

static void on_validate(json_t *m)
{
    char err[1024] = "";
    int rc = SY_OK;
    json_t *params = json_object_get(m, "params");
    if (plugin.desc->validate)
        rc = plugin.desc->validate(instance, sy_sdk_params_view(json_is_object(params) ? params
                                                                                       : NULL),
                                   str(m, "base_dir"), err, sizeof err);
    send_msg(json_pack("{s:s, s:O, s:i, s:s}", "t", "validated", "seq",
                       json_object_get(m, "seq"), "rc", rc, "error", err));
}

/* Loads the plugin and creates the instance from the first message. */
static int create(json_t *m)
{
    char err[SY_SDK_LOAD_REASON_MAX];
    if (sy_sdk_plugin_open(&plugin, str(m, "path"), err, sizeof err) != SY_OK) {
        send_msg(json_pack("{s:s, s:b, s:s}", "t", "created", "ok", 0, "error", err));
        return -1;
    }
    json_t *settings = json_object_get(m, "settings");
    int rc = plugin.desc->create(&api, (sy_host *)&host_handle,
                                 sy_sdk_params_view(json_is_object(settings) ? settings : NULL),
                                 &instance, err, 1024);
    if (rc != SY_OK || !instance) {
        send_msg(json_pack("{s:s, s:b, s:s}", "t", "created", "ok", 0, "error",
                           err[0] ? err : "create() failed without a message"));
        return -1;
    }
    send_msg(json_pack("{s:s, s:b}", "t", "created", "ok", 1));
    send_capacity();
    return 0;
}

int main(void)
{
    /* The host, not a terminal, decides when this process ends: it closes
     * the socket or sends destroy. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    main_thread = pthread_self();
    char err[512];
    json_t *m = sy_wire_recv(SOCKET_FD, err, sizeof err);
    if (!m || strcmp(str(m, "t"), "create") != 0) {
        fprintf(stderr, "switchyard-plugin-worker: expected create from the host on "
                        "descriptor 3%s%s\n", err[0] ? ": " : "", err);
        return 2;
    }
    int rc = create(m);
    json_decref(m);
    if (rc != 0)
        return 1;
    while ((m = sy_wire_recv(SOCKET_FD, err, sizeof err))) {
        const char *t = str(m, "t");
        if (strcmp(t, "submit") == 0)
            on_submit(m);
        else if (strcmp(t, "cancel") == 0)
            on_cancel(m);
        else if (strcmp(t, "validate") == 0)
            on_validate(m);
        else if (strcmp(t, "process_ack") == 0 || strcmp(t, "emit_ack") == 0)
            on_ack(m, false);
        else if (strcmp(t, "destroy") == 0) {
            json_decref(m);
            break;
        }
        json_decref(m);
    }
    /* Nobody answers from now on: a plugin waiting stops its group. */
    on_ack(NULL, true);
    /* The host asked (or went away): every accepted submit is completed
     * first, as destroy() requires, by cancelling what is left and waiting
     * for it (at most 5 s; a plugin that never completes is left to the
     * process's end). */
    for (size_t b = 0; b < BUCKETS; b++) {
        pthread_mutex_lock(&jobs_lock);
        uint64_t ids[64];
        size_t n = 0;
        for (job *j = buckets[b]; j && n < 64; j = j->next)
            ids[n++] = j->id;
        pthread_mutex_unlock(&jobs_lock);
        for (size_t i = 0; i < n; i++)
            plugin.desc->cancel(instance, (sy_completion *)(uintptr_t)ids[i]);
    }
    for (int waited = 0; jobs_left() > 0; waited += 10) {
        if (waited >= 5000)
            _exit(1);
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    plugin.desc->destroy(instance);
    send_msg(json_pack("{s:s}", "t", "destroyed"));
    return 0;
}
