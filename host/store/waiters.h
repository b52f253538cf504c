/*
 * store/waiters.h -- tasks waiting in the store for a flow-control key
 * (store/slots.h), so that every host on one store grants a contended
 * key in one order (docs/flow-control.md, "The order across hosts").
 *
 * A waiter is a row naming a key, the task that waits for it (run, task
 * index, element), its tenant, its priority, since when it waits and the
 * slots it wants, and the claim it waits under: its run's owner and
 * lease epoch, fenced exactly as slot rows are.  A waiter counts only
 * while that claim is live, so a dead host's waiters stop counting with
 * its lease, and a host that takes the run over registers its own rows
 * (the old ones can never count again: the epoch moved on).
 *
 * A task has rows for one key at a time: the key it found full or found
 * others ahead of it on.  Registering writes that key's row and deletes
 * the task's rows on any other key, in the open batch.  The order itself
 * is the engine's (engine/grant.h): the store lists, it never decides.
 *
 * Same threading and error contract as store.h.
 */
#ifndef SY_STORE_WAITERS_H
#define SY_STORE_WAITERS_H

#include "store/slots.h"

/* One waiter.  Strings are borrowed: the caller's when registering,
 * valid during the callback when listed. */
typedef struct sy_slot_waiter {
    const char *key;
    sy_slot_holder task; /* run, idx, elem; token unused (0) */
    const char *tenant;
    int64_t priority;    /* the task's priority before aging */
    int64_t since;       /* when it first waited (ms, the leases' clock);
                            kept when the row is registered again */
    int64_t n;           /* the slots of `key` it wants: 1 .. */
    const char *owner;   /* listed only: the host it waits on */
    bool live;           /* listed only: counts at `now` */
} sy_slot_waiter;

typedef int (*sy_slot_waiter_cb)(void *arg, const sy_slot_waiter *w);

/* Inside a batch: task w->task waits for w->key under `fence` (not
 * NULL): its row there written (its `since` kept when it had one), its
 * rows on other keys deleted.  SY_ESTATE outside a batch. */
int sy_store_wait_slot(sy_store *s, const sy_store_fence *fence, const sy_slot_waiter *w);

/* Inside a batch: deletes the rows of task `t` (run, idx, elem), or with
 * `whole_run` every row of run t->run_id. */
int sy_store_unwait_slot(sy_store *s, const sy_slot_holder *t, bool whole_run);

/* The live waiters at `now` of the n keys (1 or more), in no particular
 * order; the callback returns non-zero to stop.  Inside a
 * batch or not. */
int sy_store_key_waiters(sy_store *s, const char *const *keys, size_t n, int64_t now,
                         sy_slot_waiter_cb cb, void *arg);

/* What the live holders of `key` hold at `now`, by their run's tenant:
 * one call per tenant holding any. */
int sy_store_key_shares(sy_store *s, const char *key, int64_t now,
                        int (*cb)(void *arg, const char *tenant, int64_t held), void *arg);

/* Outside a batch: deletes the waiters no longer live at `now` (they
 * count for nothing already); *n how many. */
int sy_store_reap_waiters(sy_store *s, int64_t now, size_t *n);

/* Every waiter row, by key then age (live or not: `live` says). */
int sy_store_list_waiters(sy_store *s, int64_t now, sy_slot_waiter_cb cb, void *arg);

/* What an implementation provides behind the functions above, with their
 * contracts (store/waiters.c checks the arguments first): reached from
 * sy_store_ops's `waiters`. */
struct sy_store_waiter_ops {
    int (*wait)(sy_store *s, const sy_store_fence *fence, const sy_slot_waiter *w);
    int (*unwait)(sy_store *s, const sy_slot_holder *t, bool whole_run);
    int (*key_waiters)(sy_store *s, const char *const *keys, size_t n, int64_t now,
                       sy_slot_waiter_cb cb, void *arg);
    int (*key_shares)(sy_store *s, const char *key, int64_t now,
                      int (*cb)(void *arg, const char *tenant, int64_t held), void *arg);
    int (*reap)(sy_store *s, int64_t now, size_t *n);
    int (*list)(sy_store *s, int64_t now, sy_slot_waiter_cb cb, void *arg);
};

/* store/sqlite/waiters.c, store/postgres/waiters.c */
extern const struct sy_store_waiter_ops sy_sqlite_waiter_ops;
extern const struct sy_store_waiter_ops sy_pg_waiter_ops;

#endif
