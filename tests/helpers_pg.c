/* Helpers for tests on the PostgreSQL store (tests/helpers_pg.h). */
#include "helpers_pg.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static char *server_dir; /* the server's directory when this process started it */
static char url[256];
static bool tried;
static pid_t starter;

static void run_script(const char *cmd, char *out, size_t len)
{
    const char *src = getenv("SY_SRCDIR");
    char line[1024];
    snprintf(line, sizeof line, "'%s/tests/bin/pg-throwaway' %s '%s'",
             src ? src : ".", cmd, server_dir);
    FILE *p = popen(line, "r");
    if (!p) {
        if (out)
            out[0] = '\0';
        return;
    }
    if (out && !fgets(out, (int)len, p))
        out[0] = '\0';
    int status = pclose(p);
    if (out && status != 0)
        out[0] = '\0';
    if (out)
        out[strcspn(out, "\n")] = '\0';
}

static void stop_server(void)
{
    if (!server_dir || getpid() != starter)
        return;
    run_script("stop", NULL, 0);
    th_rmtree(server_dir);
    server_dir = NULL;
}

const char *th_pg_url(void)
{
    if (tried)
        return url[0] ? url : NULL;
    tried = true;
    const char *given = getenv("SY_TEST_PG_URL");
    if (given && *given) {
        snprintf(url, sizeof url, "%s", given);
        return url;
    }
    server_dir = th_mkdtemp();
    starter = getpid();
    fflush(NULL);
    run_script("start", url, sizeof url);
    if (!url[0]) {
        printf("# skipped: the PostgreSQL store tests: no server could be "
               "started (apt-get install postgresql-15)\n");
        th_rmtree(server_dir);
        server_dir = NULL;
        return NULL;
    }
    atexit(stop_server);
    return url;
}

void th_pg_exec(const char *u, const char *sql)
{
    PGconn *c = PQconnectdb(u);
    if (PQstatus(c) != CONNECTION_OK) {
        char why[256];
        snprintf(why, sizeof why, "%s", PQerrorMessage(c));
        PQfinish(c);
        fail_msg("connect to %s: %s", u, why);
    }
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK ||
              PQresultStatus(r) == PGRES_TUPLES_OK;
    char why[256];
    snprintf(why, sizeof why, "%s", PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
    if (!ok)
        fail_msg("%s: %s", sql, why);
}

long long th_pg_int(const char *u, const char *sql)
{
    PGconn *c = PQconnectdb(u);
    PGresult *r = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
    bool ok = r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 &&
              !PQgetisnull(r, 0, 0);
    long long v = ok ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    char why[256];
    snprintf(why, sizeof why, "%s", r ? PQresultErrorMessage(r) : PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
    if (!ok)
        fail_msg("%s: %s", sql, why[0] ? why : "no row");
    return v;
}

void th_pg_reset(const char *u)
{
    th_pg_exec(u, "SET client_min_messages = warning;"
                  " DROP SCHEMA IF EXISTS public CASCADE;"
                  " CREATE SCHEMA public");
}

void th_pg_restart(void)
{
    if (server_dir)
        run_script("restart", NULL, 0);
}
