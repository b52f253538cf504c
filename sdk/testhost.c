/*
 * testhost.c -- a host for unit tests and the conformance kit: records
 * completions and wakes, logs to stderr, reads parameters from JSON
 * (switchyard/testhost.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <switchyard/json_params.h>
#include <switchyard/limits.h>
#include <switchyard/testhost.h>

static void broadcast(sy_host *h)
{
    pthread_mutex_lock(&h->lock);
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
}

static void host_log(sy_host *h, sy_log_level level, const char *fmt, ...)
    SY_PRINTF(3, 4);

/* Copies `len` bytes of `s` with a NUL; NULL for a NULL s or no memory
 * (a test then sees no text, and the completion still counts). */
static char *copy_text(const char *s, size_t len)
{
    char *c = s ? malloc(len + 1) : NULL;
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* The first result of `c`: kept, then counted, then announced. */
static void record_first(sy_completion *c, const sy_result *r)
{
    sy_host *h = c->host;
    c->output_len = r->output ? r->output_len : 0;
    bool over = h->max_output && c->output_len > h->max_output;
    c->output = over ? NULL : copy_text(r->output, c->output_len);
    c->error = r->error ? copy_text(r->error, strnlen(r->error, SY_RESULT_ERROR_MAX)) : NULL;
    atomic_store(&c->outcome, (int)r->outcome);
    atomic_fetch_add(&h->completed, 1);
    broadcast(h);
}

static void test_complete(sy_completion *c, const sy_result *r)
{
    static const sy_result failed = {
        .size = sizeof failed, .outcome = SY_OUTCOME_FAILED,
        .error = "plugin bug: complete() with a NULL or unsized result"};
    if (!c) {
        fprintf(stderr, "error plugin bug: complete() with a NULL "
                        "completion\n");
        return;
    }
    sy_host *h = c->host;
    int nth = atomic_fetch_add(&c->calls, 1) + 1;
    const char *malformed = NULL;
    char why[160];
    if (!r || !SY_HAS_FIELD(r, sy_result, error)) {
        if (r)
            snprintf(why, sizeof why, "sy_result.size is %u, smaller than "
                     "a 1.0 sy_result (%zu bytes): set it to "
                     "sizeof(sy_result)", (unsigned)r->size,
                     offsetof(sy_result, error) + sizeof r->error);
        malformed = r ? why : "complete() with a NULL result";
        atomic_fetch_add(&h->malformed, 1);
        r = &failed;
    }
    if (nth > 1) {
        atomic_fetch_add(&h->doubles, 1);
        host_log(h, SY_LOG_ERROR, "plugin bug: complete() called twice for "
                                  "one submit; ignored");
    }
    if (h->on_complete)
        h->on_complete(c, r, nth, malformed);
    if (nth == 1)
        record_first(c, r);
}

static void host_log(sy_host *h, sy_log_level level, const char *fmt, ...)
{
    static const char *const tags[] = {"error", "warn", "info", "debug"};
    if (!h || (int)level > h->log_level)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    unsigned i = (unsigned)level < 4 ? (unsigned)level : 3u;
    /* One fprintf per line: stdio locks the stream, so lines from plugin
     * threads never interleave. */
    fprintf(stderr, "%-5s %s: %s\n", tags[i], h->name ? h->name : "test",
            msg);
}

static void host_wake(sy_host *h)
{
    if (!h)
        return;
    atomic_fetch_add(&h->wakes, 1);
    if (h->on_wake)
        h->on_wake(h);
    broadcast(h);
}

static int host_process(sy_completion *c, int64_t pgid, uint64_t start_time)
{
    (void)start_time;
    if (!c || !c->host || pgid <= 1)
        return SY_EINVAL;
    atomic_fetch_add(&c->host->processes, 1);
    return c->host->process_answer;
}

typedef struct later {
    void (*answer)(void *arg, int status);
    void *arg;
    int status;
    int64_t ms;
} later;

static void *answer_later(void *p)
{
    later l = *(later *)p;
    free(p);
    struct timespec ts = {(time_t)(l.ms / 1000), (long)(l.ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    l.answer(l.arg, l.status);
    return NULL;
}

static int host_process_async(sy_completion *c, int64_t pgid, uint64_t start_time,
                              void (*answer)(void *arg, int status), void *arg)
{
    if (!answer)
        return SY_EINVAL;
    int status = host_process(c, pgid, start_time);
    if (status == SY_EINVAL)
        return status;
    if (c->host->process_answer_ms <= 0) {
        answer(arg, status);
        return SY_OK;
    }
    later *l = malloc(sizeof *l);
    if (!l)
        return SY_ENOMEM;
    *l = (later){answer, arg, status, c->host->process_answer_ms};
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, answer_later, l);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(l);
        return SY_ENOMEM;
    }
    return SY_OK;
}

static int host_emit(sy_host *h, const char *name, const char *key, const char *data,
                     size_t data_len, int64_t *event_id, char *err, size_t err_len)
{
    if (!h)
        return SY_EINVAL;
    atomic_fetch_add(&h->emits, 1);
    json_t *payload = data ? json_loadb(data, data_len, JSON_REJECT_DUPLICATES, NULL)
                           : json_object();
    int rc = !name || !*name ? SY_EINVAL : !json_is_object(payload) ? SY_EINVAL
                                                                    : h->emit_answer;
    if (rc != SY_OK) {
        snprintf(err, err_len, "%s", rc != SY_EINVAL ? "refused by the test host"
                                     : !name || !*name ? "no event name"
                                                       : "the payload must be a JSON object");
        json_decref(payload);
        broadcast(h);
        return rc;
    }
    json_t *ev = json_pack("{s:s, s:s?, s:o}", "name", name, "key", key, "data", payload);
    pthread_mutex_lock(&h->lock);
    if (!h->events)
        h->events = json_array();
    if (!ev || json_array_append_new(h->events, ev) != 0)
        rc = SY_ENOMEM;
    else if (event_id)
        *event_id = (int64_t)json_array_size(h->events);
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
    if (rc != SY_OK)
        snprintf(err, err_len, "out of memory");
    return rc;
}

char *sy_sdk_test_host_events(sy_host *h)
{
    pthread_mutex_lock(&h->lock);
    char *text = json_dumps(h->events ? h->events : json_array(), JSON_COMPACT);
    pthread_mutex_unlock(&h->lock);
    return text;
}

static const sy_host_api table = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .complete = test_complete,
    .log = host_log,
    .wake = host_wake,
    SY_SDK_JSON_PARAMS_INIT,
    .attempt_process = host_process,
    .attempt_process_async = host_process_async,
    .emit_event = host_emit,
};

const sy_host_api *sy_sdk_test_host_api(void)
{
    return &table;
}

int sy_sdk_test_host_init(sy_host *h, const char *name)
{
    memset(h, 0, sizeof *h);
    h->name = name;
    h->log_level = SY_LOG_WARN;
    atomic_init(&h->completed, 0);
    atomic_init(&h->doubles, 0);
    atomic_init(&h->malformed, 0);
    atomic_init(&h->wakes, 0);
    atomic_init(&h->processes, 0);
    atomic_init(&h->emits, 0);
    h->process_answer = SY_OK;
    h->emit_answer = SY_OK;
    if (pthread_mutex_init(&h->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&h->changed, NULL) != 0) {
        pthread_mutex_destroy(&h->lock);
        return -1;
    }
    return 0;
}

void sy_sdk_test_host_fini(sy_host *h)
{
    for (size_t i = 0; i < h->owned_count; i++)
        json_decref(h->owned[i]);
    free(h->owned);
    h->owned = NULL;
    h->owned_count = h->owned_cap = 0;
    json_decref(h->events);
    h->events = NULL;
    pthread_cond_destroy(&h->changed);
    pthread_mutex_destroy(&h->lock);
}

const sy_params *sy_sdk_test_host_params(sy_host *h, const char *json_text)
{
    json_t *o = json_text ? json_loads(json_text, 0, NULL) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        return NULL;
    }
    pthread_mutex_lock(&h->lock);
    if (h->owned_count == h->owned_cap) {
        size_t cap = h->owned_cap ? h->owned_cap * 2 : 8;
        void **v = realloc(h->owned, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&h->lock);
            json_decref(o);
            return NULL;
        }
        h->owned = v;
        h->owned_cap = cap;
    }
    h->owned[h->owned_count++] = o;
    pthread_mutex_unlock(&h->lock);
    return sy_sdk_params_view(o);
}

void sy_sdk_test_completion_init(sy_completion *c, sy_host *h, void *data)
{
    c->host = h;
    c->data = data;
    c->output = c->error = NULL;
    c->output_len = 0;
    /* Stores, not memset or atomic_init: a test may scan its records'
     * counts while other threads prepare new ones (zeroed memory is a
     * valid start for the atomics). */
    atomic_store(&c->calls, 0);
    atomic_store(&c->outcome, -1);
}

void sy_sdk_test_completion_fini(sy_completion *c)
{
    free(c->output);
    free(c->error);
    c->output = c->error = NULL;
    c->output_len = 0;
}

bool sy_sdk_test_host_wait(sy_host *h, long count, int64_t timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(timeout_ms / 1000);
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&h->lock);
    int rc = 0;
    while (atomic_load(&h->completed) < count && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&h->changed, &h->lock, &until);
    bool done = atomic_load(&h->completed) >= count;
    pthread_mutex_unlock(&h->lock);
    return done;
}
