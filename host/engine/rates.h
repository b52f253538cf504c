/*
 * engine/rates.h -- a task's rate limits at dispatch (docs/flow-control.md,
 * "Rate limits"): a token of each of its buckets (store/rates.h:
 * "rate:<rendered template>"), taken in the turn's batch with the write
 * that starts the attempt and with its slots (engine/limits.c).  Loop
 * thread.
 */
#ifndef SY_ENGINE_RATES_H
#define SY_ENGINE_RATES_H

#include "engine/internal.h"

/* How soon a task is offered again when another host's batch was taking
 * one of its buckets at that moment (its lock is held for one commit). */
#define SY_RATES_BUSY_RETRY_MS 10

/* The times handed out in one turn to tasks that found a bucket empty,
 * per key: the k-th task of a turn to wait for a key is offered again
 * when the k-th next token is due, so each token due wakes one task, and
 * in the order they were offered (timers due at the same time fire in no
 * set order). */
typedef struct sy_rate_waits {
    struct sy_rate_wait {
        char *key;    /* owned */
        int64_t due;  /* the last time handed out for it */
    } *v;
    size_t n, cap;
} sy_rate_waits;

/* Forgets the turn's times (at the start of each turn). */
void sy_rate_waits_clear(sy_rate_waits *w);
void sy_rate_waits_free(sy_rate_waits *w);

/* Inside the turn's batch, for task idx of r about to start: 1 when it
 * took a token of every bucket it names (or names none), 0 when one had
 * none (why: "waiting for rate:api (next token in 80 ms)"; *retry_at when
 * to offer the task again: when that token is due), -1 when it cannot
 * start at all (why: a key's template names a path not in the context)
 * or the store failed (e->fatal set), 4 when a bucket is being taken by
 * another host's open batch (PostgreSQL; *retry_at a few milliseconds
 * on, not Waiting: sy_limits_take's 4).  A refused fence (another host
 * holds the run) gives 0 and marks the run fenced.  `named`: the
 * named rate limits in force (switchyard.cfg), whose rate, interval and
 * burst a task's rate limit that names one takes its token at; one not
 * among them (removed since the workflow was checked) limits nothing. */
int sy_rates_take(sy_live_run *r, size_t idx, int64_t now, const sy_rate_config *named,
                  size_t n_named, sy_rate_waits *waits, char *why, size_t why_len,
                  int64_t *retry_at);

#endif
