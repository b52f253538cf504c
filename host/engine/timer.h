/*
 * engine/timer.h -- timers on the engine's clock.
 *
 * Backoff and deadlines are due at a time read from the engine's clock
 * (the injected one in tests), kept in one min-heap.  A single libuv timer
 * wakes the loop when the earliest is due; besides, the engine fires what
 * is due at every loop turn, so a test that moves a fake clock forward
 * only turns the loop (UV_RUN_NOWAIT) to see the effect.  Arming and
 * stopping allocate nothing (the heap grows by doubling) and read the clock
 * only when the earliest due time changes.
 *
 * Loop thread only.
 */
#ifndef SY_ENGINE_TIMER_H
#define SY_ENGINE_TIMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct sy_timer sy_timer;

/* Embedded in what it times; `data` is the owner's. */
struct sy_timer {
    int64_t due;                /* on the engine's clock */
    size_t slot;                /* 1 + its place in the heap; 0: not armed */
    void (*fire)(sy_timer *t);  /* called once when due, already disarmed */
    void *data;
};

typedef struct sy_timers {
    sy_timer **heap;
    size_t n, cap;
    uv_timer_t wakeup;
    int64_t (*now)(void);
    /* With the real clock, the libuv timer's expiry (monotonic) counts as
     * reaching the time it was armed for: a wall clock stepped back does not
     * hold a retry or a deadline back.  A fake clock alone decides. */
    bool loop_time_final;
    int64_t armed_for;          /* the due time the libuv timer waits for */
} sy_timers;

void sy_timers_init(sy_timers *ts, uv_loop_t *loop, int64_t (*now)(void),
                    bool loop_time_final);

/* Arms t for `due` (re-arms it when armed). */
void sy_timer_start(sy_timers *ts, sy_timer *t, int64_t due);

/* Disarms t; nothing when not armed. */
void sy_timer_stop(sy_timers *ts, sy_timer *t);

/* Fires, earliest first, every timer due at `now` or before (also those a
 * callback arms for then). */
void sy_timers_expire(sy_timers *ts, int64_t now);

/* Whether the earliest timer is due at `now`. */
static inline bool sy_timers_due(const sy_timers *ts, int64_t now)
{
    return ts->n > 0 && ts->heap[0]->due <= now;
}

/* Stops and closes the libuv timer (closed after the next loop turn) and
 * frees the heap; timers still armed are forgotten. */
void sy_timers_close(sy_timers *ts);

#endif
