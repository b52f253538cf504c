/*
 * engine/listen.h -- wake-ups from other hosts through the store (a run
 * submitted, runs released, a cancel request), watched by the loop.
 *
 * The store's listening socket (sy_store_listen) is watched with a
 * uv_poll handle, so that a wake-up reaches the host as soon as it
 * arrives, without a timer.  When the listening connection is lost the
 * handle stops and says so (sy_listen_lost); the owner closes it and
 * opens a new one later, while its slow fallback poll covers the gap.
 */
#ifndef SY_ENGINE_LISTEN_H
#define SY_ENGINE_LISTEN_H

#include <stdbool.h>
#include <uv.h>

#include "store/store.h"

typedef struct sy_listen sy_listen;

/* Listens on `s`; `on_wake(arg)` is called on the loop thread once per
 * read that found wake-ups.  NULL when the store has no wake-ups (SQLite)
 * or cannot listen now: *why then says which (NULL for the first). */
sy_listen *sy_listen_open(uv_loop_t *loop, sy_store *s, void (*on_wake)(void *arg),
                          void *arg, const char **why);

/* Whether the listening connection was lost: nothing wakes the host until
 * it is closed and opened again. */
bool sy_listen_lost(const sy_listen *l);

/* Stops watching and frees `l` once libuv has closed the handle (after
 * the next loop turn).  NULL is fine. */
void sy_listen_close(sy_listen *l);

#endif
