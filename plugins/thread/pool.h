/*
 * pool.h -- a bounded pool of worker threads with a FIFO queue.
 *
 * A pool has `workers` threads and `slots` = workers + queue_depth places.
 * A submit takes a place or is refused (SY_EBUSY): an accepted item waits
 * in the queue until a worker takes it, then runs on that worker.  The
 * place is given back by sy_pool_finish() (or by sy_pool_cancel() for an
 * item still queued), so "active" (queued + running) never exceeds slots.
 *
 * Threading: every function may be called from any thread, concurrently,
 * except sy_pool_start() and sy_pool_stop() (one thread, nothing else in
 * flight).  None blocks for longer than a short mutex hold; the interrupt
 * callback runs under that mutex and must not block either.
 */
#ifndef SY_THREAD_POOL_H
#define SY_THREAD_POOL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

/* Embedded first in what the pool runs; the pool never allocates or frees
 * items. */
typedef struct sy_pool_item {
    struct sy_pool_item *prev, *next; /* the pool's live list */
    struct sy_pool_item *qnext;       /* the queue, while queued */
    const void *key;                  /* what sy_pool_cancel() finds it by */
    bool running;                     /* taken by a worker */
} sy_pool_item;

/* Runs an item on a worker thread.  It must call sy_pool_finish() for the
 * item exactly once (before the item's memory goes away). */
typedef void (*sy_pool_run_fn)(sy_pool_item *it, void *arg);

/* Called on a worker thread, without the pool's mutex, each time the
 * worker finds the queue empty, before it waits or exits: for work it held
 * back while more items were queued. */
typedef void (*sy_pool_idle_fn)(void *arg);

/* Asks a running item to stop; called under the pool's mutex: set a flag,
 * write to an eventfd, nothing that blocks. */
typedef void (*sy_pool_interrupt_fn)(sy_pool_item *it, void *arg);

/* Figures of one pool at one instant (taken under its mutex, so they add
 * up: submitted = active + succeeded + failed + timed_out + cancelled). */
typedef struct sy_pool_counts {
    int64_t workers, pinned, slots, active, queued, running, capacity;
    int64_t submitted, succeeded, failed, timed_out, cancelled;
} sy_pool_counts;

typedef struct sy_pool {
    const char *name;             /* static: "default", "blocking" */
    pthread_mutex_t mu;
    pthread_cond_t cv;            /* work queued, or stop */
    pthread_t *threads;           /* owned */
    size_t n_threads;
    const cpu_set_t *pin;         /* borrowed (outlives the pool), or NULL */
    int64_t pinned;               /* workers bound to a CPU of `pin`
                                     (set by sy_pool_start) */
    int64_t slots;
    _Atomic int64_t active;       /* written under mu; read without it by
                                     sy_pool_capacity() */
    sy_pool_item *live;           /* queued and running items */
    sy_pool_item *qhead, *qtail;
    int64_t queued, running;
    int64_t submitted, by_outcome[4]; /* indexed by sy_outcome */
    bool stop;
    sy_pool_run_fn run;
    sy_pool_interrupt_fn interrupt;
    sy_pool_idle_fn idle;         /* or NULL */
    void *arg;
} sy_pool;

/* Starts `workers` threads (>= 1).  With `pin` (a CPU set that outlives
 * the pool), each worker starts bound to one CPU of it, round-robin over
 * the set and across every pinned pool of the process, so that two
 * instances spread out instead of starting at the same CPU; a worker the
 * kernel will not bind starts unbound.  Returns SY_OK, or a
 * negative status with err, having started nothing. */
int sy_pool_start(sy_pool *p, const char *name, int64_t workers,
                  int64_t queue_depth, const cpu_set_t *pin,
                  sy_pool_run_fn run, sy_pool_interrupt_fn interrupt,
                  sy_pool_idle_fn idle, void *arg, char *err, size_t err_len);

/* Queues `it` under `key` if a place is free: SY_OK (a worker will run it)
 * or SY_EBUSY.  Never blocks. */
int sy_pool_submit(sy_pool *p, sy_pool_item *it, const void *key);

typedef enum sy_pool_cancel_result {
    SY_POOL_ABSENT,      /* no live item has that key */
    SY_POOL_DEQUEUED,    /* it was queued: removed, counted as cancelled,
                            its place given back; *out is it, and the caller
                            completes and frees it */
    SY_POOL_INTERRUPTED  /* it is running: the interrupt callback ran */
} sy_pool_cancel_result;

sy_pool_cancel_result sy_pool_cancel(sy_pool *p, const void *key,
                                     sy_pool_item **out);

/* A running item is done with `outcome`: unlinked, counted, its place given
 * back.  Call it before reporting the completion (so figures never show an
 * attempt the host has already seen end).  Returns whether another item
 * was queued at that instant (a worker, this one or another, will take
 * it; the idle callback runs on this worker if it finds none). */
bool sy_pool_finish(sy_pool *p, sy_pool_item *it, sy_outcome outcome);

/* Free places now (slots - active). */
int64_t sy_pool_capacity(sy_pool *p);

void sy_pool_counts_get(sy_pool *p, sy_pool_counts *out);

/* Stops and joins the workers; the queue must be empty (every item
 * finished).  Safe on a pool that was never started (zeroed). */
void sy_pool_stop(sy_pool *p);

#endif
