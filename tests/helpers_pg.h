/* Helpers for tests on the PostgreSQL store: a throwaway server
 * (tests/bin/pg-throwaway) shared by one test program, and a clean
 * database per test. */
#ifndef SY_TEST_HELPERS_PG_H
#define SY_TEST_HELPERS_PG_H

/* The URL of a server for this process: $SY_TEST_PG_URL when set, else
 * one started on first use and stopped at exit.  NULL when there is no
 * PostgreSQL to start (the reason printed once, as a TAP comment). */
const char *th_pg_url(void);

/* Drops every table of the database at `url` (its public schema), so
 * that the next store opened there starts from nothing. */
void th_pg_reset(const char *url);

/* Runs one SQL statement on `url`; fails the test when it fails. */
void th_pg_exec(const char *url, const char *sql);

/* The integer one SQL query on `url` answers (its first row's first
 * column); fails the test when it fails or answers no row. */
long long th_pg_int(const char *url, const char *sql);

/* Restarts the server th_pg_url started (pg_ctl restart). */
void th_pg_restart(void);

#endif
