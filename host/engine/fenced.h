/*
 * engine/fenced.h -- the engine's side of fenced writes (store.h,
 * "Fencing"): what a write the store refused does to its run, and the
 * run's events, written under the run's claim and the task's attempt
 * token.  Calls nothing else of the engine, so every part that writes
 * can use it.
 */
#ifndef SY_ENGINE_FENCED_H
#define SY_ENGINE_FENCED_H

#include "engine/internal.h"

/* A write for run r came back `rc`.  True when the store refused it by
 * its fence: the refusal is counted, and r is marked to be dropped after
 * the turn's commit, with the store's reason kept for the one log line
 * the drop makes.  Never an error that stops the host. */
bool sy_fenced_refused(sy_live_run *r, int rc);

/* Whether run r, at `now`, is past the lease this host holds it under
 * while it may still write for it (not dropped, and not finished with its
 * last state written: a terminal run is claimed by nobody). */
bool sy_fenced_lease_past(const sy_live_run *r, int64_t now);

/* Appends an event about attempt `attempt` of task idx of run r (store.h,
 * sy_store_add_event).  Nothing is written for a run this host dropped,
 * nor for one past its lease: the engine is told (e->lease_past) and
 * finds its lease lapsed before its next write (engine/lease.h). */
void sy_live_event(sy_live_run *r, size_t idx, uint32_t attempt,
                   const char *kind, const char *detail);

#endif
