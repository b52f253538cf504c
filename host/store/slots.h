/*
 * store/slots.h -- flow-control slots held in the store: concurrency keys,
 * pools and tenants' bounds on running tasks (docs/flow-control.md).
 *
 * A slot names a key ("db:acme", "pool:gpu", "tenant:a"), the attempt
 * holding it (run, task index, element, attempt token) and the claim it
 * was taken under (the run's owner and lease epoch, store.h "Fencing").
 * Both stores keep it in the row of the attempt that took it, set by the
 * write that starts the attempt in the same batch (a take no start write
 * carries becomes a row of its own), and count what each key holds:
 * SQLite per run, under the claim the run's takes were made under;
 * PostgreSQL per host, until the host's leases end.  A holder counts
 * only while that claim is live: the run's row still names the same
 * owner and epoch and its lease has not ended (the host's count lives
 * no longer).  So a dead host's slots come back when its lease ends,
 * exactly then, and once: a claim by another host bumps the epoch, so
 * the old holders can never count again, and reaping them later is
 * housekeeping only.
 *
 * Taking is all or nothing over a task's keys and happens inside the
 * open batch, in the transaction that writes the attempt's start: a turn
 * that rolls back took nothing.  On SQLite the batch holds the file's
 * write lock, so the count and the take see every other host's
 * holders.  On PostgreSQL a host takes within slots granted to it ahead
 * (store/postgres/grants.c): a grant is made under the key's advisory
 * lock taken exclusive, a take within one under the same lock shared
 * (pg_try_advisory_xact_lock and _shared, in key order); a key whose
 * lock another host's open batch holds counts as busy for this turn
 * (never a wait, so never a deadlock between hosts), and each read runs
 * as its own statement after its lock, so it sees every grant and
 * holder committed before.
 *
 * Same threading and error contract as store.h.
 */
#ifndef SY_STORE_SLOTS_H
#define SY_STORE_SLOTS_H

#include "store/store.h"

/* The longest key the store takes (a rendered template, "pool:NAME",
 * "tenant:NAME"). */
#define SY_SLOT_KEY_MAX 1100

/* The most keys one attempt takes at once: a task's limits, its pool and
 * its tenant's bound. */
#define SY_SLOT_CLAIMS_MAX 18

/* One key an attempt takes: `n` slots of a key whose bound is `limit`. */
typedef struct sy_slot_claim {
    const char *key;  /* borrowed */
    int64_t limit;    /* 1 .. */
    int64_t n;        /* 1 .. limit */
} sy_slot_claim;

/* The attempt a slot belongs to. */
typedef struct sy_slot_holder {
    int64_t run_id;
    uint32_t idx;     /* the task's index in its workflow */
    int64_t elem;     /* a mapped task's element, -1 for a plain task */
    int64_t token;    /* its attempt token */
} sy_slot_holder;

/* Inside a batch (sy_store_begin): takes the n claims for attempt `h`
 * under `fence` (not NULL), all or none.  *taken tells which; when not,
 * *full is the index of a claim that had no room (or was being taken by
 * another host at this moment) and *held what that key's live holders
 * hold.  `now` is the clock leases are compared with.  SY_ESTATE outside
 * a batch.  One attempt's take in one call: the host takes a turn's
 * slots in two steps instead (sy_store_slot_room, sy_store_put_slots,
 * below), which write the same counts and holders.  On both stores
 * the take is then a slot row (no start write carries it). */
int sy_store_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                        const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                        size_t *full, int64_t *held);

/* A turn's takes in two steps (engine/ledger.h): what its keys hold,
 * read once, then the takes decided in memory against that, written
 * together.  Between the two, within one batch, no other host takes
 * these keys: SQLite's batch holds the file's write lock, and on
 * PostgreSQL the read locks each key for the transaction.
 *
 * Inside a batch: for each of the n claims (keys distinct), held[i] is
 * what c[i].key's live holders at `now` hold (the counts are exact on
 * both stores; the engine may ask again when a key has no room); -1
 * when another host's open batch is taking the key (PostgreSQL), which
 * is full for this batch.  SY_ESTATE outside a batch. */
int sy_store_slot_room(sy_store *s, const sy_slot_claim *c, size_t n, int64_t now,
                       int64_t *held);

/* sy_store_slot_room for the host `owner` (this host's runs' owner; NULL
 * as sy_store_slot_room), which takes the keys it reads in this batch:
 * on PostgreSQL, slots of a key granted to that owner ahead (a grant,
 * store/postgres/grants.c) are read without locking the key, and a key
 * locked gets a grant for c[i].n (what the turn may take of it) and,
 * while the key has plenty of room, some more for later turns.  held[i]
 * is then what leaves room for the owner's grant only: a key's slots are
 * taken by one host within its grant, never more.  SQLite ignores the
 * owner (its batch holds the write lock). */
int sy_store_slot_room_as(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                          int64_t now, int64_t *held);

/* One take decided by the engine: n slots of `key` (whose bound, as the
 * task names it, is `limit`) for attempt `holder`, under the claim of
 * its run whose lease epoch is `epoch`.  `tenant` is the run's tenant:
 * a store that counts by tenant sums the takes by key and tenant before
 * it writes (PostgreSQL: one row a key and tenant, not one a take);
 * NULL makes it read the run's.  Strings borrowed. */
typedef struct sy_slot_take {
    const char *key;
    int64_t limit;
    int64_t n;
    sy_slot_holder holder;
    int64_t epoch;
    const char *tenant;
} sy_slot_take;

/* Inside a batch, after sy_store_slot_room of every key named: writes the
 * n takes under `owner` (this host), all or none: added to their runs'
 * counts, and each kept for the write that starts its attempt later in
 * the same batch (sy_store_update_task or _element with the take's
 * token, or sy_store_update_tasks: it stores the hold in the attempt's
 * row), or, when no such write comes before the commit, as a row of its
 * own.
 * *put false (nothing written) when a key would then hold more than the
 * largest limit its takes name.  What the room read allowed never does
 * in the batch that read it, so SQLite, whose batch holds the write lock
 * throughout, writes what it is given; PostgreSQL checks, because a
 * batch replayed on a new connection (store/postgres/journal.c) may
 * find the keys fuller, and then fails.  Several takes of one key by one
 * holder: the last counts (the counts may then say more than is held,
 * never less). */
int sy_store_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                       int64_t now, bool *put);

/* Inside a batch: gives back takes written by sy_store_put_slots under
 * `owner`: what each held taken off the key's count, and its row (if it
 * has one) deleted.  Each take is given back once, in the batch that
 * writes the end of its attempt (SQLite's hold goes with that write): a
 * take under a claim that ended (its run reaped, or taken over) changes
 * nothing.  Only key, n, holder and epoch of each take are read. */
int sy_store_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n);

/* Inside a batch: gives back every slot each of the n attempts holds
 * (nothing for one that holds none).  A holder with token 0 stands for
 * every slot of its run. */
int sy_store_return_slots(sy_store *s, const sy_slot_holder *h, size_t n);

/* Outside a batch: deletes the rows of holders no longer live at `now`
 * (they count for nothing already); *n how many. */
int sy_store_reap_slots(sy_store *s, int64_t now, size_t *n);

/* One slot row as listed: borrowed strings, valid during the callback. */
typedef struct sy_slot_record {
    const char *key;
    sy_slot_holder holder;
    int64_t n;
    const char *owner; /* the host that took it */
    int64_t taken;     /* when */
    bool live;         /* counts at `now` */
} sy_slot_record;

/* Every slot row, by key then age (live or not: `live` says); the
 * callback returns non-zero to stop. */
int sy_store_list_slots(sy_store *s, int64_t now,
                        int (*cb)(void *arg, const sy_slot_record *r), void *arg);

#endif
