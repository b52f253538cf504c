/*
 * engine/reload.h -- a new configuration while runs go on (SIGHUP): the
 * engine's side.  sy_engine_reload (engine.h) swaps in the new routes,
 * instances and workflows; every task of every live run is routed anew,
 * so what has not started yet goes where the new routes say; attempts in
 * flight finish on the instances they started on.  The replaced instance
 * table is kept until no attempt uses it, then handed back to its owner
 * to stop.
 *
 * Loop thread only.
 */
#ifndef SY_ENGINE_RELOAD_H
#define SY_ENGINE_RELOAD_H

#include "engine/internal.h"

/* Once per turn: hands back each replaced table no attempt uses any more. */
void sy_reload_collect(sy_engine *e);

/* At the engine's end: frees the replaced tables left (their owner stops
 * their instances itself). */
void sy_reload_free(sy_engine *e);

#endif
