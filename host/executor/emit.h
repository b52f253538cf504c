/*
 * executor/emit.h -- the channel behind sy_host_api.emit_event (ABI 1.5):
 * a plugin's thread asks, the thread that owns the store records, the
 * plugin's thread gets the answer.
 *
 * One sink per process: the engine running workflows opens it on its
 * loop thread (sy_emit_open) and closes it when it stops.  A plugin
 * thread's request waits in a queue; the sink's wake-up tells the loop,
 * which takes the queue (sy_emit_take), records each event outside any
 * batch, and answers (sy_emit_answer), waking the waiters.  A request
 * while no sink is open, or from the sink's own thread (a plugin inside
 * submit() or cancel(): waiting there would wait for itself), is answered
 * at once with SY_ESTATE.  Closing answers every request still queued
 * with SY_ESTATE, so no plugin thread waits for a loop that is gone.
 */
#ifndef SY_EXECUTOR_EMIT_H
#define SY_EXECUTOR_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

/* One emit_event call: the plugin's strings (valid while it waits), and
 * the answer the sink writes. */
typedef struct sy_emit_request {
    sy_host *host;
    const char *name, *key, *data; /* data: data_len bytes, or NULL */
    size_t data_len;
    int status;
    int64_t id;
    bool duplicate;
    char err[512];
    bool done;
    struct sy_emit_request *next;
} sy_emit_request;

/* Loop thread: from now on, requests are queued and wake(arg) is called
 * (from the asking thread) after each.  Replaces an earlier sink. */
void sy_emit_open(void (*wake)(void *arg), void *arg);

/* Loop thread: the queued requests, oldest first; NULL when none. */
sy_emit_request *sy_emit_take(void);

/* Loop thread: every request of `list` has its status (and id, err)
 * written: the waiters return. */
void sy_emit_answer(sy_emit_request *list);

/* Loop thread: the sink opened with `arg` is no more (another one opened
 * since stays); what is queued is answered SY_ESTATE. */
void sy_emit_close(void *arg);

/* sy_host_api.emit_event. */
int sy_emit_event(sy_host *h, const char *name, const char *key, const char *data,
                  size_t data_len, int64_t *event_id, char *err, size_t err_len);

#endif
