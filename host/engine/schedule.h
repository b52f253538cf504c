/*
 * engine/schedule.h -- workflows' schedules firing in a serving engine.
 *
 * Each workflow with a `schedule` is evaluated in its zone on the
 * schedules' clock (engine options' schedule_clock, by default
 * sy_clock_schedule_ms).  A due tick is fired through the store
 * (sy_store_fire_tick): the tick and a new Pending run of the workflow in
 * one transaction, so that of the hosts serving one store exactly one
 * records each tick.  The run is an ordinary one, with
 * {"schedule": {"tick", "tick_ms", "local", "timezone", "expression"}} as
 * its context; a poll right after picks it up (this host or another).
 *
 * On start, ticks missed since the last one the store holds are fired by
 * the workflow's `catchup`: none (the next tick only), latest (the latest
 * missed one), all (every missed one, at most catchup_max, the latest).
 * While it runs, a host whose loop was held up past several ticks fires
 * the latest of them.
 *
 * Loop thread only.
 */
#ifndef SY_ENGINE_SCHEDULE_H
#define SY_ENGINE_SCHEDULE_H

#include "engine/internal.h"

void sy_schedule_init(sy_engine *e);
/* Starts firing (serve mode; nothing otherwise). */
void sy_schedule_start(sy_engine *e);
/* After a reload swapped the workflows: schedules read anew; a schedule
 * that did not change keeps its place. */
void sy_schedule_reload(sy_engine *e);
void sy_schedule_stop(sy_engine *e);
/* Fires what is due now on the schedules' clock (what the timer does when
 * it wakes; tests on an injected clock call it after moving it). */
void sy_schedule_fire_due(sy_engine *e);
/* Closes the timer (after the next loop turn) and frees the schedules. */
void sy_schedule_close(sy_engine *e);

/* The ticks fired by this host and refused (another host had fired them),
 * for tests. */
void sy_schedule_counts(const sy_engine *e, uint64_t *fired, uint64_t *refused);

#endif
