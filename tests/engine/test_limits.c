/* Flow controls held in the store at dispatch (engine/limits.h): a
 * concurrency key's limit, a pool's slots and a tenant's max_running
 * bound what runs at once, whatever the executor's capacity; a task that
 * finds one full waits (Waiting) and starts when a slot comes back; the
 * store's slot rows (what every host counts) never exceed the limit and
 * are gone when the attempts end; a key whose path is not in the context
 * fails its task with why; a pool made larger by a reload lets the
 * waiting start. */
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
#include "store/slots.h"
#include "store/store.h"

static const char *const ONE = "routes = { default = \"local\"; };";

static const char *const FOUR =
    "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }, { id = \"d\"; }\n";

/* What the store says the live holders of `key` hold; *rows every slot
 * row there is. */
static int64_t held(env *v, const char *key, int64_t *rows) { return pool_env_held(v, key, rows); }

/* Completes what the pool holds, one at a time, checking the key's
 * holders in the store after each turn. */
static void finish_all(env *v, const char *key, int64_t limit)
{
    for (int guard = 0; guard < 64 && pools[0].n_held; guard++) {
        assert_true(held(v, key, NULL) <= limit);
        char id[32];
        snprintf(id, sizeof id, "%s", pools[0].held[0].task_id);
        finish(v, 0, id);
    }
    assert_int_equal(pools[0].n_held, 0);
}

typedef struct { const char *id; sy_task_state st; char *err; size_t len; } row_arg;

static int find_row(void *arg, const sy_task_record *t)
{
    row_arg *a = arg;
    if (strcmp(t->task_id, a->id) == 0) {
        a->st = t->state;
        if (a->err)
            snprintf(a->err, a->len, "%s", t->error ? t->error : "");
    }
    return 0;
}

/* Task `id`'s state in the store, and its error into `error`. */
static sy_task_state state_of(env *v, const char *id, char *error, size_t len)
{
    row_arg a = {id, 0, error, len};
    assert_int_equal(sy_store_list_tasks(v->store, v->run_id, find_row, &a), SY_OK);
    return a.st;
}

static void test_key_limit(void **state)
{
    (void)state;
    env v;
    char wf[512];
    snprintf(wf, sizeof wf,
             "workflow = { name = \"w\"; limits = ( { key = \"db:{@workflow}\"; limit = 2; } );"
             " tasks = (\n%s); };\n", FOUR);
    pool_env_open(&v, wf, ONE, 4, 0);
    /* Room for four in the executor; two start. */
    assert_string_equal(pools[0].got, "a b");
    assert_int_equal(held(&v, "key:db:w", NULL), 2);
    finish(&v, 0, "a");
    assert_string_equal(pools[0].got, "a b c");
    assert_int_equal(held(&v, "key:db:w", NULL), 2);
    finish_all(&v, "key:db:w", 2);
    assert_string_equal(pools[0].got, "a b c d");
    int64_t rows = -1;
    assert_int_equal(held(&v, "key:db:w", &rows), 0);
    assert_int_equal(rows, 0);
    assert_int_equal(state_of(&v, "d", NULL, 0), SY_TASK_COMPLETED);
    close_env(&v);
}

/* A key per task: they do not wait for one another. */
static void test_keys_distinct(void **state)
{
    (void)state;
    env v;
    char wf[512];
    snprintf(wf, sizeof wf,
             "workflow = { name = \"w\"; limits = ( { key = \"t:{@task}\"; limit = 1; } );"
             " tasks = (\n%s); };\n", FOUR);
    pool_env_open(&v, wf, ONE, 4, 0);
    assert_string_equal(pools[0].got, "a b c d");
    assert_int_equal(held(&v, "key:t:c", NULL), 1);
    finish_all(&v, "key:t:a", 1);
    close_env(&v);
}

static void test_missing_path_fails(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; tasks = (\n"
                  "  { id = \"a\"; limits = ( { key = \"db:{customer}\"; limit = 1; } ); },\n"
                  "  { id = \"b\"; }\n); };\n",
                  ONE, 4, 0);
    assert_string_equal(pools[0].got, "b");
    char why[512];
    assert_int_equal(state_of(&v, "a", why, sizeof why), SY_TASK_FAILED);
    assert_non_null(strstr(why, "customer"));
    finish_all(&v, "none", 0);
    close_env(&v);
}

/* An env whose switchyard.cfg defines `pool` (pool_env_pools), on the
 * local executor of 4; close_pooled forgets it again. */
static void open_pooled(env *v, const sy_pool_config *pool, const char *workflow)
{
    pool_env_pools = pool;
    pool_env_n_pools = 1;
    pool_env_open(v, workflow, ONE, 4, 0);
}

static void close_pooled(env *v)
{
    close_env(v);
    pool_env_pools = NULL;
    pool_env_n_pools = 0;
}

static void test_pool_slots(void **state)
{
    (void)state;
    sy_pool_config pool = {.name = "db", .size = 3};
    env v;
    open_pooled(&v, &pool,
                "workflow = { name = \"w\"; pool = \"db\"; tasks = (\n"
                "  { id = \"a\"; pool_slots = 2; }, { id = \"b\"; pool_slots = 2; },\n"
                "  { id = \"c\"; }, { id = \"big\"; pool_slots = 4; }\n); };\n");
    /* a takes 2 of 3; b's 2 do not fit, c's 1 does. */
    assert_string_equal(pools[0].got, "a c");
    assert_int_equal(held(&v, "pool:db", NULL), 3);
    char why[512];
    assert_int_equal(state_of(&v, "big", why, sizeof why), SY_TASK_FAILED);
    assert_non_null(strstr(why, "pool 'db'"));
    /* A reload makes the pool larger: b starts without a slot back. */
    sy_pool_config bigger = {.name = "db", .size = 5};
    sy_engine_set_limits(v.engine, &bigger, 1, NULL, 0);
    turn(&v);
    assert_string_equal(pools[0].got, "a c b");
    assert_int_equal(held(&v, "pool:db", NULL), 5);
    finish_all(&v, "pool:db", 5);
    assert_int_equal(held(&v, "pool:db", NULL), 0);
    close_pooled(&v);
}

/* A reload that removes a pool: its tasks start unbounded by it, and
 * the log says so once per task started, not at every turn's read. */
static void test_pool_removed(void **state)
{
    (void)state;
    sy_pool_config pool = {.name = "db", .size = 1};
    env v;
    open_pooled(&v, &pool,
                "workflow = { name = \"w\"; pool = \"db\"; tasks = (\n"
                "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }\n); };\n");
    assert_string_equal(pools[0].got, "a");
    th_capture cap;
    th_capture_start(&cap);
    sy_engine_set_limits(v.engine, NULL, 0, NULL, 0);
    turn(&v);
    turn(&v);
    char *log = th_capture_end(&cap);
    assert_string_equal(pools[0].got, "a b c");
    assert_int_equal(th_count(log, "pool 'db' is not defined any more"), 2);
    free(log);
    finish_all(&v, "pool:db", 1);
    close_pooled(&v);
}

static void test_tenant_max_running(void **state)
{
    (void)state;
    sy_tenant_config t = {.name = "public", .weight = 1, .max_running = 1};
    env v;
    char wf[512];
    snprintf(wf, sizeof wf, "workflow = { name = \"w\"; tasks = (\n%s); };\n", FOUR);
    pool_env_open_with(&v, wf, ONE, 4, 0, 0, &t, 1);
    assert_string_equal(pools[0].got, "a");
    finish_all(&v, "tenant:public", 1);
    assert_string_equal(pools[0].got, "a b c d");
    close_env(&v);
}

/* A key of limit 1 whose strategy ends the task that finds it full
 * without running: task `id` ends `want`, saying why; the holder goes on
 * and gives its slot back. */
static void ends_unrun(const char *strategy, const char *id, sy_task_state want)
{
    env v;
    char wf[512], text[128], why[512];
    snprintf(wf, sizeof wf,
             "workflow = { name = \"w\"; limits = ( { key = \"db\"; limit = 1;"
             " strategy = \"%s\"; } ); tasks = (\n%s); };\n", strategy, FOUR);
    pool_env_open(&v, wf, ONE, 4, 0);
    assert_string_equal(pools[0].got, "a");
    assert_int_equal(state_of(&v, id, why, sizeof why), want);
    snprintf(text, sizeof text, "key:db is full (1 of 1 held): not run (strategy %s)", strategy);
    assert_non_null(strstr(why, text));
    finish_all(&v, "key:db", 1);
    assert_int_equal(state_of(&v, "a", NULL, 0), SY_TASK_COMPLETED);
    assert_int_equal(held(&v, "key:db", NULL), 0);
    close_env(&v);
}

/* A key whose counters count a holder no longer live (here a slot taken
 * under a claim that is not the run's: a dead host's, not reaped yet)
 * leaves room for the first takes of a turn; the take that then finds it
 * full by the counters counts the live holders before its strategy drops
 * it.  Without that, c was dropped with key:db not full. */
static void test_drop_counts_live(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v,
                  "workflow = { name = \"w\"; limits = ( { key = \"db\"; limit = 3;"
                  " strategy = \"drop\"; } ); tasks = (\n"
                  "  { id = \"first\"; limits = (); },\n"
                  "  { id = \"a\"; after = [\"first\"]; }, { id = \"b\"; after = [\"first\"]; },\n"
                  "  { id = \"c\"; after = [\"first\"]; }\n); };\n",
                  ONE, 4, 0);
    assert_string_equal(pools[0].got, "first");
    sy_store_fence ghost = {.owner = "a-dead-host", .epoch = 99};
    sy_slot_holder h = {v.run_id, 0, -1, 7};
    sy_slot_claim claim = {"key:db", 3, 1};
    bool taken = false;
    size_t full = 0;
    int64_t held_by = 0;
    assert_int_equal(sy_store_begin(v.store), SY_OK);
    assert_int_equal(sy_store_take_slots(v.store, &ghost, &h, &claim, 1, pool_env_now, &taken,
                                         &full, &held_by), SY_OK);
    assert_int_equal(sy_store_commit(v.store), SY_OK);
    assert_true(taken);
    assert_int_equal(held(&v, "key:db", NULL), 0); /* not live */
    finish(&v, 0, "first");
    assert_string_equal(pools[0].got, "first a b c");
    assert_int_equal(held(&v, "key:db", NULL), 3);
    finish_all(&v, "key:db", 3);
    assert_int_equal(state_of(&v, "c", NULL, 0), SY_TASK_COMPLETED);
    close_env(&v);
}

/* drop: the task ends Dropped, a state of its own. */
static void test_drop(void **state)
{
    (void)state;
    ends_unrun("drop", "b", SY_TASK_DROPPED);
    ends_unrun("drop", "d", SY_TASK_DROPPED);
}

/* cancel_newest: the task ends Skipped, as before Dropped existed
 * (docs/flow-control.md says why the two differ). */
static void test_cancel_newest(void **state)
{
    (void)state;
    ends_unrun("cancel_newest", "c", SY_TASK_SKIPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_limit),
        cmocka_unit_test(test_keys_distinct),
        cmocka_unit_test(test_missing_path_fails),
        cmocka_unit_test(test_pool_slots),
        cmocka_unit_test(test_pool_removed),
        cmocka_unit_test(test_tenant_max_running),
        cmocka_unit_test(test_drop),
        cmocka_unit_test(test_drop_counts_live),
        cmocka_unit_test(test_cancel_newest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
