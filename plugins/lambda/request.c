/*
 * request.c -- one try of one invocation as an HTTP request:
 *
 *   POST /2015-03-31/functions/{FunctionName}/invocations[?Qualifier=Q]
 *
 * with the function name percent-encoded (an ARN's `:` too), the input
 * context as the body, X-Amz-Invocation-Type, X-Amz-Log-Type: Tail on
 * request, X-Amz-Client-Context, and a fresh SigV4 signature per try (a
 * retry after a backoff must not reuse an old X-Amz-Date).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lambda.h"
#include "sigv4.h"

/* The answer's bytes, bounded: an endpoint that sends more than any
 * Lambda answer can hold is cut off rather than buffered. */
static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    sy_lambda_job *job = arg;
    size_t len = size * n;
    size_t limit = (size_t)job->inst->set.max_payload_sync + (1u << 20);
    if (job->body_len + len > limit) {
        job->body_too_big = true;
        return 0;
    }
    if (job->body_len + len + 1 > job->body_cap) {
        size_t cap = job->body_cap ? job->body_cap : 1024;
        while (cap < job->body_len + len + 1)
            cap *= 2;
        char *b = realloc(job->body, cap);
        if (!b)
            return 0;
        job->body = b;
        job->body_cap = cap;
    }
    memcpy(job->body + job->body_len, data, len);
    job->body_len += len;
    job->body[job->body_len] = '\0';
    return len;
}

/* curl sends the request again, on a new connection, when a kept-alive
 * one dies under it before an answer.  The request may have reached
 * Lambda, and the function may run: refusing the second send makes that
 * try fail as a connection dropped after sending, never a second
 * invocation behind the task's back.  curl calls this once per request
 * it is about to send, after the connection is made. */
static int on_prereq(void *arg, char *conn_primary_ip, char *conn_local_ip,
                     int conn_primary_port, int conn_local_port)
{
    (void)conn_primary_ip, (void)conn_local_ip;
    (void)conn_primary_port, (void)conn_local_port;
    sy_lambda_job *job = arg;
    if (job->sends++ > 0)
        return CURL_PREREQFUNC_ABORT;
    return CURL_PREREQFUNC_OK;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t len)
{
    while (len > 0 && isspace((unsigned char)v[len - 1]))
        len--;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, v, len);
    dst[len] = '\0';
}

static void reset_answer(sy_lambda_job *job)
{
    job->body_len = 0;
    if (job->body)
        job->body[0] = '\0';
    job->body_too_big = false;
    job->function_error[0] = job->executed_version[0] = '\0';
    job->error_type[0] = job->retry_after[0] = '\0';
    free(job->log_result);
    job->log_result = NULL;
}

/* The headers an answer's meaning depends on. */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    sy_lambda_job *job = arg;
    size_t len = size * n;
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        reset_answer(job); /* a new answer (after a 100 Continue) */
        return len;
    }
    const char *colon = memchr(data, ':', len);
    if (!colon)
        return len;
    size_t nl = (size_t)(colon - data);
    const char *v = colon + 1;
    while (v < data + len && (*v == ' ' || *v == '\t'))
        v++;
    size_t vl = (size_t)(data + len - v);
#define IS(name) (nl == sizeof(name) - 1 && strncasecmp(data, name, nl) == 0)
    if (IS("x-amz-function-error"))
        copy_value(job->function_error, sizeof job->function_error, v, vl);
    else if (IS("x-amz-executed-version"))
        copy_value(job->executed_version, sizeof job->executed_version, v,
                   vl);
    else if (IS("x-amzn-errortype"))
        copy_value(job->error_type, sizeof job->error_type, v, vl);
    else if (IS("retry-after"))
        copy_value(job->retry_after, sizeof job->retry_after, v, vl);
    else if (IS("x-amz-log-result")) {
        free(job->log_result);
        job->log_result = malloc(vl + 1);
        if (job->log_result)
            copy_value(job->log_result, vl + 1, v, vl);
    }
#undef IS
    return len;
}

static int build_url(sy_instance *inst, sy_lambda_job *job)
{
    const sy_lambda_settings *s = &inst->set;
    const sy_lambda_call *c = &job->call;
    size_t n = 0, cap = 0;
    char *u = NULL;
    const char *parts[] = {s->endpoint, "/2015-03-31/functions/"};
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(parts[i]);
        char *g = realloc(u, cap = n + l + 1);
        if (!g)
            goto oom;
        u = g;
        memcpy(u + n, parts[i], l + 1);
        n += l;
    }
    if (sy_sigv4_encode(&u, &n, &cap, c->function, strlen(c->function),
                        false) != 0)
        goto oom;
    const char *tail = c->qualifier ? "/invocations?Qualifier="
                                    : "/invocations";
    size_t tl = strlen(tail);
    if (n + tl + 1 > cap) {
        char *g = realloc(u, cap = n + tl + 1);
        if (!g)
            goto oom;
        u = g;
    }
    memcpy(u + n, tail, tl + 1);
    n += tl;
    if (c->qualifier && sy_sigv4_encode(&u, &n, &cap, c->qualifier,
                                        strlen(c->qualifier), false) != 0)
        goto oom;
    job->url = u;
    return SY_OK;
oom:
    free(u);
    return SY_ENOMEM;
}

static int add_header(struct curl_slist **l, const char *name,
                      const char *value)
{
    char line[4096 + 128];
    snprintf(line, sizeof line, "%s: %s", name, value);
    struct curl_slist *n = curl_slist_append(*l, line);
    if (!n)
        return SY_ENOMEM;
    *l = n;
    return SY_OK;
}

/* Signs and lists the headers of this try. */
static int build_headers(sy_instance *inst, sy_lambda_job *job, char *err,
                         size_t err_len)
{
    const sy_lambda_settings *s = &inst->set;
    const sy_lambda_creds *cr = &inst->creds;
    char date[17];
    sy_sigv4_amz_date(inst->wall(NULL), date);
    sy_sigv4_header h[8];
    size_t n = 0;
    h[n++] = (sy_sigv4_header){"Host", s->host};
    h[n++] = (sy_sigv4_header){"X-Amz-Date", date};
    bool event = job->call.invocation_type == SY_LAMBDA_EVENT;
    h[n++] = (sy_sigv4_header){"X-Amz-Invocation-Type",
                               event ? "Event" : "RequestResponse"};
    if (job->call.log_tail && !event)
        h[n++] = (sy_sigv4_header){"X-Amz-Log-Type", "Tail"};
    if (job->call.client_context)
        h[n++] = (sy_sigv4_header){"X-Amz-Client-Context",
                                   job->call.client_context};
    if (cr->session_token)
        h[n++] = (sy_sigv4_header){"X-Amz-Security-Token", cr->session_token};

    const char *path = job->url + strlen(s->endpoint);
    const char *q = strchr(path, '?');
    char pathbuf[1024];
    snprintf(pathbuf, sizeof pathbuf, "%.*s",
             (int)(q ? (size_t)(q - path) : strlen(path)), path);
    sy_sigv4_request rq = {
        .method = "POST", .path = pathbuf, .query = q ? q + 1 : NULL,
        .headers = h, .n_headers = n,
        .payload = job->task->input, .payload_len = job->task->input_len,
    };
    if (strncmp(inst->sign_day, date, 8) != 0 ||
        inst->sign_gen != inst->creds_gen) {
        sy_sigv4_derive_key(cr->secret_key, date, s->region, "lambda",
                            inst->sign_key);
        memcpy(inst->sign_day, date, 8);
        inst->sign_day[8] = '\0';
        inst->sign_gen = inst->creds_gen;
    }
    sy_sigv4_key key = {cr->access_key, cr->secret_key, cr->session_token,
                        s->region, "lambda", inst->sign_key};
    sy_sigv4_out out;
    if (sy_sigv4_sign(&rq, &key, date, false, &out, err, err_len) != 0)
        return SY_EINVAL;
    int rc = SY_OK;
    for (size_t i = 0; i < n && rc == SY_OK; i++)
        rc = add_header(&job->headers, h[i].name, h[i].value);
    if (rc == SY_OK)
        rc = add_header(&job->headers, "Authorization", out.authorization);
    /* No form content type, no 100-continue round trip on large bodies. */
    if (rc == SY_OK)
        rc = add_header(&job->headers, "Content-Type", "application/json");
    struct curl_slist *l = rc == SY_OK ? curl_slist_append(job->headers,
                                                           "Expect:")
                                       : NULL;
    if (l)
        job->headers = l;
    else
        rc = SY_ENOMEM;
    sy_sigv4_out_free(&out);
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "out of memory");
    return rc;
}

int sy_lambda_request_prepare(sy_instance *inst, sy_lambda_job *job,
                              CURL *e, char *err, size_t err_len)
{
    const sy_lambda_settings *s = &inst->set;
    if (!job->url && build_url(inst, job) != SY_OK) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    curl_slist_free_all(job->headers);
    job->headers = NULL;
    reset_answer(job);
    int rc = build_headers(inst, job, err, err_len);
    if (rc != SY_OK)
        return rc;

    /* The whole attempt's time: the task's timeout, else the setting,
     * less what earlier tries and backoffs took. */
    int64_t total = job->task->timeout_ms > 0 ? job->task->timeout_ms
                                              : s->timeout_ms;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    int64_t spent = (int64_t)((now - job->start_ns) / 1000000u);
    int64_t left = total - spent > 1 ? total - spent : 1;

    curl_easy_setopt(e, CURLOPT_URL, job->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR,
                     s->custom_endpoint ? "http,https" : "https");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, job->headers);
    /* The body from the task's own buffer (host-owned until complete),
     * not through a read callback: curl then writes headers and a body
     * under 64 KiB in one send instead of two, and allocates no upload
     * buffer for the transfer. */
    job->sends = 0;
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)job->task->input_len);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS,
                     job->task->input_len ? job->task->input : "");
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, job);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, job);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, job);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)s->connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)left);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 60L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 30L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    if (s->ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, s->ca_file);
    return SY_OK;
}
