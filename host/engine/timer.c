/* Timers on the engine's clock: a binary min-heap and one libuv timer. */
#include "engine/timer.h"

#include <stdlib.h>

#include "base/util.h"

static void place(sy_timers *ts, size_t i, sy_timer *t)
{
    ts->heap[i] = t;
    t->slot = i + 1;
}

static void sift_up(sy_timers *ts, size_t i)
{
    sy_timer *t = ts->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (ts->heap[parent]->due <= t->due)
            break;
        place(ts, i, ts->heap[parent]);
        i = parent;
    }
    place(ts, i, t);
}

static void sift_down(sy_timers *ts, size_t i)
{
    sy_timer *t = ts->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= ts->n)
            break;
        if (child + 1 < ts->n && ts->heap[child + 1]->due < ts->heap[child]->due)
            child++;
        if (t->due <= ts->heap[child]->due)
            break;
        place(ts, i, ts->heap[child]);
        i = child;
    }
    place(ts, i, t);
}

static void on_wakeup(uv_timer_t *h);

/* Waits for the earliest timer with the libuv timer. */
static void arm(sy_timers *ts)
{
    if (ts->n == 0) {
        uv_timer_stop(&ts->wakeup);
        return;
    }
    int64_t due = ts->heap[0]->due, delay = due - ts->now();
    ts->armed_for = due;
    uv_timer_start(&ts->wakeup, on_wakeup, delay > 0 ? (uint64_t)delay : 0, 0);
}

static void on_wakeup(uv_timer_t *h)
{
    sy_timers *ts = h->data;
    int64_t now = ts->now();
    if (ts->loop_time_final && ts->armed_for > now)
        now = ts->armed_for;
    sy_timers_expire(ts, now);
    arm(ts); /* the earliest may have been stopped before it came due */
}

void sy_timers_init(sy_timers *ts, uv_loop_t *loop, int64_t (*now)(void), bool loop_time_final)
{
    *ts = (sy_timers){.now = now, .loop_time_final = loop_time_final};
    uv_timer_init(loop, &ts->wakeup);
    ts->wakeup.data = ts;
}

void sy_timer_start(sy_timers *ts, sy_timer *t, int64_t due)
{
    sy_timer_stop(ts, t);
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? ts->cap * 2 : 64;
        sy_timer **heap = realloc(ts->heap, ts->cap * sizeof *heap);
        if (!heap)
            sy_oom("growing the timer heap");
        ts->heap = heap;
    }
    t->due = due;
    place(ts, ts->n++, t);
    sift_up(ts, ts->n - 1);
    /* Re-arm only for a new earliest: removing one leaves the libuv timer
     * to go off early and find nothing due, which is cheaper than reading
     * the clock on every stop. */
    if (ts->heap[0] == t &&
        (!uv_is_active((uv_handle_t *)&ts->wakeup) || due < ts->armed_for))
        arm(ts);
}

void sy_timer_stop(sy_timers *ts, sy_timer *t)
{
    if (!t->slot)
        return;
    size_t i = t->slot - 1;
    t->slot = 0;
    sy_timer *last = ts->heap[--ts->n];
    if (i < ts->n) {
        place(ts, i, last);
        sift_up(ts, i);
        sift_down(ts, last->slot - 1);
    }
    if (ts->n == 0)
        uv_timer_stop(&ts->wakeup);
}

void sy_timers_expire(sy_timers *ts, int64_t now)
{
    while (sy_timers_due(ts, now)) {
        sy_timer *t = ts->heap[0];
        sy_timer_stop(ts, t);
        t->fire(t);
    }
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_timers_close(sy_timers *ts)
{
    for (size_t i = 0; i < ts->n; i++)
        ts->heap[i]->slot = 0;
    free(ts->heap);
    ts->heap = NULL;
    ts->n = ts->cap = 0;
    uv_timer_stop(&ts->wakeup);
    uv_close((uv_handle_t *)&ts->wakeup, close_noop);
}
