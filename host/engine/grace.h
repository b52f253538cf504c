/*
 * engine/grace.h -- the bound on waiting for plugins at shutdown.
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
#ifndef SY_ENGINE_GRACE_H
#define SY_ENGINE_GRACE_H

#include "engine/internal.h"

/* Arms the grace timer once (idempotent); loop thread. */
void sy_grace_start(sy_engine *e);

/* Stops it and closes its handle. */
void sy_grace_close(sy_engine *e);

#endif
