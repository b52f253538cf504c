/*
 * logs.c -- what a finished pod's log says.
 *
 * A container writes its output as command tasks do: one JSON object on
 * stdout, as its last output.  The pod log holds stdout and stderr
 * interleaved, so the output is the whole log when it is one JSON object,
 * else its last non-empty line when that is one; anything else fails the
 * attempt with the log's tail.  A failed pod's error is its exit code and
 * the last SY_K8S_TAIL_LINES lines.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubernetes.h"

#define TAIL_BYTES 4096

static json_t *terminated(sy_k8s_job *job)
{
    json_t *pod = job->entry ? job->entry->pod : NULL;
    json_t *cs = json_array_get(json_object_get(json_object_get(pod, "status"),
                                                "containerStatuses"), 0);
    return json_object_get(json_object_get(cs, "state"), "terminated");
}

/* The last TAIL_BYTES of text, from a line's start when one is near. */
static char *tail_of(const char *text, size_t len)
{
    size_t from = len > TAIL_BYTES ? len - TAIL_BYTES : 0;
    if (from > 0) {
        const char *nl = memchr(text + from, '\n', len - from);
        if (nl && (size_t)(nl - text) + 1 < len)
            from = (size_t)(nl - text) + 1;
    }
    while (len > from && isspace((unsigned char)text[len - 1]))
        len--;
    return strndup(text + from, len - from);
}

/* The output object's text (malloc'd), or NULL. */
static char *output_of(const char *text, size_t len)
{
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    json_t *j = json_loadb(text, len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        size_t start = len;
        while (start > 0 && text[start - 1] != '\n')
            start--;
        j = json_loadb(text + start, len - start, 0, NULL);
    }
    char *out = json_is_object(j) ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return out;
}

#define LOG_TRIES 5

static void start_read(sy_instance *inst, sy_k8s_job *job);

static void on_log_retry(uv_timer_t *t)
{
    sy_k8s_job *job = t->data;
    start_read(job->inst, job);
}

static void on_log_done(sy_instance *inst, sy_k8s_req *r)
{
    sy_k8s_job *job = r->arg;
    job->req = NULL;
    bool ok = r->code == CURLE_OK && r->status == 200;
    /* Throttled (429: after its Retry-After), a server error or no
     * answer: the log is still there; read it again, a few times. */
    bool again = r->status == 429 || r->status >= 500 ||
                 (r->code != CURLE_OK && !r->too_big);
    if (!ok && again && ++job->tries < LOG_TRIES) {
        int64_t wait = r->status == 429 ? sy_k8s_retry_after_ms(r) : -1;
        if (r->status == 429)
            atomic_fetch_add(&inst->stats.throttled, 1);
        sy_k8s_req_free(r);
        sy_k8s_job_timer(inst, job, wait >= 0 ? wait : 200LL << job->tries,
                         on_log_retry); /* tries < LOG_TRIES: at most 3.2 s */
        return;
    }
    char msg[256] = "";
    if (!ok) {
        if (r->code != CURLE_OK)
            snprintf(msg, sizeof msg, "%s", curl_easy_strerror(r->code));
        else
            sy_k8s_status_message(r, msg, sizeof msg);
    }
    const char *text = r->body ? r->body : "";
    size_t len = r->body_len;
    if (job->log_complete) {
        job->output = ok ? output_of(text, len) : NULL;
        if (job->output) {
            sy_k8s_req_free(r);
            sy_k8s_decide(inst, job, SY_OUTCOME_SUCCEEDED, NULL, NULL);
            return;
        }
        free(job->log);
        job->log = ok ? tail_of(text, len) : NULL;
        if (ok)
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "bad_output",
                          "the container succeeded, but its stdout does not "
                          "end with a JSON object (print one as its last "
                          "output)\n--- log tail ---\n%s",
                          job->log ? job->log : "");
        else
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "the "
                          "container succeeded, but its log cannot be read "
                          "(HTTP %ld): %s", r->status, msg);
        sy_k8s_req_free(r);
        return;
    }
    json_t *t = terminated(job);
    long long code = (long long)json_integer_value(json_object_get(t,
                                                                   "exitCode"));
    const char *why = json_string_value(json_object_get(t, "reason"));
    const char *tmsg = json_string_value(json_object_get(t, "message"));
    free(job->log);
    job->log = ok ? tail_of(text, len) : NULL;
    sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "exit_code",
                  "exit code %lld (%s)%s%s\n--- log tail ---\n%s", code,
                  why ? why : "Error", tmsg ? ": " : "", tmsg ? tmsg : "",
                  ok ? (job->log ? job->log : "") : msg);
    sy_k8s_req_free(r);
}

static void start_read(sy_instance *inst, sy_k8s_job *job)
{
    json_t *pod = job->entry ? job->entry->pod : NULL;
    const char *pname = json_string_value(json_object_get(
        json_object_get(pod, "metadata"), "name"));
    if (!pname) {
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "Job %s finished "
                      "with no pod to read", job->name);
        return;
    }
    char path[800], err[256];
    if (job->log_complete)
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/log",
                 inst->set.ns, pname);
    else
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/log"
                 "?tailLines=%d", inst->set.ns, pname, SY_K8S_TAIL_LINES);
    sy_k8s_req *r = sy_k8s_req_new(inst, "GET", path, NULL, on_log_done, job);
    if (!r || sy_k8s_http_start(inst, r, err, sizeof err) != SY_OK) {
        sy_k8s_req_free(r);
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "cannot read the "
                      "log of pod %s: %s", pname, r ? err : "out of memory");
        return;
    }
    job->req = r;
}

void sy_k8s_read_log(sy_instance *inst, sy_k8s_job *job, bool complete)
{
    job->log_complete = complete;
    job->state = SY_K8S_LOGS;
    job->tries = 0;
    start_read(inst, job);
}
