/*
 * executor/watchdog.h -- a thread that says, while it is still stuck, which
 * call into a plugin has not returned.
 *
 * The ABI forbids submit(), cancel() and capacity() to block; a plugin that
 * does anyway stops the host's loop, and every other task with it.  The
 * watchdog reads the call record (call_record.h) a few times per bound and,
 * once a call has run past its instance's call_timeout, logs one error
 * naming the plugin, the instance, the call and the task, and marks the
 * instance unhealthy: dispatch gives it no new task, and the operator is
 * told to isolate it.  When the call finally returns it says so, with how
 * long it took.  Nothing is killed: the loop is the plugin's hostage, and
 * only the operator can decide between waiting and restarting.
 *
 * Threads: start and stop from the setup thread, around the loop.
 */
#ifndef SY_EXECUTOR_WATCHDOG_H
#define SY_EXECUTOR_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>

/* Starts the thread (idempotent).  0, or -1 with err. */
int sy_watchdog_start(char *err, size_t err_len);

/* Stops and joins it. */
void sy_watchdog_stop(void);

/* Calls reported stuck since the process started (for tests and metrics). */
uint64_t sy_watchdog_stuck_count(void);

#endif
