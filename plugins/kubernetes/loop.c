/*
 * loop.c -- the kubernetes instance's one thread: the SDK's HTTP loop
 * (switchyard/http.h, a libuv loop driving a libcurl multi handle), and
 * the requests made on it.  Two watches and every create, log read and
 * delete share it: a thousand Jobs in flight cost the loop nothing while
 * they run.  Host threads reach the loop through the HTTP loop's two
 * queues: submit() and resume() post the attempt, cancel() posts the
 * attempt it took from the in-flight table.  TLS: the server is
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

/* After every read (the HTTP loop's progress). */
static void drain(void *arg)
{
    sy_instance *inst = arg;
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
    r->credential = inst->exec_credential;
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

/* ---- the HTTP loop's callbacks ------------------------------------------------ */

static void on_done(void *arg, CURL *e, CURLcode code)
{
    sy_instance *inst = arg;
    sy_k8s_req *r = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
    r->code = code;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &r->status);
    drain_lines(inst, r);
    curl_easy_cleanup(e);
    r->easy = NULL;
    if (r->status == 401 && sy_k8s_exec_unauthorized(inst, r) && !r->resent) {
        /* As client-go does: the refused request waits for the refreshed
         * credential and goes once more, so a token that expired early
         * does not fail an attempt; a refresh that fails answers it with
         * the command's one line (exec_refresh.c). */
        char why[256];
        r->resent = true;
        if (sy_k8s_http_start(inst, r, why, sizeof why) == SY_OK)
            return;
        r->status = 401; /* not sent again: the first answer stands */
        r->code = CURLE_OK;
    }
    r->done(inst, r); /* may free r, or start it again */
}

/* The watches begin with the first attempt (submit or resume), not with
 * the instance: `switchyard check` creates instances to judge their
 * settings and must not reach for the cluster, and a host with no work
 * for this instance holds no streams open.  The first Job's create and
 * the lists are sent together; the Job's events arrive by the watch (or
 * the list) either way. */
static void on_posted(void *arg, sy_http_link *link)
{
    sy_instance *inst = arg;
    if (!inst->watching) {
        inst->watching = true;
        sy_k8s_watch_start(inst);
    }
    sy_k8s_follow_begin(inst, SY_HTTP_ITEM(link, sy_k8s_job, posted));
}

static void on_cancelled(void *arg, sy_http_link *link)
{
    sy_k8s_follow_cancel(arg, SY_HTTP_ITEM(link, sy_k8s_job, cancelled));
}

/* Everything still held is dropped: the host calls destroy() only after
 * every accepted attempt completed, so what is left is the watches and
 * the cache.  The HTTP loop closes the handles after. */
static void on_stopping(void *arg)
{
    sy_instance *inst = arg;
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
    pthread_mutex_lock(&inst->exec_mu);
    inst->exec_closed = true; /* the helper must not wake a closed handle */
    pthread_mutex_unlock(&inst->exec_mu);
    inst->multi = NULL;
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

/* The watches begin on the loop thread, with the first attempt; a
 * watch's lines are taken after every read (drain). */
static const sy_http_loop_ops http_ops = {
    .posted = on_posted, .cancelled = on_cancelled,
    .progress = drain, .done = on_done, .stopping = on_stopping,
};

int sy_k8s_loop_start(sy_instance *inst, char *err, size_t err_len)
{
    int rc = sy_http_loop_new(&http_ops, inst, &inst->http, err, err_len);
    if (rc != SY_OK)
        return rc;
    inst->multi = sy_http_loop_multi(inst->http);
    uv_timer_init(sy_http_loop_uv(inst->http), &inst->token_timer);
    inst->token_timer.data = inst;
    if (inst->set.conn.token_file)
        uv_timer_start(&inst->token_timer, on_token_timer, 60000, 60000);
    sy_k8s_exec_start(inst);
    /* Short requests reuse a few kept-alive connections; the two watches
     * hold one each.  Creates are bursty, logs and deletes follow them:
     * sixteen idle connections kept is plenty. */
    /* At most 16 connections to the server; more requests wait in curl
     * (over HTTP/1.1, one each was 500 TLS handshakes for 500 Jobs). */
    curl_multi_setopt(inst->multi, CURLMOPT_MAXCONNECTS, 16L);
    curl_multi_setopt(inst->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 16L);
    rc = sy_http_loop_start(inst->http, err, err_len);
    if (rc != SY_OK)
        sy_k8s_loop_stop(inst);
    return rc;
}

void sy_k8s_loop_stop(sy_instance *inst)
{
    sy_http_loop_free(inst->http);
    inst->http = NULL;
    sy_k8s_exec_join(inst);
}
