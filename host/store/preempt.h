/*
 * store/preempt.h -- the strategy cancel_in_progress across hosts
 * (docs/flow-control.md): a task that finds a concurrency key full asks,
 * through the store, that the key's oldest holder be cancelled.  The
 * request is a reason written on the holder's slot row (store/slots.h);
 * the host that owns the row reads its requests at its next turn when it
 * made one itself, and at every lease renewal for the others' (a third of
 * the lease), cancels the attempt (its task ends Cancelled, not retried)
 * and gives the slot back, which the waiting task then takes.
 *
 * Same threading and error contract as store.h.
 */
#ifndef SY_STORE_PREEMPT_H
#define SY_STORE_PREEMPT_H

#include "store/slots.h"

/* Inside a batch: writes `why` on the slot row of key's oldest live
 * holder at `now` (by the time it was taken), unless a holder of the key
 * has a request already (one at a time per key: each ends with a slot
 * given back).  *asked whether a row was marked. */
int sy_store_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                            bool *asked);

/* One request to act on. */
typedef struct sy_cancel_request {
    sy_slot_holder holder;
    const char *key; /* borrowed, valid during the callback */
    const char *why; /* the same */
} sy_cancel_request;

/* The requests on `owner`'s live slot rows at `now`, oldest first; the
 * callback returns non-zero to stop.  In or outside a batch. */
int sy_store_list_cancel_requests(sy_store *s, const char *owner, int64_t now,
                                  int (*cb)(void *arg, const sy_cancel_request *r),
                                  void *arg);

#endif
