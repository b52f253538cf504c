/*
 * loop.c -- the kubernetes instance's one thread: a libuv loop driving a
 * libcurl multi handle (curl says which sockets to watch and when to wake;
 * uv_poll_t and a uv_timer_t hand readiness back), and the requests made
 * on it.  Two watches and every create, log read and delete share it: a
 * thousand Jobs in flight cost the loop nothing while they run.  Host
 * threads reach the loop through two intrusive queues under q_mu and one
 * uv_async_t: submit() and resume() append the attempt, cancel() appends
 * the attempt it took from the in-flight table.  TLS: the server is
 * verified against the kubeconfig's CA (a blob, never written to disk) or
 * the system's store; there is no switch to turn verification off.  The
 * token goes out only as the Authorization header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>

#include "kubernetes.h"

typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    sy_instance *inst;
} sock_ctx;

int64_t sy_k8s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- requests ------------------------------------------------------------------ */

sy_k8s_req *sy_k8s_req_new(sy_instance *inst, const char *method,
                           const char *path, char *send, sy_k8s_done_fn done,
                           void *arg)
{
    sy_k8s_req *r = calloc(1, sizeof *r);
    size_t n = strlen(inst->set.conn.server) + strlen(path) + 1;
    if (r)
        r->url = malloc(n);
    if (!r || !r->url) {
        free(r);
        free(send);
        return NULL;
    }
    snprintf(r->url, n, "%s%s", inst->set.conn.server, path);
    r->method = method;
    r->send = send;
    r->done = done;
    r->arg = arg;
    r->limit = SY_K8S_LOG_MAX;
    return r;
}

void sy_k8s_req_free(sy_k8s_req *r)
{
    if (!r)
        return;
    curl_slist_free_all(r->headers);
    free(r->url);
    free(r->send);
    free(r->body);
    free(r);
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    sy_k8s_req *r = arg;
    size_t len = size * n;
    if (r->body_len + len > r->limit) {
        r->too_big = true;
        return 0;
    }
    if (r->body_len + len + 1 > r->body_cap) {
        size_t cap = r->body_cap ? r->body_cap : 4096;
        while (cap < r->body_len + len + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (!b)
            return 0;
        r->body = b;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, len);
    r->body_len += len;
    r->body[r->body_len] = '\0';
    return len;
}

/* A watch's complete lines, handed over outside curl's callbacks (what
 * they cause may start requests, which curl forbids inside its own
 * callbacks); the rest of a line waits for more. */
static void drain_lines(sy_instance *inst, sy_k8s_req *r)
{
    if (!r || !r->stream || r->status != 200 || r->body_len == 0)
        return;
    size_t start = 0;
    for (size_t i = 0; i < r->body_len; i++) {
        if (r->body[i] != '\n')
            continue;
        r->body[i] = '\0';
        if (i > start)
            r->line(inst, r, r->body + start, i - start);
        start = i + 1;
    }
    memmove(r->body, r->body + start, r->body_len - start);
    r->body_len -= start;
    r->body[r->body_len] = '\0';
}

static void drain(sy_instance *inst)
{
    drain_lines(inst, inst->watch_jobs.req);
    drain_lines(inst, inst->watch_pods.req);
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    sy_k8s_req *r = arg;
    size_t len = size * n;
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        /* The status as soon as it is known: a watch's lines are only
         * events when it is 200. */
        const char *sp = memchr(data, ' ', len);
        r->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        r->retry_after[0] = '\0';
        return len;
    }
    if (len > 12 && strncasecmp(data, "retry-after:", 12) == 0) {
        const char *v = data + 12;
        while (v < data + len && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(data + len - v);
        while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n' ||
                          v[vl - 1] == ' '))
            vl--;
        snprintf(r->retry_after, sizeof r->retry_after, "%.*s", (int)vl, v);
    }
    return len;
}

int sy_k8s_http_start(sy_instance *inst, sy_k8s_req *r, char *err,
                      size_t err_len)
{
    const sy_k8s_conn *c = &inst->set.conn;
    if (sy_k8s_exec_hold(inst, r))
        return SY_OK;
    CURL *e = curl_easy_init();
    if (!e) {
        sy_sdk_errf(err, err_len, "out of memory (curl_easy_init)");
        return SY_ENOMEM;
    }
    r->body_len = 0;
    r->status = 0;
    r->too_big = false;
    curl_slist_free_all(r->headers);
    r->headers = NULL;
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    if (h && inst->auth_header)
        h = curl_slist_append(h, inst->auth_header);
    if (h && r->send)
        h = curl_slist_append(h, "Content-Type: application/json");
    if (h)
        h = curl_slist_append(h, "Expect:");
    if (!h) {
        curl_easy_cleanup(e);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    r->headers = h;
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
    if (r->send) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)strlen(r->send));
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->send);
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     (long)inst->set.connect_timeout_ms);
    /* A watch lasts as long as the server keeps it; anything else gets a
     * minute, so a server that stops answering cannot hold an attempt. */
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, r->stream ? 0L : 60000L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca) {
        struct curl_blob b = {c->ca, c->ca_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
    }
    if (c->cert) {
        /* an exec credential's pair is replaced under live requests */
        unsigned int f = c->exec ? CURL_BLOB_COPY : CURL_BLOB_NOCOPY;
        struct curl_blob cb = {c->cert, c->cert_len, f};
        struct curl_blob kb = {c->key, c->key_len, f};
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    CURLMcode mc = curl_multi_add_handle(inst->multi, e);
    if (mc != CURLM_OK) {
        curl_easy_cleanup(e);
        sy_sdk_errf(err, err_len, "cannot start the request: %s",
                    curl_multi_strerror(mc));
        return SY_EIO;
    }
    r->easy = e;
    return SY_OK;
}

void sy_k8s_http_abort(sy_instance *inst, sy_k8s_req *r)
{
    sy_k8s_exec_unhold(inst, r);
    if (r && r->easy) {
        curl_multi_remove_handle(inst->multi, r->easy);
        curl_easy_cleanup(r->easy);
        r->easy = NULL;
    }
}

/* A week: a later hint is a broken one. */
#define RETRY_AFTER_MAX_S (7 * 24 * 3600LL)

int64_t sy_k8s_retry_after_ms(const sy_k8s_req *r)
{
    if (!r->retry_after[0])
        return -1;
    char *end;
    long long s = strtoll(r->retry_after, &end, 10);
    if (end != r->retry_after && *end == '\0' && s >= 0)
        return (s < RETRY_AFTER_MAX_S ? s : RETRY_AFTER_MAX_S) * 1000;
    time_t at = curl_getdate(r->retry_after, NULL);
    if (at == (time_t)-1)
        return -1;
    long long wait = (long long)at - (long long)time(NULL);
    wait = wait < 0 ? 0 : wait > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S : wait;
    return wait * 1000;
}

const char *sy_k8s_status_message(const sy_k8s_req *r, char *buf, size_t len)
{
    json_t *j = r->body ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
    json_t *m = json_object_get(j, "message");
    if (json_is_string(m))
        snprintf(buf, len, "%s", json_string_value(m));
    else
        snprintf(buf, len, "%.200s", r->body && r->body_len ? r->body
                                                            : "(no message)");
    json_decref(j);
    sy_sdk_one_line(buf);
    return buf;
}

/* ---- curl's callbacks ------------------------------------------------------------ */

static void check_done(sy_instance *inst)
{
    CURLMsg *m;
    int left;
    drain(inst);
    while ((m = curl_multi_info_read(inst->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        CURL *e = m->easy_handle;
        sy_k8s_req *r = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
        r->code = m->data.result;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
        drain_lines(inst, r);
        curl_multi_remove_handle(inst->multi, e);
        curl_easy_cleanup(e);
        r->easy = NULL;
        if (r->status == 401)
            sy_k8s_exec_unauthorized(inst);
        r->done(inst, r); /* may free r, or start it again */
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    sock_ctx *ctx = h->data;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else {
        if (events & UV_READABLE)
            flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
            flags |= CURL_CSELECT_OUT;
    }
    int running;
    curl_multi_socket_action(ctx->inst->multi, ctx->fd, flags, &running);
    check_done(ctx->inst);
}

/* One watcher per descriptor number, kept while the loop runs (as the
 * lambda plugin does): a reused number gets the same watcher. */
static sock_ctx *sock_for(sy_instance *inst, curl_socket_t s)
{
    if (s < 0)
        return NULL;
    if ((size_t)s >= inst->n_socks) {
        size_t n = inst->n_socks ? inst->n_socks : 256;
        while (n <= (size_t)s)
            n *= 2;
        void **t = realloc(inst->socks, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + inst->n_socks, 0, (n - inst->n_socks) * sizeof *t);
        inst->socks = t;
        inst->n_socks = n;
    }
    sock_ctx *ctx = inst->socks[s];
    if (ctx)
        return ctx;
    ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->fd = s;
    ctx->inst = inst;
    if (uv_poll_init_socket(&inst->loop, &ctx->poll, s) != 0) {
        free(ctx);
        return NULL;
    }
    ctx->poll.data = ctx;
    inst->socks[s] = ctx;
    return ctx;
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp,
                     void *socketp)
{
    (void)e;
    sy_instance *inst = userp;
    sock_ctx *ctx = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (ctx) {
            uv_poll_stop(&ctx->poll);
            curl_multi_assign(inst->multi, s, NULL);
        }
        return 0;
    }
    if (!ctx) {
        ctx = sock_for(inst, s);
        if (!ctx)
            return -1;
        curl_multi_assign(inst->multi, s, ctx);
    }
    int ev = 0;
    if (what & CURL_POLL_IN)
        ev |= UV_READABLE;
    if (what & CURL_POLL_OUT)
        ev |= UV_WRITABLE;
    uv_poll_start(&ctx->poll, ev, on_poll);
    return 0;
}

static void on_curl_timer(uv_timer_t *t)
{
    sy_instance *inst = t->data;
    int running;
    curl_multi_socket_action(inst->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(inst);
}

static int on_timer_change(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    sy_instance *inst = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&inst->curl_timer);
    else
        uv_timer_start(&inst->curl_timer, on_curl_timer, (uint64_t)timeout_ms,
                       0);
    return 0;
}

/* ---- the queues from host threads ------------------------------------------------ */

static void on_handle_closed(uv_handle_t *h)
{
    if (h->type == UV_POLL)
        free(h->data);
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, h->type == UV_POLL ? on_handle_closed : NULL);
}

/* Everything still held is dropped: the host calls destroy() only after
 * every accepted attempt completed, so what is left is the watches and
 * the cache. */
static void shut_down(sy_instance *inst)
{
    sy_k8s_watch_stop(inst);
    for (size_t i = 0; i < SY_K8S_BUCKETS; i++) {
        sy_k8s_entry *e = inst->buckets[i];
        while (e) {
            sy_k8s_entry *n = e->hnext;
            if (e->att)
                sy_k8s_follow_drop(inst, e->att);
            json_decref(e->job);
            json_decref(e->pod);
            free(e);
            e = n;
        }
        inst->buckets[i] = NULL;
    }
    curl_multi_cleanup(inst->multi);
    inst->multi = NULL;
    uv_walk(&inst->loop, close_any, NULL);
    free(inst->socks);
    inst->socks = NULL;
    inst->n_socks = 0;
}

static void on_async(uv_async_t *a)
{
    sy_instance *inst = a->data;
    pthread_mutex_lock(&inst->q_mu);
    sy_k8s_job *jobs = inst->q_head, *cancels = inst->cancel_head;
    bool stopping = inst->stopping;
    inst->q_head = inst->q_tail = NULL;
    inst->cancel_head = NULL;
    pthread_mutex_unlock(&inst->q_mu);

    while (jobs) {
        sy_k8s_job *j = jobs;
        jobs = j->next;
        j->next = NULL;
        sy_k8s_follow_begin(inst, j);
    }
    while (cancels) {
        sy_k8s_job *j = cancels;
        cancels = j->cancel_next;
        sy_k8s_follow_cancel(inst, j);
    }
    if (stopping)
        shut_down(inst);
}

void sy_k8s_loop_post(sy_instance *inst, sy_k8s_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&inst->q_mu);
    if (inst->q_tail)
        inst->q_tail->next = job;
    else
        inst->q_head = job;
    inst->q_tail = job;
    pthread_mutex_unlock(&inst->q_mu);
    uv_async_send(&inst->async);
}

void sy_k8s_loop_post_cancel(sy_instance *inst, sy_k8s_job *job)
{
    pthread_mutex_lock(&inst->q_mu);
    job->cancel_next = inst->cancel_head;
    inst->cancel_head = job;
    pthread_mutex_unlock(&inst->q_mu);
    uv_async_send(&inst->async);
}

/* ---- the token, read again ------------------------------------------------ */

/* Projected service account tokens (and tokens an operator rotates in a
 * tokenFile) change under a running host: the file is read again every
 * minute, as client-go does, and new requests carry the new token.  A
 * file that cannot be read keeps the old token (and says so once). */
static void on_token_timer(uv_timer_t *t)
{
    sy_instance *inst = t->data;
    sy_k8s_conn *c = &inst->set.conn;
    char *tok = NULL;
    if (sy_k8s_read_token(c->token_file, &tok) != SY_OK) {
        inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: cannot read "
                       "the token file %s again: %s; the old token is used",
                       c->token_file, strerror(errno));
        return;
    }
    if (c->token && strcmp(tok, c->token) == 0) {
        OPENSSL_cleanse(tok, strlen(tok));
        free(tok);
        return;
    }
    char *h = NULL;
    if (asprintf(&h, "Authorization: Bearer %s", tok) < 0) {
        OPENSSL_cleanse(tok, strlen(tok));
        free(tok);
        return;
    }
    if (c->token) {
        OPENSSL_cleanse(c->token, strlen(c->token));
        free(c->token);
    }
    c->token = tok;
    if (inst->auth_header) {
        OPENSSL_cleanse(inst->auth_header, strlen(inst->auth_header));
        free(inst->auth_header);
    }
    inst->auth_header = h;
    inst->api->log(inst->host, SY_LOG_DEBUG, "kubernetes: the token in %s "
                   "changed; new requests use it", c->token_file);
}

/* ---- start and stop ----------------------------------------------------------------- */

static void *loop_main(void *arg)
{
    sy_instance *inst = arg;
    sy_k8s_watch_start(inst);
    uv_run(&inst->loop, UV_RUN_DEFAULT);
    return NULL;
}

int sy_k8s_loop_start(sy_instance *inst, char *err, size_t err_len)
{
    int rc = uv_loop_init(&inst->loop);
    if (rc != 0) {
        sy_sdk_errf(err, err_len, "cannot start an event loop: %s",
                    uv_strerror(rc));
        return SY_EINTERNAL;
    }
    uv_async_init(&inst->loop, &inst->async, on_async);
    inst->async.data = inst;
    uv_timer_init(&inst->loop, &inst->curl_timer);
    inst->curl_timer.data = inst;
    uv_timer_init(&inst->loop, &inst->token_timer);
    inst->token_timer.data = inst;
    if (inst->set.conn.token_file)
        uv_timer_start(&inst->token_timer, on_token_timer, 60000, 60000);
    sy_k8s_exec_start(inst);
    inst->multi = curl_multi_init();
    if (!inst->multi) {
        sy_sdk_errf(err, err_len, "out of memory (curl_multi_init)");
        uv_walk(&inst->loop, close_any, NULL);
        uv_run(&inst->loop, UV_RUN_DEFAULT);
        uv_loop_close(&inst->loop);
        return SY_ENOMEM;
    }
    curl_multi_setopt(inst->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(inst->multi, CURLMOPT_SOCKETDATA, inst);
    curl_multi_setopt(inst->multi, CURLMOPT_TIMERFUNCTION, on_timer_change);
    curl_multi_setopt(inst->multi, CURLMOPT_TIMERDATA, inst);
    /* Short requests reuse a few kept-alive connections; the two watches
     * hold one each.  Creates are bursty, logs and deletes follow them:
     * sixteen idle connections kept is plenty. */
    /* At most 16 connections to the server; more requests wait in curl
     * (over HTTP/1.1, one each was 500 TLS handshakes for 500 Jobs). */
    curl_multi_setopt(inst->multi, CURLMOPT_MAXCONNECTS, 16L);
    curl_multi_setopt(inst->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 16L);
    rc = pthread_create(&inst->thread, NULL, loop_main, inst);
    if (rc != 0) {
        sy_sdk_errf(err, err_len, "cannot start the loop thread: %s",
                    strerror(rc));
        curl_multi_cleanup(inst->multi);
        inst->multi = NULL;
        uv_walk(&inst->loop, close_any, NULL);
        uv_run(&inst->loop, UV_RUN_DEFAULT);
        uv_loop_close(&inst->loop);
        return SY_EINTERNAL;
    }
    inst->thread_started = true;
    return SY_OK;
}

void sy_k8s_loop_stop(sy_instance *inst)
{
    if (!inst->thread_started)
        return;
    pthread_mutex_lock(&inst->q_mu);
    inst->stopping = true;
    pthread_mutex_unlock(&inst->q_mu);
    uv_async_send(&inst->async);
    pthread_join(inst->thread, NULL);
    sy_k8s_exec_join(inst);
    inst->thread_started = false;
    uv_loop_close(&inst->loop);
}
