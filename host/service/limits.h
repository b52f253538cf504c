/*
 * service/limits.h -- what `switchyard limits` shows: every key, pool and
 * tenant bound with the slots held in the store and by whom.
 */
#ifndef SY_SERVICE_LIMITS_H
#define SY_SERVICE_LIMITS_H

#include <jansson.h>
#include <stdint.h>

#include "config/flow.h"
#include "store/store.h"

/* {"keys": [{"key", "held", "limit" (null for a concurrency key: its
 * limit is the task's), "holders": [{"run", "task" (index), "element"
 * (null), "token", "slots", "host", "since"}], "waiting", "waiters":
 * [{"position", "run", "task", "element", "tenant", "priority", "slots",
 * "host", "since"}]}], "rates": [{"key", "tokens", "rate", "interval_ms",
 * "burst", "next_token_ms"}]}: the live holders and waiters (in the order
 * the key is granted, engine/grant.h) at `now`, every pool and bounded
 * tenant of `flow` listed even with none; every rate limit's bucket in
 * key order, its whole tokens at `now` and the ms until the next is due
 * (null when full; tokens, rate, burst and next_token_ms null for a
 * bucket last taken from by a build that did not keep its rate), and
 * every named rate limit of `flow` whose bucket ("rate:@NAME") no take
 * has made yet, full at its rate.
 * NULL with the reason in err when the store fails. */
json_t *sy_limits_list(sy_store *s, const sy_flow_config *flow, int64_t now, char *err,
                       size_t err_len);

#endif
