/*
 * engine/limits.h -- the flow controls held in the store at dispatch
 * (docs/flow-control.md): a task's concurrency keys, its pool's slots and
 * its tenant's `max_running`, each a key of the store's slots
 * (store/slots.h: "key:<rendered template>", "pool:<name>",
 * "tenant:<name>").  Taken in the turn's batch, with the write that starts
 * the attempt (decided in memory against one read of each key a turn,
 * engine/ledger.h); given back in the batch that writes its end.  Loop
 * thread.
 */
#ifndef SY_ENGINE_LIMITS_H
#define SY_ENGINE_LIMITS_H

#include "engine/internal.h"

/* How often a task that found a key full is offered again: a slot freed
 * by another host wakes nobody here. */
#define SY_LIMITS_RETRY_MS 100

/* How soon a task is offered again that found a key being taken by
 * another host's open batch (PostgreSQL): that batch ends within a few
 * milliseconds.  Twice as long each time in a row the task finds a key
 * so, up to SY_LIMITS_BUSY_RETRY_MAX_MS: a long batch (a turn of
 * thousands of tasks) is not polled every 2 ms by each task it holds up,
 * each poll a turn of the waiting host. */
#define SY_LIMITS_BUSY_RETRY_MS 2
#define SY_LIMITS_BUSY_RETRY_MAX_MS 32

void sy_limits_init(sy_engine *e);

/* The named rate limits in force from now on (sy_engine_set_rates):
 * copied. */
void sy_limits_set_rates(sy_engine *e, const sy_rate_config *rates, size_t n);

/* The bounds in force from now on (sy_engine_set_limits): copied. */
void sy_limits_set(sy_engine *e, const sy_pool_config *pools, size_t n_pools,
                   const sy_tenant_config *tenants, size_t n_tenants);
void sy_limits_free(sy_engine *e);

/* Inside the turn's batch, before its decisions: reads, in one store call,
 * what every key the Ready tasks name holds (a store error sets
 * e->fatal). */
void sy_limits_prepare(sy_engine *e, int64_t now);

/* Inside the turn's batch, after its decisions: writes the slots they
 * took (a store error sets e->fatal: the batch must not commit). */
void sy_limits_write(sy_engine *e, int64_t now);

/* Inside the turn's batch, for task idx of r about to start its attempt
 * under token `token`: 1 when it holds every slot it needs (or needs
 * none), 0 when a key is full or a rate limit's bucket empty (why says
 * which: the task waits, Waiting, engine/waiting.h; engine/rates.h), -1
 * when it cannot start at all (why: a key's template names a path not in
 * the context; the task fails) or the store failed (e->fatal set), 2 when
 * a full key's strategy is cancel_newest (why: the task ends Skipped
 * without running), 3 when it is drop (why: the task ends Dropped
 * without running), 4 when a key is being taken by another host's open
 * batch (PostgreSQL): offered again at sy_limits_retry_at, not Waiting,
 * since that batch ends within milliseconds (why is not written). */
int sy_limits_take(sy_live_run *r, size_t idx, int64_t token, int64_t now, char *why,
                   size_t why_len);

/* Whether a turn since the last call asked, through the store, for a
 * key's oldest holder to be cancelled (cancel_in_progress): the caller
 * reads the requests (engine/preempt.h), this host's own among them. */
bool sy_limits_asked(sy_engine *e);

/* When to offer again the task sy_limits_take last gave 0 for: when its
 * next rate token is due, or SY_LIMITS_RETRY_MS after it found a key
 * full. */
int64_t sy_limits_retry_at(sy_engine *e);

/* Task idx found a key full (sy_limits_take gave 0): it waits, Waiting, in
 * the list of tasks offered again when a slot is given back here (the
 * caller also arms its retry for one another host gives back). */
void sy_limits_wait(sy_live_run *r, size_t idx);

/* The waiting tasks, taken out of the list (valid until the next
 * sy_limits_wait); *n of them. */
sy_task_ref *sy_limits_waiting(sy_engine *e, size_t *n);

/* Forgets run r's waiting tasks (it is being dropped or freed). */
void sy_limits_forget_run(sy_engine *e, const sy_live_run *r);

/* Task idx's attempt ended (or never started): its slots, if it holds
 * any, are given back in this turn's batch. */
void sy_limits_release(sy_live_run *r, size_t idx);

/* Inside the turn's batch: writes the returns of the turn.  True when
 * the waiting tasks should be offered again (a slot came back). */
bool sy_limits_flush(sy_engine *e);

#endif
