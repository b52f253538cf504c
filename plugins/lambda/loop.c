/*
 * loop.c -- the lambda instance's one thread: the SDK's HTTP loop
 * (switchyard/http.h, a libuv loop driving a libcurl multi handle) and
 * what the plugin does on it: jobs begun, retried after a backoff, paused
 * after a 429, finished and cancelled.  No polling: a thousand invocations
 * in flight cost the loop nothing while they wait.
 *
 * Host threads reach the loop through the HTTP loop's two queues: submit()
 * posts the job, cancel() posts the job it took from the in-flight table.
 * Only this thread touches curl handles, so a cancel is always applied
 * here, between two transfers' callbacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lambda.h"

int64_t sy_lambda_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- easy handles, kept for reuse --------------------------------------- */

/* A kept handle is not reset: every option a try depends on is set again
 * by request.c, and curl keeps its buffers, which a reset would free. */
static CURL *easy_get(sy_instance *inst)
{
    if (inst->n_spare > 0)
        return inst->spare[--inst->n_spare];
    return curl_easy_init();
}

static void easy_put(sy_instance *inst, CURL *e)
{
    if (inst->n_spare < sizeof inst->spare / sizeof inst->spare[0])
        inst->spare[inst->n_spare++] = e;
    else
        curl_easy_cleanup(e);
}

/* ---- jobs ------------------------------------------------------------------ */

static void job_free_now(sy_lambda_job *job)
{
    curl_slist_free_all(job->headers);
    free(job->url);
    free(job->body);
    free(job->log_result);
    free(job->call.client_context);
    free(job);
}

static void on_job_timer_closed(uv_handle_t *h)
{
    job_free_now(h->data);
}

static void job_free(sy_lambda_job *job)
{
    if (job->timer_live) {
        job->timer_live = false;
        uv_close((uv_handle_t *)&job->timer, on_job_timer_closed);
    } else {
        job_free_now(job);
    }
}

/* Takes the job off the wire (or its backoff timer) without freeing it. */
static void job_detach(sy_instance *inst, sy_lambda_job *job)
{
    if (job->easy) {
        curl_multi_remove_handle(inst->multi, job->easy);
        easy_put(inst, job->easy);
        job->easy = NULL;
    }
    if (job->timer_live)
        uv_timer_stop(&job->timer);
    for (sy_lambda_job **p = &inst->waiting; *p; p = &(*p)->next)
        if (*p == job) {
            *p = job->next;
            break;
        }
}

void sy_lambda_job_finish(sy_instance *inst, sy_lambda_job *job,
                          const sy_result *r)
{
    job_detach(inst, job);
    if (!job->abandoned &&
        sy_sdk_inflight_take(&inst->inflight, job->c, NULL) != SY_OK) {
        /* cancel() took the completion first; its message, still queued,
         * completes the attempt and frees the job. */
        return;
    }
    if (job->tries == 0)
        atomic_fetch_sub(&inst->stats.queued, 1);
    int o = r->outcome >= 0 && r->outcome <= SY_OUTCOME_DEFERRED
                ? r->outcome : SY_OUTCOME_FAILED;
    atomic_fetch_add(&inst->stats.by_outcome[o], 1);
    inst->api->complete(job->c, r);
    job_free(job);
    atomic_fetch_sub(&inst->used, 1);
    inst->api->wake(inst->host);
}

static void fail_job(sy_instance *inst, sy_lambda_job *job, const char *msg)
{
    sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_FAILED,
                   .error = msg};
    sy_lambda_job_finish(inst, job, &r);
}

void sy_lambda_loop_begin(sy_instance *inst, sy_lambda_job *job)
{
    int ready = sy_lambda_meta_ready(inst);
    if (ready < 0) {
        fail_job(inst, job, "no AWS credentials: cannot start a request to "
                 "the metadata endpoint");
        return;
    }
    if (ready == 0) {
        job->next = inst->waiting;
        inst->waiting = job;
        return;
    }
    char err[512] = "";
    CURL *e = easy_get(inst);
    if (!e) {
        fail_job(inst, job, "out of memory (curl_easy_init)");
        return;
    }
    if (sy_lambda_request_prepare(inst, job, e, err, sizeof err) != SY_OK) {
        easy_put(inst, e);
        fail_job(inst, job, err);
        return;
    }
    curl_easy_setopt(e, CURLOPT_PRIVATE, job);
    CURLMcode mc = curl_multi_add_handle(inst->multi, e);
    if (mc != CURLM_OK) {
        easy_put(inst, e);
        snprintf(err, sizeof err, "cannot start the request: %s",
                 curl_multi_strerror(mc));
        fail_job(inst, job, err);
        return;
    }
    if (job->tries == 0)
        atomic_fetch_sub(&inst->stats.queued, 1);
    job->easy = e;
    job->tries++;
}

static void on_retry(uv_timer_t *t)
{
    sy_lambda_job *job = t->data;
    sy_lambda_loop_begin(job->inst, job);
}

void sy_lambda_loop_retry_later(sy_instance *inst, sy_lambda_job *job,
                                int64_t delay_ms)
{
    if (!job->timer_live) {
        uv_timer_init(sy_http_loop_uv(inst->http), &job->timer);
        job->timer.data = job;
        job->timer_live = true;
    }
    atomic_fetch_add(&inst->stats.retries, 1);
    uv_timer_start(&job->timer, on_retry, (uint64_t)(delay_ms > 0 ? delay_ms : 0), 0);
}

/* ---- the pause after a 429 ------------------------------------------------ */

static void on_pause_end(uv_timer_t *t)
{
    sy_instance *inst = t->data;
    atomic_store(&inst->paused_until, 0);
    inst->api->wake(inst->host);
}

void sy_lambda_loop_pause(sy_instance *inst, int64_t ms)
{
    int64_t until = inst->now_ms() + ms;
    if (until <= atomic_load(&inst->paused_until))
        return;
    atomic_store(&inst->paused_until, until);
    uv_timer_start(&inst->pause_timer, on_pause_end, (uint64_t)ms, 0);
}

/* ---- the HTTP loop's callbacks ------------------------------------------------ */

static void on_done(void *arg, CURL *e, CURLcode code)
{
    sy_instance *inst = arg;
    if (sy_lambda_meta_done(inst, e, code))
        return;
    sy_lambda_job *job = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&job);
    job->easy = NULL;
    sy_lambda_response_done(inst, job, e, code);
    easy_put(inst, e);
}

/* ---- the queues from host threads ------------------------------------------ */

static const char cancel_note_sync[] =
    "cancelled: the request was abandoned (connection closed); the function "
    "may still complete";
static const char cancel_note_event[] =
    "cancelled: an Event invocation cannot be recalled; if Lambda accepted "
    "it, the function runs anyway";

static void apply_cancel(sy_instance *inst, sy_lambda_job *job)
{
    job->abandoned = true;
    bool event = job->call.invocation_type == SY_LAMBDA_EVENT;
    const char *note = event ? cancel_note_event : cancel_note_sync;
    sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_CANCELLED,
                   .error = note, .note = note};
    sy_lambda_job_finish(inst, job, &r);
}

static void on_stopping(void *arg)
{
    sy_instance *inst = arg;
    sy_lambda_meta_free(inst);
    while (inst->n_spare > 0)
        curl_easy_cleanup(inst->spare[--inst->n_spare]);
    inst->multi = NULL; /* the loop cleans it up next */
}

static void on_posted(void *arg, sy_http_link *link)
{
    sy_lambda_job *job = SY_HTTP_ITEM(link, sy_lambda_job, posted);
    job->start_ns = now_ns();
    sy_lambda_loop_begin(arg, job);
}

static void on_cancelled(void *arg, sy_http_link *link)
{
    apply_cancel(arg, SY_HTTP_ITEM(link, sy_lambda_job, cancelled));
}

/* ---- start and stop ------------------------------------------------------------ */

static const sy_http_loop_ops http_ops = {
    .posted = on_posted, .cancelled = on_cancelled, .done = on_done,
    .stopping = on_stopping,
};

int sy_lambda_loop_start(sy_instance *inst, char *err, size_t err_len)
{
    int rc = sy_http_loop_new(&http_ops, inst, &inst->http, err, err_len);
    if (rc != SY_OK)
        return rc;
    /* Keep a kept-alive connection for every invocation that may be in
     * flight, so a steady load never reconnects. */
    inst->multi = sy_http_loop_multi(inst->http);
    curl_multi_setopt(inst->multi, CURLMOPT_MAXCONNECTS,
                      (long)inst->set.max_in_flight);
    uv_loop_t *uv = sy_http_loop_uv(inst->http);
    uv_timer_init(uv, &inst->pause_timer);
    inst->pause_timer.data = inst;
    uv_timer_init(uv, &inst->refresh_timer);
    inst->refresh_timer.data = inst;
    rc = sy_http_loop_start(inst->http, err, err_len);
    if (rc != SY_OK)
        sy_lambda_loop_stop(inst);
    return rc;
}

void sy_lambda_loop_stop(sy_instance *inst)
{
    sy_http_loop_free(inst->http);
    inst->http = NULL;
}
