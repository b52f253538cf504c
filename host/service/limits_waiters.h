/*
 * service/limits_waiters.h -- the tasks waiting for each flow-control key
 * (store/waiters.h), in the order the key will be granted
 * (engine/grant.h), with the tenants' weights of `flow`: what
 * `switchyard limits` lists, and where a run's Waiting tasks stand
 * (service/run_waiting.c).
 *
 * Read from the store's waiter rows when asked: the engine writes a
 * task's "position P of N" once, as first seen, so readers compute the
 * current one.  Any thread (the store's own contract applies).
 */
#ifndef SY_SERVICE_LIMITS_WAITERS_H
#define SY_SERVICE_LIMITS_WAITERS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/flow.h"
#include "store/store.h"

/* The live waiters of some keys at one moment, each key's in grant
 * order.  Owned by the caller of sy_waiter_queues_read. */
typedef struct sy_waiter_queues sy_waiter_queues;

/* Reads the live waiters at `now` of the n `keys` (NULL: of every key)
 * with one read of the rows, then their holders' shares, and orders each
 * key's.  *out is freed with sy_waiter_queues_free; NULL with the store's
 * failure (its reason in err). */
int sy_waiter_queues_read(sy_store *s, const sy_flow_config *flow, int64_t now,
                          const char *const *keys, size_t n, sy_waiter_queues **out,
                          char *err, size_t err_len);

/* Where task (run_id, idx, elem; elem -1 for a task that is not a map's
 * element) stands among `key`'s waiters: *position from 1 in grant order,
 * *count how many wait.  False (both left alone) when it does not wait
 * for `key`. */
bool sy_waiter_queues_position(const sy_waiter_queues *q, const char *key, int64_t run_id,
                               uint32_t idx, int64_t elem, size_t *position, size_t *count);

/* What `key`'s live holders hold at the read, every tenant's together
 * (the store's shares): false (*held left alone) when `key` has no
 * waiter in q. */
bool sy_waiter_queues_held(const sy_waiter_queues *q, const char *key, int64_t *held);

/* NULL is fine. */
void sy_waiter_queues_free(sy_waiter_queues *q);

/* Adds to each entry of `keys` (an object by key name, entries as
 * sy_limits_list's, created by `entry` when missing) "waiting" (how many)
 * and "waiters": [{"position", "run", "task", "element", "tenant",
 * "priority", "slots", "host", "since"}] in grant order at `now`.  The
 * store's failure with its reason in err. */
int sy_limits_add_waiters(json_t *keys, sy_store *s, const sy_flow_config *flow, int64_t now,
                          json_t *(*entry)(json_t *keys, const char *key, int64_t limit),
                          char *err, size_t err_len);

#endif
