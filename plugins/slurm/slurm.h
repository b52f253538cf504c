/*
 * slurm.h -- the slurm executor's internals, shared by its files.
 *
 *   slurm.c      the descriptor, create/destroy, capacity, submit, resume,
 *                cancel, validate, metrics
 *   settings.c   instance settings and task parameters, and the sbatch
 *                command line of one attempt
 *   loop.c       the plugin's thread: the queues from host threads, the
 *                interval, one squeue per interval for every job, scancel
 *   submit.c     the submitter thread: sbatch off the loop, and what its
 *                answer means
 *   state.c      what a job's state means: its end read from the state,
 *                the exit status file and the output files
 *   accounting.c the jobs squeue no longer lists, one sacct for them all
 *   parse.c      the commands' answers, read without trusting them
 *
 * One attempt is one batch job, named sy-RUN-TASK-ATTEMPT and commented
 * "switchyard run=RUN task=TASK attempt=N", so that a host that takes the
 * run over finds it (resume()) instead of submitting it again.  The job
 * runs `sh -c COMMAND` with its stdin, stdout and stderr on files in the
 * working directory (which the host must be able to read: a shared file
 * system on a real cluster), and writes its exit status to a file of its
 * own, which tells how it ended after the controller has forgotten it.
 *
 * Threads: submit(), resume(), cancel(), capacity() and metrics() run on
 * host threads and never block: they queue the job (or the cancel) under
 * q_mu and signal the loop thread.  The loop runs the queries and the
 * cancels (squeue, scancel, scontrol) through the SDK's sy_spawn_run, and
 * hands each sbatch to a submitter thread (max_submitting of them), which
 * gives the job back
 * with the answer; every command is bounded by command_timeout.  Only the
 * loop thread reads or writes a job after it was queued (the submitter
 * touches only its argv and sub_* fields, while the loop leaves them
 * alone), and the loop completes every attempt.
 */
#ifndef SY_SLURM_H
#define SY_SLURM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>
#include <switchyard/sdk.h>
#include <switchyard/spawn.h>

#define SY_SLURM_DEFAULT_MAX_IN_FLIGHT 100
#define SY_SLURM_MAX_IN_FLIGHT 100000
#define SY_SLURM_DEFAULT_POLL_MS 2000
#define SY_SLURM_DEFAULT_MAX_POLL_MS 60000
#define SY_SLURM_DEFAULT_RPM 120
#define SY_SLURM_DEFAULT_COMMAND_MS 30000
/* A query slower than this doubles the interval (up to max_poll_interval). */
#define SY_SLURM_SLOW_QUERY_MS 2000
/* Intervals a job may be missing from squeue, with no status file, before
 * it is failed as lost (each miss also asks `scontrol show job`). */
#define SY_SLURM_LOST_AFTER 3
/* Jobs one sacct asks after at most (accounting.c). */
#define SY_SLURM_SACCT_MAX 200
/* lost_after's default: how long a job neither squeue nor sacct lists,
 * with no exit status file, is waited for before it is failed as lost. */
#define SY_SLURM_DEFAULT_LOST_AFTER_MS 120000
/* sbatch commands at once per instance (max_submitting's default). */
#define SY_SLURM_DEFAULT_SUBMITTERS 4
#define SY_SLURM_MAX_SUBMITTERS 32

/* accounting: where a job the controller forgot is looked up. */
enum {
    SY_SLURM_ACCT_AUTO = 0,   /* sacct, until it says there is none */
    SY_SLURM_ACCT_SACCT,      /* sacct, always */
    SY_SLURM_ACCT_NONE        /* never: the exit status file, scontrol */
};

/* How long a deferral waits when the controller refused a submit
 * (submit_retry's default). */
#define SY_SLURM_DEFER_MS 10000

/* ------------------------------------------------------------------------ */
/* Settings (settings.c)                                                     */
/* ------------------------------------------------------------------------ */

/* Resource requests, per instance and per task (a task's override the
 * instance's field by field).  Strings are NULL when not set. */
typedef struct sy_slurm_req {
    const char *partition;     /* --partition */
    const char *account;       /* --account */
    const char *qos;           /* --qos */
    int64_t time_ms;           /* --time, rounded up to minutes; 0: from the
                                  task's timeout, or none */
    int64_t cpus;              /* --cpus-per-task; 0: the cluster's default */
    const char *mem;           /* --mem ("4G", "500M") */
    int64_t gpus;              /* --gres=gpu:N; 0: none */
    const char *constraint;    /* --constraint */
    const char *working_dir;   /* where the job's files go (--chdir) */
} sy_slurm_req;

typedef struct sy_slurm_settings {
    sy_slurm_req req;          /* the instance's requests; strings owned */
    char **sbatch_options;     /* owned, NULL-terminated extra options */
    size_t n_sbatch_options;
    int64_t max_in_flight;     /* jobs queued or running at once */
    int64_t poll_ms;           /* the query interval */
    int64_t max_poll_ms;       /* the interval's bound when backing off */
    int64_t max_rpm;           /* controller requests per minute at most
                                  (queries; submits and cancels count in
                                  the metric but are never held back) */
    int64_t command_ms;        /* one command's limit */
    int64_t submit_retry_ms;   /* how long a task waits after the
                                  controller refused it for a limit of
                                  jobs (deferred, not charged) */
    int accounting;            /* SY_SLURM_ACCT_* */
    int64_t lost_after_ms;     /* see SY_SLURM_DEFAULT_LOST_AFTER_MS */
    int64_t max_submitting;    /* sbatch commands at once */
    char *bin_dir;             /* owned; where sbatch & co are, or NULL
                                  for PATH */
    char *slurm_conf;          /* owned; SLURM_CONF for the commands, or
                                  NULL for the environment's */
} sy_slurm_settings;

extern const sy_param_spec *const sy_slurm_instance_params[];
extern const sy_param_spec *const sy_slurm_task_params[];

int sy_slurm_settings_read(const sy_host_api *api, const sy_params *cfg,
                           sy_slurm_settings *s, char *err, size_t err_len);
void sy_slurm_settings_free(sy_slurm_settings *s);

/* Checks a task's parameters (validate() and submit()).  SY_OK, or an
 * error with one line in err. */
int sy_slurm_task_check(const sy_host_api *api, const sy_params *p,
                        char *err, size_t err_len);

/* A NULL-terminated argv, every string owned. */
typedef struct sy_slurm_argv {
    char **v;
    size_t n, cap;
} sy_slurm_argv;

int sy_slurm_argv_add(sy_slurm_argv *a, const char *s);
int sy_slurm_argv_addf(sy_slurm_argv *a, const char *fmt, ...)
    SY_PRINTF(2, 3);
void sy_slurm_argv_free(sy_slurm_argv *a);

/* ------------------------------------------------------------------------ */
/* Jobs and the instance                                                     */
/* ------------------------------------------------------------------------ */

/* Where a job is in its life, on the loop thread. */
enum {
    SY_SLURM_NEW = 0,      /* queued by submit(): sbatch next */
    SY_SLURM_ADOPT,        /* queued by resume(): looked up by name first */
    SY_SLURM_TRACKED,      /* has a job id; followed by the query */
    SY_SLURM_CANCELLING    /* scancel sent; waiting to see it end */
};

typedef struct sy_slurm_job {
    struct sy_slurm_job *next;      /* in the submit queue or the tracked
                                       list */
    struct sy_slurm_job *cancel_next; /* in the cancel queue */
    sy_completion *c;
    const sy_task *task;            /* host-owned until complete */
    int phase;                      /* SY_SLURM_* */
    bool cancel_wanted;             /* cancel() asked (loop sets phase) */
    long job_id;                    /* 0 until known */
    char name[128];                 /* --job-name */
    char comment[512];              /* --comment */
    char *base;                     /* owned: WORKDIR/NAME, the files'
                                       prefix (.in .out .err .rc) */
    int misses;                     /* queries in a row without it */
    long newest;                    /* resume: the highest id of its name
                                       the query listed */
    bool submitting;                /* with the submitter thread */
    struct sy_slurm_job *sub_next;  /* in the submitter's queues */
    sy_slurm_argv argv;             /* sbatch's command line, while
                                       submitting */
    sy_spawn_result sub_res;        /* sbatch's answer (submitter) */
    int sub_rc;                     /* sy_spawn_run's return (submitter) */
    char sub_err[256];              /* why sbatch did not run (submitter) */
    bool scancel_sent;              /* scancel ran for it */
    bool lookup;                    /* missing, no status file: for sacct
                                       (accounting.c) */
    int64_t missing_since_ms;       /* when the query first missed it, 0
                                       while it is listed */
    int64_t looked_ms;              /* when sacct last asked after it */
    int acct_rc;                    /* the exit status accounting gave
                                       (128 + signal), or -1 */
} sy_slurm_job;

typedef struct sy_slurm_stats {
    _Atomic int64_t submitted;      /* attempts accepted (submit, resume) */
    _Atomic int64_t by_outcome[5];  /* by sy_outcome, DEFERRED too */
    _Atomic int64_t requests;       /* controller requests since create */
    _Atomic int64_t queries;        /* of those, squeue queries */
    _Atomic int64_t acct_queries;   /* ... and sacct lookups */
    _Atomic int64_t sbatch;         /* of those, jobs submitted */
    _Atomic int64_t adopted;        /* resumed attempts whose job was found */
    _Atomic int64_t lost;           /* jobs failed as lost */
    _Atomic int64_t poll_ms;        /* the interval now */
    _Atomic int64_t pending;        /* jobs the last query saw PENDING */
    _Atomic int64_t running;        /* ... and RUNNING */
    pthread_mutex_t mu;             /* guards the window below */
    int64_t sec[60];                /* a ring of one-second buckets: the
                                       second (monotonic) of each... */
    int64_t cnt[60];                /* ...and the requests made in it */
} sy_slurm_stats;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    sy_slurm_settings set;
    sy_sdk_slots slots;             /* max_in_flight */
    sy_sdk_inflight inflight;       /* c -> job */
    sy_slurm_stats stats;

    pthread_t thread;
    bool thread_started;
    pthread_mutex_t q_mu;           /* guards the queues, stopping, wake */
    pthread_cond_t q_cond;
    sy_slurm_job *q_head, *q_tail;  /* submitted, not yet on the loop */
    sy_slurm_job *cancel_head;      /* cancelled by cancel() */
    bool stopping;
    pthread_t sub_thread[SY_SLURM_MAX_SUBMITTERS]; /* the submitters */
    int sub_started;                /* how many of them run */
    pthread_cond_t sub_cond;        /* with q_mu: work for the submitter */
    sy_slurm_job *sub_head, *sub_tail; /* jobs for sbatch (q_mu) */
    sy_slurm_job *done_head;        /* jobs sbatch answered for (q_mu) */
    bool sub_stopping;              /* (q_mu) */

    /* loop thread only */
    sy_slurm_job *tracked;          /* jobs with a job id, or adopting */
    int64_t next_query_ms;          /* monotonic */
    int64_t last_query_ms;          /* when the last query began */
    int64_t interval_ms;            /* now, after backoff */
    bool acct_off;                  /* sacct said there is no accounting */
};

/* loop.c */
int sy_slurm_loop_start(sy_instance *inst, char *err, size_t err_len);
void sy_slurm_loop_stop(sy_instance *inst);
void sy_slurm_loop_post(sy_instance *inst, sy_slurm_job *job);
void sy_slurm_loop_post_cancel(sy_instance *inst, sy_slurm_job *job);
int64_t sy_slurm_now_ms(void);
/* Runs one Slurm command (argv[0] a bare name, found in bin_dir when set)
 * to its end, counting it as a controller request.  0 with *r filled (free
 * it), or -1 with one line in err. */
struct sy_spawn_result;
int sy_slurm_command(sy_instance *inst, const char *const *argv,
                     struct sy_spawn_result *r, char *err, size_t err_len);
/* sy_slurm_command for an argv of any length. */
int sy_slurm_command_v(sy_instance *inst, char **argv,
                       struct sy_spawn_result *r, char *err, size_t err_len);
/* Puts job on the tracked list. */
void sy_slurm_track(sy_instance *inst, sy_slurm_job *job);
/* Ends a tracked job with outcome o and msg, and takes it off the list
 * (unless cancel() holds its completion: then it stays). */
void sy_slurm_end_job(sy_instance *inst, sy_slurm_job *job, sy_outcome o,
                      const char *msg, int64_t retry_after_ms);

/* submit.c: on the loop, prepares job and hands it to the submitter (or
 * ends it when it cannot be prepared); the job is tracked either way. */
void sy_slurm_submit_job(sy_instance *inst, sy_slurm_job *job);
/* On the loop: the jobs the submitter gave back (linked by sub_next). */
void sy_slurm_submit_results(sy_instance *inst, sy_slurm_job *list);
int sy_slurm_submit_start(sy_instance *inst, char *err, size_t err_len);
/* Stops the submitter after the sbatch it runs, if any. */
void sy_slurm_submit_stop(sy_instance *inst);

/* Completes the attempt of `job` with `r` (when cancel() has not) and frees
 * it; the slot goes back. */
void sy_slurm_job_finish(sy_instance *inst, sy_slurm_job *job,
                         const sy_result *r);
void sy_slurm_job_free(sy_slurm_job *job);

/* settings.c: sets job's name, comment and file prefix from its task.
 * SY_OK, or SY_ENOMEM with err. */
int sy_slurm_job_init(sy_instance *inst, sy_slurm_job *job, char *err,
                      size_t err_len);
/* settings.c: the sbatch command line for job (its name, comment and
 * files set).  SY_OK or an error in err. */
int sy_slurm_sbatch_argv(sy_instance *inst, sy_slurm_job *job,
                         sy_slurm_argv *a, char *err, size_t err_len);
/* Does the partition exist?  1 yes, 0 no (err says so), -1 the controller
 * could not be asked (err says why). */
int sy_slurm_partition_exists(sy_instance *inst, const char *name, char *err,
                              size_t err_len);

/* state.c: a job the query listed in `state` (squeue's %T) ended, or not.
 * Returns true when the job is over (and completed), false when it runs on.
 * `reason` is squeue's %r. */
bool sy_slurm_state_seen(sy_instance *inst, sy_slurm_job *job,
                         const char *state, const char *reason);
/* The job is missing from the query: true when it is over (completed). */
bool sy_slurm_state_missing(sy_instance *inst, sy_slurm_job *job);
/* Fails a job the controller and accounting lost, with msg. */
void sy_slurm_state_lost(sy_instance *inst, sy_slurm_job *job,
                         const char *msg);
/* accounting.c: one sacct for the jobs marked `lookup`, on the loop. */
void sy_slurm_acct_lookup(sy_instance *inst);
/* Counts a request made now in the stats' window. */
void sy_slurm_stats_request(sy_slurm_stats *s);
/* Requests in the last 60 s. */
int64_t sy_slurm_stats_rpm(sy_slurm_stats *s);

#endif /* SY_SLURM_H */
