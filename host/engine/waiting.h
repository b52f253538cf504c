/*
 * engine/waiting.h -- the Waiting state: a task offered to dispatch whose
 * concurrency key, pool or tenant bound is full (engine/limits.h) says so
 * in the store, with what it waits for (docs/flow-control.md).
 *
 * The reason is written once per change of what it waits for, never at
 * each retry (SY_LIMITS_RETRY_MS): the counts in it ("2 of 2 held") are
 * as first seen.  Leaving Waiting (sy_live_set_state, engine/run.h)
 * clears it.  Loop thread.
 */
#ifndef SY_ENGINE_WAITING_H
#define SY_ENGINE_WAITING_H

#include "engine/internal.h"

/* What kind of bound a reason names, for the metrics' label. */
typedef enum {
    SY_WAITING_KEY = 0,    /* "waiting for key:..." */
    SY_WAITING_POOL = 1,   /* "waiting for pool:..." */
    SY_WAITING_TENANT = 2, /* "waiting for tenant:..." */
    SY_WAITING_OTHER = 3   /* any other reason (free text) */
} sy_waiting_kind;
#define SY_WAITING_KIND_COUNT 4

/* "key", "pool", "tenant", "other". */
const char *sy_waiting_kind_name(sy_waiting_kind k);

/* The kind a reason names; SY_WAITING_OTHER for NULL or free text. */
sy_waiting_kind sy_waiting_kind_of(const char *why);

/* Whether two reasons wait for the same thing: equal up to their first
 * " (", so that a count that changes is no change of reason. */
bool sy_waiting_same(const char *a, const char *b);

/* Task idx of r (Ready or Waiting) found a bound full, `why` saying
 * which: it becomes Waiting with that reason, written in this turn's
 * batch, unless it already waits for the same thing (then nothing is
 * written). */
void sy_waiting_enter(sy_live_run *r, size_t idx, const char *why);

#endif
