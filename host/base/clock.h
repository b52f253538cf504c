/*
 * clock.h -- the host's one clock.
 *
 * Every time the host records or compares (task and run timestamps in the
 * store, backoff deadlines, leases, log lines, progress) is milliseconds
 * since the Unix epoch from this function, so times written by one part
 * can be compared with times written by another, and by another host
 * sharing the store.  libuv timers keep their own monotonic clock for
 * *delays*; a delay is always computed from two readings of this one.
 *
 * Thread-safe; never fails.
 */
#ifndef SY_CLOCK_H
#define SY_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t sy_clock_now_ms(void);

/* The clock schedules are read on (when a tick is due, which ticks a host
 * missed): sy_clock_now_ms, unless SWITCHYARD_FAKE_CLOCK is set when it is
 * first read, to "START[xRATE][@ANCHOR]": START is a UTC time
 * ("2026-03-29T00:58:00Z") or milliseconds since the epoch, RATE how many
 * times faster than the real clock it runs (1 when left out), ANCHOR the
 * real time in ms since the epoch at which it read START (the first read
 * when left out: hosts given one anchor share one timeline).  Tests cross
 * a change of the clocks or many ticks without waiting; leases and every
 * other time the host records keep the real clock.  A value it cannot
 * read is reported once on stderr and ignored. */
int64_t sy_clock_schedule_ms(void);

/* Schedule-clock milliseconds per real millisecond (RATE; 1 unfaked). */
double sy_clock_schedule_rate(void);

/* Reads a SWITCHYARD_FAKE_CLOCK value; false when malformed. */
bool sy_clock_fake_parse(const char *text, int64_t *start, double *rate, int64_t *anchor);

#endif
