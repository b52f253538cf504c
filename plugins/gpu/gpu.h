/*
 * gpu.h -- the gpu executor's internals, shared by its files.
 *
 *   gpu.c      the descriptor, create/destroy, submit, cancel, capacity,
 *              validate
 *   settings.c the instance settings and the task parameters
 *   sched.c    which queued task gets which devices (pure; sched.h)
 *   nvml.c     NVML through dlopen: devices, islands, events (nvml.h)
 *   loop.c     the instance's thread: health events, the control file,
 *              starting what the scheduler places
 *   job.c      one accepted attempt: its command on its own thread
 *   stats.c    metrics()
 *
 * One mutex per instance (`mu`) guards the scheduler, the list of
 * accepted jobs and the counters; it is never held across complete(), a
 * process start or a wait (log() and wake() copy and return).
 */
#ifndef SY_GPU_H
#define SY_GPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <switchyard/executor.h>

#include "nvml.h"
#include "sched.h"

#define SY_GPU_DEFAULT_QUEUE 64
#define SY_GPU_DEFAULT_INTERVAL_MS 1000
#define SY_GPU_DEFAULT_GRACE_MS 5000
#define SY_GPU_DEFAULT_RETRY_MS 1000

/* A device's state beyond the scheduler's. */
typedef struct sy_gpu_dev {
    bool manual;             /* drained by the operator */
    bool broken;             /* drained by a health event */
    uint64_t xid;            /* the last critical Xid, 0: none */
    bool dbe;                /* a double-bit ECC error was seen */
    int64_t drained_at;      /* wall-clock seconds, 0: in service */
    int64_t tasks_run;       /* attempts started on it */
} sy_gpu_dev;

/* A task's parameters, parsed.  Strings are borrowed from the task's
 * sy_params (valid until complete()). */
typedef struct sy_gpu_spec {
    int gpus;
    int64_t mem_mib;
    const char *model;
    int64_t priority;
    int64_t expected_ms;
    int64_t kill_grace_ms;
    const char *cwd;
} sy_gpu_spec;

typedef struct sy_gpu_job sy_gpu_job;

struct sy_instance {
    const sy_host_api *api;
    sy_host *host;

    /* settings */
    int64_t queue_length, interval_ms, kill_grace_ms, retry_after_ms;
    char *control_file;      /* owned, or NULL */
    bool mig;                /* MIG instances are the devices */

    sy_nvml *nvml;
    sy_gpu_dev gdev[SY_GS_MAX_DEVS];

    pthread_mutex_t mu;
    pthread_cond_t cond;     /* the loop's wake-up */
    bool stop;               /* the loop ends */
    bool kick;               /* something changed: schedule now */
    pthread_t loop;
    bool loop_started;

    sy_gs sched;
    sy_gpu_job *jobs;        /* accepted and not yet completed */
    sy_gpu_job *zombies;     /* completed, thread to join */
    int64_t active;          /* accepted and not yet released */

    /* control file position */
    off_t ctl_offset;
    ino_t ctl_ino;
    long ctl_line;           /* lines read so far, for messages */

    /* counters */
    int64_t submitted, succeeded, failed, timed_out, cancelled, deferred;
    int64_t xids, ecc_errors;
};

struct sy_gpu_job {
    sy_gs_job gs;            /* the scheduler's view */
    sy_gpu_job *next, *prev; /* inst->jobs */
    sy_gpu_job *zombie_next;
    sy_instance *inst;
    const sy_task *task;     /* the host's, valid until complete() */
    sy_completion *c;
    sy_gpu_spec spec;
    int64_t deadline_ms;     /* CLOCK_MONOTONIC; 0: none */
    int cancel_fd;           /* eventfd: readable means stop */
    atomic_int cancelled;    /* the host called cancel() */
    char note[512];          /* set under mu when a health event stops it */
    bool deferring;          /* note is set: complete DEFERRED */
    bool done;               /* its result is on its way to the host:
                                task and c may be gone */
    pthread_t thread;
    bool has_thread;
    char uuids[SY_GS_MAX_DEVS * 100]; /* the devices, comma-separated */
};

/* settings.c */
extern const sy_param_spec *const sy_gpu_instance_params[];
extern const sy_param_spec *const sy_gpu_task_params[];
/* Reads the settings into inst and the scheduler; the device list goes to
 * *only (malloc'd array of strings borrowed from cfg). */
int sy_gpu_settings(sy_instance *inst, const sy_params *cfg,
                    const char ***only, size_t *n_only,
                    const char **library, char *err, size_t err_len);
/* Reads the wait bounds (max_wait) into the scheduler; needs the count of
 * devices, so it runs after discovery. */
int sy_gpu_wait_bounds(sy_instance *inst, const sy_params *cfg, char *err,
                       size_t err_len);
int sy_gpu_spec_parse(const sy_instance *inst, const sy_params *p,
                      sy_gpu_spec *out, char *err, size_t err_len);
/* "20G", "512M", "1T", "1024" (MiB): 0 with *mib set, or -1. */
int sy_gpu_parse_size(const char *s, int64_t *mib);

/* job.c */
sy_gpu_job *sy_gpu_job_new(sy_instance *inst, const sy_task *task,
                           sy_completion *c, const sy_gpu_spec *spec);
void sy_gpu_job_free(sy_gpu_job *job);
/* Starts the job's thread (mu held; the job is placed).  0, or -1 when
 * no thread could be made (the job then completes FAILED from here). */
int sy_gpu_job_start(sy_gpu_job *job);
/* Stops a running job: its process group is terminated (any thread). */
void sy_gpu_job_interrupt(sy_gpu_job *job);
/* Completes a job that never started (cancelled or refused while queued);
 * mu not held. */
void sy_gpu_job_finish_unstarted(sy_gpu_job *job, sy_outcome outcome,
                                 const char *why);
int64_t sy_gpu_now_ms(void);

/* loop.c */
int sy_gpu_loop_start(sy_instance *inst, char *err, size_t err_len);
void sy_gpu_loop_stop(sy_instance *inst);
/* Joins and frees completed jobs (mu not held). */
void sy_gpu_reap(sy_instance *inst);
/* Drains or resumes device d (mu held).  `why` is for the log. */
void sy_gpu_drain(sy_instance *inst, int d, bool manual, const char *why);
void sy_gpu_resume(sy_instance *inst, int d);

/* stats.c */
void sy_gpu_metrics(sy_instance *inst, sy_metric_fn emit, void *sink);

#endif
