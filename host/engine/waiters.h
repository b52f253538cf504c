/*
 * engine/waiters.h -- the order across hosts of a contended flow-control
 * key (docs/flow-control.md, "The order across hosts").
 *
 * A task that finds a key full, or finds others ahead of it in the key's
 * order, registers as a waiter of that key in the store
 * (store/waiters.h), in the turn's batch, once (not at every retry).
 * While a key has live waiters, a take of it goes only to the waiter
 * first in the grant order (engine/grant.h) among those its free slots
 * fit; a task asking for the first time counts as a waiter since now.  A
 * key with no waiters costs one indexed read per turn and key (the
 * turn's view keeps what it read), then takes as before.
 *
 * The view of a key (its waiters in order, its free slots, its tenants'
 * holdings) is read once per turn, when a take first needs it, and kept
 * up to date with what this turn takes and registers; the end of the
 * turn forgets it, since other hosts' batches change it in between.
 * A claim's key is found again by its address first: within a turn, the
 * keys' strings the caller passes (engine/claims.h) must not change nor
 * another key take their place.  Loop thread, inside the turn's batch.
 */
#ifndef SY_ENGINE_WAITERS_H
#define SY_ENGINE_WAITERS_H

#include "engine/internal.h"
#include "store/slots.h"

void sy_waiters_init(sy_engine *e);
void sy_waiters_free(sy_engine *e);

/* Before the turn's takes: reads the views of the n claims' keys (a
 * turn's every key, in one store call), so that sy_waiters_check asks
 * the store nothing for them.  A store failure is returned. */
int sy_waiters_prepare(sy_engine *e, const sy_slot_claim *c, size_t n, int64_t now);

/* Whether the order lets task idx of r take the n claims now: SY_OK with
 * *blocked == n when it does; otherwise *blocked is the claim whose
 * waiters come first and *position, *count the task's place among that
 * key's waiters (1-based) and how many wait.  `read`: every claim's key
 * was among those sy_waiters_prepare read (then, when none of the keys
 * read has waiters, nothing is looked up).  A store failure is returned
 * (its message in the store's error). */
int sy_waiters_check(sy_live_run *r, size_t idx, const sy_slot_claim *c, size_t n, bool read,
                     int64_t now, size_t *blocked, size_t *position, size_t *count);

/* Task idx took its n claims: they leave the turn's view, and its
 * waiter row, if it has one, is deleted. */
int sy_waiters_taken(sy_live_run *r, size_t idx, const sy_slot_claim *c, size_t n);

/* Task idx waits for claim `claim`: its row written, unless it has one
 * for that key already. */
int sy_waiters_register(sy_live_run *r, size_t idx, const sy_slot_claim *claim,
                        int64_t now);

/* Task idx ended (or its run did): its row, if any, is deleted at the
 * end of the turn's decisions. */
void sy_waiters_ended(sy_live_run *r, size_t idx);

/* Inside the batch, after the turn's decisions: writes the deletions of
 * ended tasks' rows and forgets the turn's view.  False when the store
 * failed (e->fatal set, logged). */
bool sy_waiters_end_turn(sy_engine *e);

#endif
