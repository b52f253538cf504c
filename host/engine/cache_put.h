/* engine/cache_put.h -- the other half of engine/cache.h: the key a
 * task's dispatch missed, kept until the task is written Completed, then
 * put with its output.  Apart from cache.c so that the batch, which puts,
 * does not call back into what decides states. */
#ifndef SY_ENGINE_CACHE_PUT_H
#define SY_ENGINE_CACHE_PUT_H

#include "engine/internal.h"

/* Keeps `key` (owned, may be NULL) as the one task idx of r missed,
 * replacing what was kept. */
void sy_cache_keep_key(sy_live_run *r, size_t idx, char *key);

/* Inside the turn's batch, once task idx of r was written Completed: puts
 * its output under the key its dispatch missed (nothing when none). */
void sy_cache_put_completed(sy_live_run *r, size_t idx, int64_t now);

/* Frees what r kept for its cached tasks. */
void sy_cache_free(sy_live_run *r);

#endif
