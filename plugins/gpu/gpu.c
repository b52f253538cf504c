/*
 * gpu.c -- the `gpu` executor: command tasks that need GPUs, queued and
 * placed on whole devices (or sharing one by memory), with NVML health
 * watching that drains a broken device and requeues its task unchanged.
 *
 * Capacity: an instance holds at most queue_length attempts, waiting or
 * running; capacity() answers the free places, so the host keeps the rest
 * Ready.  submit() only queues (it never waits: the instance's thread in
 * loop.c places and starts); a task that could never be placed here (more
 * GPUs than match) is refused with the reason.
 *
 * Commands run with switchyard/spawn.h, as the thread plugin's do: no
 * shell, the input context on stdin, stdout as the output object, the
 * attempt's SWITCHYARD_* variables, and the devices' UUIDs in
 * CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES and SWITCHYARD_GPU_UUIDS.
 *
 * Cancel: a queued attempt completes CANCELLED from inside cancel(); a
 * running one gets SIGTERM on its process group, SIGKILL after
 * kill_grace, and completes CANCELLED.  A critical Xid or a double-bit
 * ECC error stops the attempt the same way, but completes it DEFERRED
 * (not charged) with the device, the Xid and the time as its note.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "gpu.h"

static void gpu_destroy(sy_instance *inst)
{
    if (!inst)
        return;
    sy_gpu_loop_stop(inst);
    /* Every attempt has completed (the host waits for that); their threads
     * may still be returning: join them all. */
    for (;;) {
        pthread_mutex_lock(&inst->mu);
        sy_gpu_job *left = inst->sched.nr ? inst->sched.run[0]->owner : NULL;
        pthread_mutex_unlock(&inst->mu);
        if (!left)
            break;
        if (left->has_thread) {
            pthread_join(left->thread, NULL);
            left->has_thread = false;
        }
        pthread_mutex_lock(&inst->mu);
        sy_gs_release(&inst->sched, &left->gs);
        pthread_mutex_unlock(&inst->mu);
    }
    sy_gpu_reap(inst);
    sy_gs_fini(&inst->sched);
    sy_nvml_close(inst->nvml);
    pthread_cond_destroy(&inst->cond);
    pthread_mutex_destroy(&inst->mu);
    free(inst->control_file);
    free(inst);
}

static int init_sync(sy_instance *inst)
{
    pthread_condattr_t ca;
    if (pthread_mutex_init(&inst->mu, NULL) != 0)
        return -1;
    if (pthread_condattr_init(&ca) != 0 ||
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&inst->cond, &ca) != 0) {
        pthread_mutex_destroy(&inst->mu);
        return -1;
    }
    pthread_condattr_destroy(&ca);
    return 0;
}

static void describe_devices(sy_instance *inst)
{
    size_t n = sy_nvml_count(inst->nvml);
    if (!n) {
        inst->api->log(inst->host, SY_LOG_WARN, "no GPU: %s",
                       sy_nvml_reason(inst->nvml));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const sy_nvml_dev_info *d = sy_nvml_dev(inst->nvml, i);
        /* Which errors can drain it: an operator must know a device
         * NVML refuses to report on. */
        const char *health = d->watched == (SY_NVML_EVENT_XID | SY_NVML_EVENT_DBE)
                                 ? "Xid and ECC watched"
                             : d->watched == SY_NVML_EVENT_XID ? "Xid watched, ECC not"
                             : d->watched == SY_NVML_EVENT_DBE ? "ECC watched, Xid not"
                                                               : "unwatched";
        if (d->mig_instance >= 0)
            inst->api->log(inst->host, SY_LOG_INFO, "GPU %u MIG %d: %s %s, "
                           "%lld MiB, island %d, %s", d->index, d->mig_instance,
                           d->uuid, d->name, (long long)d->mem_mib,
                           d->island, health);
        else
            inst->api->log(inst->host, SY_LOG_INFO, "GPU %u: %s %s, %lld "
                           "MiB, MIG %s, island %d, %s", d->index, d->uuid,
                           d->name, (long long)d->mem_mib, d->mig == 1 ?
                           "on" : d->mig == 0 ? "off" : "unknown",
                           d->island, health);
        sy_gs_dev *g = &inst->sched.dev[i];
        g->island = d->island;
        g->mem_mib = d->mem_mib;
        g->model = d->name;
    }
    if (!sy_nvml_watching(inst->nvml))
        inst->api->log(inst->host, SY_LOG_WARN, "NVML events are not "
                       "available: Xid and ECC errors will not drain "
                       "devices");
}

static int setup(sy_instance *inst, const sy_params *config, char *err,
                 size_t err_len)
{
    const char **only = NULL, *library = NULL;
    size_t n_only = 0;
    int rc = sy_gpu_settings(inst, config, &only, &n_only, &library, err,
                             err_len);
    if (rc == SY_OK)
        rc = sy_gpu_wait_bounds(inst, config, err, err_len);
    if (rc == SY_OK && !(inst->nvml = sy_nvml_open(library, only, n_only,
                                                     inst->mig))) {
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
    }
    free(only);
    if (rc != SY_OK)
        return rc;
    if (sy_gs_init(&inst->sched, (int)sy_nvml_count(inst->nvml),
                   (size_t)inst->queue_length) != 0) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    describe_devices(inst);
    return sy_gpu_loop_start(inst, err, err_len);
}

static int gpu_create(const sy_host_api *api, sy_host *host,
                      const sy_params *config, sy_instance **out, char *err,
                      size_t err_len)
{
    if (!api || !out || !config) {
        sy_sdk_errf(err, err_len, "create() needs the host api, the settings "
                    "and an out pointer");
        return SY_EINVAL;
    }
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst || init_sync(inst) != 0) {
        free(inst);
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    inst->api = api;
    inst->host = host;
    int rc = setup(inst, config, err, err_len);
    if (rc != SY_OK) {
        gpu_destroy(inst);
        return rc;
    }
    *out = inst;
    return SY_OK;
}

static int64_t gpu_capacity(sy_instance *inst)
{
    pthread_mutex_lock(&inst->mu);
    int64_t free_places = inst->queue_length - inst->active;
    pthread_mutex_unlock(&inst->mu);
    return free_places > 0 ? free_places : 0;
}

static int gpu_submit(sy_instance *inst, const sy_task *task,
                      sy_completion *c, char *err, size_t err_len)
{
    if (!task || !SY_HAS_FIELD(task, sy_task, base_dir) || !task->params) {
        sy_sdk_errf(err, err_len, "the task lacks fields this executor needs "
                    "(a host older than ABI 1.0?)");
        return SY_EINVAL;
    }
    sy_gpu_spec spec;
    int rc = sy_gpu_spec_parse(inst, task->params, &spec, err, err_len);
    if (rc != SY_OK)
        return rc;
    sy_gpu_job *job = sy_gpu_job_new(inst, task, c, &spec);
    if (!job) {
        sy_sdk_errf(err, err_len, "cannot set up the attempt: out of memory "
                    "or descriptors");
        return SY_EIO;
    }
    char why[256];
    pthread_mutex_lock(&inst->mu);
    if (!sy_nvml_count(inst->nvml)) {
        sy_sdk_errf(err, err_len, "no GPU on this instance: %s",
                    sy_nvml_reason(inst->nvml));
        rc = SY_EINVAL;
    } else if (!sy_gs_feasible(&inst->sched, &job->gs, why, sizeof why)) {
        sy_sdk_errf(err, err_len, "%s", why);
        rc = SY_EINVAL;
    } else if (inst->active >= inst->queue_length ||
               sy_gs_enqueue(&inst->sched, &job->gs, sy_gpu_now_ms()) != 0) {
        rc = SY_EBUSY;
    } else {
        inst->active++;
        inst->submitted++;
        job->next = inst->jobs;
        if (inst->jobs)
            inst->jobs->prev = job;
        inst->jobs = job;
        inst->kick = true;
        pthread_cond_signal(&inst->cond);
    }
    pthread_mutex_unlock(&inst->mu);
    if (rc != SY_OK)
        sy_gpu_job_free(job);
    return rc;
}

static int gpu_cancel(sy_instance *inst, sy_completion *c)
{
    pthread_mutex_lock(&inst->mu);
    sy_gpu_job *job = inst->jobs;
    while (job && job->c != c)
        job = job->next;
    if (!job) {
        pthread_mutex_unlock(&inst->mu);
        return SY_ENOENT;
    }
    bool queued = sy_gs_remove(&inst->sched, &job->gs);
    if (!queued) {
        atomic_store(&job->cancelled, 1);
        sy_gpu_job_interrupt(job);
    }
    pthread_mutex_unlock(&inst->mu);
    if (queued)
        sy_gpu_job_finish_unstarted(job, SY_OUTCOME_CANCELLED,
                                    "cancelled while waiting for GPUs");
    return SY_OK;
}

static int gpu_validate(sy_instance *inst, const sy_params *task_params,
                        const char *base_dir, char *err, size_t err_len)
{
    (void)base_dir;
    sy_gpu_spec spec;
    int rc = sy_gpu_spec_parse(inst, task_params, &spec, err, err_len);
    if (rc != SY_OK || !sy_nvml_count(inst->nvml))
        return rc;
    /* A task no set of devices here can hold is a configuration error.
     * Without any device the check is left to submit(): a workflow file
     * is also checked on machines that only define it. */
    sy_gs_job j = {.gpus = spec.gpus, .mem_mib = spec.mem_mib,
                   .model = spec.model};
    pthread_mutex_lock(&inst->mu);
    bool ok = sy_gs_feasible(&inst->sched, &j, err, err_len);
    pthread_mutex_unlock(&inst->mu);
    return ok ? SY_OK : SY_EINVAL;
}

static const sy_executor gpu_executor = {
    SY_EXECUTOR_V1,
    .name = "gpu",
    .version = "1.0.0",
    .description = "command tasks on GPUs: a queue with best-fit placement, "
                   "backfill and health drains",
    .instance_params = sy_gpu_instance_params,
    .task_params = sy_gpu_task_params,
    .create = gpu_create,
    .destroy = gpu_destroy,
    .capacity = gpu_capacity,
    .submit = gpu_submit,
    .cancel = gpu_cancel,
    .validate = gpu_validate,
    .metrics = sy_gpu_metrics,
};

SY_EXPORT const sy_executor *sy_executor_entry(void)
{
    return &gpu_executor;
}
