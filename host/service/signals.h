/*
 * service/signals.h -- SIGTERM and SIGINT for a process that drives an
 * engine: the first drains it (no new attempts; those in flight finish;
 * runs are released), the second stops it at once (sy_engine_run returns
 * 2 and the program may exit without waiting).
 *
 * Loop thread only.
 */
#ifndef SY_SIGNALS_H
#define SY_SIGNALS_H

#include <uv.h>

#include "engine/engine.h"

typedef struct sy_signals {
    uv_signal_t term, interrupt;
    sy_engine *engine;
} sy_signals;

/* Watches both signals on `loop` for `engine` (borrowed). */
void sy_signals_start(sy_signals *s, uv_loop_t *loop, sy_engine *engine);

/* Stops watching and closes the handles (closed after the next loop turn;
 * keep *s until then). */
void sy_signals_close(sy_signals *s);

#endif
