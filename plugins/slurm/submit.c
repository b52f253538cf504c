/*
 * submit.c -- sbatch, off the loop.
 *
 * The loop thread prepares each new job (its input file, its sbatch
 * command line), keeps it on the tracked list marked `submitting`, and
 * hands it to the instance's submitter threads (max_submitting of them:
 * that many sbatch at once, each waiting on the controller's answer), one
 * of which runs sbatch through sy_spawn_run and hands the job back with
 * the result.  The loop then
 * reads the job id, or ends the attempt: failed with the controller's
 * message, or deferred when the controller refused it for a limit of jobs
 * (MaxSubmitJobs, MaxJobCount) or could not be reached.  So a slow sbatch
 * never holds up the query of the jobs already in flight, nor a cancel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/spawn.h>

#include "parse.h"
#include "slurm.h"

/* The controller refusing more jobs for now (MaxSubmitJobs and kin, or a
 * busy controller) is backpressure, not the task's failure. */
static bool is_backpressure(const char *msg)
{
    static const char *const pats[] = {
        "MaxSubmit", "submit limit", "temporarily", "Resource temporarily",
        "Socket timed out", "Unable to contact slurm controller",
        "Slurm backup controller in standby mode", "MaxJobCount", NULL};
    for (int i = 0; pats[i]; i++)
        if (strstr(msg, pats[i]))
            return true;
    return false;
}

void sy_slurm_submit_job(sy_instance *inst, sy_slurm_job *job)
{
    char err[1024] = "";
    int rc = sy_slurm_sbatch_argv(inst, job, &job->argv, err, sizeof err);
    sy_slurm_track(inst, job);
    if (rc != SY_OK) {
        sy_slurm_argv_free(&job->argv);
        sy_slurm_end_job(inst, job, SY_OUTCOME_FAILED, err, 0);
        return;
    }
    job->submitting = true;
    pthread_mutex_lock(&inst->q_mu);
    job->sub_next = NULL;
    if (inst->sub_tail)
        inst->sub_tail->sub_next = job;
    else
        inst->sub_head = job;
    inst->sub_tail = job;
    pthread_cond_signal(&inst->sub_cond);
    pthread_mutex_unlock(&inst->q_mu);
}

/* On the loop: what sbatch answered for `job`. */
static void submitted(sy_instance *inst, sy_slurm_job *job)
{
    job->submitting = false;
    sy_slurm_argv_free(&job->argv);
    atomic_fetch_add(&inst->stats.sbatch, 1);
    char msg[1200];
    if (job->sub_rc != 0) {
        snprintf(msg, sizeof msg, "sbatch did not run: %s", job->sub_err);
        sy_slurm_end_job(inst, job, SY_OUTCOME_DEFERRED, msg,
                         inst->set.submit_retry_ms);
        return;
    }
    sy_spawn_result *r = &job->sub_res;
    long id = 0;
    if (r->exited && r->exit_code == 0 &&
        sy_slurm_parse_sbatch(r->out, &id) != 0) {
        /* Submitted, maybe, but under an id we cannot read: a later
         * query finds the job by its name if it exists. */
        inst->api->log(inst->host, SY_LOG_WARN,
                       "sbatch printed no job id: %.200s", r->out);
        id = 0;
    }
    if (id > 0) {
        job->job_id = id;
        if (job->phase != SY_SLURM_CANCELLING)
            job->phase = SY_SLURM_TRACKED;
        sy_spawn_result_free(r);
        return;
    }
    const char *p = strstr(r->err, "error: ");
    snprintf(msg, sizeof msg, "the controller refused the job: %s",
             p ? p + 7 : r->err);
    sy_sdk_one_line(msg);
    bool defer = is_backpressure(r->err) || r->timed_out;
    sy_spawn_result_free(r);
    if (job->phase == SY_SLURM_CANCELLING) {
        sy_slurm_end_job(inst, job, SY_OUTCOME_CANCELLED,
                         "cancelled; its job was refused anyway", 0);
        return;
    }
    sy_slurm_end_job(inst, job,
                     defer ? SY_OUTCOME_DEFERRED : SY_OUTCOME_FAILED, msg,
                     defer ? inst->set.submit_retry_ms : 0);
}

void sy_slurm_submit_results(sy_instance *inst, sy_slurm_job *list)
{
    sy_slurm_job *next;
    for (sy_slurm_job *j = list; j; j = next) {
        next = j->sub_next;
        submitted(inst, j);
    }
}

static void *submitter_main(void *arg)
{
    sy_instance *inst = arg;
    pthread_mutex_lock(&inst->q_mu);
    for (;;) {
        while (!inst->sub_stopping && !inst->sub_head)
            pthread_cond_wait(&inst->sub_cond, &inst->q_mu);
        sy_slurm_job *job = inst->sub_head;
        if (!job)
            break;
        inst->sub_head = job->sub_next;
        if (!inst->sub_head)
            inst->sub_tail = NULL;
        pthread_mutex_unlock(&inst->q_mu);
        job->sub_rc = sy_slurm_command_v(inst, job->argv.v, &job->sub_res,
                                         job->sub_err, sizeof job->sub_err);
        pthread_mutex_lock(&inst->q_mu);
        job->sub_next = inst->done_head;
        inst->done_head = job;
        pthread_cond_signal(&inst->q_cond);
    }
    pthread_mutex_unlock(&inst->q_mu);
    return NULL;
}

int sy_slurm_submit_start(sy_instance *inst, char *err, size_t err_len)
{
    for (int i = 0; i < inst->set.max_submitting; i++) {
        int rc = pthread_create(&inst->sub_thread[i], NULL, submitter_main,
                                inst);
        if (rc != 0) {
            sy_slurm_submit_stop(inst);
            sy_sdk_errf(err, err_len, "cannot start the submitter "
                        "threads: %s", strerror(rc));
            return SY_EINTERNAL;
        }
        inst->sub_started = i + 1;
    }
    return SY_OK;
}

void sy_slurm_submit_stop(sy_instance *inst)
{
    if (!inst->sub_started)
        return;
    pthread_mutex_lock(&inst->q_mu);
    inst->sub_stopping = true;
    pthread_cond_broadcast(&inst->sub_cond);
    pthread_mutex_unlock(&inst->q_mu);
    for (int i = 0; i < inst->sub_started; i++)
        pthread_join(inst->sub_thread[i], NULL);
    inst->sub_started = 0;
}
