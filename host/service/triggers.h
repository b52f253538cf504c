/*
 * service/triggers.h -- the workflows' triggers as data, and why each did
 * or did not fire: what `switchyard triggers` prints and GET
 * /api/v1/triggers answers (docs/events.md).
 *
 * Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_SERVICE_TRIGGERS_H
#define SY_SERVICE_TRIGGERS_H

#include <stddef.h>

#include <jansson.h>

#include "store/store.h"
#include "workflow/workflow.h"

/* How many passed-over items each trigger shows. */
#define SY_TRIGGERS_PASSED_SHOWN 5

/* Every trigger of every workflow of `wfs`, in order, as an array of
 * {"tenant", "workflow", "name", "parts" (each {"event", "when"} or
 * {"run", "states"}, with "pending": the items not yet settled, up to 64),
 * "all", "debounce_ms", "payloads", "max_in_flight", "since", "firings",
 * "last_fired" (ms, null when never), "last_run" (null), "in_flight",
 * "passed" (the last items passed over: {"source", "id", "reason", "at"})}.
 * Registers a trigger the store does not know yet (as a host would). */
int sy_triggers_list(sy_store *st, sy_workflow *const *wfs, size_t n, int64_t now_ms,
                     json_t **out, char *err, size_t err_len);

#endif
