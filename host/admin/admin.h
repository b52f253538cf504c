/*
 * admin/admin.h -- the admin HTTP API (docs/admin-api.md): JSON under
 * /api/v1/ served by `switchyard serve` from the engine's own libuv loop.
 *
 * libmicrohttpd runs without a thread of its own (MHD_USE_EPOLL, external
 * polling): the loop watches its epoll descriptor and a timer from
 * MHD_get_timeout, and calls MHD_run, so every handler runs on the loop
 * thread and calls the service and the engine directly, with no lock.  A
 * handler must therefore be quick: streams (logs, events) are suspended
 * connections fed from the loop, never a blocking wait.
 *
 * Loop thread only.
 */
#ifndef SY_ADMIN_H
#define SY_ADMIN_H

#include <stddef.h>

#include "config/admin.h"
#include "service/service.h"

typedef struct sy_admin sy_admin;

/* Listens as `cfg` says on the loop of `sv` (started: sy_service_start),
 * reading the token file (mode 0600, owned by this user).  SY_OK, or an
 * error with one line in err naming the field or the file. */
int sy_admin_start(sy_admin **out, sy_service *sv, const sy_admin_config *cfg, char *err,
                   size_t err_len);

/* What the listener is bound to ("127.0.0.1:40123", "unix:/run/sy.sock"). */
const char *sy_admin_where(const sy_admin *a);

/* Ends every stream, closes the connections and the listener; its handles
 * finish closing at the loop's next turn (sy_service_close runs it).
 * NULL is a no-op. */
void sy_admin_stop(sy_admin *a);

#endif
