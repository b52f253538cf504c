/*
 * state.c -- what a job's state means.
 *
 * The query gives each job's state (squeue's %T) and reason; the job's
 * own files give the rest: BASE.rc its command's exit status (written by
 * the job's wrapper, so it outlives the controller's memory of the job:
 * MinJobAge, no slurmdbd), BASE.out the output object, BASE.err the log.
 *
 *   COMPLETED                  succeeded; stdout is the output
 *   FAILED                     the exit code or the signal, and the tail
 *                              of stderr
 *   OUT_OF_MEMORY, TIMEOUT,
 *   DEADLINE                   failed (timed out), named
 *   NODE_FAIL, PREEMPTED,
 *   BOOT_FAIL                  deferred: not the task's fault, no attempt
 *                              charged
 *   CANCELLED                  cancelled when cancel() asked, else failed
 *                              (someone else cancelled it)
 *   anything else              still going
 *
 * A job the query no longer lists ends by its status file; without one,
 * it is looked up in accounting (accounting.c, one sacct for all such
 * jobs), or, with no accounting, asked after with `scontrol show job`, and
 * only after SY_SLURM_LOST_AFTER queries without it is it failed as lost:
 * "not found yet" is not "failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <switchyard/spawn.h>

#include "parse.h"
#include "slurm.h"

#define OUT_MAX ((size_t)64 * 1024 * 1024)
#define ERR_TAIL ((size_t)64 * 1024)

/* Reads up to `max` bytes of PATH (the last ones when tail), malloc'd and
 * NUL-terminated; NULL when absent.  *dropped: bytes left out. */
static char *read_file(const char *base, const char *ext, size_t max,
                       bool tail, size_t *len, size_t *dropped)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", base, ext);
    *len = 0;
    if (dropped)
        *dropped = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (size < 0)
        size = 0;
    size_t want = (size_t)size;
    if (want > max) {
        if (dropped)
            *dropped = want - max;
        if (tail)
            fseek(f, size - (long)max, SEEK_SET);
        else
            fseek(f, 0, SEEK_SET);
        want = max;
    } else {
        fseek(f, 0, SEEK_SET);
    }
    char *buf = malloc(want + 1);
    if (!buf) {
        fclose(f);
        return NULL;
    }
    *len = fread(buf, 1, want, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void remove_files(const char *base)
{
    static const char *const ext[] = {".in", ".out", ".err", ".rc", NULL};
    char path[4096];
    for (int i = 0; ext[i]; i++) {
        snprintf(path, sizeof path, "%s%s", base, ext[i]);
        unlink(path);
    }
}

/* The exit status the job's wrapper wrote, or -1. */
static int read_rc(const char *base)
{
    size_t len;
    char *s = read_file(base, ".rc", 64, false, &len, NULL);
    if (!s)
        return -1;
    int rc = len ? atoi(s) : -1;
    free(s);
    return rc;
}

/* The last line of stderr that is not empty, for the error text. */
static void last_lines(const char *err, size_t len, char *out, size_t cap)
{
    out[0] = '\0';
    if (!err || !len)
        return;
    size_t end = len;
    while (end > 0 && (err[end - 1] == '\n' || err[end - 1] == '\r'))
        end--;
    size_t start = end;
    int lines = 0;
    while (start > 0 && lines < 3) {
        if (err[start - 1] == '\n')
            lines++;
        if (lines < 3)
            start--;
    }
    size_t n = end - start;
    if (n >= cap)
        start = end - (n = cap - 1);
    memcpy(out, err + start, n);
    out[n] = '\0';
}

/* Ends `job` with outcome o and the message built from what, the job's
 * status and its files. */
static void end_with(sy_instance *inst, sy_slurm_job *job, sy_outcome o,
                     const char *what, int64_t retry_after_ms)
{
    size_t out_len = 0, err_len = 0, err_dropped = 0;
    char *out = NULL;
    if (o == SY_OUTCOME_SUCCEEDED)
        out = read_file(job->base, ".out", OUT_MAX, false, &out_len, NULL);
    char *err = read_file(job->base, ".err", ERR_TAIL, true, &err_len,
                          &err_dropped);
    char msg[2048] = "";
    if (o != SY_OUTCOME_SUCCEEDED) {
        char tail[1024];
        last_lines(err, err_len, tail, sizeof tail);
        snprintf(msg, sizeof msg, "job %ld: %s%s%s", job->job_id, what,
                 tail[0] ? "; stderr: " : "", tail);
    }
    char note[64];
    snprintf(note, sizeof note, "slurm job %ld", job->job_id);
    sy_result r = {.size = sizeof r, .outcome = o,
                   .output = out_len ? out : NULL, .output_len = out_len,
                   .error = msg[0] ? msg : NULL, .note = note,
                   .retry_after_ms = retry_after_ms,
                   .log_stderr = err, .log_stderr_len = err_len,
                   .log_stderr_dropped = err_dropped};
    char *base = job->base;
    job->base = NULL;
    /* the job is on the tracked list: take it off, then finish */
    for (sy_slurm_job **p = &inst->tracked; *p; p = &(*p)->next)
        if (*p == job) {
            *p = job->next;
            break;
        }
    sy_result copy = r;
    bool cancel_owned = job->cancel_wanted;
    if (!cancel_owned &&
        sy_sdk_inflight_take(&inst->inflight, job->c, NULL) != SY_OK) {
        /* cancel() holds it: keep the job for its cancel to end. */
        job->base = base;
        job->next = inst->tracked;
        inst->tracked = job;
        free(out);
        free(err);
        return;
    }
    if (cancel_owned && copy.outcome != SY_OUTCOME_CANCELLED) {
        copy.outcome = SY_OUTCOME_CANCELLED;
        copy.output = NULL;
        copy.output_len = 0;
    }
    atomic_fetch_add(&inst->stats.by_outcome[copy.outcome], 1);
    inst->api->complete(job->c, &copy);
    if (base)
        remove_files(base);
    free(base);
    free(out);
    free(err);
    sy_slurm_job_free(job);
    sy_sdk_slots_release(&inst->slots);
}

/* Ends the job from its exit status file (FAILED or COMPLETED). */
static void end_by_rc(sy_instance *inst, sy_slurm_job *job, int rc,
                      const char *state)
{
    char what[256];
    if (rc == 0) {
        end_with(inst, job, SY_OUTCOME_SUCCEEDED, "", 0);
        return;
    }
    if (rc > 128 && rc < 128 + 65)
        snprintf(what, sizeof what, "%s: killed by signal %d (%s)", state,
                 rc - 128, sy_spawn_signal_name(rc - 128));
    else if (rc > 0)
        snprintf(what, sizeof what, "%s: exited with status %d", state, rc);
    else
        snprintf(what, sizeof what, "%s: ended without an exit status (it "
                 "may not have started)", state);
    end_with(inst, job, SY_OUTCOME_FAILED, what, 0);
}

bool sy_slurm_state_seen(sy_instance *inst, sy_slurm_job *job,
                         const char *state, const char *reason)
{
    char what[512];
    if (job->cancel_wanted) {
        if (!strcmp(state, "PENDING") || !strcmp(state, "RUNNING") ||
            !strcmp(state, "CONFIGURING") || !strcmp(state, "COMPLETING") ||
            !strcmp(state, "SUSPENDED") || !strcmp(state, "REQUEUED") ||
            !strcmp(state, "RESIZING") || !strcmp(state, "SIGNALING") ||
            !strcmp(state, "STAGE_OUT"))
            return false;
        end_with(inst, job, SY_OUTCOME_CANCELLED, "cancelled (scancel)", 0);
        return true;
    }
    if (!strcmp(state, "COMPLETED")) {
        int rc = read_rc(job->base);
        end_by_rc(inst, job, rc < 0 ? 0 : rc, state);
        return true;
    }
    if (!strcmp(state, "FAILED")) {
        int rc = read_rc(job->base);
        end_by_rc(inst, job, rc < 0 ? job->acct_rc : rc, state);
        return true;
    }
    if (!strcmp(state, "OUT_OF_MEMORY")) {
        end_with(inst, job, SY_OUTCOME_FAILED,
                 "OUT_OF_MEMORY: the job went over its memory (mem)", 0);
        return true;
    }
    if (!strcmp(state, "TIMEOUT") || !strcmp(state, "DEADLINE")) {
        snprintf(what, sizeof what, "%s: the job reached its time limit",
                 state);
        end_with(inst, job, SY_OUTCOME_TIMED_OUT, what, 0);
        return true;
    }
    if (!strcmp(state, "NODE_FAIL") || !strcmp(state, "PREEMPTED") ||
        !strcmp(state, "BOOT_FAIL")) {
        snprintf(what, sizeof what, "%s (%s): not the task's failure, "
                 "submitted again without charging an attempt", state,
                 reason);
        end_with(inst, job, SY_OUTCOME_DEFERRED, what, 1000);
        return true;
    }
    if (!strcmp(state, "CANCELLED")) {
        end_with(inst, job, SY_OUTCOME_FAILED,
                 "CANCELLED outside switchyard (scancel by someone else)",
                 0);
        return true;
    }
    if (!strcmp(state, "REVOKED") || !strcmp(state, "SPECIAL_EXIT")) {
        snprintf(what, sizeof what, "%s (%s)", state, reason);
        end_with(inst, job, SY_OUTCOME_FAILED, what, 0);
        return true;
    }
    return false;
}

/* `scontrol show job ID`: its JobState, or "" when the controller does not
 * know the job any more. */
static void scontrol_state(sy_instance *inst, long id, char *state,
                           size_t cap)
{
    char ids[32], err[256];
    snprintf(ids, sizeof ids, "%ld", id);
    const char *argv[] = {"scontrol", "-o", "show", "job", ids, NULL};
    sy_spawn_result r;
    state[0] = '\0';
    if (sy_slurm_command(inst, argv, &r, err, sizeof err) != 0)
        return;
    if (sy_slurm_parse_job_state(r.out, state, cap) != 0)
        state[0] = '\0';
    sy_spawn_result_free(&r);
}

bool sy_slurm_state_missing(sy_instance *inst, sy_slurm_job *job)
{
    int rc = job->base ? read_rc(job->base) : -1;
    if (job->cancel_wanted && (rc >= 0 || job->misses >= 2)) {
        end_with(inst, job, SY_OUTCOME_CANCELLED, "cancelled (scancel)", 0);
        return true;
    }
    if (rc >= 0) {
        end_by_rc(inst, job, rc, rc ? "FAILED" : "COMPLETED");
        return true;
    }
    if (inst->set.accounting != SY_SLURM_ACCT_NONE && !inst->acct_off) {
        /* accounting.c asks sacct after it, with the others, this turn. */
        if (!job->missing_since_ms)
            job->missing_since_ms = sy_slurm_now_ms();
        job->lookup = true;
        return false;
    }
    if (job->misses < SY_SLURM_LOST_AFTER)
        return false;
    char state[64];
    scontrol_state(inst, job->job_id, state, sizeof state);
    if (state[0] && sy_slurm_state_seen(inst, job, state, "scontrol")) {
        return true;
    }
    if (state[0])
        return false;
    atomic_fetch_add(&inst->stats.lost, 1);
    end_with(inst, job, SY_OUTCOME_FAILED,
             "the controller no longer knows the job and it left no exit "
             "status (lost)", 0);
    return true;
}

void sy_slurm_state_lost(sy_instance *inst, sy_slurm_job *job,
                         const char *msg)
{
    end_with(inst, job, SY_OUTCOME_FAILED, msg, 0);
}

/* ---- the request window ---------------------------------------------------- */

void sy_slurm_stats_request(sy_slurm_stats *s)
{
    int64_t sec = sy_slurm_now_ms() / 1000;
    pthread_mutex_lock(&s->mu);
    size_t i = (size_t)(sec % 60);
    if (s->sec[i] != sec) {
        s->sec[i] = sec;
        s->cnt[i] = 0;
    }
    s->cnt[i]++;
    pthread_mutex_unlock(&s->mu);
}

int64_t sy_slurm_stats_rpm(sy_slurm_stats *s)
{
    int64_t sec = sy_slurm_now_ms() / 1000, n = 0;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < 60; i++)
        if (s->sec[i] > sec - 60)
            n += s->cnt[i];
    pthread_mutex_unlock(&s->mu);
    return n;
}
