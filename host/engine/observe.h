/*
 * engine/observe.h -- telling an observer (the admin API's event stream)
 * about task and run state changes, after the batch that wrote them has
 * committed, so that what it hears is what a reader of the store sees.
 * Nothing is kept while nobody observes: the cost is one test per write.
 *
 * Loop thread.
 */
#ifndef SY_ENGINE_OBSERVE_H
#define SY_ENGINE_OBSERVE_H

#include "engine/internal.h"

/* Notes the state of task (or slot) idx of r as this turn writes it. */
void sy_observe_task(sy_engine *e, const sy_live_run *r, size_t idx);

/* Notes the state of run r as this turn writes it. */
void sy_observe_run(sy_engine *e, const sy_live_run *r);

/* Task idx of r was Completed from the cache with the output of run
 * `from` this turn: told after the commit, before the task's own state. */
void sy_observe_cached(sy_engine *e, const sy_live_run *r, size_t idx, int64_t from);

/* A workflow trigger's firing, committed: told at once. */
void sy_observe_trigger(sy_engine *e, int64_t run_id, const char *workflow,
                        const char *trigger);

/* After the commit: hands every noted change to the observer, in order. */
void sy_observe_flush(sy_engine *e);

/* After a failed commit: forgets what was noted. */
void sy_observe_discard(sy_engine *e);

void sy_observe_free(sy_engine *e);

#endif
