/*
 * loop.c -- the lambda instance's one thread: a libuv loop driving a
 * libcurl multi handle.  curl says which sockets to watch and when to
 * wake (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION); uv_poll_t and a
 * uv_timer_t watch them, and hand readiness back with
 * curl_multi_socket_action().  No polling: a thousand invocations in
 * flight cost the loop nothing while they wait.
 *
 * Host threads reach the loop through two intrusive queues under q_mu and
 * one uv_async_t: submit() appends the job, cancel() appends the job it
 * took from the in-flight table.  Only this thread touches curl handles,
 * so a cancel is always applied here, between two transfers' callbacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lambda.h"

typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    sy_instance *inst;
} sock_ctx;

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
        uv_timer_init(&inst->loop, &job->timer);
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

/* ---- curl's callbacks ------------------------------------------------------- */

static void check_done(sy_instance *inst)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(inst->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        CURL *e = m->easy_handle;
        CURLcode code = m->data.result;
        if (sy_lambda_meta_done(inst, e, code))
            continue;
        sy_lambda_job *job = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&job);
        curl_multi_remove_handle(inst->multi, e);
        job->easy = NULL;
        sy_lambda_response_done(inst, job, e, code);
        easy_put(inst, e);
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
    sy_instance *inst = ctx->inst;
    curl_multi_socket_action(inst->multi, ctx->fd, flags, &running);
    check_done(inst);
}

/* The watcher of socket `s`, kept by descriptor number: curl stops
 * watching a kept-alive connection between two calls, and a watcher kept
 * stopped saves the setup libuv does for a new one (three system calls)
 * on every call.  A number reused for a new socket gets the same watcher,
 * which holds nothing but the number. */
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

static void on_handle_closed(uv_handle_t *h)
{
    if (h->type == UV_POLL)
        free(h->data);
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, on_handle_closed);
}

static void shut_down(sy_instance *inst)
{
    sy_lambda_meta_free(inst);
    while (inst->n_spare > 0)
        curl_easy_cleanup(inst->spare[--inst->n_spare]);
    /* Closes the kept-alive connections, which tells on_socket to stop
     * watching them. */
    curl_multi_cleanup(inst->multi);
    inst->multi = NULL;
    uv_walk(&inst->loop, close_any, NULL); /* frees the socket watchers */
    free(inst->socks);
    inst->socks = NULL;
    inst->n_socks = 0;
}

static void on_async(uv_async_t *a)
{
    sy_instance *inst = a->data;
    pthread_mutex_lock(&inst->q_mu);
    sy_lambda_job *jobs = inst->q_head, *cancels = inst->cancel_head;
    bool stopping = inst->stopping;
    inst->q_head = inst->q_tail = NULL;
    inst->cancel_head = NULL;
    pthread_mutex_unlock(&inst->q_mu);

    uint64_t t = jobs ? now_ns() : 0;
    while (jobs) {
        sy_lambda_job *j = jobs;
        jobs = j->next;
        j->next = NULL;
        j->start_ns = t;
        sy_lambda_loop_begin(inst, j);
    }
    while (cancels) {
        sy_lambda_job *j = cancels;
        cancels = j->cancel_next;
        apply_cancel(inst, j);
    }
    if (stopping)
        shut_down(inst);
}

void sy_lambda_loop_post(sy_instance *inst, sy_lambda_job *job)
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

void sy_lambda_loop_post_cancel(sy_instance *inst, sy_lambda_job *job)
{
    pthread_mutex_lock(&inst->q_mu);
    job->cancel_next = inst->cancel_head;
    inst->cancel_head = job;
    pthread_mutex_unlock(&inst->q_mu);
    uv_async_send(&inst->async);
}

/* ---- start and stop ------------------------------------------------------------ */

static void *loop_main(void *arg)
{
    sy_instance *inst = arg;
    uv_run(&inst->loop, UV_RUN_DEFAULT);
    return NULL;
}

int sy_lambda_loop_start(sy_instance *inst, char *err, size_t err_len)
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
    uv_timer_init(&inst->loop, &inst->pause_timer);
    inst->pause_timer.data = inst;
    uv_timer_init(&inst->loop, &inst->refresh_timer);
    inst->refresh_timer.data = inst;
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
    /* Keep a kept-alive connection for every invocation that may be in
     * flight, so a steady load never reconnects. */
    curl_multi_setopt(inst->multi, CURLMOPT_MAXCONNECTS,
                      (long)inst->set.max_in_flight);
    rc = pthread_create(&inst->thread, NULL, loop_main, inst);
    if (rc != 0) {
        sy_sdk_errf(err, err_len, "cannot start the loop thread: %s",
                    strerror(rc));
        shut_down(inst);
        uv_run(&inst->loop, UV_RUN_DEFAULT);
        uv_loop_close(&inst->loop);
        return SY_EINTERNAL;
    }
    inst->thread_started = true;
    return SY_OK;
}

void sy_lambda_loop_stop(sy_instance *inst)
{
    if (!inst->thread_started)
        return;
    pthread_mutex_lock(&inst->q_mu);
    inst->stopping = true;
    pthread_mutex_unlock(&inst->q_mu);
    uv_async_send(&inst->async);
    pthread_join(inst->thread, NULL);
    inst->thread_started = false;
    uv_loop_close(&inst->loop);
}
