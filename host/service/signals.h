/*
 * service/signals.h -- SIGTERM and SIGINT for a process that drives an
 * engine.  The first drains it: no new attempts, those in flight finish
 * within the shutdown grace, the runs are released; it says what it waits
 * for, and counts down every few seconds.  The second cancels the attempts
 * in flight (their process groups are ended by the plugins): `run` records
 * its run Cancelled, `serve` puts the tasks back Ready for another host.
 * The third stops at once (sy_engine_run returns 2).  SIGHUP calls the
 * reload function, when there is one (a configuration file to read again).
 *
 * Loop thread only.
 */
#ifndef SY_SIGNALS_H
#define SY_SIGNALS_H

#include <stdbool.h>

#include <uv.h>

#include "engine/engine.h"

typedef struct sy_signals {
    uv_signal_t term, interrupt, hangup;
    uv_timer_t countdown;     /* while draining: what is still awaited */
    sy_engine *engine;
    void (*reload)(void *arg); /* SIGHUP; NULL: SIGHUP is logged, ignored */
    void *arg;
} sy_signals;

/* Watches the signals on `loop` for `engine` (borrowed); `reload(arg)`
 * on SIGHUP (may be NULL). */
void sy_signals_start(sy_signals *s, uv_loop_t *loop, sy_engine *engine,
                      void (*reload)(void *arg), void *arg);

/* The first signal's drain, asked some other way (POST /api/v1/drain):
 * `why` leads the log line that says what it waits for.  False, and
 * nothing done, when the engine drains already (a further request is not
 * a second signal: cancelling is for those who can send one).  Loop
 * thread. */
bool sy_signals_drain(sy_signals *s, const char *why);

/* Stops watching and closes the handles (closed after the next loop turn;
 * keep *s until then). */
void sy_signals_close(sy_signals *s);

#endif
