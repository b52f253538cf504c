/*
 * response.c -- what a finished transfer means.
 *
 *   200/202/204           succeeded; with X-Amz-Function-Error the
 *                         function failed: "errorType: errorMessage" and
 *                         the log tail
 *   429                   not the task's failure: DEFERRED (no attempt
 *                         charged) after Retry-After / retryAfterSeconds,
 *                         which also pauses the instance; the adaptive
 *                         limit halves
 *   5xx                   retried here with full-jitter backoff, bounded
 *   other 4xx             failed at once with Lambda's type and message
 *   no connection         retried like a 5xx: nothing was sent
 *   dropped or timed out  after the request went out: never retried here
 *   after sending         (the function may have run); the task's own
 *                         retry policy decides
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

#include "lambda.h"

/* xorshift64*: the jitter needs spread, not secrecy. */
static uint64_t next_rand(sy_instance *inst)
{
    uint64_t x = inst->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    inst->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Full jitter: uniform in [0, min(cap, base * 2^(tries-1))]. */
static int64_t backoff_ms(sy_instance *inst, long tries)
{
    int64_t ceil = inst->set.retry_base_ms;
    for (long i = 1; i < tries && ceil < inst->set.retry_cap_ms; i++)
        ceil *= 2;
    if (ceil > inst->set.retry_cap_ms)
        ceil = inst->set.retry_cap_ms;
    return (int64_t)(next_rand(inst) % (uint64_t)(ceil + 1));
}

static void finish(sy_instance *inst, sy_lambda_job *job, sy_outcome o,
                   const char *output, size_t output_len, const char *error,
                   const char *note, int64_t retry_after_ms)
{
    char vnote[128];
    if (!note && job->executed_version[0]) {
        snprintf(vnote, sizeof vnote, "executed version %s",
                 job->executed_version);
        note = vnote;
    }
    sy_result r = {.size = sizeof r, .outcome = o, .output = output,
                   .output_len = output_len, .error = error,
                   .retry_after_ms = retry_after_ms, .note = note};
    sy_lambda_job_finish(inst, job, &r);
}

static void fail_typed(sy_instance *inst, sy_lambda_job *job, sy_outcome o,
                       const char *type, const char *fmt, ...)
    SY_PRINTF(5, 6);

static void fail_typed(sy_instance *inst, sy_lambda_job *job, sy_outcome o,
                       const char *type, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sy_lambda_stats_name(&inst->stats, &inst->stats.errors, type);
    finish(inst, job, o, NULL, 0, msg, NULL, 0);
}

/* The decoded log tail (at most 4 KB), or NULL. */
static char *log_tail(const sy_lambda_job *job)
{
    if (!job->log_result || !job->log_result[0])
        return NULL;
    size_t n = strlen(job->log_result);
    unsigned char *out = malloc(n + 1);
    if (!out)
        return NULL;
    int len = EVP_DecodeBlock(out, (const unsigned char *)job->log_result,
                              (int)n);
    if (len < 0) {
        free(out);
        return NULL;
    }
    /* EVP_DecodeBlock counts the padding as bytes. */
    for (size_t i = n; i > 0 && job->log_result[i - 1] == '=' && len > 0; i--)
        len--;
    if (len > SY_LAMBDA_LOG_TAIL_MAX) {
        memmove(out, out + len - SY_LAMBDA_LOG_TAIL_MAX,
                SY_LAMBDA_LOG_TAIL_MAX);
        len = SY_LAMBDA_LOG_TAIL_MAX;
    }
    out[len] = '\0';
    return (char *)out;
}

static const char *jstr(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (!json_is_string(v) && b)
        v = json_object_get(o, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void function_error(sy_instance *inst, sy_lambda_job *job)
{
    json_t *j = json_loadb(job->body ? job->body : "", job->body_len, 0,
                           NULL);
    const char *type = jstr(j, "errorType", NULL);
    const char *msg = jstr(j, "errorMessage", NULL);
    char *tail = log_tail(job);
    char *body = NULL;
    if (!msg) {
        body = strndup(job->body ? job->body : "", 1024);
        msg = body && body[0] ? body : "(no message)";
    }
    if (!type)
        type = job->function_error; /* Unhandled or Handled */
    fail_typed(inst, job, SY_OUTCOME_FAILED, type, "%s: %s%s%s", type, msg,
               tail ? "\n--- log tail ---\n" : "", tail ? tail : "");
    free(body);
    free(tail);
    json_decref(j);
}

static void succeeded(sy_instance *inst, sy_lambda_job *job, long status)
{
    char *tail = log_tail(job);
    if (tail) {
        sy_sdk_one_line(tail);
        inst->api->log(inst->host, SY_LOG_DEBUG, "%s: log tail: %s",
                       job->task->ns, tail);
        free(tail);
    }
    if (status == 202 || job->call.invocation_type == SY_LAMBDA_EVENT) {
        finish(inst, job, SY_OUTCOME_SUCCEEDED, NULL, 0, NULL,
               "accepted as an Event: the function runs asynchronously", 0);
        return;
    }
    const char *b = job->body ? job->body : "";
    size_t i = 0;
    while (i < job->body_len && isspace((unsigned char)b[i]))
        i++;
    if (i == job->body_len) {
        finish(inst, job, SY_OUTCOME_SUCCEEDED, NULL, 0, NULL, NULL, 0);
    } else if (b[i] == '{') {
        /* Passed through as is: the host checks it is one JSON object. */
        finish(inst, job, SY_OUTCOME_SUCCEEDED, b, job->body_len, NULL, NULL,
               0);
    } else {
        /* A function may return any JSON value; the output must be an
         * object, so the value becomes its `result`. */
        size_t len = job->body_len + 16;
        char *w = malloc(len);
        if (!w) {
            fail_typed(inst, job, SY_OUTCOME_FAILED, "internal",
                       "out of memory");
            return;
        }
        int n = snprintf(w, len, "{\"result\": %s}", b);
        finish(inst, job, SY_OUTCOME_SUCCEEDED, w, (size_t)n, NULL, NULL, 0);
        free(w);
    }
}

/* A week: any later hint is a broken one (the host caps a deferral at an
 * hour anyway), and seconds beyond it would overflow as milliseconds. */
#define RETRY_AFTER_MAX_S (7 * 24 * 3600LL)

/* Milliseconds from Retry-After (seconds, or an HTTP date, RFC 9110) or
 * the body's retryAfterSeconds; -1 if none. */
static int64_t retry_after_ms(const sy_lambda_job *job, json_t *j)
{
    char *end;
    if (job->retry_after[0]) {
        long long s = strtoll(job->retry_after, &end, 10);
        if (end != job->retry_after && *end == '\0' && s >= 0)
            return (s < RETRY_AFTER_MAX_S ? s : RETRY_AFTER_MAX_S) * 1000;
        /* "Wed, 21 Oct 2015 07:28:00 GMT": libcurl reads HTTP dates. */
        time_t at = curl_getdate(job->retry_after, NULL);
        if (at != (time_t)-1) {
            long long wait = (long long)at - (long long)time(NULL);
            if (wait < 0)
                wait = 0;
            return (wait < RETRY_AFTER_MAX_S ? wait : RETRY_AFTER_MAX_S) * 1000;
        }
    }
    json_t *v = json_object_get(j, "retryAfterSeconds");
    double s = -1;
    if (json_is_integer(v))
        s = (double)json_integer_value(v);
    else if (json_is_real(v))
        s = json_real_value(v);
    else if (json_is_string(v)) {
        s = strtod(json_string_value(v), &end);
        if (end == json_string_value(v))
            s = -1;
    }
    /* NaN fails both comparisons: no hint. */
    if (s >= 0 && s <= (double)RETRY_AFTER_MAX_S)
        return (int64_t)(s * 1000);
    if (s > (double)RETRY_AFTER_MAX_S)
        return RETRY_AFTER_MAX_S * 1000;
    return -1;
}

static void throttled(sy_instance *inst, sy_lambda_job *job)
{
    json_t *j = json_loadb(job->body ? job->body : "", job->body_len, 0,
                           NULL);
    const char *reason = jstr(j, "Reason", "reason");
    const char *msg = jstr(j, "message", "Message");
    if (!reason)
        reason = "Unknown";
    int64_t wait = retry_after_ms(job, j);
    if (wait > 3600 * 1000)
        wait = 3600 * 1000; /* the host's own cap on a deferral */
    sy_lambda_stats_name(&inst->stats, &inst->stats.throttled, reason);
    sy_lambda_aimd_throttled(inst);
    if (wait > 0)
        sy_lambda_loop_pause(inst, wait);
    char err[512], note[256];
    snprintf(err, sizeof err, "TooManyRequestsException (%s): %s%s", reason,
             msg ? msg : "throttled", wait >= 0 ? "" : "; no Retry-After");
    snprintf(note, sizeof note, "throttled: %s", reason);
    finish(inst, job, SY_OUTCOME_DEFERRED, NULL, 0, err, note,
           wait > 0 ? wait : 0);
    json_decref(j);
}

/* Lambda's error type (x-amzn-ErrorType, else the body's __type) and
 * message, failing the attempt. */
static void service_error(sy_instance *inst, sy_lambda_job *job, long status,
                          const char *why)
{
    json_t *j = json_loadb(job->body ? job->body : "", job->body_len, 0,
                           NULL);
    char type[128];
    const char *t = job->error_type[0] ? job->error_type
                                       : jstr(j, "__type", "Type");
    if (t) {
        const char *hash = strchr(t, '#');
        snprintf(type, sizeof type, "%.*s", (int)strcspn(hash ? hash + 1 : t, ":"),
                 hash ? hash + 1 : t);
    } else {
        snprintf(type, sizeof type, "HTTP %ld", status);
    }
    const char *msg = jstr(j, "message", "Message");
    char *raw = NULL;
    if (!msg) {
        raw = strndup(job->body ? job->body : "", 512);
        if (raw)
            sy_sdk_one_line(raw);
        msg = raw && raw[0] ? raw : "(no message)";
    }
    fail_typed(inst, job, SY_OUTCOME_FAILED, type, "%s (HTTP %ld): %s%s",
               type, status, msg, why ? why : "");
    free(raw);
    json_decref(j);
}

static bool try_again(sy_instance *inst, sy_lambda_job *job)
{
    if (job->tries > inst->set.retries)
        return false;
    sy_lambda_loop_retry_later(inst, job, backoff_ms(inst, job->tries));
    return true;
}

void sy_lambda_response_done(sy_instance *inst, sy_lambda_job *job, CURL *e,
                             CURLcode code)
{
    long status = 0, sent = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &sent);
    long connects = 0, version = 0;
    curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &connects);
    curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
    atomic_fetch_add(&inst->stats.connections, (int64_t)connects);
    if (version == CURL_HTTP_VERSION_2_0)
        atomic_fetch_add(&inst->stats.http2, 1);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

    if (code != CURLE_OK) {
        const char *what = curl_easy_strerror(code);
        if (job->body_too_big) {
            fail_typed(inst, job, SY_OUTCOME_FAILED, "answer_too_large",
                       "the answer is over %lld bytes (max_payload_sync "
                       "plus 1 MiB)",
                       (long long)inst->set.max_payload_sync + (1 << 20));
        } else if (sent == 0 && code != CURLE_OPERATION_TIMEDOUT) {
            if (!try_again(inst, job))
                fail_typed(inst, job, SY_OUTCOME_FAILED, "connection",
                           "could not reach %s after %ld tries: %s",
                           inst->set.endpoint, job->tries, what);
        } else if (sent == 0) {
            if (!try_again(inst, job))
                fail_typed(inst, job, SY_OUTCOME_TIMED_OUT, "connection",
                           "could not connect to %s within its time "
                           "(%ld tries): %s", inst->set.endpoint, job->tries,
                           what);
        } else if (code == CURLE_OPERATION_TIMEDOUT) {
            fail_typed(inst, job, SY_OUTCOME_TIMED_OUT, "timeout",
                       "no answer in time after the request was sent (%s); "
                       "the function may still complete; not retried by "
                       "the plugin", what);
        } else {
            fail_typed(inst, job, SY_OUTCOME_FAILED, "connection_dropped",
                       "the connection dropped after the request was sent "
                       "(%s); the function may have run; not retried by "
                       "the plugin", what);
        }
        return;
    }
    sy_lambda_stats_latency(&inst->stats, now - job->start_ns);
    if (status >= 200 && status < 300) {
        sy_lambda_aimd_success(inst);
        if (job->function_error[0])
            function_error(inst, job);
        else
            succeeded(inst, job, status);
    } else if (status == 429) {
        throttled(inst, job);
    } else if (status >= 500) {
        if (!try_again(inst, job)) {
            char why[64];
            snprintf(why, sizeof why, " (after %ld tries)", job->tries);
            service_error(inst, job, status, why);
        }
    } else {
        service_error(inst, job, status, NULL);
    }
}
