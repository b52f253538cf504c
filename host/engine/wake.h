/*
 * wake.h -- wakes the loop thread from any thread, without spinning.
 *
 * What uv_async_t does, minus its handshake: libuv 1.44's uv_async_send()
 * marks the handle busy, writes the eventfd, then marks it done, and the
 * loop thread, woken by that write, spins (then sched_yield()s) until the
 * sender has marked it done.  When the woken loop thread preempts the
 * sender on the same CPU, every wake costs a spin and a yield; with many
 * short tasks that is hundreds per second.  Here a sender only swaps a flag
 * and, when it was the first since the loop last looked, writes the
 * eventfd; the loop thread reads the eventfd, clears the flag, then calls
 * back.  Whatever a sender published before its sy_wake_send() is visible
 * to that callback.
 */
#ifndef SY_WAKE_H
#define SY_WAKE_H

#include <stdatomic.h>
#include <uv.h>

typedef struct sy_wake sy_wake;
typedef void (*sy_wake_cb)(sy_wake *w);

struct sy_wake {
    uv_poll_t poll;    /* on rd; owned by the loop thread */
    int rd, wr;        /* the eventfd twice, or a pipe's two ends */
    atomic_int armed;  /* 1: a write is (being) made the loop has not read */
    sy_wake_cb cb;     /* called on the loop thread after each wake */
    void *data;        /* the caller's; never touched here */
};

/* Loop thread.  Returns 0 or a negative errno value; on an error after the
 * handle was made, it is being closed: keep *w until the loop has turned. */
int sy_wake_init(uv_loop_t *loop, sy_wake *w, sy_wake_cb cb);

/* Any thread, any number at once; async-signal-safe.  Sends coalesce: the
 * callback runs at least once after the last send. */
void sy_wake_send(sy_wake *w);

/* Loop thread: stops watching and closes the descriptors once libuv has
 * closed the handle (after the next uv_run turn).  No send may follow. */
void sy_wake_close(sy_wake *w);

#endif
