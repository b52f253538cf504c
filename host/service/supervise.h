/*
 * service/supervise.h -- a serving host as systemd sees it (Type=notify):
 * READY=1 once the engine's first loop turn has claimed its runs, STATUS=
 * lines while it serves, RELOADING=1 ... READY=1 around a reload, and
 * WATCHDOG=1 from the loop every half of WATCHDOG_USEC, so that a wedged
 * loop stops the pings and systemd restarts the host.  (STOPPING=1 is sent
 * by the first SIGTERM: service/signals.c.)  All of it a no-op without
 * NOTIFY_SOCKET (base/sdnotify.h).
 *
 * Loop thread only.
 */
#ifndef SY_SUPERVISE_H
#define SY_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "engine/engine.h"

/* How often STATUS= is brought up to date (sent only when it changed). */
#define SY_SUPERVISE_STATUS_MS 2000

typedef struct sy_supervise {
    uv_check_t first_turn;   /* READY=1 after the loop's first turn */
    uv_timer_t status, watchdog;
    sy_engine *engine;       /* borrowed */
    bool active;             /* started, handles to close */
    bool ready;              /* READY=1 sent */
    char last[256];          /* the STATUS= last sent */
} sy_supervise;

/* Starts on `loop` for `engine`: nothing is sent until the loop turns.
 * A no-op when no service manager listens. */
void sy_supervise_start(sy_supervise *s, uv_loop_t *loop, sy_engine *engine);

/* Around a reload: RELOADING=1 with MONOTONIC_USEC (systemd 253's
 * Type=notify-reload wants it), then READY=1 with the outcome as STATUS. */
void sy_supervise_reloading(sy_supervise *s);
void sy_supervise_reloaded(sy_supervise *s, bool ok);

/* The STATUS= line for what the engine does now, in buf. */
const char *sy_supervise_status(const sy_engine *e, char *buf, size_t len);

/* Closes the handles (after the next loop turn; keep *s until then). */
void sy_supervise_close(sy_supervise *s);

#endif
