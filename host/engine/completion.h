/*
 * engine/completion.h -- how attempts end: the outcomes plugins report
 * (queued from their threads, applied on the loop) and deadlines.
 */
#ifndef SY_ENGINE_COMPLETION_H
#define SY_ENGINE_COMPLETION_H

#include "engine/internal.h"

/* Applies every outcome queued since the last call, then frees those
 * attempts. */
void sy_engine_apply_done(sy_engine *e);

/* An attempt's deadline (the timer's data is the attempt): it times out,
 * its plugin is asked to cancel, its task fails or retries. */
void sy_engine_on_deadline(sy_timer *deadline);

#endif
