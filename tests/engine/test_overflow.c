/* overflow: a route naming several instances sends each task to the first
 * with capacity; when all are full the task waits on the route and goes
 * to whichever instance frees a slot first; once the first frees, new tasks
 * go back to it.  The store records the instance of each attempt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libconfig.h>

#include "../helpers.h"
#include "pool_executor.h"
#include "engine/engine.h"
#include "executor/instance.h"
#include "service/runs.h"
#include "store/store.h"
#include "workflow/workflow.h"


/* Completes whatever the pools hold until the run is over. */
static void finish_all(env *v)
{
    for (int guard = 0; guard < 64; guard++) {
        int p = pools[0].n_held ? 0 : pools[1].n_held ? 1 : -1;
        if (p < 0)
            return;
        char id[32];
        snprintf(id, sizeof id, "%s", pools[p].held[0].task_id);
        finish(v, p, id);
    }
}

struct row {
    const char *id;
    char executor[32];
    sy_task_state state;
};

static int find_row(void *arg, const sy_task_record *t)
{
    struct row *r = arg;
    if (strcmp(t->task_id, r->id) == 0) {
        snprintf(r->executor, sizeof r->executor, "%s", t->executor ? t->executor : "");
        r->state = t->state;
    }
    return 0;
}

static struct row task_row(env *v, const char *id)
{
    struct row r = {.id = id};
    assert_int_equal(sy_store_list_tasks(v->store, v->run_id, find_row, &r), SY_OK);
    return r;
}

static const char *const seven =
    "workflow = { name = \"w\"; tasks = (\n"
    "  { id = \"t1\"; }, { id = \"t2\"; }, { id = \"t3\"; }, { id = \"t4\"; },\n"
    "  { id = \"t5\"; }, { id = \"t6\"; }, { id = \"t7\"; },\n"
    "  { id = \"late\"; after = [\"t4\"]; }\n"
    "); };\n";

static void test_fill_then_burst(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v, seven, "routes = { default = [\"local\", \"burst\"]; };", 2, 3);
    /* The pool takes 2, the burst instance the next 3; 2 wait. */
    assert_string_equal(pools[0].got, "t1 t2");
    assert_string_equal(pools[1].got, "t3 t4 t5");
    assert_int_equal(task_row(&v, "t6").state, SY_TASK_READY);
    assert_int_equal(task_row(&v, "t7").state, SY_TASK_READY);

    /* The burst instance frees first: a waiting task goes there, though
     * it is second in the list (it waits on the route, not on the pool). */
    finish(&v, 1, "t3");
    assert_string_equal(pools[1].got, "t3 t4 t5 t6");
    assert_string_equal(pools[0].got, "t1 t2");
    /* Then the pool frees: the last waiting task goes to it. */
    finish(&v, 0, "t1");
    assert_string_equal(pools[0].got, "t1 t2 t7");

    /* A slot free in each: a new task goes back to the first. */
    finish(&v, 0, "t2");
    finish(&v, 1, "t4"); /* frees `late` and a burst slot */
    assert_string_equal(pools[0].got, "t1 t2 t7 late");
    assert_string_equal(pools[1].got, "t3 t4 t5 t6");

    const char *want[][2] = {{"t1", "local"}, {"t2", "local"}, {"t3", "burst"},
                             {"t4", "burst"}, {"t5", "burst"}, {"t6", "burst"},
                             {"t7", "local"}, {"late", "local"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(task_row(&v, want[i][0]).executor, want[i][1]);
    finish(&v, 1, "t5");
    finish(&v, 1, "t6");
    finish(&v, 0, "t7");
    finish(&v, 0, "late");
    assert_int_equal(task_row(&v, "late").state, SY_TASK_COMPLETED);
    close_env(&v);
}

/* A single name is the one-instance list it always was: a full instance
 * keeps tasks waiting even when another has room. */
static void test_single_instance_waits(void **state)
{
    (void)state;
    env v;
    pool_env_open(&v, seven, "routes = { default = \"local\"; };", 2, 3);
    assert_string_equal(pools[0].got, "t1 t2");
    assert_string_equal(pools[1].got, "");
    finish(&v, 0, "t1");
    assert_string_equal(pools[0].got, "t1 t2 t3");
    assert_string_equal(pools[1].got, "");
    assert_string_equal(task_row(&v, "t3").executor, "local");
    assert_int_equal(task_row(&v, "t4").state, SY_TASK_READY);
    finish_all(&v);
    assert_int_equal(task_row(&v, "late").state, SY_TASK_COMPLETED);
    close_env(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_then_burst),
        cmocka_unit_test(test_single_instance_waits),
    };
    return cmocka_run_group_tests_name("engine: overflow routes", tests, NULL, NULL);
}
