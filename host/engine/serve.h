/*
 * engine/serve.h -- the engine's dealings with other hosts through the
 * store: renewing its leases, and in serve mode picking up submitted runs
 * (and runs of dead hosts) and honouring cancel requests.
 */
#ifndef SY_ENGINE_SERVE_H
#define SY_ENGINE_SERVE_H

#include "engine/internal.h"

void sy_serve_init(sy_engine *e);
/* Starts renewing leases and polling: in serve mode for new runs and
 * cancel requests, otherwise (`run`) for cancel requests of its runs. */
void sy_serve_start(sy_engine *e);
void sy_serve_stop(sy_engine *e);
/* Polls for new runs at the next loop turn (a schedule just recorded
 * one). */
void sy_serve_poll_soon(sy_engine *e);

/* Stops looking for new runs (a draining host); leases are still renewed. */
void sy_serve_quiet(sy_engine *e);
/* Closes the timers (closed after the next loop turn). */
void sy_serve_close(sy_engine *e);

/* The owners of runs that are hosts on this machine whose process is gone:
 * dead for sure, whatever their leases say.  *out is owned by the caller
 * (sy_serve_free_owners). */
size_t sy_serve_stale_owners(sy_engine *e, char ***out);
void sy_serve_free_owners(char **v, size_t n);

#endif
