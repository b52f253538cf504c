/*
 * Opening a connection to PostgreSQL with the host's network defaults.
 *
 * libpq by default waits on a dead peer for as long as the kernel does:
 * a statement sent into a network partition (no reset, packets dropped)
 * blocks until TCP gives up retransmitting, about 15 minutes, and an idle
 * connection whose peer vanished is never noticed.  The host's loop
 * waits on its statements, so it would sit silent for all that time,
 * long past its lease.  Every connection the store opens therefore
 * carries, unless the operator's connection string sets them itself:
 *
 *   connect_timeout  = 10    seconds for one connection attempt
 *   keepalives       = 1     probe an idle connection ...
 *   keepalives_idle  = 10    ... after 10 s of silence,
 *   keepalives_interval = 2  every 2 s,
 *   keepalives_count = 3     dropped after 3 unanswered probes
 *   tcp_user_timeout = 15000 ms that sent data may stay unacknowledged
 *
 * so a partition shows as a dropped connection within about 16 s, which
 * the store then handles as any other: a new connection, tried with
 * backoff (sy_pg_reconnect), the batch replayed (postgres/conn.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "store/postgres/internal.h"

/* Listed first: libpq takes the last value given for a keyword, and the
 * operator's connection string, expanded from "dbname", comes after. */
static const char *const keywords[] = {
    "connect_timeout", "keepalives", "keepalives_idle",
    "keepalives_interval", "keepalives_count", "tcp_user_timeout",
    "dbname", NULL,
};
static const char *const defaults[] = {
    "10", "1", "10", "2", "3", "15000",
};

PGconn *sy_pg_dial(const char *conninfo)
{
    const char *values[sizeof keywords / sizeof keywords[0]];
    size_t n = sizeof defaults / sizeof defaults[0];
    for (size_t i = 0; i < n; i++)
        values[i] = defaults[i];
    values[n] = conninfo;
    values[n + 1] = NULL;
    return PQconnectdbParams(keywords, values, 1);
}

static void describe(sy_store_pg *q)
{
    free(q->where);
    const char *host = PQhost(q->conn);
    q->where = sy_asprintf("postgresql://%s@%s:%s/%s", PQuser(q->conn),
                           host && *host ? host : "localhost", PQport(q->conn),
                           PQdb(q->conn));
}

/* Notices (a CREATE ... IF NOT EXISTS that found the table) are not the
 * host's business. */
static void quiet(void *arg, const PGresult *res)
{
    (void)arg;
    (void)res;
}

int sy_pg_connect(sy_store_pg *q)
{
    if (q->conn)
        PQfinish(q->conn);
    memset(q->prepared, 0, sizeof q->prepared);
    q->conn = sy_pg_dial(q->conninfo);
    if (!q->conn)
        return sy_store_fail(&q->base, SY_ENOMEM, "%s: out of memory",
                             q->where);
    if (PQstatus(q->conn) != CONNECTION_OK) {
        const char *msg = PQerrorMessage(q->conn);
        int len = (int)strcspn(msg, "\n");
        return sy_store_fail(&q->base, SY_EIO, "%s: cannot connect: %.*s",
                             q->where, len, msg);
    }
    describe(q);
    PQsetNoticeReceiver(q->conn, quiet, NULL);
    return SY_OK;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A new connection for a dropped one, tried with a pause doubling from
 * 100 ms to 2 s until SY_PG_RECONNECT_MS have passed.  This blocks the caller
 * (the host's loop): tasks keep running in their executors, and their
 * results wait in the queue until the store answers again. */
int sy_pg_reconnect(sy_store_pg *q)
{
    int64_t start = sy_clock_now_ms();
    sy_log(SY_LOG_WARN, "store", "%s: connection lost; reconnecting",
           q->where);
    for (int tries = 1, wait = 100;; tries++) {
        PQreset(q->conn);
        memset(q->prepared, 0, sizeof q->prepared);
        int64_t took = sy_clock_now_ms() - start;
        if (PQstatus(q->conn) == CONNECTION_OK) {
            PQsetNoticeReceiver(q->conn, quiet, NULL);
            sy_log(SY_LOG_WARN, "store", "%s: reconnected after %d tries in "
                   "%lld ms", q->where, tries, (long long)took);
            return SY_OK;
        }
        if (took >= SY_PG_RECONNECT_MS)
            return sy_store_fail(&q->base, SY_EIO,
                                 "%s: connection lost; gave up reconnecting "
                                 "after %d tries in %lld ms", q->where,
                                 tries, (long long)took);
        pause_ms(wait);
        wait = wait < 1000 ? wait * 2 : 2000;
    }
}
