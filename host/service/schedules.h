/*
 * service/schedules.h -- the workflows' schedules as data: expression,
 * zone, catch-up, the last tick the store holds, the next fire times.
 * What `switchyard schedules` prints.
 *
 * Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_SCHEDULES_H
#define SY_SCHEDULES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"
#include "workflow/workflow.h"

/* Every workflow of `wfs` with a schedule, in order, as an array of
 * {"tenant", "name", "schedule", "timezone", "catchup", "catchup_max",
 * "last_tick" (ISO 8601 in the zone, null when none), "last_run" (null
 * when none), "next" (the next `count` fire times after `now_ms`, ISO 8601
 * in the zone), "error" (why it cannot fire: its zone; null)}. */
int sy_schedules_list(sy_store *st, sy_workflow *const *wfs, size_t n, int64_t now_ms,
                      size_t count, json_t **out, char *err, size_t err_len);

#endif
