/*
 * workflow/tick.h -- the context a run fired for a schedule's tick starts
 * with, the same whoever fires it: the live schedule (engine/schedule.c)
 * or a backfill (service/backfill.c).
 */
#ifndef SY_WORKFLOW_TICK_H
#define SY_WORKFLOW_TICK_H

#include <stdint.h>

#include "base/tz.h"
#include "workflow/workflow.h"

/* {"schedule": {"tick" (ISO 8601 UTC), "tick_ms", "local" (in `tz`),
 * "timezone", "expression"}} as compact JSON text with sorted keys,
 * malloc'd (the caller frees it); NULL when out of memory. */
char *sy_tick_context(const sy_workflow *wf, const sy_tz *tz, int64_t tick_ms);

#endif
