/*
 * engine/grant.h -- the order in which a contended flow-control key is
 * granted to the tasks waiting for it, on every host of one store alike
 * (store/waiters.h; docs/flow-control.md, "The order across hosts").
 *
 * Highest priority first, aged: a waiter's priority grows by one for
 * every `aging_ms` it has waited, so that every waiter starts eventually.
 * Among waiters of one priority, the tenant holding the least of the key
 * for its weight first (held / weight: weighted max-min over the holders,
 * a deficit kept by the store's rows themselves rather than by a counter
 * any one host would have to own), then the oldest.  Across priorities
 * the heads of the classes are merged by aged priority, as the dispatch
 * order does (engine/priority.h): aging lets a long-waiting task overtake
 * newer ones of a higher class, never reorders one class.
 *
 * Pure functions over arrays: no store, no engine.  Any thread.
 */
#ifndef SY_ENGINE_GRANT_H
#define SY_ENGINE_GRANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One task waiting for a key (or asking for it for the first time). */
typedef struct sy_grant_waiter {
    int64_t run_id;
    uint32_t idx;
    int64_t elem;
    int64_t priority; /* before aging */
    int64_t since;    /* when it started waiting (ms) */
    int64_t n;        /* the slots it wants */
    int64_t share;    /* its tenant's holders' slots of the key times the
                         tenant's stride (engine/fair.h: a scale over its
                         weight), so lower is further below its share */
    uint32_t group;   /* the caller's (which tenant); the order ignores it */
} sy_grant_waiter;

/* A tenant's stride is this over its weight (the same as the fair
 * share's, engine/fair.c): divisible by every weight up to 16, by 100 and
 * by 1000. */
#define SY_GRANT_SCALE ((int64_t)720720 * 1000)

/* Whether a goes before b at `now`. */
bool sy_grant_before(const sy_grant_waiter *a, const sy_grant_waiter *b, int64_t now,
                     int64_t aging_ms);

/* Puts v[0..n) in grant order at `now`.  False when out of memory: v is
 * then in order of priority before aging (still a fair order, only
 * without aging across classes). */
bool sy_grant_order(sy_grant_waiter *v, size_t n, int64_t now, int64_t aging_ms);

/* The first of v (in grant order) that `free` slots fit, or n when none. */
size_t sy_grant_first(const sy_grant_waiter *v, size_t n, int64_t free);

#endif
