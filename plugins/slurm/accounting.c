/*
 * accounting.c -- the jobs squeue no longer lists, looked up in
 * accounting.
 *
 * The controller forgets a job MinJobAge after its end; when that happens
 * before a query saw the end, and the job left no exit status file (it was
 * killed at its time limit, preempted, out of memory, or its files are on
 * a shared file system that has not caught up yet), only accounting
 * (slurmdbd, through sacct) says how it ended.  Each interval, after the
 * query, ONE sacct asks after every such job of the instance (at most
 * SY_SLURM_SACCT_MAX, the longest unasked first), so a thousand finished
 * jobs cost one request, not a thousand.
 *
 * sacct lags: slurmctld sends a job's end to slurmdbd when it can, and a
 * slurmdbd that is down or slow holds it for minutes.  A job that sacct
 * does not list yet is asked again each interval, and judged lost only
 * when neither the controller nor accounting has listed it for lost_after:
 * "not found yet" is not "failed".  A failing sacct judges nothing.
 *
 * Without slurmdbd (accounting = "auto" and sacct answering that the
 * accounting storage is disabled, or accounting = "none") the jobs are
 * asked after with scontrol, while the controller still knows them
 * (state.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/spawn.h>

#include "parse.h"
#include "slurm.h"

static int by_looked(const void *a, const void *b)
{
    const sy_slurm_job *x = *(sy_slurm_job *const *)a;
    const sy_slurm_job *y = *(sy_slurm_job *const *)b;
    return (x->looked_ms > y->looked_ms) - (x->looked_ms < y->looked_ms);
}

/* sacct's way of saying there is no accounting to ask. */
static bool no_accounting(const char *err)
{
    return strstr(err, "accounting storage is disabled") ||
           strstr(err, "not running a supported accounting_storage") ||
           strstr(err, "accounting_storage/none");
}

/* The job is still going by accounting: PENDING, RUNNING and the like. */
static bool still_going(const char *state)
{
    static const char *const live[] = {
        "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED",
        "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD",
        "REQUEUE_FED", NULL};
    for (int i = 0; live[i]; i++)
        if (!strcmp(state, live[i]))
            return true;
    return false;
}

/* Reads sacct's answer for the jobs in v[0..n): each one it lists ends or
 * is known alive (its slot becomes NULL); the rest stay. */
static void read_answer(sy_instance *inst, char *out, sy_slurm_job **v,
                        size_t n)
{
    for (char *line = out; *line;) {
        size_t len = strcspn(line, "\n");
        sy_slurm_acct_row row;
        int ok = sy_slurm_parse_sacct_line(line, len, &row);
        line += len + (line[len] == '\n');
        if (ok != 0)
            continue;
        size_t i = 0;
        while (i < n && !(v[i] && v[i]->job_id == row.id))
            i++;
        if (i == n)
            continue; /* not asked, or a second line of one job */
        sy_slurm_job *job = v[i];
        v[i] = NULL;
        job->lookup = false;
        if (still_going(row.state)) {
            /* Alive: the query missed it (a controller hiccup). */
            job->misses = 0;
            job->missing_since_ms = 0;
            continue;
        }
        if (row.exit_code >= 0)
            job->acct_rc = row.signal > 0 ? 128 + row.signal : row.exit_code;
        if (!sy_slurm_state_seen(inst, job, row.state, "sacct")) {
            /* A state this plugin does not know ends nothing: ask again. */
            job->lookup = true;
        }
    }
}

void sy_slurm_acct_lookup(sy_instance *inst)
{
    size_t n = 0;
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        n += j->lookup && j->job_id > 0;
    if (n == 0)
        return;
    sy_slurm_job **v = malloc(n * sizeof *v);
    if (!v)
        return; /* asked again next interval */
    size_t k = 0;
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        if (j->lookup && j->job_id > 0)
            v[k++] = j;
    qsort(v, n, sizeof *v, by_looked);
    if (n > SY_SLURM_SACCT_MAX)
        n = SY_SLURM_SACCT_MAX;
    sy_slurm_argv a = {0};
    int rc = SY_OK;
    static const char *const head[] = {"sacct", "-n", "-P", "-X", "-o",
                                       "JobIDRaw,State,ExitCode", "-j", NULL};
    for (int i = 0; head[i] && rc == SY_OK; i++)
        rc = sy_slurm_argv_add(&a, head[i]);
    char *ids = malloc(n * 20 + 1);
    if (rc != SY_OK || !ids) {
        free(ids);
        free(v);
        sy_slurm_argv_free(&a);
        return;
    }
    size_t o = 0;
    int64_t now = sy_slurm_now_ms();
    for (size_t i = 0; i < n; i++) {
        o += (size_t)sprintf(ids + o, "%s%ld", i ? "," : "", v[i]->job_id);
        v[i]->looked_ms = now;
    }
    rc = sy_slurm_argv_add(&a, ids);
    free(ids);
    sy_spawn_result r;
    char err[256];
    atomic_fetch_add(&inst->stats.acct_queries, 1);
    if (rc != SY_OK ||
        sy_slurm_command_v(inst, a.v, &r, err, sizeof err) != 0) {
        if (rc == SY_OK)
            inst->api->log(inst->host, SY_LOG_WARN, "sacct: %s", err);
        sy_slurm_argv_free(&a);
        free(v);
        return;
    }
    sy_slurm_argv_free(&a);
    if (!r.exited || r.exit_code != 0) {
        if (inst->set.accounting == SY_SLURM_ACCT_AUTO &&
            no_accounting(r.err)) {
            inst->acct_off = true;
            inst->api->log(inst->host, SY_LOG_INFO,
                           "no accounting (sacct: %.200s): jobs the "
                           "controller forgot end by their exit status "
                           "files", r.err);
            for (sy_slurm_job *j = inst->tracked; j; j = j->next)
                j->lookup = false;
        } else {
            inst->api->log(inst->host, SY_LOG_WARN, "sacct failed: %.300s",
                           r.err);
        }
        sy_spawn_result_free(&r);
        free(v);
        return;
    }
    read_answer(inst, r.out, v, n);
    sy_spawn_result_free(&r);
    /* Not listed yet: lost only once nobody listed it for lost_after. */
    now = sy_slurm_now_ms();
    for (size_t i = 0; i < n; i++) {
        sy_slurm_job *job = v[i];
        if (!job || now - job->missing_since_ms < inst->set.lost_after_ms)
            continue;
        atomic_fetch_add(&inst->stats.lost, 1);
        char msg[200];
        snprintf(msg, sizeof msg, "neither the controller nor accounting "
                 "(sacct) listed the job for %lld ms, and it left no exit "
                 "status (lost)", (long long)(now - job->missing_since_ms));
        sy_slurm_state_lost(inst, job, msg);
    }
    free(v);
}
