/* Rate limits at dispatch (engine/rates.h): a task starts only with a
 * token of each of its buckets; the burst starts at once, then one task
 * per 1/rate, each offered again when its token is due (not before, and
 * not polled); a task that waits for a token holds none of its slots (all
 * or none); a key whose path is not in the context fails its task with
 * why; a rate limit of switchyard.cfg named by tasks paces them at its
 * rate, the one in force at each take (a reload's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../helpers.h"
#include "pool_executor.h"
#include "base/util.h"
#include "engine/engine.h"
#include "store/rates.h"
#include "store/slots.h"
#include "store/store.h"

static const char *const ONE = "routes = { default = \"local\"; };";

static const char *const SIX =
    "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }, { id = \"d\"; }, { id = \"e\"; },"
    " { id = \"f\"; }\n";

/* Moves the engines' clock forward, then turns the loop. */
static void advance(env *v, int64_t ms)
{
    pool_env_now += ms;
    turn(v);
}

static void test_burst_then_rate(void **state)
{
    (void)state;
    env v;
    char wf[512];
    snprintf(wf, sizeof wf,
             "workflow = { name = \"w\"; rate_limits = ( { key = \"api\"; rate = 10;"
             " interval = \"1s\"; burst = 2; } ); tasks = (\n%s); };\n", SIX);
    pool_env_open(&v, wf, ONE, 6, 0);
    /* Room for six in the executor; the burst starts. */
    assert_string_equal(pools[0].got, "a b");
    advance(&v, 99);
    assert_string_equal(pools[0].got, "a b");
    /* The next token is due 100 ms after the first two. */
    advance(&v, 1);
    assert_string_equal(pools[0].got, "a b c");
    advance(&v, 50);
    assert_string_equal(pools[0].got, "a b c");
    advance(&v, 50);
    assert_string_equal(pools[0].got, "a b c d");
    /* A long pause banks no more than the burst. */
    advance(&v, 10000);
    assert_string_equal(pools[0].got, "a b c d e f");
    close_env(&v);
}

static int64_t held(env *v, const char *key) { return pool_env_held(v, key, NULL); }

/* A task that finds its bucket empty takes none of its slots: the key
 * counts only the tasks that started. */
static void test_slots_all_or_none(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; limits = ( { key = \"db\"; limit = 5; } );\n"
                  "  rate_limits = ( { key = \"api:{@workflow}\"; rate = 1; interval = \"1s\";"
                  " } );\n"
                  "  tasks = ( { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; } ); };\n",
                  ONE, 6, 0);
    assert_string_equal(pools[0].got, "a");
    assert_int_equal(held(&v, "key:db"), 1);
    sy_rate_bucket b;
    bool found = false;
    assert_int_equal(sy_store_rate_bucket(v.store, "rate:api:w", &b, &found), SY_OK);
    assert_true(found);
    assert_int_equal(b.level, 0);
    advance(&v, 1000);
    assert_string_equal(pools[0].got, "a b");
    assert_int_equal(held(&v, "key:db"), 2);
    finish(&v, 0, "a");
    /* A slot given back does not start c before its token. */
    assert_string_equal(pools[0].got, "a b");
    advance(&v, 1000);
    assert_string_equal(pools[0].got, "a b c");
    close_env(&v);
}

/* Named: the configuration's rate, one bucket for every task naming it
 * ("rate:@crm"), another per key beside it; a reload's new rate applies
 * at the next take, and a rate no longer defined limits nothing. */
static void test_named_rate_and_reload(void **state)
{
    (void)state;
    sy_rate_config crm = {.name = "crm", .rate = 10, .interval_ms = 1000, .burst = 2};
    pool_env_rates = &crm;
    pool_env_n_rates = 1;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; rate_limits = ( { name = \"crm\"; } ); tasks = (\n"
                  "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }, { id = \"d\"; },"
                  " { id = \"e\"; }, { id = \"f\"; },\n"
                  "  { id = \"k\"; rate_limits = ( { name = \"crm\"; key = \"{@task}\"; } ); }"
                  " ); };\n",
                  ONE, 7, 0);
    pool_env_rates = NULL;
    pool_env_n_rates = 0;
    /* The burst, and k on a bucket of its own. */
    assert_string_equal(pools[0].got, "a b k");
    sy_rate_bucket b;
    bool found = false;
    assert_int_equal(sy_store_rate_bucket(v.store, "rate:@crm", &b, &found), SY_OK);
    assert_true(found);
    assert_int_equal(sy_store_rate_bucket(v.store, "rate:@crm:k", &b, &found), SY_OK);
    assert_true(found);
    advance(&v, 99);
    assert_string_equal(pools[0].got, "a b k");
    advance(&v, 1);
    assert_string_equal(pools[0].got, "a b k c");
    /* A reload: a token a millisecond from now on. */
    sy_rate_config faster = {.name = "crm", .rate = 1000, .interval_ms = 1000, .burst = 1};
    sy_engine_set_rates(v.engine, &faster, 1);
    turn(&v);
    assert_string_equal(pools[0].got, "a b k c");
    advance(&v, 1);
    assert_string_equal(pools[0].got, "a b k c d");
    advance(&v, 1);
    assert_string_equal(pools[0].got, "a b k c d e");
    /* Removed: f is not held back. */
    sy_engine_set_rates(v.engine, NULL, 0);
    turn(&v);
    assert_string_equal(pools[0].got, "a b k c d e f");
    close_env(&v);
}

typedef struct { const char *id; sy_task_state st; char err[512]; } row_arg;

static int find_row(void *arg, const sy_task_record *t)
{
    row_arg *a = arg;
    if (strcmp(t->task_id, a->id) == 0) {
        a->st = t->state;
        snprintf(a->err, sizeof a->err, "%s", t->error ? t->error : "");
    }
    return 0;
}

static void test_missing_path_fails(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; tasks = (\n"
                  "  { id = \"a\"; rate_limits = ( { key = \"api:{customer}\"; rate = 1;"
                  " interval = \"1s\"; } ); },\n"
                  "  { id = \"b\"; }\n); };\n",
                  ONE, 4, 0);
    assert_string_equal(pools[0].got, "b");
    row_arg a = {"a", 0, ""};
    assert_int_equal(sy_store_list_tasks(v.store, v.run_id, find_row, &a), SY_OK);
    assert_int_equal(a.st, SY_TASK_FAILED);
    assert_non_null(strstr(a.err, "'customer' is not in the run's context"));
    finish(&v, 0, "b");
    close_env(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_rate),
        cmocka_unit_test(test_slots_all_or_none),
        cmocka_unit_test(test_named_rate_and_reload),
        cmocka_unit_test(test_missing_path_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
