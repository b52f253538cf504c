/* engine/cache.h -- tasks with a `cache` (workflow.h, sy_task_cache): at
 * dispatch, a key rendered from the task's input that matches one a
 * completed attempt of the same task put within the cache's lifetime
 * completes the task with that output, no plugin called; a task that
 * missed puts its output under its key once it is written Completed, in
 * the same store batch (engine/cache_put.h).  Runs of workflows without a cache never call in:
 * their tasks' definitions have no cache, and r->cache_keys stays NULL. */
#ifndef SY_ENGINE_CACHE_H
#define SY_ENGINE_CACHE_H

#include "engine/internal.h"

/* Inside the turn's batch, for Ready task idx of r whose definition has a
 * cache (not a map's element): true when it was completed from the cache
 * (it is terminal, nothing to submit).  On a miss, or when the key cannot
 * be rendered (said in a run event), false: the task runs as usual. */
bool sy_cache_try(sy_live_run *r, size_t idx, int64_t now);

#endif
