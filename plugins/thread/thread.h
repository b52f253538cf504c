/*
 * thread.h -- the thread executor's internals, shared by its files.
 *
 *   thread.c   the descriptor, create/destroy, instance settings, submit,
 *              cancel, capacity, metrics, validate
 *   spec.c     the task parameters: declarations, parsing, checking
 *   job.c      one accepted attempt: its life, result and environment
 *   pool.c     the bounded worker pools
 *   fn.c       function tasks in the host process; the library cache
 *   isolate.c  function tasks in switchyard-task-runner
 *   cmd.c      command tasks
 *   taskapi.c  the sy_task_api table (shared with the runner)
 */
#ifndef SY_THREAD_H
#define SY_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>
#include <switchyard/task.h>

#include "pool.h"

#define SY_THREAD_DEFAULT_BLOCKING 2
#define SY_THREAD_MAX_WORKERS 4096
#define SY_THREAD_DEFAULT_GRACE_MS 5000
#define SY_THREAD_DEFAULT_MAX_OUTPUT ((int64_t)16 * 1024 * 1024)

enum { SY_POOL_DEFAULT = 0, SY_POOL_BLOCKING = 1, SY_N_POOLS = 2 };

/* ------------------------------------------------------------------------ */
/* The library cache (fn.c)                                                 */
/* ------------------------------------------------------------------------ */

typedef struct sy_lib {
    struct sy_lib *next;
    char *path;              /* owned; the realpath */
    void *handle;            /* dlopen handle, closed at destroy */
} sy_lib;

/* A resolved "path:symbol" for one base directory. */
typedef struct sy_fn_entry {
    struct sy_fn_entry *next;
    char *base_dir;          /* owned */
    char *function;          /* owned, as written */
    sy_task_fn fn;
} sy_fn_entry;

typedef struct sy_libs {
    pthread_mutex_t mu;      /* held while opening: loads are serialised */
    sy_lib *libs;
    sy_fn_entry *fns;
} sy_libs;

/* ------------------------------------------------------------------------ */
/* The instance                                                             */
/* ------------------------------------------------------------------------ */

struct sy_instance {
    const sy_host_api *api;  /* the host's, valid until destroy() */
    sy_host *host;
    sy_task_api task_api;    /* handed to task functions */
    int64_t workers, blocking_workers, queue_depth;
    bool isolate;            /* default for function tasks */
    bool pin_workers;        /* bind default-pool workers to CPUs */
    cpu_set_t cpus;          /* the process's CPU set at create() */
    int64_t kill_grace_ms, max_output_bytes; /* defaults for tasks */
    char *runner;            /* owned: switchyard-task-runner's path */
    sy_pool pools[SY_N_POOLS];
    sy_libs libs;
    /* Where command tasks spend their time, summed over every command the
     * instance ran (cmd.c adds, metrics read; relaxed atomics, any
     * thread): started, then the nanoseconds from a worker's call to the
     * command running (pipes, clone, exec) and from there to its end
     * reaped (the command's own time, its output read). */
    _Atomic int64_t commands_started, commands_spawn_ns, commands_run_ns;
    /* Guards what other threads do to a running job: the host's answers
     * to records asked without waiting (ABI 1.3: set under the lock, then
     * signalled; the worker that reports the job waits for them) and the
     * writes to the descriptors of its run (job.c). */
    pthread_mutex_t job_lock;
    pthread_cond_t job_cond;
};

/* ------------------------------------------------------------------------ */
/* Task parameters (spec.c)                                                 */
/* ------------------------------------------------------------------------ */

typedef enum sy_job_kind { SY_JOB_FUNCTION, SY_JOB_COMMAND } sy_job_kind;

/* A task's parameters, parsed and checked.  Strings are borrowed from the
 * task's sy_params (valid until complete()). */
/* How long a job that could not start for want of processes, descriptors
 * or memory waits before it is offered again. */
#define SY_JOB_DEFER_MS 500

typedef struct sy_job_spec {
    sy_job_kind kind;
    const char *function;    /* "path:symbol" as written */
    bool isolate, blocking;
    bool output_none;        /* output = "none" */
    const char *cwd;         /* as written, or NULL */
    int64_t kill_grace_ms;
    int64_t max_output_bytes;
} sy_job_spec;

extern const sy_param_spec *const sy_thread_task_params[];
extern const sy_param_spec *const sy_thread_instance_params[];

/* Parses and checks `p` against the instance's defaults: SY_OK, or a
 * negative status with one line in err naming the parameter. */
int sy_spec_parse(const sy_instance *inst, const sy_params *p,
                  sy_job_spec *out, char *err, size_t err_len);

/* ------------------------------------------------------------------------ */
/* Jobs (job.c)                                                             */
/* ------------------------------------------------------------------------ */

/* One accepted attempt. */
typedef struct sy_job {
    sy_pool_item item;       /* first: the pool's view of it */
    sy_instance *inst;
    sy_pool *pool;
    const sy_task *task;     /* the host's, valid until complete() */
    sy_completion *c;
    sy_job_spec spec;
    int64_t deadline_ms;     /* CLOCK_MONOTONIC ms; 0: no timeout */
    atomic_int cancelled;    /* the host called cancel() */
    /* Spawned work only, and only while it runs on its worker (made by
     * sy_job_open_fds, closed by sy_job_close_fds; set and cleared under
     * inst->job_lock, -1 otherwise): so a queued job holds no descriptor,
     * and the host's descriptor table, which every clone() copies and
     * every child closes, does not grow with the queue.  cancel_fd is
     * written on cancel; kill_fd (commands) when the host refuses the
     * command's record after its start (the group is killed at once).
     * Other threads write them only under the lock. */
    int cancel_fd;
    int kill_fd;
    sy_outcome outcome;      /* the result, set by the runner of the job */
    char *output;            /* owned */
    size_t output_len;
    char *error;             /* owned */
    int64_t retry_after_ms;  /* DEFERRED: not before this (ABI 1.1) */
    /* The record of the command's process group, asked without waiting
     * (attempt_process_async): true from the ask until the host answers
     * (under inst->job_lock; read without it only as a hint), and the
     * refusal it brought (0: recorded or not needed).  The job is
     * reported only once it is answered. */
    atomic_bool answer_owed;
    atomic_int refused;
    /* What a command wrote, handed to the host as the attempt's logs
     * (sy_result.log_*): owned, NULL for none. */
    char *log_out, *log_err;
    size_t log_out_len, log_err_len;
    size_t log_err_dropped, log_err_cut; /* left out at that offset */
    size_t log_out_dropped, log_out_cut;
} sy_job;

sy_job *sy_job_new(sy_instance *inst, const sy_task *task, sy_completion *c,
                   const sy_job_spec *spec);
void sy_job_free(sy_job *job);

/* Runs a job on a worker, then completes it (the pool's run callback).
 * When another job is queued, the completion of this one is held on the
 * worker until that next job's command has started (or, for any other
 * kind of job, until it begins), so that the host's loop thread, woken by
 * the completion, does not become runnable beside a command at its exec:
 * the kernel balances a process at exec, and would move the command off a
 * CPU that is about to be free onto one that is busy.  Holding costs the
 * report the length of one start (a clone and an exec).  With a host that
 * records process groups (ABI 1.2) the report goes with that request
 * instead, while the new command waits for it before its exec (cmd.c). */
void sy_job_run(sy_pool_item *it, void *arg);
/* Reports the job this worker holds back, if any (the pool's idle
 * callback; also called by the runners where the next job starts). */
void sy_job_report_held(void *arg);
/* The answer callback of attempt_process_async (a host thread): keeps
 * the status, stops the command when it is a refusal (by its cancel
 * descriptor), and lets the job's report go on. */
void sy_job_on_answer(void *arg, int status);
/* The host refused the record of the job's command group (`refused`, a
 * status): cancelled for SY_ESTATE (the host no longer runs the attempt),
 * failed otherwise, in one wording; `prog` NULL when the command had ended
 * before the answer came. */
void sy_job_fail_refused(sy_job *job, int refused, const char *prog);
/* Marks a running job cancelled (the pool's interrupt callback). */
void sy_job_interrupt(sy_pool_item *it, void *arg);
/* Completes a job the pool already settled (dequeued by cancel). */
void sy_job_complete_settled(sy_job *job);

/* Result setters: the last call wins. */
void sy_job_fail(sy_job *job, sy_outcome outcome, const char *fmt, ...)
    SY_PRINTF(3, 4);
void sy_job_succeed(sy_job *job, char *output, size_t len); /* takes it */

/* True once the host cancelled or the timeout passed. */
bool sy_job_should_stop(const sy_job *job);
/* Milliseconds left before the deadline (>= 1), or 0 for no deadline. */
int64_t sy_job_time_left(const sy_job *job);

int64_t sy_now_ms(void);

/* Writes one line to the host's log, prefixed with the task's namespace. */
void sy_job_log(const sy_job *job, sy_log_level level, const char *fmt, ...)
    SY_PRINTF(3, 4);

/* A growable NULL-terminated vector of owned strings. */
typedef struct sy_strv {
    char **v;
    size_t n, cap;
    bool oom;
} sy_strv;

void sy_strv_push(sy_strv *s, char *owned);   /* NULL marks oom */
void sy_strv_pushf(sy_strv *s, const char *fmt, ...) SY_PRINTF(2, 3);
void sy_strv_free(sy_strv *s);

/* The SWITCHYARD_* variables describing the attempt, for spawned work. */
void sy_job_env(const sy_job *job, sy_strv *env);

/* `rel` against `base` unless absolute or base is empty; malloc'd. */
char *sy_path_resolve(const char *base, const char *rel);

/* ------------------------------------------------------------------------ */
/* The kinds of work                                                        */
/* ------------------------------------------------------------------------ */

/* fn.c */
void sy_libs_init(sy_libs *L);
void sy_libs_free(sy_libs *L);
/* Splits "path:symbol" (at the last ':'); both malloc'd. */
int sy_fn_split(const char *function, char **path, char **symbol, char *err,
                size_t err_len);
/* Opens (once) and looks up `function` relative to base_dir. */
int sy_fn_resolve(sy_libs *L, const char *base_dir, const char *function,
                  sy_task_fn *out, char *err, size_t err_len);
void sy_fn_run(sy_job *job);

/* isolate.c */
int sy_isolate_check(const sy_instance *inst, const char *base_dir,
                     const char *function, char *err, size_t err_len);
void sy_isolate_run(sy_job *job);

/* cmd.c */
void sy_cmd_run(sy_job *job);

#endif
