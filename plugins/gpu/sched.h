/*
 * sched.h -- the gpu plugin's scheduler: which queued task gets which
 * devices, and when.
 *
 * A pure module: no NVML, no threads, no clock, no I/O.  The caller owns
 * the lock, passes the time in, and applies the decisions (starting the
 * command, killing it on a drained device).  So the unit tests and the
 * simulation in bench/ drive exactly the code the plugin runs.
 *
 * Policies (sy_gs.policy):
 *
 *   SY_GS_EASY       the default.  The queue is ordered by priority (a
 *                    task waiting past its size's wait bound first, then
 *                    `priority`, then arrival).  The first task is placed
 *                    when it fits; when it does not, it gets a reservation
 *                    on the devices that free earliest (from the running
 *                    tasks' expected end), and a later task is started
 *                    only if it fits now and either ends before the
 *                    reservation starts or uses no reserved device (EASY
 *                    backfill, as Slurm's backfill does it).
 *   SY_GS_FIFO       only the first task may start: strict order, no
 *                    backfill (the baseline that wastes devices).
 *   SY_GS_FIRST_FIT  any task that fits starts, in queue order, with no
 *                    reservation (the baseline that starves big tasks).
 *
 * Placement is best fit: a multi-device task goes to the island (devices
 * joined by NVLink or one PCIe switch) with the fewest free devices that
 * still holds it, so big islands stay whole for big tasks; a sharing task
 * goes to the device whose free memory fits it most tightly.
 */
#ifndef SY_GPU_SCHED_H
#define SY_GPU_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SY_GS_MAX_DEVS 64

enum { SY_GS_EASY = 0, SY_GS_FIFO = 1, SY_GS_FIRST_FIT = 2 };

/* One device.  The caller sets the first group before sy_gs_init() (or
 * right after, before the first placement); the rest is the
 * scheduler's. */
typedef struct sy_gs_dev {
    int island;          /* devices with the same number share a fast link */
    int64_t mem_mib;     /* total memory */
    const char *model;   /* name matched by gpu_model globs; not owned */
    bool drained;        /* no new task is placed on it */

    int whole;           /* 1 while a task holds it whole */
    int shared;          /* sharing tasks on it */
    int64_t mem_used;    /* their declared memory, summed */
} sy_gs_dev;

/* One task.  The caller fills the first group, keeps the struct alive
 * from sy_gs_enqueue() to sy_gs_release() (or sy_gs_remove()), and reads
 * `devs` after sy_gs_next() returned it. */
typedef struct sy_gs_job {
    int gpus;            /* whole devices wanted (>= 1) */
    int64_t mem_mib;     /* per device; 0: not declared */
    const char *model;   /* fnmatch glob on the device name, or NULL */
    int64_t priority;    /* higher first */
    int64_t expected_ms; /* declared run time, 0: unknown */
    int64_t timeout_ms;  /* the attempt's limit, 0: none */
    bool share;          /* may share devices by memory */
    void *owner;         /* the caller's */

    uint64_t seq;        /* arrival order */
    int64_t queued_at;   /* ms, the caller's clock */
    int64_t started_at;
    int64_t end_est;     /* when it should end: started_at + estimate */
    bool running;
    bool overdue;        /* waited past its bound (reported once) */
    int ndevs;
    int devs[SY_GS_MAX_DEVS];
} sy_gs_job;

typedef struct sy_gs {
    int policy;              /* SY_GS_* */
    bool share;              /* tasks with mem_mib may share devices */
    int ndev;
    sy_gs_dev dev[SY_GS_MAX_DEVS];
    /* Wait bound by task size: wait_bound[n] for n devices, 0: none. */
    int64_t wait_bound[SY_GS_MAX_DEVS + 1];
    int64_t default_run_ms;  /* estimate when a task declares neither
                                expected_ms nor timeout_ms */

    sy_gs_job **queue;       /* waiting, `nq` of `cap` */
    size_t nq;
    sy_gs_job **run;         /* running, `nr` of `cap` */
    size_t nr;
    size_t cap;
    uint64_t seq;

    /* The last reservation, for metrics: the task and when it starts
     * (0: none). */
    const sy_gs_job *reserved_for;
    int64_t shadow_ms;
} sy_gs;

/* Prepares `s` for `ndev` devices (the caller fills s->dev) and at most
 * `cap` tasks queued plus running.  0, or -1 out of memory. */
int sy_gs_init(sy_gs *s, int ndev, size_t cap);
void sy_gs_fini(sy_gs *s);

/* True when the task could ever be placed: enough devices match its
 * model and memory (drained ones count: they may be resumed).  Otherwise
 * false with the reason in why. */
bool sy_gs_feasible(const sy_gs *s, const sy_gs_job *j, char *why,
                    size_t why_len);

/* Queues `j` at time `now`.  0, or -1 when the queue is full. */
int sy_gs_enqueue(sy_gs *s, sy_gs_job *j, int64_t now);

/* Takes a queued task out (cancelled before it started).  True when it
 * was queued. */
bool sy_gs_remove(sy_gs *s, sy_gs_job *j);

/* The next task to start now, with its devices in j->devs, already
 * marked busy and moved to the running set; NULL when none may start.
 * Call it until NULL after every change. */
sy_gs_job *sy_gs_next(sy_gs *s, int64_t now);

/* A running task ended: its devices are free again. */
void sy_gs_release(sy_gs *s, sy_gs_job *j);

/* Queued tasks that just passed their wait bound, one per call (each is
 * reported once, for a log line); NULL when none. */
sy_gs_job *sy_gs_overdue(sy_gs *s, int64_t now);

/* Tasks now in the queue / running. */
size_t sy_gs_queued(const sy_gs *s);
size_t sy_gs_running(const sy_gs *s);

/* True when device `d` holds no task. */
bool sy_gs_dev_idle(const sy_gs *s, int d);

/* The estimate of how long `j` runs: expected_ms, else timeout_ms, else
 * the default. */
int64_t sy_gs_estimate(const sy_gs *s, const sy_gs_job *j);

#endif
