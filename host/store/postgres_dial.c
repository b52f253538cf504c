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
 * the store then handles as any other (reconnect with backoff, replay,
 * give up after 30 s; postgres_conn.c).
 */
#include "store/postgres_internal.h"

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
