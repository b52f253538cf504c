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

#include <stdint.h>

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t sy_clock_now_ms(void);

#endif
