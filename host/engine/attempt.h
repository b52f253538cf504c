/*
 * engine/attempt.h -- one attempt at a task: made when dispatch decides to
 * submit it, handed to the plugin, queued back from the plugin's thread
 * when it completes, freed once the plugin has returned it.
 */
#ifndef SY_ENGINE_ATTEMPT_H
#define SY_ENGINE_ATTEMPT_H

#include "engine/internal.h"

/* The next attempt of task idx, with its input, linked into the engine's
 * live list (r->inflight is the caller's to count).  NULL with err when its
 * input cannot be built. */
sy_attempt *sy_attempt_new(sy_engine *e, sy_live_run *r, size_t idx, char *err,
                           size_t err_len);

/* Unlinks and frees an attempt the plugin has returned (or never took);
 * counts it out of its run's inflight. */
void sy_attempt_release(sy_attempt *a);

/* Asks the plugin to cancel the attempt, once. */
void sy_attempt_cancel(sy_attempt *a);

/* Takes the attempts completed since the last call, oldest first, linked
 * by done_next. */
sy_attempt *sy_attempt_take_done(sy_engine *e);

#endif
