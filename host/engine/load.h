/* engine/load.h -- a run from the store into memory, and out again. */
#ifndef SY_ENGINE_LOAD_H
#define SY_ENGINE_LOAD_H

#include "engine/internal.h"

/* Loads run `run_id` (claimed by the caller), routes its tasks, recovers
 * attempts a stopped host left Running, decides what can start and links
 * it into e->runs. */
int sy_live_load(sy_engine *e, int64_t run_id, sy_live_run **out, char *err,
                 size_t err_len);

/* Stops working on a run whose lease this host lost (`why`, logged once;
 * NULL when the caller logs for it):
 * it is taken out of every queue, its attempts are cancelled, and nothing
 * more is written for it; it is freed like a finished run once its
 * attempts are back. */
void sy_live_drop(sy_live_run *r, const char *why);

/* Unlinks a run, drops it from every queue and frees it; no plugin may
 * hold one of its attempts. */
void sy_live_free(sy_live_run *r);

/* Routes every task of `r` by the engine's routes to its instance queue
 * (NULL when the route names an instance that does not exist). */
void sy_live_route(sy_engine *e, sy_live_run *r);

#endif
