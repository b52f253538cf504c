/*
 * engine/shutdown.h -- stopping: the bound on waiting for plugins, and the
 * second signal's cancel.
 *
 * A draining host, or one whose runs are over, waits for the attempts that
 * plugins still hold (the ABI lets nothing be freed under them).  A plugin
 * that never completes one would make that wait endless; after the grace
 * the engine stops waiting, names every attempt it abandons (plugin,
 * instance, task, run, attempt), and returns SY_ENGINE_ABANDONED: the
 * caller leaves the process without freeing what plugins may still touch.
 * The runs stay in the store; a host that takes them next recovers the
 * abandoned attempts.
 */
#ifndef SY_ENGINE_SHUTDOWN_H
#define SY_ENGINE_SHUTDOWN_H

#include "engine/internal.h"

/* Arms the grace timer once (idempotent); loop thread. */
void sy_grace_start(sy_engine *e);

/* Says, once the runs are over, which attempts the engine still waits for
 * (plugin, instance, task, run, attempt) and for how long at most, and
 * that a signal ends the wait.  Loop thread. */
void sy_grace_say_waiting(sy_engine *e);

/* Ends the wait now, as the grace's end would: names and abandons what is
 * left.  Loop thread. */
void sy_grace_end_now(sy_engine *e);

/* Stops it and closes its handle. */
void sy_grace_close(sy_engine *e);

/* The second signal: every attempt in flight is cancelled (the plugins
 * end their process groups).  `run` (not serving) cancels its runs, so
 * their running tasks end Cancelled and the runs Cancelled; a serving
 * host puts the tasks back Ready without charging them and releases the
 * runs for another host, since one host's stop is not its tenants' cancel.
 * Loop thread. */
void sy_engine_interrupt(sy_engine *e);

/* An interrupted serving host's attempt came back: its task goes back
 * Ready, not charged.  True when it was handled so. */
bool sy_engine_requeue_interrupted(sy_engine *e, sy_attempt *a);

#endif
