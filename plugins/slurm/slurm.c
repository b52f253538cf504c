/*
 * slurm.c -- the `slurm` executor: each attempt of a task is one Slurm
 * batch job.  The descriptor and the calls the host makes; the work is in
 * loop.c (the plugin's thread), settings.c and state.c (see slurm.h).
 */
#define SY_EXECUTOR_MIN_MINOR 4
#include <stdlib.h>
#include <string.h>

#include "slurm.h"

static int slurm_create(const sy_host_api *api, sy_host *host,
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
    int rc = sy_slurm_settings_read(api, config, &inst->set, err, err_len);
    if (rc != SY_OK) {
        free(inst);
        return rc;
    }
    pthread_mutex_init(&inst->stats.mu, NULL);
    pthread_mutex_init(&inst->q_mu, NULL);
    pthread_cond_init(&inst->q_cond, NULL);
    pthread_cond_init(&inst->sub_cond, NULL);
    sy_sdk_slots_init(&inst->slots, api, host, inst->set.max_in_flight);
    rc = sy_sdk_inflight_init(&inst->inflight);
    if (rc != SY_OK)
        sy_sdk_errf(err, err_len, "out of memory");
    if (rc == SY_OK && inst->set.req.partition) {
        /* An unknown partition is a config error when the controller can
         * be asked; when it cannot, the jobs will say. */
        char why[512];
        int e = sy_slurm_partition_exists(inst, inst->set.req.partition, why,
                                          sizeof why);
        if (e == 0) {
            sy_sdk_errf(err, err_len, "%s", why);
            rc = SY_EINVAL;
        } else if (e < 0) {
            api->log(host, SY_LOG_WARN, "partition not checked: %s", why);
        }
        if (rc != SY_OK)
            sy_sdk_inflight_fini(&inst->inflight);
    }
    if (rc == SY_OK) {
        rc = sy_slurm_loop_start(inst, err, err_len);
        if (rc != SY_OK)
            sy_sdk_inflight_fini(&inst->inflight);
    }
    if (rc != SY_OK) {
        pthread_cond_destroy(&inst->q_cond);
        pthread_cond_destroy(&inst->sub_cond);
        pthread_mutex_destroy(&inst->q_mu);
        pthread_mutex_destroy(&inst->stats.mu);
        sy_slurm_settings_free(&inst->set);
        free(inst);
        return rc;
    }
    *out = inst;
    return SY_OK;
}

static void slurm_destroy(sy_instance *inst)
{
    sy_slurm_loop_stop(inst);
    sy_sdk_inflight_fini(&inst->inflight);
    pthread_cond_destroy(&inst->q_cond);
    pthread_cond_destroy(&inst->sub_cond);
    pthread_mutex_destroy(&inst->q_mu);
    pthread_mutex_destroy(&inst->stats.mu);
    sy_slurm_settings_free(&inst->set);
    free(inst);
}

static int64_t slurm_capacity(sy_instance *inst)
{
    return sy_sdk_slots_available(&inst->slots);
}

/* submit() and resume(): queue the job for the loop. */
static int start(sy_instance *inst, const sy_task *task, sy_completion *c,
                 int phase, char *err, size_t err_len)
{
    int rc = sy_slurm_task_check(inst->api, task->params, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (!sy_sdk_slots_try_acquire(&inst->slots))
        return SY_EBUSY;
    sy_slurm_job *job = calloc(1, sizeof *job);
    if (!job || sy_slurm_job_init(inst, (job->task = task, job), err,
                                  err_len) != SY_OK) {
        free(job);
        sy_sdk_slots_undo(&inst->slots);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    job->c = c;
    job->phase = phase;
    job->acct_rc = -1;
    if (sy_sdk_inflight_add(&inst->inflight, c, job) != SY_OK) {
        sy_slurm_job_free(job);
        sy_sdk_slots_undo(&inst->slots);
        sy_sdk_errf(err, err_len, "cannot record the attempt");
        return SY_ENOMEM;
    }
    atomic_fetch_add(&inst->stats.submitted, 1);
    sy_slurm_loop_post(inst, job);
    return SY_OK;
}

static int slurm_submit(sy_instance *inst, const sy_task *task,
                        sy_completion *c, char *err, size_t err_len)
{
    return start(inst, task, c, SY_SLURM_NEW, err, err_len);
}

/* The attempt's job is looked up by name and comment in the loop's next
 * query (one for every job, as always), followed when found, submitted
 * when not. */
static int slurm_resume(sy_instance *inst, const sy_task *task,
                        sy_completion *c, char *err, size_t err_len)
{
    return start(inst, task, c, SY_SLURM_ADOPT, err, err_len);
}

static int slurm_cancel(sy_instance *inst, sy_completion *c)
{
    void *v = NULL;
    if (sy_sdk_inflight_take(&inst->inflight, c, &v) != SY_OK)
        return SY_ENOENT;
    sy_slurm_loop_post_cancel(inst, v);
    return SY_OK;
}

static int slurm_validate(sy_instance *inst, const sy_params *p,
                          const char *base_dir, char *err, size_t err_len)
{
    (void)base_dir;
    int rc = sy_slurm_task_check(inst->api, p, err, err_len);
    if (rc != SY_OK)
        return rc;
    const char *part = NULL;
    if (inst->api->param_string(p, "partition", &part) == SY_OK && part &&
        (!inst->set.req.partition || strcmp(part, inst->set.req.partition))) {
        char why[512];
        int e = sy_slurm_partition_exists(inst, part, why, sizeof why);
        if (e == 0) {
            sy_sdk_errf(err, err_len, "%s", why);
            return SY_EINVAL;
        }
    }
    return SY_OK;
}

static void slurm_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_slurm_stats *s = &inst->stats;
    int64_t done = 0;
    for (int i = 0; i < 5; i++)
        done += atomic_load(&s->by_outcome[i]);
    int64_t submitted = atomic_load(&s->submitted);
    emit(sink, "active", submitted - done);
    emit(sink, "queued", atomic_load(&s->pending));
    emit(sink, "running", atomic_load(&s->running));
    emit(sink, "capacity", slurm_capacity(inst));
    emit(sink, "submitted", submitted);
    emit(sink, "succeeded", atomic_load(&s->by_outcome[SY_OUTCOME_SUCCEEDED]));
    emit(sink, "failed", atomic_load(&s->by_outcome[SY_OUTCOME_FAILED]));
    emit(sink, "timed_out", atomic_load(&s->by_outcome[SY_OUTCOME_TIMED_OUT]));
    emit(sink, "cancelled", atomic_load(&s->by_outcome[SY_OUTCOME_CANCELLED]));
    emit(sink, "deferred", atomic_load(&s->by_outcome[SY_OUTCOME_DEFERRED]));
    emit(sink, "controller.requests", atomic_load(&s->requests));
    emit(sink, "controller.requests_per_minute", sy_slurm_stats_rpm(s));
    emit(sink, "controller.queries", atomic_load(&s->queries));
    emit(sink, "controller.accounting_queries",
         atomic_load(&s->acct_queries));
    emit(sink, "controller.poll_interval_ms", atomic_load(&s->poll_ms));
    emit(sink, "jobs.submitted", atomic_load(&s->sbatch));
    emit(sink, "jobs.adopted", atomic_load(&s->adopted));
    emit(sink, "jobs.lost", atomic_load(&s->lost));
}

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = "slurm",
    .version = "1.0.0",
    .description = "tasks as Slurm batch jobs: one job per attempt, one "
                   "squeue per interval for all of them",
    .instance_params = sy_slurm_instance_params,
    .task_params = sy_slurm_task_params,
    .create = slurm_create,
    .destroy = slurm_destroy,
    .capacity = slurm_capacity,
    .submit = slurm_submit,
    .cancel = slurm_cancel,
    .validate = slurm_validate,
    .metrics = slurm_metrics,
    .resume = slurm_resume,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
