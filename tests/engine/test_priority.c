/* priorities: among the Ready tasks that can start, higher priority goes
 * first and ties go in order of readiness; a task that waits gains a
 * point per `priority_aging_ms`, so that newer work of a higher priority
 * does not keep it waiting for ever. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libconfig.h>

#include "../helpers.h"
#include "pool_executor.h"
#include "base/util.h"
#include "engine/engine.h"
#include "engine/priority.h"
#include "executor/instance.h"
#include "service/runs.h"
#include "store/store.h"
#include "workflow/workflow.h"

/* The tenants' weights the next open_env gives its engine. */
static const sy_tenant_config *g_tenants;
static size_t g_n_tenants;

static void open_env(env *v, const char *workflow, const char *routes, int64_t local_slots,
                     int64_t burst_slots, int64_t aging_ms)
{
    pool_env_open_with(v, workflow, routes, local_slots, burst_slots, aging_ms, g_tenants,
                       g_n_tenants);
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


static const char *const ONE = "routes = { default = \"local\"; };";

/* One slot: the tasks start one at a time, highest first, ties in file
 * order (the order they became Ready). */
static void test_higher_first(void **state)
{
    (void)state;
    env v;
    open_env(&v,
             "workflow = { name = \"w\"; tasks = (\n"
             "  { id = \"p0\"; }, { id = \"hi\"; priority = 10; }, { id = \"mid\"; priority = 5; },\n"
             "  { id = \"neg\"; priority = -1; }, { id = \"hi2\"; priority = 10; }\n"
             "); };\n",
             ONE, 1, 0, 1000000000);
    assert_string_equal(pools[0].got, "hi");
    finish_all(&v);
    assert_string_equal(pools[0].got, "hi hi2 mid p0 neg");
    assert_int_equal(task_row(&v, "neg").state, SY_TASK_COMPLETED);
    close_env(&v);
}

/* The workflow's priority is its tasks' default; without priorities the
 * order is readiness (file order), as it always was. */
static void test_workflow_default(void **state)
{
    (void)state;
    env v;
    open_env(&v,
             "workflow = { name = \"w\"; priority = 3; tasks = (\n"
             "  { id = \"a\"; }, { id = \"b\"; priority = 4; }, { id = \"c\"; priority = 2; },\n"
             "  { id = \"d\"; }\n"
             "); };\n",
             ONE, 1, 0, 1000000000);
    finish_all(&v);
    assert_string_equal(pools[0].got, "b a d c");
    close_env(&v);
    open_env(&v,
             "workflow = { name = \"w\"; tasks = (\n"
             "  { id = \"a\"; }, { id = \"b\"; }, { id = \"c\"; }, { id = \"d\"; }\n"
             "); };\n",
             ONE, 1, 0, 0);
    finish_all(&v);
    assert_string_equal(pools[0].got, "a b c d");
    close_env(&v);
}

/* `low` waits Ready behind `block`; `late`, of a higher priority, becomes
 * Ready only when `block` ends.  Aged by its wait (at least 40 ms, at a
 * point per 5 ms: 8 or more), `low` goes first; without aging, `late`. */
static void test_aging(void **state)
{
    (void)state;
    static const char *const wf =
        "workflow = { name = \"w\"; tasks = (\n"
        "  { id = \"block\"; priority = 100; }, { id = \"low\"; },\n"
        "  { id = \"late\"; after = [\"block\"]; priority = 3; }\n"
        "); };\n";
    for (int aged = 0; aged < 2; aged++) {
        env v;
        open_env(&v, wf, ONE, 1, 0, aged ? 5 : 1000000000);
        assert_string_equal(pools[0].got, "block");
        usleep(40 * 1000);
        turn(&v);
        finish_all(&v);
        assert_string_equal(pools[0].got, aged ? "block low late" : "block late low");
        close_env(&v);
    }
}

/* Tenant b's backlog arrives: `text` (tenant a's workflow) with every
 * "a" id and tenant made "b", recorded with `priority` (submit
 * --priority) and adopted.  The caller frees the workflow. */
static sy_workflow *backlog_b(env *v, const char *text, int32_t priority, int64_t *run_b)
{
    char *wfb_text = sy_xstrdup(text);
    for (char *p = wfb_text; (p = strstr(p, "\"a")); p++)
        p[1] = 'b';
    char *path = th_write(v->dir, "b.cfg", wfb_text);
    free(wfb_text);
    sy_diags d;
    sy_diags_init(&d);
    sy_workflow *wfb = NULL;
    assert_int_equal(sy_workflow_load_file(path, NULL, NULL, &wfb, &d), 0);
    sy_diags_free(&d);
    free(path);
    char err[512];
    assert_int_equal(sy_runs_record_keyed(v->store, wfb, "{}", NULL, 0, priority, run_b, NULL,
                                          err, sizeof err),
                     SY_OK);
    assert_int_equal(sy_engine_adopt(v->engine, *run_b, true, err, sizeof err), SY_OK);
    return wfb;
}


/* Two tenants of weights 1 and 3 with backlogs on one slot: after the
 * first start, b gets 3 of every 4 starts, within one task at any point,
 * each tenant's tasks in their order. */
static void test_fair_share(void **state)
{
    (void)state;
    sy_tenant_config tenants[] = {{.name = "a", .weight = 1}, {.name = "b", .weight = 3}};
    g_tenants = tenants;
    g_n_tenants = 2;
    char text[2048];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "workflow = { name = \"w\"; tenant = \"a\"; tasks = (\n");
    for (int i = 1; i <= 16; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "  { id = \"a%d\"; }%s\n", i,
                               i < 16 ? "," : "");
    snprintf(text + at, sizeof text - at, "); };\n");
    env v;
    open_env(&v, text, ONE, 1, 0, 1000000000);
    assert_string_equal(pools[0].got, "a1");
    /* Tenant b's backlog arrives. */
    int64_t run_b = 0;
    sy_workflow *wfb = backlog_b(&v, text, 0, &run_b);
    finish_all(&v);
    if (getenv("SY_TEST_VERBOSE"))
        printf("# %s\n", pools[0].got);
    /* Stride scheduling is exact: b, b, b, a from the second start on
     * (ties to a, listed first) until b's backlog is done. */
    assert_string_equal(pools[0].got, "a1 b1 b2 b3 a2 b4 b5 b6 a3 b7 b8 b9 a4 b10 b11 b12 a5 "
                                      "b13 b14 b15 a6 b16 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16");
    /* The starts after a1: a's share of each prefix is a quarter, within
     * one task; b's 16 are done after 21 starts. */
    const char *p = pools[0].got + 2;
    int n = 0, na = 0, nb = 0, next_a = 2, next_b = 1;
    char id[8];
    while (sscanf(p, " %7s", id) == 1 && nb < 16) {
        p = strstr(p + 1, id) + strlen(id);
        n++;
        if (id[0] == 'a') {
            assert_int_equal(atoi(id + 1), next_a++);
            na++;
        } else {
            assert_int_equal(atoi(id + 1), next_b++);
            nb++;
        }
        int want = n / 4;
        if (na < want - 1 || na > want + 1)
            fail_msg("after %d starts tenant a has %d (want %d +- 1): %s", n, na, want,
                     pools[0].got);
    }
    assert_int_equal(nb, 16);
    assert_in_range(na, 4, 6);
    close_env(&v);
    sy_workflow_free(wfb);
    g_tenants = NULL;
    g_n_tenants = 0;
}

/* New weights (a reload's) take effect at the next start, each tenant
 * keeping its pass; none at all: order of readiness again. */
static void test_fair_share_reload(void **state)
{
    (void)state;
    sy_tenant_config tenants[] = {{.name = "a", .weight = 1}, {.name = "b", .weight = 3}};
    g_tenants = tenants;
    g_n_tenants = 2;
    char text[2048];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "workflow = { name = \"w\"; tenant = \"a\"; tasks = (\n");
    for (int i = 1; i <= 12; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "  { id = \"a%d\"; }%s\n", i,
                               i < 12 ? "," : "");
    snprintf(text + at, sizeof text - at, "); };\n");
    env v;
    open_env(&v, text, ONE, 1, 0, 1000000000);
    int64_t run_b = 0;
    sy_workflow *wfb = backlog_b(&v, text, 0, &run_b);
    turn(&v);
    for (int i = 0; i < 4; i++)
        finish(&v, 0, pools[0].held[0].task_id);
    assert_string_equal(pools[0].got, "a1 b1 b2 b3 a2");
    /* Weights swapped to a=3, b=1, the passes kept (a at 2, b at 1, in
     * strides of weight 1): b4 (b at 2), a3 on the tie (a at 7/3), b5 (b
     * at 3), then a's 3 to 1: a4, a5, a6 on the tie, b6, a7 ... */
    sy_tenant_config swapped[] = {{.name = "a", .weight = 3}, {.name = "b", .weight = 1}};
    sy_engine_set_tenants(v.engine, swapped, 2);
    for (int i = 0; i < 9; i++)
        finish(&v, 0, pools[0].held[0].task_id);
    assert_string_equal(pools[0].got, "a1 b1 b2 b3 a2 b4 a3 b5 a4 a5 a6 b6 a7 a8");
    /* No tenants: order of readiness (the queue's, as the last turn left it). */
    sy_engine_set_tenants(v.engine, NULL, 0);
    finish_all(&v);
    assert_int_equal(task_row(&v, "a12").state, SY_TASK_COMPLETED);
    v.run_id = run_b; /* task_row reads the env's run */
    assert_int_equal(task_row(&v, "b12").state, SY_TASK_COMPLETED);
    close_env(&v);
    sy_workflow_free(wfb);
    g_tenants = NULL;
    g_n_tenants = 0;
}

/* A run submitted with a priority overtakes a backlog: its tasks start
 * before every waiting task of the run before it (the one started goes
 * on), as the store gives the priority back to the host that loads it. */
static void test_submit_priority(void **state)
{
    (void)state;
    char text[1024];
    size_t at = (size_t)snprintf(text, sizeof text,
                                 "workflow = { name = \"w\"; tenant = \"a\"; tasks = (\n");
    for (int i = 1; i <= 6; i++)
        at += (size_t)snprintf(text + at, sizeof text - at, "  { id = \"a%d\"; }%s\n", i,
                               i < 6 ? "," : "");
    snprintf(text + at, sizeof text - at, "); };\n");
    env v;
    open_env(&v, text, ONE, 1, 0, 1000000000);
    assert_string_equal(pools[0].got, "a1");
    int64_t run_b = 0;
    sy_workflow *wfb = backlog_b(&v, text, 5, &run_b);
    sy_run_record r;
    assert_int_equal(sy_store_get_run(v.store, run_b, &r), SY_OK);
    assert_int_equal(r.priority, 5);
    sy_run_record_clear(&r);
    finish_all(&v);
    assert_string_equal(pools[0].got, "a1 b1 b2 b3 b4 b5 b6 a2 a3 a4 a5 a6");
    close_env(&v);
    sy_workflow_free(wfb);
    /* Without one, the same backlog: b goes in turn with a's waiting
     * tasks, by readiness, and ends last. */
    open_env(&v, text, ONE, 1, 0, 1000000000);
    wfb = backlog_b(&v, text, 0, &run_b);
    finish_all(&v);
    const char *got = pools[0].got;
    assert_string_equal(got + strlen(got) - 2, "b6");
    assert_null(strstr(got, "b1 b2 b3 b4 b5 b6 a"));
    close_env(&v);
    sy_workflow_free(wfb);
}

/* The arithmetic of aging. */
static void test_aged(void **state)
{
    (void)state;
    assert_int_equal(sy_priority_aged(5, 0, 1000), 5);
    assert_int_equal(sy_priority_aged(5, 999, 1000), 5);
    assert_int_equal(sy_priority_aged(5, 1000, 1000), 6);
    assert_int_equal(sy_priority_aged(-1000000, UINT32_MAX, 1), -1000000 + (int64_t)UINT32_MAX);
    assert_int_equal(sy_priority_aged(2, 10, 0), 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_higher_first),
        cmocka_unit_test(test_workflow_default),
        cmocka_unit_test(test_aging),
        cmocka_unit_test(test_fair_share),
        cmocka_unit_test(test_fair_share_reload),
        cmocka_unit_test(test_submit_priority),
        cmocka_unit_test(test_aged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
