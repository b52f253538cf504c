/*
 * store/postgres/listen.c -- wake-ups between hosts: NOTIFY when there is
 * something for a host to do (a run submitted, runs released, a cancel
 * request), LISTEN on a connection of the handle's own.
 *
 * The listening connection is not the one statements run on: libpq reads
 * a notification that arrives while a statement waits for its answer into
 * its own buffer, where the socket's readiness no longer shows it, and a
 * reconnect of the statements' connection would change the socket under
 * the host's loop.  This one only ever waits, and when it is lost the host
 * opens another (sy_store_listen), which listens again; what was sent
 * while none listened is found by the host's slow fallback poll.
 *
 * A NOTIFY inside a transaction is sent at its commit, and not at all when
 * it rolls back, so a host is never woken for a run it cannot see yet.
 * It goes through PgBouncer in session mode only: in transaction mode a
 * LISTEN does not stay with its session.
 */
#include <stdlib.h>
#include <string.h>

#include "store/postgres/internal.h"

#define CHANNEL "switchyard"

int sy_pg_notify(sy_store_pg *q)
{
    return sy_pg_exec(q, "NOTIFY " CHANNEL, "wake the hosts");
}

/* The server's notices (its goodbye when it ends the session) are not the
 * host's business: a lost connection is reported by sy_pg_wakeups. */
static void quiet(void *arg, const PGresult *res)
{
    (void)arg;
    (void)res;
}

static void drop_listener(sy_store_pg *q)
{
    if (q->listener)
        PQfinish(q->listener);
    q->listener = NULL;
}

static int listener_fail(sy_store_pg *q, const char *what)
{
    const char *msg = q->listener ? PQerrorMessage(q->listener) : "out of memory";
    int len = (int)strcspn(msg, "\n");
    sy_store_fail(&q->base, SY_EIO, "%s: %s: %.*s", q->where, what, len, msg);
    drop_listener(q);
    return SY_EIO;
}

int sy_pg_listen(sy_store *s, int *fd)
{
    sy_store_pg *q = sy_pg_handle(s);
    drop_listener(q);
    q->listener = sy_pg_dial(q->conninfo);
    if (!q->listener || PQstatus(q->listener) != CONNECTION_OK)
        return listener_fail(q, "listen: cannot connect");
    PQsetNoticeReceiver(q->listener, quiet, NULL);
    PGresult *r = PQexec(q->listener, "LISTEN " CHANNEL);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok)
        return listener_fail(q, "listen");
    /* Reading must never block the host's loop: the socket said it has
     * something, and PQconsumeInput takes only what is there. */
    if (PQsetnonblocking(q->listener, 1) != 0)
        return listener_fail(q, "listen: non-blocking");
    *fd = PQsocket(q->listener);
    return SY_OK;
}

int sy_pg_wakeups(sy_store *s, size_t *n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->listener)
        return sy_store_fail(s, SY_EIO, "%s: not listening", q->where);
    if (!PQconsumeInput(q->listener) || PQstatus(q->listener) == CONNECTION_BAD)
        return listener_fail(q, "the listening connection was lost");
    for (PGnotify *m; (m = PQnotifies(q->listener)) != NULL; PQfreemem(m))
        (*n)++;
    return SY_OK;
}

void sy_pg_listen_close(sy_store_pg *q)
{
    drop_listener(q);
}
