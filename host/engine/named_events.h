/*
 * engine/named_events.h -- recording a named event (docs/events.md): the
 * checks and the store write that `switchyard emit`, POST /api/v1/events
 * (service/named_events.c) and the plugins' emit_event (ABI 1.5, through
 * executor/emit.h) share, and the loop's side of the plugins' calls.
 *
 * Loop thread (the store's), outside a batch.
 */
#ifndef SY_ENGINE_NAMED_EVENTS_H
#define SY_ENGINE_NAMED_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* How long an event's key is remembered: another event of the same name
 * and key within it is acknowledged and not stored again. */
#define SY_EVENT_KEY_WINDOW_MS ((int64_t)24 * 3600 * 1000)

/* Checks and records event `name` with payload `data` (a JSON object's
 * text of `data_len` bytes; NULL: {}) and `key` (NULL: none) in `s`,
 * durably, before returning.  *id is the event's, or with *duplicate the
 * earlier one of the same key.  SY_EINVAL with a one-line reason for a bad
 * name, key or payload; SY_ERANGE for a payload over `max` bytes (it goes
 * into the context of the runs it starts); the store's status else. */
int sy_event_record(sy_store *s, int64_t max, const char *name, const char *key,
                    const char *data, size_t data_len, int64_t now, int64_t *id,
                    bool *duplicate, char *err, size_t err_len);

/* From sy_engine_run's start to its end, the plugins' emit_event calls
 * are recorded by this engine. */
void sy_engine_emits_open(sy_engine *e);
void sy_engine_emits_close(sy_engine *e);

/* The loop's wake-up: records what plugins asked and answers them. */
void sy_engine_emits_serve(sy_engine *e);

#endif
