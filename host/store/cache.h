/*
 * store/cache.h -- completed tasks' outputs kept under a cache key, so
 * that a later attempt whose key matches one completed within its
 * lifetime can be Completed with that output without running.  The key
 * is the task's namespace and the text its cache template rendered from
 * its input; the store keeps the newest output under each.
 *
 * Threading and errors as store.h.  Both calls work inside a batch (the
 * turn that records a completion records its cache entry with it) or
 * alone.
 */
#ifndef SY_STORE_CACHE_H
#define SY_STORE_CACHE_H

#include <stdint.h>

#include "store/store.h"

/* Longest rendered key accepted, in bytes. */
#define SY_STORE_CACHE_KEY_MAX 1024

/* Keeps `output` (JSON text) as what task `ns` produced for `key`,
 * completed at `now` by task `idx` of run `run_id`, replacing what the
 * key held. */
int sy_store_cache_put(sy_store *s, const char *ns, const char *key, const char *output,
                       int64_t run_id, uint32_t idx, int64_t now);

/* The output kept for (`ns`, `key`) if it completed at or after `since`:
 * malloc'd into *output (the caller frees it), with the run it came from
 * in *run_id (may be NULL).  SY_ENOENT when none, or only an older one. */
int sy_store_cache_get(sy_store *s, const char *ns, const char *key, int64_t since,
                       char **output, int64_t *run_id);

#endif
