/*
 * store/keyed.h -- runs recorded under a key, so that asking twice for the
 * same run records it once: idempotent submits (a caller's key) and
 * backfilled schedule ticks (the tick is the key).
 *
 * Both decide in the store, by a unique key inserted in the transaction
 * that records the run, never by reading first: of two hosts or two
 * clients racing the same key, one inserts it with its run and the other
 * finds it.  Threading and errors as store.h.
 */
#ifndef SY_STORE_KEYED_H
#define SY_STORE_KEYED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* A new run as sy_store_create_run records it (every pointer borrowed for
 * the call). */
typedef struct sy_store_new_run {
    const char *hash;     /* its definition, stored first */
    const char *tenant;
    const char *workflow;
    const char *context;  /* JSON object text */
    size_t n_tasks;
    const char *const *task_ids;
    const char *const *ns;
    int32_t priority;     /* submit --priority (SY_PRIORITY_MIN..MAX of
                             workflow.h; 0: none), added to its tasks' */
} sy_store_new_run;

/* Records run `r` as sy_store_create_run does, with its priority. */
int sy_store_create_run_with(sy_store *s, const sy_store_new_run *r, int64_t now,
                             int64_t *run_id);

/* Longest key accepted, in bytes. */
#define SY_STORE_KEY_MAX 256

/* Records run `r` as sy_store_create_run does, under `key` (1 to
 * SY_STORE_KEY_MAX bytes, unique per tenant and workflow), unless a run
 * was recorded under that key at or after now - window_ms: then nothing
 * is written, *run_id is that run and *created false.  A use of the key
 * older than the window is forgotten and the key taken again.  One
 * transaction, outside a batch. */
int sy_store_create_run_keyed(sy_store *s, const sy_store_new_run *r, const char *key,
                              int64_t window_ms, int64_t now, int64_t *run_id,
                              bool *created);

/* Fires tick `tick` of the workflow's schedule for a backfill: claims the
 * tick (store.h's schedule ticks) and records run `r` in one transaction,
 * unless the tick is claimed already (by the live schedule or a backfill;
 * then *fired is false and *run_id the tick's run, 0 when it is gone).
 * Unlike sy_store_fire_tick it claims a tick older than the newest fired,
 * and a backfilled tick never stops the live schedule from firing a
 * later tick than it, nor is it the schedule's last tick
 * (sy_store_last_tick).  Outside a batch. */
int sy_store_backfill_tick(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                           bool *fired, int64_t *run_id);

/* Whether tick `tick` of the workflow's schedule was claimed (by the
 * live schedule or a backfill), and its run (0: none, or deleted since).
 * Reads only: what `backfill --dry-run` lists. */
int sy_store_tick_run(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                      bool *claimed, int64_t *run_id);

#endif
