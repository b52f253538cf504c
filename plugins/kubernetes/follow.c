/*
 * follow.c -- one attempt from its Job's create to its Job's delete, on
 * the loop thread.
 *
 *   QUEUED -> CREATING    POST the Job.  201: ours.  409 AlreadyExists:
 *                         the Job of this attempt made by an earlier host
 *                         (or an answer lost on the way): adopted, not an
 *                         error.  429: wait Retry-After and post again, or
 *                         DEFERRED when the wait is long (no attempt
 *                         charged).  5xx and lost connections: post again
 *                         after a backoff (a create that did land answers
 *                         409 then).
 *   -> FOLLOWING          the watches decide (follow_update, judged in
 *                         judge.c): no request per attempt while it runs.
 *   -> LOGS               Complete: the pod's log, whose last JSON object
 *                         is the output; Failed: its tail for the error.
 *   -> DELETING           the outcome is decided; the Job is deleted
 *                         (propagationPolicy Background) unless kept, and
 *                         the attempt completes when the delete is
 *                         accepted -- after the pod is gone, for a cancel.
 *
 * The completion: cancel() takes it from the in-flight table (abandoned);
 * otherwise the loop takes it when it completes.  When cancel() won that
 * race, its message is still queued and completes the attempt then.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubernetes.h"

#define CREATE_TRIES 5
#define DELETE_TRIES 5
#define POD_GONE_WAIT_MS 10000

/* The wait before try `tries` + 1 of a request: 400 ms doubling, at most
 * 5 s (a 429's own Retry-After is used when it gives one). */
static int64_t backoff_ms(int tries)
{
    return tries >= 4 ? 5000 : 200LL << tries;
}
static void post_create(sy_instance *inst, sy_k8s_job *job);
static void post_delete(sy_instance *inst, sy_k8s_job *job);

/* ---- freeing and completing ------------------------------------------------------ */

static void free_now(sy_k8s_job *job)
{
    free(job->manifest);
    free(job->output);
    free(job->error);
    free(job->log);
    free(job);
}

static void on_timer_closed(uv_handle_t *h)
{
    free_now(h->data);
}

void sy_k8s_job_free(sy_k8s_job *job)
{
    if (job->timer_live) {
        job->timer_live = false;
        uv_close((uv_handle_t *)&job->timer, on_timer_closed);
    } else {
        free_now(job);
    }
}

static void timer_start(sy_instance *inst, sy_k8s_job *job, int64_t ms,
                        uv_timer_cb cb)
{
    if (!job->timer_live) {
        uv_timer_init(sy_http_loop_uv(inst->http), &job->timer);
        job->timer.data = job;
        job->timer_live = true;
    }
    uv_timer_start(&job->timer, cb, (uint64_t)(ms > 0 ? ms : 0), 0);
}

void sy_k8s_job_timer(sy_instance *inst, sy_k8s_job *job, int64_t ms,
                      uv_timer_cb cb)
{
    timer_start(inst, job, ms, cb);
}

static void detach(sy_instance *inst, sy_k8s_job *job)
{
    if (job->req) {
        sy_k8s_http_abort(inst, job->req);
        sy_k8s_req_free(job->req);
        job->req = NULL;
    }
    if (job->timer_live)
        uv_timer_stop(&job->timer);
    if (job->entry) {
        job->entry->att = NULL;
        sy_k8s_entry_release(inst, job->entry);
        job->entry = NULL;
    }
}

void sy_k8s_follow_drop(sy_instance *inst, sy_k8s_job *job)
{
    detach(inst, job);
    sy_k8s_job_free(job);
}

static void finalize(sy_instance *inst, sy_k8s_job *job)
{
    if (!job->abandoned &&
        sy_sdk_inflight_take(&inst->inflight, job->c, NULL) != SY_OK) {
        /* cancel() took the completion: its queued message completes. */
        job->state = SY_K8S_HANDOFF;
        return;
    }
    detach(inst, job);
    if (job->outcome != SY_OUTCOME_SUCCEEDED && job->reason)
        for (int i = 0; i < SY_K8S_R_N; i++)
            if (strcmp(job->reason, sy_k8s_reason_name(i)) == 0)
                atomic_fetch_add(&inst->stats.failures[i], 1);
    atomic_fetch_add(&inst->stats.by_outcome[job->outcome], 1);
    sy_result r = {.size = sizeof r, .outcome = job->outcome,
                   .output = job->output,
                   .output_len = job->output ? strlen(job->output) : 0,
                   .error = job->error, .retry_after_ms = job->retry_after_ms,
                   .log_stdout = job->log,
                   .log_stdout_len = job->log ? strlen(job->log) : 0};
    char note[128];
    snprintf(note, sizeof note, "Job %s%s", job->name,
             job->resumed ? " (resumed)" : "");
    r.note = note;
    inst->api->complete(job->c, &r);
    sy_k8s_job_free(job);
    atomic_fetch_sub(&inst->used, 1);
    inst->api->wake(inst->host);
}

void sy_k8s_decide(sy_instance *inst, sy_k8s_job *job, sy_outcome o,
                   const char *reason, const char *fmt, ...)
{
    if (job->state == SY_K8S_DELETING || job->state == SY_K8S_POD_WAIT)
        return;
    job->outcome = o;
    job->reason = reason;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&job->error, fmt, ap) < 0)
            job->error = NULL;
        va_end(ap);
        /* One line: the server's `message` fields quoted here may hold
         * newlines or other control bytes. */
        for (char *c = job->error; c && *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = ' ';
    }
    if (job->req) {
        sy_k8s_http_abort(inst, job->req);
        sy_k8s_req_free(job->req);
        job->req = NULL;
    }
    if (job->timer_live)
        uv_timer_stop(&job->timer);
    job->state = SY_K8S_DELETING;
    job->tries = 0;
    bool keep = inst->set.keep_finished_s >= 0 &&
                o != SY_OUTCOME_CANCELLED && o != SY_OUTCOME_TIMED_OUT;
    if (job->created && !keep)
        post_delete(inst, job);
    else
        finalize(inst, job);
}

/* ---- delete ------------------------------------------------------------------------- */

static void on_delete_retry(uv_timer_t *t)
{
    sy_k8s_job *job = t->data;
    post_delete(job->inst, job);
}

static void on_pod_wait(uv_timer_t *t)
{
    sy_k8s_job *job = t->data;
    job->inst->api->log(job->inst->host, SY_LOG_WARN, "kubernetes: the pod "
                        "of Job %s is still there %d s after its delete",
                        job->name, POD_GONE_WAIT_MS / 1000);
    finalize(job->inst, job);
}

static void on_delete_done(sy_instance *inst, sy_k8s_req *r)
{
    sy_k8s_job *job = r->arg;
    job->req = NULL;
    long st = r->status;
    if (r->code == CURLE_OK && (st == 200 || st == 202 || st == 404)) {
        sy_k8s_req_free(r);
        atomic_fetch_add(&inst->stats.deletes, 1);
        atomic_fetch_sub(&inst->stats.jobs, 1);
        job->created = false;
        sy_k8s_entry *e = job->entry;
        /* A cancelled attempt ends when its pod is gone, so nothing it
         * started outlives it (the watch says so). */
        if (job->outcome == SY_OUTCOME_CANCELLED && e && e->pod &&
            !e->pod_gone && st != 404) {
            job->state = SY_K8S_POD_WAIT;
            timer_start(inst, job, POD_GONE_WAIT_MS, on_pod_wait);
            return;
        }
        finalize(inst, job);
        return;
    }
    int64_t wait = st == 429 ? sy_k8s_retry_after_ms(r) : -1;
    char msg[256];
    if (r->code != CURLE_OK)
        snprintf(msg, sizeof msg, "%s", curl_easy_strerror(r->code));
    else
        sy_k8s_status_message(r, msg, sizeof msg);
    sy_k8s_req_free(r);
    if (st == 429)
        atomic_fetch_add(&inst->stats.throttled, 1);
    if (++job->tries < DELETE_TRIES || st == 429) {
        timer_start(inst, job, wait >= 0 ? wait : backoff_ms(job->tries),
                    on_delete_retry);
        return;
    }
    inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: cannot delete Job "
                   "%s (HTTP %ld): %s; it stays", job->name, st, msg);
    finalize(inst, job);
}

static void post_delete(sy_instance *inst, sy_k8s_job *job)
{
    char path[700], err[256];
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs/%s",
             inst->set.ns, job->name);
    char *body = strdup("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
                        "\"propagationPolicy\":\"Background\"}");
    sy_k8s_req *r = sy_k8s_req_new(inst, "DELETE", path, body,
                                   on_delete_done, job);
    if (!r || sy_k8s_http_start(inst, r, err, sizeof err) != SY_OK) {
        sy_k8s_req_free(r);
        timer_start(inst, job, 500, on_delete_retry);
        return;
    }
    job->req = r;
}

/* ---- create ------------------------------------------------------------------------- */

static void on_create_retry(uv_timer_t *t)
{
    sy_k8s_job *job = t->data;
    post_create(job->inst, job);
}

static const char *annotation(json_t *obj, const char *key)
{
    json_t *v = json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
    return json_string_value(v);
}

static void created(sy_instance *inst, sy_k8s_job *job, json_t *obj,
                    bool adopted)
{
    job->created = true;
    job->created_ms = sy_k8s_now_ms();
    job->state = SY_K8S_FOLLOWING;
    atomic_fetch_add(&inst->stats.jobs, 1);
    sy_k8s_entry *e = job->entry;
    const char *uid = sy_k8s_uid(obj, false);
    if (!adopted && uid) {
        /* The answer is the new Job: what the cache holds under its name
         * for another uid is an earlier Job's. */
        snprintf(job->uid, sizeof job->uid, "%s", uid);
        const char *cached = sy_k8s_uid(e->job, false);
        if (!cached || strcmp(cached, uid) != 0) {
            /* The watch may have told of this Job already, newer than the
             * answer (a fast Job can be Complete before its create's
             * answer is read): only another Job's object is replaced. */
            json_decref(e->job);
            e->job = json_incref(obj);
            e->job_gone = false;
        }
        const char *owner = sy_k8s_uid(e->pod, true);
        if (e->pod && (!owner || strcmp(owner, uid) != 0)) {
            json_decref(e->pod);
            e->pod = NULL;
            e->pod_gone = false;
        }
    } else if (adopted && e->job && !e->job_gone && sy_k8s_uid(e->job, false)) {
        snprintf(job->uid, sizeof job->uid, "%s", sy_k8s_uid(e->job, false));
    }
    if (adopted && e->job) {
        const char *run = annotation(e->job, "switchyard.dev/run");
        const char *task = annotation(e->job, "switchyard.dev/task");
        if ((run && strcmp(run, job->task->run_id) != 0) ||
            (task && strcmp(task, job->task->task_id) != 0)) {
            job->created = false; /* not ours: never delete it */
            atomic_fetch_sub(&inst->stats.jobs, 1);
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "a Job named %s "
                   "exists for run %s task %s, not this attempt's; not "
                   "adopted", job->name, run ? run : "?", task ? task : "?");
            return;
        }
    }
    if (job->abandoned) {
        /* cancel() came while the create was on its way. */
        sy_k8s_decide(inst, job, SY_OUTCOME_CANCELLED, NULL, "cancelled: "
                      "Job %s deleted (propagationPolicy Background)",
                      job->name);
        return;
    }
    sy_k8s_judge(inst, job);
}

static void on_create_done(sy_instance *inst, sy_k8s_req *r)
{
    sy_k8s_job *job = r->arg;
    job->req = NULL;
    long st = r->status;
    CURLcode code = r->code;
    char msg[512];
    if (code != CURLE_OK)
        snprintf(msg, sizeof msg, "%s", curl_easy_strerror(code));
    else
        sy_k8s_status_message(r, msg, sizeof msg);
    int64_t wait = sy_k8s_retry_after_ms(r);
    json_t *obj = code == CURLE_OK && (st == 201 || st == 200) && r->body
                      ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
    sy_k8s_req_free(r);
    if (code == CURLE_OK && (st == 201 || st == 200)) {
        atomic_fetch_add(&inst->stats.creates, 1);
        created(inst, job, obj, false);
        json_decref(obj);
    } else if (code == CURLE_OK && st == 409) {
        atomic_fetch_add(&inst->stats.adoptions, 1);
        inst->api->log(inst->host, SY_LOG_INFO, "kubernetes: %s: Job %s "
                       "exists; following it", job->task->ns, job->name);
        created(inst, job, NULL, true);
    } else if (job->abandoned) {
        sy_k8s_decide(inst, job, SY_OUTCOME_CANCELLED, NULL,
               "cancelled before the Job was created");
    } else if (code == CURLE_OK && st == 429) {
        atomic_fetch_add(&inst->stats.throttled, 1);
        if (wait < 0)
            wait = 1000;
        if (wait > inst->set.retry_wait_ms) {
            job->retry_after_ms = wait;
            sy_k8s_decide(inst, job, SY_OUTCOME_DEFERRED, "throttled",
                   "the API server throttled the create (429, Retry-After "
                   "%lld s): %s", (long long)(wait / 1000), msg);
        } else {
            timer_start(inst, job, wait, on_create_retry);
        }
    } else if (code != CURLE_OK || st >= 500) {
        if (++job->tries < CREATE_TRIES)
            timer_start(inst, job, backoff_ms(job->tries), on_create_retry);
        else
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "cannot create Job "
                   "%s after %d tries (%s%ld): %s", job->name, job->tries,
                   code != CURLE_OK ? "no answer, HTTP " : "HTTP ", st, msg);
    } else {
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "the API server refused "
               "Job %s (HTTP %ld): %s", job->name, st, msg);
    }
}

static void post_create(sy_instance *inst, sy_k8s_job *job)
{
    char path[600], err[256];
    snprintf(path, sizeof path, "/apis/batch/v1/namespaces/%s/jobs",
             inst->set.ns);
    char *body = strdup(job->manifest);
    sy_k8s_req *r = body ? sy_k8s_req_new(inst, "POST", path, body,
                                          on_create_done, job)
                         : NULL;
    if (!r || sy_k8s_http_start(inst, r, err, sizeof err) != SY_OK) {
        sy_k8s_req_free(r);
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", "cannot send the create "
               "of Job %s: %s", job->name, r ? err : "out of memory");
        return;
    }
    job->state = SY_K8S_CREATING;
    job->req = r;
}

void sy_k8s_follow_begin(sy_instance *inst, sy_k8s_job *job)
{
    sy_k8s_entry *e = sy_k8s_entry_get(inst, job->name, true);
    if (!e || e->att) {
        job->state = SY_K8S_CREATING;
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "api", e ? "Job %s is already "
               "followed by another attempt of this host" : "out of memory "
               "(Job %s)", job->name);
        return;
    }
    e->att = job;
    job->entry = e;
    post_create(inst, job);
}

void sy_k8s_follow_cancel(sy_instance *inst, sy_k8s_job *job)
{
    job->abandoned = true;
    switch (job->state) {
    case SY_K8S_HANDOFF:
        finalize(inst, job);
        break;
    case SY_K8S_CREATING:
        if (job->req)
            return; /* the create's answer decides: delete, or nothing */
        sy_k8s_decide(inst, job, SY_OUTCOME_CANCELLED, NULL,
               "cancelled before the Job was created");
        break;
    case SY_K8S_FOLLOWING:
    case SY_K8S_LOGS:
        sy_k8s_decide(inst, job, SY_OUTCOME_CANCELLED, NULL, "cancelled: Job %s "
               "deleted (propagationPolicy Background)", job->name);
        break;
    default:
        break; /* DELETING, POD_WAIT: the decided outcome completes it */
    }
}

void sy_k8s_follow_update(sy_instance *inst, sy_k8s_entry *e)
{
    sy_k8s_job *job = e->att;
    if (job->state == SY_K8S_POD_WAIT && (e->pod_gone || !e->pod)) {
        finalize(inst, job);
        return;
    }
    sy_k8s_judge(inst, job);
}
