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

typedef struct env {
    char *dir;
    sy_store *store;
    sy_workflow *wf;
    sy_routes routes;
    sy_instance_entry inst[2];
    uv_loop_t loop;
    sy_engine *engine;
    int64_t run_id;
} env;

static int64_t clock_ms(void) { return 1700000000000; }

static void turn(env *v)
{
    for (int i = 0; i < 64; i++)
        uv_run(&v->loop, UV_RUN_NOWAIT);
}

static void open_env(env *v, const char *workflow, const char *routes, int64_t local_slots,
                     int64_t burst_slots)
{
    memset(v, 0, sizeof *v);
    memset(pools, 0, sizeof pools);
    next_pool = 0;
    v->dir = th_mkdtemp();
    char *path = th_write(v->dir, "wf.cfg", workflow);
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_workflow_load_file(path, NULL, NULL, &v->wf, &d);
    free(path);
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, routes), CONFIG_TRUE);
    sy_routes_init(&v->routes);
    errors += sy_routes_add_group(&v->routes, config_lookup(&cfg, "routes"), &d);
    config_destroy(&cfg);
    if (errors)
        th_diag_dump(&d);
    sy_diags_free(&d);
    assert_int_equal(errors, 0);

    char url[4200], err[512];
    snprintf(url, sizeof url, "sqlite:%s/store.db", v->dir);
    assert_int_equal(sy_store_open(url, v->dir, &v->store, err, sizeof err), SY_OK);
    assert_int_equal(sy_runs_record(v->store, v->wf, "{}", &v->run_id, err, sizeof err), SY_OK);
    sy_instance_init(&v->inst[0], "local", &pool_executor, NULL);
    sy_instance_init(&v->inst[1], "burst", &pool_executor, NULL);
    for (int i = 0; i < 2; i++)
        assert_int_equal(sy_instance_create(&v->inst[i], err, sizeof err), SY_OK);
    pools[0].slots = local_slots;
    pools[1].slots = burst_slots;
    assert_int_equal(uv_loop_init(&v->loop), 0);
    sy_engine_opts o = {
        .store = v->store,
        .routes = &v->routes,
        .instances = v->inst,
        .n_instances = 2,
        .owner = "test:1",
        .clock = clock_ms,
        .lease_ms = (int64_t)24 * 3600 * 1000,
        .max_recoveries = 5,
    };
    assert_int_equal(sy_engine_new(&v->engine, &v->loop, &o, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(v->engine, v->run_id, true, err, sizeof err), SY_OK);
    turn(v);
}

static void close_env(env *v)
{
    sy_engine_free(v->engine);
    assert_int_equal(uv_loop_close(&v->loop), 0);
    for (int i = 0; i < 2; i++)
        sy_instance_destroy(&v->inst[i]);
    sy_routes_free(&v->routes);
    sy_store_close(v->store);
    sy_workflow_free(v->wf);
    th_rmtree(v->dir);
}

/* Completes the attempt pool p holds for `task_id`, frees its slot and
 * says so (wake), then turns the loop. */
static void finish(env *v, int p, const char *task_id)
{
    struct sy_instance *in = &pools[p];
    for (size_t i = 0; i < in->n_held; i++) {
        if (strcmp(in->held[i].task_id, task_id) != 0)
            continue;
        sy_completion *c = in->held[i].c;
        in->held[i] = in->held[--in->n_held];
        sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED};
        in->api->complete(c, &res);
        in->api->wake(in->host);
        turn(v);
        return;
    }
    fail_msg("pool %d holds no attempt of '%s'", p, task_id);
}

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
    open_env(&v, seven, "routes = { default = [\"local\", \"burst\"]; };", 2, 3);
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
    open_env(&v, seven, "routes = { default = \"local\"; };", 2, 3);
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
