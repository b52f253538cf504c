/*
 * service/limits_waiters.h -- the waiters `switchyard limits` shows for
 * each key (store/waiters.h), in the order the key will be granted
 * (engine/grant.h), with the tenants' weights of `flow`.
 */
#ifndef SY_SERVICE_LIMITS_WAITERS_H
#define SY_SERVICE_LIMITS_WAITERS_H

#include <jansson.h>
#include <stdint.h>

#include "config/flow.h"
#include "store/store.h"

/* Adds to each entry of `keys` (an object by key name, entries as
 * sy_limits_list's, created by `entry` when missing) "waiting" (how many)
 * and "waiters": [{"position", "run", "task", "element", "tenant",
 * "priority", "slots", "host", "since"}] in grant order at `now`.  The
 * store's failure with its reason in err. */
int sy_limits_add_waiters(json_t *keys, sy_store *s, const sy_flow_config *flow, int64_t now,
                          json_t *(*entry)(json_t *keys, const char *key, int64_t limit),
                          char *err, size_t err_len);

#endif
