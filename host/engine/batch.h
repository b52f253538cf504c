/*
 * engine/batch.h -- what one loop turn changed: the tasks and runs to write
 * in the turn's transaction, and the queue of Ready tasks to offer.
 * Bookkeeping only: nothing here calls back into the rest of the engine.
 */
#ifndef SY_ENGINE_BATCH_H
#define SY_ENGINE_BATCH_H

#include "engine/internal.h"

/* Grows an array to hold `need` elements (doubling); aborts when out of
 * memory, as every engine structure does. */
void *sy_engine_grow(void *v, size_t *cap, size_t need, size_t elem);

/* Marks task idx (or the run) to be written this turn. */
void sy_batch_mark_task(sy_live_run *r, size_t idx);
void sy_batch_mark_run(sy_live_run *r);
bool sy_batch_any_run_dirty(const sy_engine *e);

/* Writes every marked task and run into the open transaction; sets
 * e->fatal when the store refuses.  Returns the rows it wrote. */
size_t sy_batch_write(sy_engine *e, int64_t now);

/* The Ready queue. */
void sy_ready_push(sy_engine *e, sy_live_run *r, size_t idx);
sy_task_ref sy_ready_pop(sy_engine *e);
/* Drops every entry of run r. */
void sy_ready_forget_run(sy_engine *e, const sy_live_run *r);

#endif
