/*
 * service/named_events.h -- emitting a named event: `switchyard emit`,
 * POST /api/v1/events (docs/events.md).  Not the run-event stream of
 * GET /api/v1/events.
 *
 * Single-threaded, as service.h.
 */
#ifndef SY_SERVICE_NAMED_EVENTS_H
#define SY_SERVICE_NAMED_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "service/service.h"

/* Checks and records event `name` with payload `data` (a JSON object's
 * text; NULL: {}) and `key` (NULL: none) in the opened store, durably,
 * before returning.  *id is the event's, or with *duplicate the earlier
 * one of the same key.  SY_EINVAL with a one-line reason for a bad name,
 * key or payload; SY_ERANGE for a payload over max_context_bytes (it goes
 * into the context of the runs it starts). */
int sy_service_emit(sy_service *sv, const char *name, const char *key, const char *data,
                    int64_t *id, bool *duplicate, char *err, size_t err_len);

#endif
