/* A task whose key another host's open batch is taking, on PostgreSQL
 * (engine/limits.h): the take counts the key as full for this turn, and
 * the task is offered again SY_LIMITS_BUSY_RETRY_MS later without being
 * written Waiting (that batch ends within milliseconds), nor any waiter
 * row; found so again, twice as late; once the other batch ends, the
 * retry starts it.  The other batch
 * is a connection holding the key's grants' advisory lock
 * (store/postgres/grants.c) in an open transaction.  A rate bucket being
 * taken the same.  Skipped without libpq or a PostgreSQL to start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../helpers.h"
#include "fake.h"
#ifdef SY_HAVE_LIBPQ
#include <libpq-fe.h>

#include "../helpers_pg.h"
#endif
#include "engine/limits.h"
#include "store/store.h"
#include "store/waiters.h"

static const char workflow[] =
    "workflow = { name = \"w\"; tasks = (\n"
    "  { id = \"a\"; limits = ( { key = \"db\"; limit = 1; } ); }\n"
    "); };\n";

#ifdef SY_HAVE_LIBPQ
static void run_sql(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

static int count_waiter(void *arg, const sy_slot_waiter *w)
{
    (void)w;
    ++*(int *)arg;
    return 0;
}

static void test_busy_key_not_waiting(void **state)
{
    (void)state;
    const char *url = th_pg_url();
    if (!url)
        skip();
    th_pg_reset(url);
    /* Another host's batch, making a grant of key:db (the grants' class
     * of advisory locks) until it ends. */
    PGconn *other = PQconnectdb(url);
    assert_int_equal(PQstatus(other), CONNECTION_OK);
    run_sql(other, "BEGIN");
    run_sql(other, "SELECT pg_advisory_xact_lock(21340, hashtext('key:db'))");

    fake_store_url = url;
    fake_env env;
    fake_open_lease(&env, workflow, FAKE_LEASE_MS, false);
    fake_store_url = NULL;
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 0);
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_READY);
    int waiters = 0;
    assert_int_equal(sy_store_list_waiters(env.store, fake_now, count_waiter, &waiters),
                     SY_OK);
    assert_int_equal(waiters, 0);

    /* Still taken at the retry: offered again, still not Waiting, and
     * next twice as late. */
    fake_advance(&env, SY_LIMITS_BUSY_RETRY_MS);
    assert_int_equal(fake_submits("a"), 0);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_READY);

    /* The other batch ends: the next retry, not before, starts the task. */
    run_sql(other, "ROLLBACK");
    fake_advance(&env, SY_LIMITS_BUSY_RETRY_MS);
    assert_int_equal(fake_submits("a"), 0);
    fake_advance(&env, SY_LIMITS_BUSY_RETRY_MS);
    assert_int_equal(fake_submits("a"), 1);
    a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_COMPLETED);
    assert_int_equal(a.attempts, 1);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    PQfinish(other);
    fake_close(&env);
}

/* The same for a rate bucket another host's batch is taking (its class
 * of advisory locks, store/postgres/rates.c): Ready, not Waiting, and
 * started at a retry once that batch ends. */
static void test_busy_bucket_not_waiting(void **state)
{
    (void)state;
    const char *url = th_pg_url();
    if (!url)
        skip();
    th_pg_reset(url);
    PGconn *other = PQconnectdb(url);
    assert_int_equal(PQstatus(other), CONNECTION_OK);
    run_sql(other, "BEGIN");
    run_sql(other, "SELECT pg_advisory_xact_lock(21339, hashtext('rate:api'))");

    fake_store_url = url;
    fake_env env;
    fake_open_lease(&env,
                    "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; rate_limits = ( { key = \"api\"; rate = 10;"
                    " interval = \"1s\"; } ); }\n"
                    "); };\n",
                    FAKE_LEASE_MS, false);
    fake_store_url = NULL;
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 0);
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_READY);

    run_sql(other, "ROLLBACK");
    for (int i = 0; i < 10 && fake_submits("a") == 0; i++)
        fake_advance(&env, SY_LIMITS_BUSY_RETRY_MS);
    assert_int_equal(fake_submits("a"), 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    PQfinish(other);
    fake_close(&env);
}
#else
static void test_busy_key_not_waiting(void **state)
{
    (void)state;
    skip();
}

static void test_busy_bucket_not_waiting(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_key_not_waiting),
        cmocka_unit_test(test_busy_bucket_not_waiting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
