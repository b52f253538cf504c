/*
 * webhook.c -- an out-of-tree Switchyard executor: each task is an HTTP
 * POST of its input context (JSON) to a URL; a 2xx reply holding a JSON
 * object is the task's output.
 *
 * Built against the installed SDK alone (see Makefile):
 *
 *     cc -shared -fPIC -fvisibility=hidden \
 *        $(pkg-config --cflags switchyard-sdk libcurl) webhook.c \
 *        -o webhook.so $(pkg-config --libs libcurl) -pthread
 *
 * Instance settings (switchyard.cfg):
 *   url            STRING    required; where tasks are POSTed
 *   max_in_flight  INT       requests at once, 1-10000 (default 16): the
 *                            instance's capacity
 *   timeout        DURATION  per request (default "30s")
 * Task parameters (workflow file):
 *   path           STRING    appended to url (e.g. "/resize")
 *   timeout        DURATION  this task's limit instead of the instance's
 *
 * Outcomes: a 2xx reply with a JSON object (or an empty body) succeeds; a
 * 2xx reply with anything else, any other status (with the body's first
 * line), or a network error fails; no reply within the timeout is
 * TIMED_OUT; cancel() is CANCELLED at once.
 *
 * How it works: one thread per instance runs a libcurl multi loop.
 * submit() prepares an easy handle and queues it (no network I/O, so it
 * never blocks); the loop adds queued handles, drives every transfer and
 * completes each as it ends.  cancel() completes the task at once and
 * queues its handle for the loop to remove with curl_multi_remove_handle().
 * The multi handle is touched only by the loop thread; the others talk to
 * it through two lists under a mutex and curl_multi_wakeup().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include <switchyard/sdk.h>

#define MAX_REPLY (1024 * 1024) /* a reply larger than this fails */
#define EXCERPT 200             /* bytes of a failed reply quoted */

/* ------------------------------------------------------------------------ */
/* Declarations                                                             */
/* ------------------------------------------------------------------------ */

static const sy_param_spec url_spec = {
    sizeof(sy_param_spec), SY_PARAM_REQUIRED, "url", SY_PARAM_STRING,
    "where tasks are POSTed, e.g. \"http://127.0.0.1:8080/hooks\""};
static const sy_param_spec max_spec = {
    sizeof(sy_param_spec), 0, "max_in_flight", SY_PARAM_INT,
    "requests at once, 1-10000 (default 16)"};
static const sy_param_spec timeout_spec = {
    sizeof(sy_param_spec), 0, "timeout", SY_PARAM_DURATION,
    "limit per request (default \"30s\")"};
static const sy_param_spec path_spec = {
    sizeof(sy_param_spec), 0, "path", SY_PARAM_STRING,
    "appended to the instance's url"};
static const sy_param_spec task_timeout_spec = {
    sizeof(sy_param_spec), 0, "timeout", SY_PARAM_DURATION,
    "this task's limit instead of the instance's"};

static const sy_param_spec *const instance_params[] = {
    &url_spec, &max_spec, &timeout_spec, NULL};
static const sy_param_spec *const task_params[] = {&path_spec,
                                                   &task_timeout_spec, NULL};

/* ------------------------------------------------------------------------ */
/* State                                                                    */
/* ------------------------------------------------------------------------ */

/* One request.  Owned by the instance's lists until the loop takes it,
 * then by the loop; a queued request cancelled before the loop saw it is
 * freed by cancel(). */
typedef struct req {
    struct req *next;           /* in `incoming`, then the loop's batch */
    struct req *dropped_next;   /* in `dropped` (guarded by lock): its own
                                   link, since the loop walks `next` of a
                                   batch without the lock while cancel()
                                   may drop one of its requests */
    sy_completion *c;           /* the host's; key of the in-flight table */
    const sy_task *task;        /* the host's; valid until completed */
    CURL *easy;                 /* owned */
    struct curl_slist *headers; /* owned */
    char *url;                  /* owned */
    int64_t timeout_ms;
    bool added;                 /* handed to the loop (guarded by lock) */
    char *body;                 /* owned: the reply so far */
    size_t len;
    bool too_big;
    char errbuf[CURL_ERROR_SIZE];
} req;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    char *url;                  /* owned copy of the setting */
    int64_t timeout_ms;

    CURLM *multi;               /* the loop thread's alone (wakeup aside) */
    pthread_t loop;

    pthread_mutex_t lock;       /* guards the two lists, added, stopping */
    req *incoming, **incoming_tail; /* submitted, not yet in the multi */
    req *dropped;               /* cancelled while in the multi */
    bool stopping;

    sy_sdk_inflight inflight;   /* c -> req: who completes, once */
    sy_sdk_slots slots;         /* max_in_flight */
    sy_sdk_stats stats;
    _Atomic int64_t queued;     /* in `incoming` */
};

/* ------------------------------------------------------------------------ */
/* Requests                                                                 */
/* ------------------------------------------------------------------------ */

static void req_free(req *r)
{
    if (!r)
        return;
    if (r->easy)
        curl_easy_cleanup(r->easy);
    curl_slist_free_all(r->headers);
    free(r->url);
    free(r->body);
    free(r);
}

/* Collects the reply, up to MAX_REPLY. */
static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    req *r = arg;
    size_t more = size * n;
    if (r->len + more > MAX_REPLY) {
        r->too_big = true;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    char *grown = realloc(r->body, r->len + more + 1);
    if (!grown)
        return 0;
    memcpy(grown + r->len, data, more);
    r->body = grown;
    r->len += more;
    r->body[r->len] = '\0';
    return more;
}

/* A header line with no CR or LF from the task's strings. */
static struct curl_slist *add_header(struct curl_slist *list, bool *ok,
                                     const char *fmt, const char *value)
{
    char line[512];
    snprintf(line, sizeof line, fmt, value);
    sy_sdk_one_line(line);
    struct curl_slist *l = curl_slist_append(list, line);
    if (!l)
        *ok = false;
    return l ? l : list;
}

static bool set_headers(req *r)
{
    bool ok = true;
    char attempt[16];
    snprintf(attempt, sizeof attempt, "%u", (unsigned)r->task->attempt);
    r->headers = add_header(r->headers, &ok, "%s", "Content-Type: "
                            "application/json");
    r->headers = add_header(r->headers, &ok, "%s", "Accept: application/json");
    /* No "100 Continue" round trip before larger bodies. */
    r->headers = add_header(r->headers, &ok, "%s", "Expect:");
    r->headers = add_header(r->headers, &ok, "X-Switchyard-Task: %s",
                            r->task->ns);
    r->headers = add_header(r->headers, &ok, "X-Switchyard-Attempt: %s",
                            attempt);
    return ok;
}

/* Prepares everything but the network: safe in submit(). */
static int req_prepare(req *r, const char *base, const char *path)
{
    size_t n = strlen(base) + (path ? strlen(path) : 0) + 1;
    r->url = malloc(n);
    r->easy = curl_easy_init();
    if (!r->url || !r->easy || !set_headers(r))
        return SY_ENOMEM;
    snprintf(r->url, n, "%s%s", base, path ? path : "");
    CURL *e = r->easy;
    int bad = 0;
    bad |= curl_easy_setopt(e, CURLOPT_URL, r->url);
    bad |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->task->input);
    bad |= curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                            (curl_off_t)r->task->input_len);
    bad |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    bad |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    bad |= curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    bad |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
    bad |= curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)r->timeout_ms);
    bad |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L); /* threads */
    bad |= curl_easy_setopt(e, CURLOPT_USERAGENT, "switchyard-webhook/1.0");
    bad |= curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    return bad ? SY_EINVAL : SY_OK;
}

/* ------------------------------------------------------------------------ */
/* Results                                                                  */
/* ------------------------------------------------------------------------ */

/* The first line of the reply, at most EXCERPT bytes, for messages. */
static void excerpt(const req *r, char *out, size_t len)
{
    size_t n = r->len < EXCERPT ? r->len : EXCERPT;
    snprintf(out, len, "%.*s%s", (int)n, r->body ? r->body : "",
             r->len > n ? "..." : "");
    sy_sdk_one_line(out);
}

/* A cheap shape check: the host parses the output and fails anything but
 * a JSON object with a clear error, so only the obvious is caught here. */
static bool looks_like_object(const char *s, size_t len)
{
    size_t a = 0, b = len;
    while (a < b && strchr(" \t\r\n", s[a]))
        a++;
    while (b > a && strchr(" \t\r\n", s[b - 1]))
        b--;
    return b - a >= 2 && s[a] == '{' && s[b - 1] == '}';
}

static void report(sy_instance *inst, req *r, CURLcode rc)
{
    const sy_host_api *api = inst->api;
    char ex[EXCERPT + 8], dur[32];
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    sy_outcome o = SY_OUTCOME_FAILED;
    if (rc == CURLE_OPERATION_TIMEDOUT)
        o = SY_OUTCOME_TIMED_OUT;
    else if (rc == CURLE_OK && status / 100 == 2 &&
             (r->len == 0 || looks_like_object(r->body, r->len)))
        o = SY_OUTCOME_SUCCEEDED;
    sy_sdk_stats_outcome(&inst->stats, o);
    excerpt(r, ex, sizeof ex);
    if (o == SY_OUTCOME_SUCCEEDED)
        sy_sdk_complete_ok_len(api, r->c, r->len ? r->body : NULL, r->len);
    else if (o == SY_OUTCOME_TIMED_OUT)
        sy_sdk_complete_timed_out(api, r->c, "no reply from %s within %s",
                                  r->url, sy_sdk_format_ms(r->timeout_ms, dur,
                                                           sizeof dur));
    else if (r->too_big)
        sy_sdk_complete_fail(api, r->c, "reply from %s is larger than %d "
                             "bytes", r->url, MAX_REPLY);
    else if (rc != CURLE_OK)
        sy_sdk_complete_fail(api, r->c, "POST %s failed: %s", r->url,
                             r->errbuf[0] ? r->errbuf
                                          : curl_easy_strerror(rc));
    else if (status / 100 == 2)
        sy_sdk_complete_fail(api, r->c, "HTTP %ld from %s: the reply is not "
                             "a JSON object: %s", status, r->url, ex);
    else
        sy_sdk_complete_fail(api, r->c, "HTTP %ld from %s: %s", status,
                             r->url, ex[0] ? ex : "(empty body)");
}

/* ------------------------------------------------------------------------ */
/* The loop thread                                                          */
/* ------------------------------------------------------------------------ */

/* A transfer ended: complete it unless cancel() already did. */
static void finished(sy_instance *inst, req *r, CURLcode rc)
{
    pthread_mutex_lock(&inst->lock);
    bool mine = sy_sdk_inflight_take(&inst->inflight, r->c, NULL) == SY_OK;
    pthread_mutex_unlock(&inst->lock);
    if (!mine)
        return; /* on the dropped list: freed there */
    curl_multi_remove_handle(inst->multi, r->easy);
    report(inst, r, rc);
    req_free(r);
    sy_sdk_slots_release(&inst->slots); /* after complete() */
}

static void add_all(sy_instance *inst, req *r)
{
    while (r) {
        req *next = r->next;
        r->next = NULL;
        CURLMcode rc = curl_multi_add_handle(inst->multi, r->easy);
        if (rc != CURLM_OK) {
            snprintf(r->errbuf, sizeof r->errbuf, "%s",
                     curl_multi_strerror(rc));
            finished(inst, r, CURLE_FAILED_INIT);
        }
        r = next;
    }
}

/* Requests cancel() completed while they were in the multi. */
static void drop_all(sy_instance *inst, req *r)
{
    while (r) {
        req *next = r->dropped_next;
        curl_multi_remove_handle(inst->multi, r->easy);
        req_free(r);
        sy_sdk_slots_release(&inst->slots);
        r = next;
    }
}

static void drain_messages(sy_instance *inst)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(inst->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
        finished(inst, (req *)(void *)priv, m->data.result);
    }
}

/* Takes both lists; marks incoming requests as the loop's. */
static bool take_lists(sy_instance *inst, req **in, req **gone)
{
    pthread_mutex_lock(&inst->lock);
    *in = inst->incoming;
    *gone = inst->dropped;
    inst->incoming = NULL;
    inst->incoming_tail = &inst->incoming;
    inst->dropped = NULL;
    for (req *r = *in; r; r = r->next) {
        r->added = true;
        atomic_fetch_sub(&inst->queued, 1);
    }
    bool stop = inst->stopping;
    pthread_mutex_unlock(&inst->lock);
    return stop;
}

static void *loop_main(void *arg)
{
    sy_instance *inst = arg;
    for (;;) {
        req *in, *gone;
        bool stop = take_lists(inst, &in, &gone);
        add_all(inst, in);
        drop_all(inst, gone); /* after add_all: a request may be in both */
        if (stop)
            break;
        int running = 0;
        curl_multi_perform(inst->multi, &running);
        drain_messages(inst);
        /* Sleeps until a socket is ready, curl's own timer fires, or
         * curl_multi_wakeup() from submit(), cancel() or destroy(). */
        curl_multi_poll(inst->multi, NULL, 0, 1000, NULL);
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The ABI functions                                                        */
/* ------------------------------------------------------------------------ */

static int read_settings(const sy_host_api *api, const sy_params *config,
                         const char **url, int64_t *max, int64_t *timeout,
                         char *err, size_t err_len)
{
    int rc = sy_sdk_param_required(api, config, "url", err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_string(api, config, "url", NULL, url, err, err_len);
    if (rc == SY_OK && strncmp(*url, "http://", 7) != 0 &&
        strncmp(*url, "https://", 8) != 0) {
        sy_sdk_errf(err, err_len, "url: must start with http:// or "
                    "https://, got \"%.100s\"", *url);
        rc = SY_EINVAL;
    }
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, config, "max_in_flight", 16, 1, 10000, max,
                              err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, config, "timeout", 30000, 1,
                                      3600000, timeout, err, err_len);
    return rc;
}

static void free_instance(sy_instance *inst)
{
    if (inst->multi)
        curl_multi_cleanup(inst->multi);
    curl_global_cleanup();
    sy_sdk_inflight_fini(&inst->inflight);
    pthread_mutex_destroy(&inst->lock);
    free(inst->url);
    free(inst);
}

static int wh_create(const sy_host_api *api, sy_host *host,
                     const sy_params *config, sy_instance **out, char *err,
                     size_t err_len)
{
    const char *url = NULL;
    int64_t max = 0, timeout = 0;
    int rc = read_settings(api, config, &url, &max, &timeout, err, err_len);
    if (rc != SY_OK)
        return rc;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst || sy_sdk_inflight_init(&inst->inflight) != SY_OK) {
        free(inst);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    /* Reference-counted: one per instance, undone in free_instance(). */
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pthread_mutex_init(&inst->lock, NULL);
    inst->api = api;
    inst->host = host;
    inst->url = strdup(url);
    inst->timeout_ms = timeout;
    inst->incoming_tail = &inst->incoming;
    inst->multi = curl_multi_init();
    sy_sdk_slots_init(&inst->slots, api, host, max);
    sy_sdk_stats_init(&inst->stats);
    atomic_init(&inst->queued, 0);
    if (!inst->url || !inst->multi ||
        pthread_create(&inst->loop, NULL, loop_main, inst) != 0) {
        free_instance(inst);
        sy_sdk_errf(err, err_len, "out of memory or threads starting the "
                    "instance");
        return SY_ENOMEM;
    }
    *out = inst;
    return SY_OK;
}

static void wh_destroy(sy_instance *inst)
{
    pthread_mutex_lock(&inst->lock);
    inst->stopping = true;
    pthread_mutex_unlock(&inst->lock);
    curl_multi_wakeup(inst->multi);
    pthread_join(inst->loop, NULL);
    /* The host completed everything before destroy(); a request still
     * here was never answered, which would be the host's bug. */
    sy_completion *c;
    void *v;
    while (sy_sdk_inflight_take_any(&inst->inflight, &c, &v) == SY_OK) {
        req *r = v;
        inst->api->log(inst->host, SY_LOG_WARN, "destroy(): request to %s "
                       "still in flight; dropped", r->url);
        curl_multi_remove_handle(inst->multi, r->easy);
        req_free(r);
    }
    free_instance(inst);
}

static int64_t wh_capacity(sy_instance *inst)
{
    return sy_sdk_slots_available(&inst->slots);
}

static int wh_submit(sy_instance *inst, const sy_task *task,
                     sy_completion *c, char *err, size_t err_len)
{
    const char *path = NULL;
    int64_t timeout = inst->timeout_ms;
    int rc = sy_sdk_param_string(inst->api, task->params, "path", NULL, &path,
                                 err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(inst->api, task->params, "timeout",
                                      inst->timeout_ms, 1, 3600000, &timeout,
                                      err, err_len);
    if (rc != SY_OK)
        return rc;
    /* The host's deadline for the attempt bounds ours too. */
    if (task->timeout_ms > 0 && task->timeout_ms < timeout)
        timeout = task->timeout_ms;
    if (!sy_sdk_slots_try_acquire(&inst->slots))
        return SY_EBUSY;
    req *r = calloc(1, sizeof *r);
    if (r) {
        r->c = c;
        r->task = task;
        r->timeout_ms = timeout;
    }
    rc = r ? req_prepare(r, inst->url, path) : SY_ENOMEM;
    pthread_mutex_lock(&inst->lock);
    if (rc == SY_OK)
        rc = sy_sdk_inflight_add(&inst->inflight, c, r);
    if (rc == SY_OK) {
        sy_sdk_stats_submitted(&inst->stats);
        *inst->incoming_tail = r;
        inst->incoming_tail = &r->next;
        atomic_fetch_add(&inst->queued, 1);
    }
    pthread_mutex_unlock(&inst->lock);
    if (rc != SY_OK) {
        req_free(r);
        sy_sdk_slots_undo(&inst->slots);
        sy_sdk_errf(err, err_len, "cannot prepare the request: %s",
                    rc == SY_ENOMEM ? "out of memory" : "bad URL or option");
        return rc;
    }
    curl_multi_wakeup(inst->multi);
    return SY_OK;
}

/* Unlinks `r` from the incoming list (lock held). */
static void unlink_incoming(sy_instance *inst, req *r)
{
    for (req **pp = &inst->incoming; *pp; pp = &(*pp)->next) {
        if (*pp != r)
            continue;
        *pp = r->next;
        if (inst->incoming_tail == &r->next)
            inst->incoming_tail = pp;
        atomic_fetch_sub(&inst->queued, 1);
        return;
    }
}

static int wh_cancel(sy_instance *inst, sy_completion *c)
{
    void *v = NULL;
    pthread_mutex_lock(&inst->lock);
    if (sy_sdk_inflight_take(&inst->inflight, c, &v) != SY_OK) {
        pthread_mutex_unlock(&inst->lock);
        return SY_ENOENT;
    }
    req *r = v;
    bool in_loop = r->added;
    if (in_loop) {
        r->dropped_next = inst->dropped; /* the loop removes it from the multi */
        inst->dropped = r;
    } else {
        unlink_incoming(inst, r);
    }
    pthread_mutex_unlock(&inst->lock);
    sy_sdk_stats_outcome(&inst->stats, SY_OUTCOME_CANCELLED);
    sy_sdk_complete_cancelled(inst->api, c, "cancelled");
    if (in_loop) {
        curl_multi_wakeup(inst->multi);
    } else {
        req_free(r);
        sy_sdk_slots_release(&inst->slots);
    }
    return SY_OK;
}

static int wh_validate(sy_instance *inst, const sy_params *params,
                       const char *base_dir, char *err, size_t err_len)
{
    (void)base_dir;
    const char *path = NULL;
    int64_t ms = 0;
    int rc = sy_sdk_param_string(inst->api, params, "path", NULL, &path, err,
                                 err_len);
    if (rc == SY_OK && path && path[0] != '/' && path[0] != '?') {
        sy_sdk_errf(err, err_len, "path: must start with '/' or '?', got "
                    "\"%.100s\"", path);
        return SY_EINVAL;
    }
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(inst->api, params, "timeout", 0, 1,
                                      3600000, &ms, err, err_len);
    return rc;
}

static void wh_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_sdk_stats_emit(&inst->stats, atomic_load(&inst->queued),
                      wh_capacity(inst), emit, sink);
}

static const sy_executor descriptor = {
    SY_EXECUTOR_V1,
    .name = "webhook",
    .version = "1.0.0",
    .description = "POSTs each task's input to a URL; a 2xx JSON reply is "
                   "its output",
    .instance_params = instance_params,
    .task_params = task_params,
    .create = wh_create,
    .destroy = wh_destroy,
    .capacity = wh_capacity,
    .submit = wh_submit,
    .cancel = wh_cancel,
    .validate = wh_validate,
    .metrics = wh_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &descriptor; }
