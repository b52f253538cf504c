/*
 * engine/claims.h -- the keys a turn's tasks take (engine/limits.h),
 * named once per task and turn.
 *
 * A task's keys are its limits' templates rendered from the run's context
 * (which never changes while the run is loaded), its pool's and its
 * tenant's.  The turn's read of the keys (sy_limits_prepare) and the
 * task's take both need them: rendered and copied once, they are kept
 * here until the end of the turn, so that the take finds them instead of
 * rendering them a second time.
 *
 * Loop thread only; owned by engine/limits.c.
 */
#ifndef SY_ENGINE_CLAIMS_H
#define SY_ENGINE_CLAIMS_H

#include "engine/internal.h"
#include "store/slots.h"

typedef struct sy_claims sy_claims;

sy_claims *sy_claims_new(void);
void sy_claims_free(sy_claims *c);

/* A task's claims being written: sy_claims_begin, then one
 * sy_claims_add per key, then sy_claims_end to keep them (or
 * sy_claims_drop to forget them, when a key cannot be named). */
void sy_claims_begin(sy_claims *c);

/* Adds a claim of n slots of the key `prefix` followed by `name`, whose
 * bound is `limit`: the key copied here, kept until sy_claims_clear.
 * With `name` NULL the key is `prefix` itself, borrowed, not copied (a
 * pool's or tenant's key, which the configuration keeps until a reload,
 * never within a turn): every claim of it this turn names the same
 * string, which the turn's look-ups of keys recognise at once
 * (engine/ledger.c, engine/waiters.c). */
void sy_claims_add(sy_claims *c, const char *prefix, const char *name, int64_t limit,
                   int64_t n);

/* Keeps the claims added since sy_claims_begin as task idx of r's for
 * this turn (`lost_pool`, borrowed from the configuration: a pool the
 * task names that is not defined any more, for the take's warning;
 * NULL), and returns them (*n of them; valid until the next
 * sy_claims_begin or sy_claims_clear). */
const sy_slot_claim *sy_claims_end(sy_claims *c, sy_live_run *r, size_t idx,
                                   const char *lost_pool, size_t *n);

/* Forgets the claims added since sy_claims_begin. */
void sy_claims_drop(sy_claims *c);

/* The claims kept for task idx of r this turn (*n of them, *lost_pool as
 * given, *read whether sy_claims_read came after them, *marks theirs:
 * below), or NULL when none are.  Valid until the next sy_claims_begin
 * or sy_claims_clear. */
const sy_slot_claim *sy_claims_find(const sy_claims *c, const sy_live_run *r, size_t idx,
                                    size_t *n, const char **lost_pool, bool *read,
                                    uint32_t **marks);

/* Every claim kept so far had its key read this turn (the turn's read of
 * its keys, engine/ledger.h and engine/waiters.h). */
void sy_claims_read(sy_claims *c);

/* Every claim kept this turn, in the order kept: *n of them, and with
 * each a mark for the caller (0 when kept), *marks: where the turn's
 * read put its key (engine/ledger.h). */
const sy_slot_claim *sy_claims_all(const sy_claims *c, size_t *n, uint32_t **marks);

/* The turn is over: every claim forgotten (the memory kept). */
void sy_claims_clear(sy_claims *c);

#endif
