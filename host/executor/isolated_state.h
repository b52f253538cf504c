/*
 * executor/isolated_state.h -- the proxy's state (isolated.c): attempts
 * the worker holds, the queue the writer thread sends, the worker's
 * reported capacity, and the calls that wait for an answer.
 */
#ifndef SY_EXECUTOR_ISOLATED_STATE_H
#define SY_EXECUTOR_ISOLATED_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <switchyard/executor.h>

#define SY_ISOLATED_BACKOFF_MIN_MS 100
#define SY_ISOLATED_BACKOFF_MAX_MS 10000
#define SY_ISOLATED_BUCKETS 1024

/* An attempt the worker holds: the host's token and the id it travels
 * under. */
typedef struct sy_isolated_pending {
    uint64_t id;
    sy_completion *c;
    struct sy_isolated_pending *next;
} sy_isolated_pending;

struct sy_instance {
    const sy_host_api *api;          /* the host's; static */
    sy_host *host;                   /* the host's handle for this instance */
    char *name, *plugin;             /* owned: instance and plugin names */
    json_t *start;                   /* owned: the worker's create message */
    pthread_mutex_t lock;            /* guards everything below */
    pthread_cond_t cond;             /* queue, stopping, validated */
    int fd;                          /* the socket to the worker; -1 */
    pid_t pid;                       /* the worker's */
    bool up;                         /* a worker runs and answered create */
    bool stopping;                   /* destroy() began */
    bool writer_stop;
    pthread_t reader_thread, writer_thread;
    bool threads_started;
    json_t **queue;                  /* owned messages for the writer */
    size_t queued, queue_cap;
    sy_isolated_pending *buckets[SY_ISOLATED_BUCKETS];
    size_t n_pending;
    uint64_t next_id;                /* the next submit's id (from 1) */
    int64_t reported;                /* the worker's last capacity() */
    uint64_t reported_after;         /* the last submit id it had seen then */
    int64_t backoff_ms;              /* before the next restart */
    int64_t restarts;
    uint64_t validate_seq;
    json_t *validated;               /* owned: the last validate answer */
};

/* A proxy for the worker start message `start` (borrowed; copied). */
sy_instance *sy_isolated_new(const sy_host_api *api, sy_host *host, const json_t *start);
void sy_isolated_free(sy_instance *in);

/* Starts the reader (`reader`) and writer threads.  0, or -1 with err. */
int sy_isolated_start_threads(sy_instance *in, void *(*reader)(void *), char *err,
                              size_t err_len);

/* Asks the worker to destroy its instance, waits for it (5 s, then it is
 * killed), and joins the threads. */
void sy_isolated_stop(sy_instance *in);

/* Takes the attempt of submit `id` out of the table; NULL when none. */
sy_completion *sy_isolated_take(sy_instance *in, uint64_t id);

/* Fails every attempt the worker held with `why`; their number. */
size_t sy_isolated_fail_all(sy_instance *in, const char *why);

/* The completion of submit `id` while it is still pending (not taken), or
 * NULL.  For the reader thread, which alone takes completions. */
sy_completion *sy_isolated_peek(sy_instance *in, uint64_t id);

/* Queues `m` (stolen) for the worker; SY_ENOMEM. */
int sy_isolated_send(sy_instance *in, json_t *m);

/* Drops unsent messages (the worker they were for is gone).  Lock held. */
void sy_isolated_queue_clear(sy_instance *in);

/* Queues submit message `m` (stolen) for token `c`: SY_OK, or SY_EBUSY
 * when no worker runs now. */
int sy_isolated_send_submit(sy_instance *in, sy_completion *c, json_t *m);

/* Queues a cancel for `c`: SY_OK, or SY_ENOENT when the worker does not
 * hold it. */
int sy_isolated_send_cancel(sy_instance *in, sy_completion *c);

/* Asks the worker's plugin to validate, and waits for the answer (10 s). */
int sy_isolated_call_validate(sy_instance *in, const json_t *params, const char *base_dir,
                              char *err, size_t err_len);

#endif
