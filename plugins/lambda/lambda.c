/*
 * lambda.c -- the `lambda` executor: tasks as AWS Lambda invocations.
 *
 * Each accepted attempt is one Invoke call (RequestResponse or Event)
 * made by the instance's own thread, which drives every call in flight on
 * one libuv loop with libcurl's multi interface (loop.c).  submit() only
 * reads the task's parameters, checks the payload against Lambda's limit,
 * takes a slot and queues the job, so it never blocks.
 *
 * Capacity is the smaller of max_in_flight and the adaptive limit, and 0
 * while the instance is paused after a 429 that named its Retry-After;
 * wake() is called when a slot frees, when the limit grows, and when the
 * pause ends.
 *
 * Cancel: the attempt's completion is taken at once (exactly-once through
 * the in-flight table) and the loop closes its connection, then completes
 * it CANCELLED with a note: a RequestResponse call abandoned may still
 * run to its end in Lambda; an Event cannot be recalled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "lambda.h"

static void lambda_destroy(sy_instance *inst)
{
    if (!inst)
        return;
    sy_lambda_loop_stop(inst);
    sy_lambda_creds_clear(&inst->creds);
    OPENSSL_cleanse(inst->sign_key, sizeof inst->sign_key);
    sy_lambda_settings_free(&inst->set);
    sy_sdk_inflight_fini(&inst->inflight);
    sy_lambda_stats_fini(&inst->stats);
    free(inst);
}

static int lambda_create(const sy_host_api *api, sy_host *host,
                         const sy_params *config, sy_instance **out,
                         char *err, size_t err_len)
{
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    inst->now_ms = sy_lambda_now_ms;
    inst->wall = time;
    sy_lambda_stats_init(&inst->stats);
    bool found = false;
    int rc = sy_sdk_inflight_init(&inst->inflight);
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "out of memory");
    else
        rc = sy_lambda_settings_read(api, config, &inst->set, err, err_len);
    if (rc == SY_OK)
        rc = sy_lambda_creds_static(inst->set.access_key,
                                    inst->set.secret_key,
                                    inst->set.session_token,
                                    inst->set.profile, &inst->creds, &found,
                                    err, err_len);
    if (rc == SY_OK && !found)
        rc = sy_lambda_meta_init(inst, err, err_len);
    if (rc == SY_OK) {
        atomic_store(&inst->limit, inst->set.max_in_flight);
        inst->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)inst;
        if (inst->rng == 0)
            inst->rng = 0x9E3779B97F4A7C15ull;
        rc = sy_lambda_loop_start(inst, err, err_len);
    }
    if (rc != SY_OK) {
        sy_lambda_meta_free(inst);
        lambda_destroy(inst);
        return rc;
    }
    api->log(host, SY_LOG_DEBUG, "lambda: %s in %s, credentials from %s",
             inst->set.endpoint, inst->set.region,
             found ? inst->creds.source : "the metadata endpoints");
    *out = inst;
    return SY_OK;
}

/* Takes a slot under the current limit, unless paused. */
static bool take_slot(sy_instance *inst)
{
    int64_t used = atomic_load(&inst->used);
    for (;;) {
        if (atomic_load(&inst->paused_until) > 0 ||
            used >= atomic_load(&inst->limit))
            return false;
        if (atomic_compare_exchange_weak(&inst->used, &used, used + 1))
            return true;
    }
}

/* Fails an attempt from inside submit(): accepted, then completed at
 * once, so the host records the reason with the attempt. */
static int fail_now(sy_instance *inst, sy_completion *c, const char *msg)
{
    atomic_fetch_add(&inst->stats.submitted, 1);
    atomic_fetch_add(&inst->stats.by_outcome[SY_OUTCOME_FAILED], 1);
    sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_FAILED,
                   .error = msg};
    inst->api->complete(c, &r);
    return SY_OK;
}

static int lambda_submit(sy_instance *inst, const sy_task *task,
                         sy_completion *c, char *err, size_t err_len)
{
    sy_lambda_call call;
    char msg[512];
    if (sy_lambda_call_read(inst->api, &inst->set, task->params, &call, msg,
                            sizeof msg) != SY_OK)
        return fail_now(inst, c, msg);
    bool event = call.invocation_type == SY_LAMBDA_EVENT;
    int64_t limit = event ? inst->set.max_payload_async
                          : inst->set.max_payload_sync;
    if ((int64_t)task->input_len > limit) {
        free(call.client_context);
        sy_lambda_stats_name(&inst->stats, &inst->stats.errors,
                             "payload_too_large");
        snprintf(msg, sizeof msg, "the input is %zu bytes, over the "
                 "%lld-byte limit of %s invocations (%s); nothing was sent",
                 task->input_len, (long long)limit,
                 event ? "Event" : "RequestResponse",
                 event ? "max_payload_async" : "max_payload_sync");
        return fail_now(inst, c, msg);
    }
    if (!take_slot(inst)) {
        free(call.client_context);
        return SY_EBUSY;
    }
    sy_lambda_job *job = calloc(1, sizeof *job);
    if (!job ||
        sy_sdk_inflight_add(&inst->inflight, c, &job->cancelled) != SY_OK) {
        free(job);
        free(call.client_context);
        atomic_fetch_sub(&inst->used, 1);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    job->inst = inst;
    job->c = c;
    job->task = task;
    job->call = call;
    atomic_fetch_add(&inst->stats.submitted, 1);
    atomic_fetch_add(&inst->stats.queued, 1);
    sy_http_loop_post(inst->http, &job->posted);
    return SY_OK;
}

static int lambda_cancel(sy_instance *inst, sy_completion *c)
{
    return sy_http_loop_cancel(inst->http, &inst->inflight, c);
}

static int lambda_validate(sy_instance *inst, const sy_params *task_params,
                           const char *base_dir, char *err, size_t err_len)
{
    (void)base_dir;
    sy_lambda_call call;
    int rc = sy_lambda_call_read(inst->api, &inst->set, task_params, &call,
                                 err, err_len);
    if (rc == SY_OK)
        free(call.client_context);
    return rc;
}

static const sy_executor lambda_desc = {
    SY_EXECUTOR_V1,
    .name = "lambda",
    .version = "1.0.0",
    .description = "AWS Lambda Invoke over HTTPS: a thousand calls in "
                   "flight on one thread, throttling as backpressure",
    .instance_params = sy_lambda_instance_params,
    .task_params = sy_lambda_task_params,
    .create = lambda_create,
    .destroy = lambda_destroy,
    .capacity = sy_lambda_capacity,
    .submit = lambda_submit,
    .cancel = lambda_cancel,
    .validate = lambda_validate,
    .metrics = sy_lambda_stats_emit,
};

SY_EXPORT const sy_executor *sy_executor_entry(void)
{
    return &lambda_desc;
}
