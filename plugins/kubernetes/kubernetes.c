/*
 * kubernetes.c -- the `kubernetes` executor: each attempt one batch/v1 Job.
 *
 * submit() reads the task's parameters, checks the input against
 * max_input, builds the Job's manifest (its name derived from instance,
 * run, task and attempt), takes a slot and queues the attempt for the
 * loop thread: no network round trip.  resume() (ABI 1.4) is the same
 * path: the create of a Job that exists answers 409 and the attempt
 * follows it -- adoption -- so a restarted host never makes a second Job
 * for one attempt, and one that died before the create makes it now.
 *
 * Capacity: max_in_flight Jobs exist at once; a slot is held from submit
 * until the attempt's Job is deleted (or kept) and the attempt completed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "kubernetes.h"

static void k8s_destroy(sy_instance *inst)
{
    if (!inst)
        return;
    sy_k8s_loop_stop(inst);
    if (inst->auth_header) {
        OPENSSL_cleanse(inst->auth_header, strlen(inst->auth_header));
        free(inst->auth_header);
    }
    sy_k8s_settings_free(&inst->set);
    sy_sdk_inflight_fini(&inst->inflight);
    pthread_mutex_destroy(&inst->exec_mu);
    free(inst);
}

static int k8s_create(const sy_host_api *api, sy_host *host,
                      const sy_params *config, sy_instance **out, char *err,
                      size_t err_len)
{
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    pthread_mutex_init(&inst->exec_mu, NULL);
    int rc = sy_sdk_inflight_init(&inst->inflight);
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "out of memory");
    else
        rc = sy_k8s_settings_read(api, config, &inst->set, err, err_len);
    if (rc == SY_OK && inst->set.conn.token &&
        asprintf(&inst->auth_header, "Authorization: Bearer %s",
                 inst->set.conn.token) < 0) {
        inst->auth_header = NULL;
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
    }
    if (rc == SY_OK)
        rc = sy_k8s_loop_start(inst, err, err_len);
    if (rc != SY_OK) {
        k8s_destroy(inst);
        return rc;
    }
    api->log(host, SY_LOG_DEBUG, "kubernetes: %s, namespace %s, from %s",
             inst->set.conn.server, inst->set.ns, inst->set.conn.source);
    *out = inst;
    return SY_OK;
}

static int64_t k8s_capacity(sy_instance *inst)
{
    int64_t left = inst->set.max_in_flight - atomic_load(&inst->used);
    return left > 0 ? left : 0;
}

static bool take_slot(sy_instance *inst)
{
    int64_t used = atomic_load(&inst->used);
    while (used < inst->set.max_in_flight)
        if (atomic_compare_exchange_weak(&inst->used, &used, used + 1))
            return true;
    return false;
}

/* Fails an attempt from inside submit(): accepted, then completed at
 * once, so the host records the reason with the attempt. */
static int fail_now(sy_instance *inst, sy_completion *c, int reason,
                    const char *msg)
{
    atomic_fetch_add(&inst->stats.submitted, 1);
    atomic_fetch_add(&inst->stats.by_outcome[SY_OUTCOME_FAILED], 1);
    atomic_fetch_add(&inst->stats.failures[reason], 1);
    sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_FAILED,
                   .error = msg};
    inst->api->complete(c, &r);
    return SY_OK;
}

static int start(sy_instance *inst, const sy_task *task, sy_completion *c,
                 bool resumed, char *err, size_t err_len)
{
    char msg[512];
    if ((int64_t)task->input_len > inst->set.max_input) {
        snprintf(msg, sizeof msg, "the input is %zu bytes, over the "
                 "%lld-byte limit of SWITCHYARD_INPUT (max_input); no Job "
                 "was created", task->input_len,
                 (long long)inst->set.max_input);
        return fail_now(inst, c, SY_K8S_R_INPUT, msg);
    }
    sy_k8s_spec sp;
    if (sy_k8s_spec_read(inst->api, &inst->set, task->params, &sp, msg,
                         sizeof msg) != SY_OK)
        return fail_now(inst, c, SY_K8S_R_API, msg);
    if (!take_slot(inst)) {
        sy_k8s_spec_free(&sp);
        return SY_EBUSY;
    }
    sy_k8s_job *job = calloc(1, sizeof *job);
    int rc = job ? sy_k8s_job_manifest(&inst->set, task, &sp, job, msg,
                                       sizeof msg)
                 : SY_ENOMEM;
    sy_k8s_spec_free(&sp);
    if (rc == SY_OK &&
        sy_sdk_inflight_add(&inst->inflight, c, &job->cancelled) != SY_OK)
        rc = SY_ENOMEM;
    if (rc != SY_OK) {
        if (job)
            free(job->manifest);
        free(job);
        atomic_fetch_sub(&inst->used, 1);
        sy_sdk_errf(err, err_len, "%s", rc == SY_ENOMEM ? "out of memory"
                                                        : msg);
        return rc;
    }
    job->inst = inst;
    job->c = c;
    job->task = task;
    job->resumed = resumed;
    job->outcome = SY_OUTCOME_FAILED;
    atomic_fetch_add(&inst->stats.submitted, 1);
    if (resumed)
        atomic_fetch_add(&inst->stats.resumed, 1);
    sy_http_loop_post(inst->http, &job->posted);
    return SY_OK;
}

static int k8s_submit(sy_instance *inst, const sy_task *task,
                      sy_completion *c, char *err, size_t err_len)
{
    return start(inst, task, c, false, err, err_len);
}

/* The same path as submit: the Job's name is the attempt's, so the
 * create finds the Job an earlier host made (409: followed) or makes it
 * when that host died before its create. */
static int k8s_resume(sy_instance *inst, const sy_task *task,
                      sy_completion *c, char *err, size_t err_len)
{
    return start(inst, task, c, true, err, err_len);
}

static int k8s_cancel(sy_instance *inst, sy_completion *c)
{
    return sy_http_loop_cancel(inst->http, &inst->inflight, c);
}

static int k8s_validate(sy_instance *inst, const sy_params *task_params,
                        const char *base_dir, char *err, size_t err_len)
{
    (void)base_dir;
    sy_k8s_spec sp;
    int rc = sy_k8s_spec_read(inst->api, &inst->set, task_params, &sp, err,
                              err_len);
    if (rc == SY_OK)
        sy_k8s_spec_free(&sp);
    return rc;
}

static const sy_executor k8s_desc = {
    SY_EXECUTOR_V1,
    .name = "kubernetes",
    .version = "1.0.0",
    .description = "tasks as Kubernetes Jobs, followed by two watches; "
                   "adopted, never run twice, after a restart",
    .instance_params = sy_k8s_instance_params,
    .task_params = sy_k8s_task_params,
    .create = k8s_create,
    .destroy = k8s_destroy,
    .capacity = k8s_capacity,
    .submit = k8s_submit,
    .cancel = k8s_cancel,
    .validate = k8s_validate,
    .metrics = sy_k8s_stats_emit,
    .resume = k8s_resume,
};

SY_EXPORT const sy_executor *sy_executor_entry(void)
{
    return &k8s_desc;
}
