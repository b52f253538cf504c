/*
 * loop.c -- the slurm instance's one thread.
 *
 * Host threads reach it through two queues under q_mu and a condition
 * variable: submit() and resume() append the job, cancel() appends the job
 * whose completion it took.  Each turn the thread takes both queues,
 * submits the new jobs (sbatch, one each), sends one scancel for every job
 * cancelled, and, once per interval, runs ONE squeue for every job of the
 * instance, by name, whatever their number: the controller sees one query
 * per interval, not one per job.  A slow or failing query doubles the
 * interval up to max_poll_interval; max_requests_per_minute bounds the
 * queries from below.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <switchyard/spawn.h>

#include "parse.h"
#include "slurm.h"

int64_t sy_slurm_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sy_slurm_command(sy_instance *inst, const char *const *argv,
                     sy_spawn_result *r, char *err, size_t err_len)
{
    char prog[PATH_MAX];
    const char *args[64];
    size_t n = 0;
    for (; argv[n] && n + 1 < sizeof args / sizeof args[0]; n++)
        args[n] = argv[n];
    args[n] = NULL;
    if (inst->set.bin_dir) {
        snprintf(prog, sizeof prog, "%s/%s", inst->set.bin_dir, argv[0]);
        args[0] = prog;
    }
    char conf[PATH_MAX + 16];
    const char *env[2] = {NULL, NULL};
    if (inst->set.slurm_conf) {
        snprintf(conf, sizeof conf, "SLURM_CONF=%s", inst->set.slurm_conf);
        env[0] = conf;
    }
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv == args ? argv : args);
    o.env = env;
    o.timeout_ms = inst->set.command_ms;
    o.kill_grace_ms = 1000;
    atomic_fetch_add(&inst->stats.requests, 1);
    sy_slurm_stats_request(&inst->stats);
    return sy_spawn_run(&o, r, err, err_len);
}

int sy_slurm_command_v(sy_instance *inst, char **argv, sy_spawn_result *r,
                       char *err, size_t err_len)
{
    char prog[PATH_MAX];
    char *first = argv[0];
    if (inst->set.bin_dir) {
        snprintf(prog, sizeof prog, "%s/%s", inst->set.bin_dir, first);
        argv[0] = prog;
    }
    char conf[PATH_MAX + 16];
    const char *env[2] = {NULL, NULL};
    if (inst->set.slurm_conf) {
        snprintf(conf, sizeof conf, "SLURM_CONF=%s", inst->set.slurm_conf);
        env[0] = conf;
    }
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, (const char *const *)argv);
    o.env = env;
    o.timeout_ms = inst->set.command_ms;
    o.kill_grace_ms = 1000;
    atomic_fetch_add(&inst->stats.requests, 1);
    sy_slurm_stats_request(&inst->stats);
    int rc = sy_spawn_run(&o, r, err, err_len);
    argv[0] = first;
    return rc;
}

/* ---- jobs ------------------------------------------------------------------ */

void sy_slurm_job_free(sy_slurm_job *job)
{
    sy_slurm_argv_free(&job->argv);
    sy_spawn_result_free(&job->sub_res);
    free(job->base);
    free(job);
}

/* True when it completed the attempt and freed the job; false when
 * cancel() holds the completion and has not reached the loop yet (the job
 * stays where it is, and the cancel finishes it). */
static bool job_finish(sy_instance *inst, sy_slurm_job *job, sy_result *r)
{
    if (!job->cancel_wanted &&
        sy_sdk_inflight_take(&inst->inflight, job->c, NULL) != SY_OK)
        return false;
    if (job->cancel_wanted && r->outcome != SY_OUTCOME_CANCELLED) {
        r->outcome = SY_OUTCOME_CANCELLED;
        r->output = NULL;
        r->output_len = 0;
    }
    int o = r->outcome >= 0 && r->outcome <= SY_OUTCOME_DEFERRED
                ? r->outcome : SY_OUTCOME_FAILED;
    atomic_fetch_add(&inst->stats.by_outcome[o], 1);
    inst->api->complete(job->c, r);
    sy_slurm_job_free(job);
    sy_sdk_slots_release(&inst->slots);
    return true;
}

void sy_slurm_job_finish(sy_instance *inst, sy_slurm_job *job,
                         const sy_result *r)
{
    sy_result copy = *r;
    job_finish(inst, job, &copy);
}

static void unlink_tracked(sy_instance *inst, sy_slurm_job *job)
{
    for (sy_slurm_job **p = &inst->tracked; *p; p = &(*p)->next)
        if (*p == job) {
            *p = job->next;
            return;
        }
}

void sy_slurm_end_job(sy_instance *inst, sy_slurm_job *job, sy_outcome o,
                    const char *msg, int64_t retry_after_ms)
{
    sy_result r = {.size = sizeof r, .outcome = o, .error = msg,
                   .retry_after_ms = retry_after_ms};
    unlink_tracked(inst, job);
    if (!job_finish(inst, job, &r)) {
        job->next = inst->tracked;
        inst->tracked = job;
    }
}

void sy_slurm_track(sy_instance *inst, sy_slurm_job *job)
{
    job->next = inst->tracked;
    inst->tracked = job;
}

/* ---- cancel ------------------------------------------------------------------ */

/* One scancel for every cancelled job whose id is known. */
static void send_scancel(sy_instance *inst)
{
    sy_slurm_argv a = {0};
    sy_slurm_argv_add(&a, "scancel");
    size_t n = 0;
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        if (j->phase == SY_SLURM_CANCELLING && j->job_id > 0 &&
            !j->scancel_sent) {
            sy_slurm_argv_addf(&a, "%ld", j->job_id);
            j->scancel_sent = true;
            n++;
        }
    if (n > 0) {
        sy_spawn_result r;
        char err[256];
        if (sy_slurm_command_v(inst, a.v, &r, err, sizeof err) == 0)
            sy_spawn_result_free(&r);
        else
            inst->api->log(inst->host, SY_LOG_WARN, "scancel: %s", err);
    }
    sy_slurm_argv_free(&a);
}

/* ---- the query ------------------------------------------------------------------ */

static sy_slurm_job *find_by_id(sy_instance *inst, long id)
{
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        if (j->job_id == id)
            return j;
    return NULL;
}

/* An attempt to resume may have more than one job of its name (one that
 * ended NODE_FAIL or PREEMPTED, deferred, and the one submitted again
 * under the same attempt number): it takes the newest, the one with the
 * highest id, before the lines are read.  `out` is squeue's answer,
 * left unchanged. */
static void adopt_newest(sy_instance *inst, const char *out)
{
    for (const char *line = out; *line;) {
        size_t len = strcspn(line, "\n");
        char *copy = strndup(line, len);
        line += len + (line[len] == '\n');
        sy_slurm_squeue_row row;
        if (!copy || sy_slurm_parse_squeue_line(copy, &row) != 0) {
            free(copy);
            continue;
        }
        for (sy_slurm_job *j = inst->tracked; j; j = j->next)
            if (j->phase != SY_SLURM_TRACKED && !j->submitting &&
                j->job_id <= 0 && !strcmp(j->name, row.name) &&
                !strcmp(j->comment, row.comment) && row.id > j->newest)
                j->newest = row.id;
        free(copy);
    }
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        if (j->newest > 0 && j->job_id <= 0) {
            j->job_id = j->newest;
            atomic_fetch_add(&inst->stats.adopted, 1);
            inst->api->log(inst->host, SY_LOG_INFO,
                           "attempt %u of %s: adopted job %ld",
                           j->task->attempt, j->task->ns, j->job_id);
            if (j->phase == SY_SLURM_ADOPT)
                j->phase = SY_SLURM_TRACKED;
        }
}

/* Returns 0 when the query ran and was read. */
static int query(sy_instance *inst)
{
    if (!inst->tracked)
        return 0;
    sy_slurm_argv a = {0};
    sy_slurm_argv_add(&a, "squeue");
    sy_slurm_argv_add(&a, "-h");
    sy_slurm_argv_add(&a, "-t");
    sy_slurm_argv_add(&a, "all");
    sy_slurm_argv_add(&a, "-o");
    sy_slurm_argv_add(&a, "%i|%j|%T|%r|%k");
    /* Names, comma-separated: ours hold no comma. */
    size_t len = 8, n_names = 0;
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        if (!j->submitting) {
            len += strlen(j->name) + 1;
            n_names++;
        }
    if (n_names == 0) {
        sy_slurm_argv_free(&a);
        return 0;
    }
    char *names = malloc(len);
    if (!names) {
        sy_slurm_argv_free(&a);
        return -1;
    }
    strcpy(names, "--name=");
    for (sy_slurm_job *j = inst->tracked; j; j = j->next) {
        if (j->submitting)
            continue;
        if (names[7])
            strcat(names, ",");
        strcat(names, j->name);
    }
    sy_slurm_argv_add(&a, names);
    free(names);
    sy_spawn_result r;
    char err[256];
    atomic_fetch_add(&inst->stats.queries, 1);
    int rc = sy_slurm_command_v(inst, a.v, &r, err, sizeof err);
    sy_slurm_argv_free(&a);
    if (rc != 0) {
        inst->api->log(inst->host, SY_LOG_WARN, "squeue: %s", err);
        return -1;
    }
    if (!r.exited || r.exit_code != 0) {
        inst->api->log(inst->host, SY_LOG_WARN, "squeue failed: %.300s",
                       r.err);
        sy_spawn_result_free(&r);
        return -1;
    }
    adopt_newest(inst, r.out);
    /* Mark every job unseen, then read the lines. */
    for (sy_slurm_job *j = inst->tracked; j; j = j->next)
        j->misses++;
    int64_t pending = 0, running = 0;
    char *save = NULL;
    for (char *line = strtok_r(r.out, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        sy_slurm_squeue_row row;
        if (sy_slurm_parse_squeue_line(line, &row) != 0)
            continue;
        long id = row.id;
        sy_slurm_job *job = find_by_id(inst, id);
        if (!job)
            continue; /* not ours, or an older job of an adopted name */
        job->misses = 0;
        job->missing_since_ms = 0;
        job->lookup = false;
        if (strcmp(row.state, "PENDING") == 0)
            pending++;
        else if (strcmp(row.state, "RUNNING") == 0)
            running++;
        if (sy_slurm_state_seen(inst, job, row.state, row.reason)) {
            /* completed and freed by state.c through sy_slurm_job_finish */
        }
    }
    sy_spawn_result_free(&r);
    atomic_store(&inst->stats.pending, pending);
    atomic_store(&inst->stats.running, running);
    /* The ones the query did not list. */
    sy_slurm_job *next;
    for (sy_slurm_job *j = inst->tracked; j; j = next) {
        next = j->next;
        if (j->submitting)
            j->misses = 0;
        if (j->misses == 0)
            continue;
        if (j->job_id <= 0) {
            /* An attempt to resume with no job: none was made.  Submit it
             * now (or end it, when cancelled meanwhile). */
            unlink_tracked(inst, j);
            if (j->phase == SY_SLURM_CANCELLING) {
                sy_slurm_track(inst, j);
                sy_slurm_end_job(inst, j, SY_OUTCOME_CANCELLED,
                        "cancelled before its job was made", 0);
            } else {
                j->phase = SY_SLURM_NEW;
                sy_slurm_submit_job(inst, j);
            }
            continue;
        }
        sy_slurm_state_missing(inst, j);
    }
    /* One sacct for the jobs the query missed that left no status. */
    sy_slurm_acct_lookup(inst);
    return 0;
}

/* ---- the thread ------------------------------------------------------------------ */

static void *loop_main(void *arg)
{
    sy_instance *inst = arg;
    for (;;) {
        pthread_mutex_lock(&inst->q_mu);
        while (!inst->stopping && !inst->q_head && !inst->cancel_head &&
               !inst->done_head) {
            if (!inst->tracked) {
                pthread_cond_wait(&inst->q_cond, &inst->q_mu);
                continue;
            }
            int64_t now = sy_slurm_now_ms();
            if (now >= inst->next_query_ms)
                break;
            int64_t wait = inst->next_query_ms - now;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += wait / 1000;
            ts.tv_nsec += (wait % 1000) * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&inst->q_cond, &inst->q_mu, &ts);
        }
        sy_slurm_job *fresh = inst->q_head, *cancels = inst->cancel_head;
        sy_slurm_job *done = inst->done_head;
        inst->q_head = inst->q_tail = NULL;
        inst->cancel_head = NULL;
        inst->done_head = NULL;
        bool stopping = inst->stopping;
        /* What cancel() asked is seen here, under the lock. */
        for (sy_slurm_job *j = cancels; j; j = j->cancel_next)
            j->cancel_wanted = true;
        pthread_mutex_unlock(&inst->q_mu);

        bool was_idle = inst->tracked == NULL;
        sy_slurm_submit_results(inst, done);
        sy_slurm_job *next;
        for (sy_slurm_job *j = fresh; j; j = next) {
            next = j->next;
            if (j->cancel_wanted)
                continue; /* its cancel below ends it */
            if (j->phase == SY_SLURM_ADOPT)
                sy_slurm_track(inst, j); /* the next query looks for it */
            else if (!stopping)
                sy_slurm_submit_job(inst, j);
            else
                sy_slurm_track(inst, j);
        }
        bool soon = false;
        for (sy_slurm_job *j = cancels; j; j = next) {
            next = j->cancel_next;
            bool on_list = false;
            for (sy_slurm_job *t = inst->tracked; t; t = t->next)
                on_list |= t == j;
            if (!on_list) {
                /* Never submitted: nothing runs. */
                sy_result r = {.size = sizeof r,
                               .outcome = SY_OUTCOME_CANCELLED,
                               .error = "cancelled before its job was "
                                        "submitted"};
                job_finish(inst, j, &r);
                continue;
            }
            j->phase = SY_SLURM_CANCELLING;
            soon = true;
        }
        if (done && !soon)
            send_scancel(inst); /* jobs cancelled while being submitted */
        if (soon) {
            send_scancel(inst);
            /* Confirm it shortly, within max_requests_per_minute. */
            int64_t t = sy_slurm_now_ms() + 200;
            int64_t floor_t = inst->last_query_ms + 60000 / inst->set.max_rpm;
            if (t < floor_t)
                t = floor_t;
            if (t < inst->next_query_ms)
                inst->next_query_ms = t;
        }
        if (was_idle && inst->tracked) {
            int64_t t = sy_slurm_now_ms() + inst->set.poll_ms;
            int64_t floor_t = inst->last_query_ms + 60000 / inst->set.max_rpm;
            inst->next_query_ms = t > floor_t ? t : floor_t;
        }
        if (stopping) {
            /* destroy(): the host completed everything; end what is left
             * (a plugin bug) without a word to the controller. */
            while (inst->tracked) {
                sy_slurm_job *j = inst->tracked;
                sy_slurm_end_job(inst, j, SY_OUTCOME_CANCELLED, "instance destroyed",
                        0);
                if (inst->tracked == j) {
                    inst->tracked = j->next;
                    sy_slurm_job_free(j);
                }
            }
            break;
        }
        if (inst->tracked && sy_slurm_now_ms() >= inst->next_query_ms) {
            int64_t t0 = sy_slurm_now_ms();
            int rc = query(inst);
            inst->last_query_ms = t0;
            int64_t took = sy_slurm_now_ms() - t0;
            if (rc != 0 || took > SY_SLURM_SLOW_QUERY_MS) {
                inst->interval_ms *= 2;
                if (inst->interval_ms > inst->set.max_poll_ms)
                    inst->interval_ms = inst->set.max_poll_ms;
            } else {
                inst->interval_ms = inst->set.poll_ms;
            }
            int64_t floor_ms = 60000 / inst->set.max_rpm;
            int64_t iv = inst->interval_ms > floor_ms ? inst->interval_ms
                                                      : floor_ms;
            atomic_store(&inst->stats.poll_ms, iv);
            inst->next_query_ms = sy_slurm_now_ms() + iv;
            bool cancelling = false;
            for (sy_slurm_job *j = inst->tracked; j; j = j->next)
                cancelling |= j->phase == SY_SLURM_CANCELLING;
            if (cancelling) {
                send_scancel(inst);
                int64_t t = sy_slurm_now_ms() + 500;
                if (t < t0 + floor_ms)
                    t = t0 + floor_ms;
                if (t < inst->next_query_ms)
                    inst->next_query_ms = t;
            }
        }
    }
    return NULL;
}

int sy_slurm_loop_start(sy_instance *inst, char *err, size_t err_len)
{
    inst->interval_ms = inst->set.poll_ms;
    atomic_store(&inst->stats.poll_ms, inst->set.poll_ms);
    if (sy_slurm_submit_start(inst, err, err_len) != SY_OK)
        return SY_EINTERNAL;
    int rc = pthread_create(&inst->thread, NULL, loop_main, inst);
    if (rc != 0) {
        sy_slurm_submit_stop(inst);
        sy_sdk_errf(err, err_len, "cannot start the plugin's thread: %s",
                    strerror(rc));
        return SY_EINTERNAL;
    }
    inst->thread_started = true;
    return SY_OK;
}

void sy_slurm_loop_stop(sy_instance *inst)
{
    if (!inst->thread_started)
        return;
    /* The submitter first: the loop then takes back what it answered. */
    sy_slurm_submit_stop(inst);
    pthread_mutex_lock(&inst->q_mu);
    inst->stopping = true;
    pthread_cond_signal(&inst->q_cond);
    pthread_mutex_unlock(&inst->q_mu);
    pthread_join(inst->thread, NULL);
    inst->thread_started = false;
}

void sy_slurm_loop_post(sy_instance *inst, sy_slurm_job *job)
{
    pthread_mutex_lock(&inst->q_mu);
    job->next = NULL;
    if (inst->q_tail)
        inst->q_tail->next = job;
    else
        inst->q_head = job;
    inst->q_tail = job;
    pthread_cond_signal(&inst->q_cond);
    pthread_mutex_unlock(&inst->q_mu);
}

void sy_slurm_loop_post_cancel(sy_instance *inst, sy_slurm_job *job)
{
    pthread_mutex_lock(&inst->q_mu);
    job->cancel_next = inst->cancel_head;
    inst->cancel_head = job;
    pthread_cond_signal(&inst->q_cond);
    pthread_mutex_unlock(&inst->q_mu);
}
