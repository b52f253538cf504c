/*
 * engine/start_triggers.h -- workflows' triggers firing in a serving
 * engine (workflow/start_trigger.h, docs/events.md).
 *
 * Every SY_TRIGGERS_POLL_MS each trigger of the workflows in force is
 * looked at: the named events and finished runs it has not settled are
 * read from the store, an event whose payload fails the part's `when` is
 * settled as passed over (with why), and what matches fires: one run per
 * item for a trigger of one part without debounce, else one run for every
 * item of every part once each part has one (the AND) and the debounce
 * window since the last firing is over.  Each firing is one store
 * transaction (sy_store_fire): the items, the firing and the run, so that
 * of the hosts serving one store exactly one consumes each item.  The
 * run's context is {"trigger": {"name", "event", "run", "parts"}}: the
 * last event and run consumed, and per part its last item (with payloads
 * "all", every one).
 *
 * Loop thread only.
 */
#ifndef SY_ENGINE_START_TRIGGERS_H
#define SY_ENGINE_START_TRIGGERS_H

#include "engine/internal.h"

#define SY_TRIGGERS_POLL_MS 200

void sy_start_triggers_init(sy_engine *e);
/* Starts firing (serve mode; nothing otherwise). */
void sy_start_triggers_start(sy_engine *e);
/* After a reload swapped the workflows: the triggers read anew. */
void sy_start_triggers_reload(sy_engine *e);
void sy_start_triggers_stop(sy_engine *e);
/* A pass as soon as the loop turns: an event was emitted here, or another
 * host woke this one. */
void sy_start_triggers_soon(sy_engine *e);
/* One pass over every trigger now (what the timer does). */
void sy_start_triggers_pass(sy_engine *e);
/* Closes the timer (after the next loop turn) and frees the state. */
void sy_start_triggers_close(sy_engine *e);

#endif
