/*
 * engine/ledger.h -- a turn's flow-control slots, decided in memory
 * (docs/flow-control.md, "The cost of limits").
 *
 * A key's holdings are read from the store once per turn
 * (sy_store_slot_room), at its first take or before the turn's first
 * take for every key its Ready tasks name (sy_ledger_read); the turn's
 * takes of it are then decided against that count plus what the turn
 * took, and written together at the end of the decisions
 * (sy_ledger_write, sy_store_put_slots), in the batch that writes the
 * attempts' starts.  The count stays exact meanwhile: from the read to
 * the commit no other host takes the key (store/slots.h), and this
 * host's give-backs go in at the start of the turn, before any read.
 *
 * A claim's key is found again by its address first: within a turn, the
 * keys' strings the caller passes (engine/claims.h) must not change nor
 * another key take their place.
 *
 * Loop thread only; owned by engine/limits.c.
 */
#ifndef SY_ENGINE_LEDGER_H
#define SY_ENGINE_LEDGER_H

#include "engine/internal.h"
#include "store/slots.h"

typedef struct sy_ledger sy_ledger;

sy_ledger *sy_ledger_new(void);
void sy_ledger_free(sy_ledger *l);

/* Reads, in one store call, the keys of the n claims the turn has not
 * read yet, for the host `owner` (sy_store_slot_room_as: the slots a
 * claim names are summed per key, what the turn may take of it).  With
 * `fresh` (room for n), the claims read, one per key, are copied there,
 * *n_fresh of them.  With `at` (n of them), at[i] is set
 * to where claim i's key is in the turn's ledger (for sy_ledger_take).
 * A store error is returned with its message in the store. */
int sy_ledger_read(sy_ledger *l, sy_store *s, const char *owner, const sy_slot_claim *c,
                   size_t n, int64_t now, sy_slot_claim *fresh, size_t *n_fresh, uint32_t *at);

/* Decides the n claims for attempt h of a run held under `fence`: all
 * taken (*taken; written at sy_ledger_write), or none, with *full the
 * index of a claim with no room and *held what its key holds (-1: being
 * taken by another host).  Reads the keys not read yet first.  `at`
 * (NULL, or n of them): where this turn's sy_ledger_read put each
 * claim's key, 0 where unknown (then it is looked up).  `tenant` is the
 * run's, borrowed until sy_ledger_write (NULL: the store reads it). */
int sy_ledger_take(sy_ledger *l, sy_store *s, const sy_store_fence *fence,
                   const char *tenant, const sy_slot_holder *h, const sy_slot_claim *c,
                   size_t n, int64_t now, const uint32_t *at, bool *taken, size_t *full,
                   int64_t *held);

/* Takes back the unwritten takes of attempt h (the turn's last), as if
 * never decided. */
void sy_ledger_untake(sy_ledger *l, const sy_slot_holder *h);

/* Writes the takes decided since the last write.  A store error is
 * returned with its message in the store; SY_ESTATE, with none, when the
 * store wrote none because a key would exceed its limit (a broken
 * promise of store/slots.h): the batch must not commit. */
int sy_ledger_write(sy_ledger *l, sy_store *s, int64_t now);

/* The turn is over (committed or not): every key is read again in the
 * next, and unwritten takes are dropped. */
void sy_ledger_forget(sy_ledger *l);

#endif
