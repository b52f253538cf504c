/*
 * engine/preempt.h -- the strategy cancel_in_progress (docs/flow-control.md,
 * store/preempt.h): a task that finds a key full asks, in the turn's
 * batch, that the key's oldest holder be cancelled; the host holding it
 * reads the requests on its slot rows and cancels those attempts: their
 * tasks end Cancelled, with why, and are not retried, and their slots go
 * back for the waiting task to take.  The request is made by
 * engine/limits.c; the reading here, by engine.c at the start of a turn
 * after this host asked, and by serve.c at every lease renewal.  Loop
 * thread.
 */
#ifndef SY_ENGINE_PREEMPT_H
#define SY_ENGINE_PREEMPT_H

#include "engine/internal.h"

/* Reads the requests on this host's slot rows and cancels each attempt
 * they name that is still current here.  In or outside a batch; what it
 * changes is written by the next turn.  The number cancelled. */
size_t sy_preempt_poll(sy_engine *e, int64_t now);

#endif
