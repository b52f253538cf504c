/* What the engine measures as it works (engine/metrics.h), and the
 * exposition made of it (service/metrics.h): each outcome counted once on
 * the instance that ended it, a busy answer and a refused submit told
 * apart, every accepted attempt timed from Ready and to its end, one
 * batch observation per committed turn, tasks and runs by state from
 * memory, the lease's age on the engine's clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/metrics.h"
#include "executor/call_record.h"
#include "service/metrics.h"
#include "fake.h"

static const char *four = "workflow = { name = \"w\"; tasks = (\n"
                          "  { id = \"a\"; },\n"
                          "  { id = \"b\"; fail = true; },\n"
                          "  { id = \"c\"; refuse = true; },\n"
                          "  { id = \"h\"; hold = true; }\n"
                          "); };\n";

static const sy_instance_metrics *instance_metrics(fake_env *env)
{
    const sy_engine_metrics *m = sy_engine_metrics_get(env->engine);
    assert_non_null(m->instances);
    assert_string_equal(m->instances->name, "default");
    assert_string_equal(m->instances->plugin, "fake");
    assert_null(m->instances->next);
    return m->instances;
}

/* Succeeded, failed (an error and a refused submit), deferred and busy,
 * each where it belongs; the submit call timed each time it is made. */
static void test_outcomes(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(sy_call_record_open(NULL, FAKE_OWNER, err, sizeof err), 0);
    fake_env env;
    fake_open(&env, four);
    fake.busy = 1; /* the first submit: a, answered busy */
    fake_turn(&env);
    fake_wake();
    fake_turn(&env);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_DEFERRED, .retry_after_ms = 100};
    fake_finish(&env, "h", &res);
    fake_advance(&env, 100);
    fake_complete(&env, "h", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);

    const sy_instance_metrics *im = instance_metrics(&env);
    assert_int_equal(im->completed, 2); /* a, h */
    assert_int_equal(im->failed, 2);    /* b, c refused */
    assert_int_equal(im->throttled, 1); /* h's first attempt */
    assert_int_equal(im->busy, 1);      /* a's first offer */
    assert_int_equal(im->call.count, 6); /* a twice, b, c, h twice */
    const sy_engine_metrics *m = sy_engine_metrics_get(env.engine);
    assert_int_equal(m->submitted, 4); /* a, b, h twice */
    assert_int_equal(m->dispatch.count, 4);
    assert_int_equal(m->duration.count, 4);
    assert_int_equal(m->runs_ended[SY_RUN_FAILED], 1);
    assert_int_equal(m->runs_ended[SY_RUN_COMPLETED], 0);
    assert_int_equal(m->runs_adopted, 1);
    assert_true(m->rows.count > 0);
    assert_int_equal(m->write.count, m->rows.count);
    /* Each task row at least once for Running and once terminal (c and a
     * once more for the refusal and the busy answer), and the run's. */
    assert_true(m->rows.sum >= 4 * 2 + 1);
    fake_close(&env);
    sy_call_record_close();
}

/* An attempt that outlives its deadline counts as failed when the
 * deadline passes, and not again when the plugin returns it, late. */
static void test_deadline(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; timeout = \"100ms\"; }\n"
                    "); };\n");
    fake_turn(&env);
    fake_advance(&env, 100);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_FAILED);
    /* The fake's cancel() returned it (cancelled), stale by then. */
    assert_int_equal(fake_cancels("a"), 1);
    fake_turn(&env);
    const sy_instance_metrics *im = instance_metrics(&env);
    assert_int_equal(im->failed, 1);
    assert_int_equal(im->completed, 0);
    assert_int_equal(sy_engine_metrics_get(env.engine)->duration.count, 1);
    fake_close(&env);
}

/* Tasks and runs by state, from what the engine holds; the lease's age
 * follows the engine's clock. */
static void test_states_and_lease(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; }, { id = \"b\"; fail = true; },\n"
                    "  { id = \"h\"; hold = true; },\n"
                    "  { id = \"n\"; after = [\"h\"]; }\n"
                    "); };\n");
    fake_turn(&env);
    uint64_t tasks[SY_TASK_STATE_COUNT], runs[SY_RUN_STATE_COUNT];
    sy_engine_metrics_states(env.engine, tasks, runs);
    assert_int_equal(tasks[SY_TASK_COMPLETED], 1);
    assert_int_equal(tasks[SY_TASK_FAILED], 1);
    assert_int_equal(tasks[SY_TASK_RUNNING], 1);
    assert_int_equal(tasks[SY_TASK_NOT_STARTED], 1);
    assert_int_equal(tasks[SY_TASK_READY], 0);
    assert_int_equal(runs[SY_RUN_RUNNING], 1);
    int64_t lease_ms;
    assert_int_equal(sy_engine_metrics_lease_age(env.engine, &lease_ms), 0);
    assert_int_equal(lease_ms, FAKE_LEASE_MS);
    fake_advance(&env, 2500);
    assert_int_equal(sy_engine_metrics_lease_age(env.engine, &lease_ms), 2500);
    fake_complete(&env, "h", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);
    /* An ended run holds no lease worth reporting. */
    assert_int_equal(sy_engine_metrics_lease_age(env.engine, &lease_ms), -1);
    fake_close(&env);
}

/* A reload makes new instance queues; the figures stay with the
 * instance's name and plugin, so a counter never goes back, and the
 * instance is reported once. */
static void test_reload_keeps_figures(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; }, { id = \"h\"; hold = true; }\n"
                    "); };\n");
    fake_turn(&env);
    const sy_instance_metrics *before = instance_metrics(&env);
    assert_int_equal(before->completed, 1);
    assert_int_equal(sy_engine_reload(env.engine, NULL, &env.instance, 1, NULL, 0, NULL, NULL),
                     SY_OK);
    fake_turn(&env);
    fake_complete(&env, "h", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    const sy_instance_metrics *after = instance_metrics(&env); /* one series */
    assert_ptr_equal(after, before);
    assert_int_equal(after->completed, 2);
    sy_service sv;
    memset(&sv, 0, sizeof sv);
    sv.engine = env.engine;
    char *text;
    size_t len;
    assert_int_equal(sy_metrics_render(&sv, &text, &len), SY_OK);
    const char *line = "\nswitchyard_executor_completed_total{executor=\"default\",plugin=\"fake\"} 2\n";
    const char *at = strstr(text, line);
    assert_non_null(at);
    assert_null(strstr(at + 1, line));
    free(text);
    fake_close(&env);
}

static void has_line(const char *text, const char *line)
{
    char *want = malloc(strlen(line) + 3);
    assert_non_null(want);
    sprintf(want, "\n%s\n", line);
    if (!strstr(text, want))
        fail_msg("no line \"%s\" in:\n%s", line, text);
    free(want);
}

/* The exposition of a run in flight: the figures above under their
 * names, each family declared once before its samples. */
static void test_render(void **state)
{
    (void)state;
    sy_service sv;
    memset(&sv, 0, sizeof sv);
    char *text = (char *)"x";
    size_t len = 1;
    assert_int_equal(sy_metrics_render(&sv, &text, &len), SY_ESTATE);
    assert_null(text);

    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; }, { id = \"b\"; fail = true; },\n"
                    "  { id = \"h\"; hold = true; }\n"
                    "); };\n");
    fake.capacity = 8;
    fake_turn(&env);
    sv.engine = env.engine;
    assert_int_equal(sy_metrics_render(&sv, &text, &len), SY_OK);
    assert_int_equal(strlen(text), len);
    has_line(text, "# TYPE switchyard_tasks gauge");
    has_line(text, "switchyard_tasks{state=\"running\"} 1");
    has_line(text, "switchyard_tasks{state=\"not_started\"} 0");
    has_line(text, "switchyard_runs{state=\"running\"} 1");
    has_line(text, "switchyard_executor_active{executor=\"default\",plugin=\"fake\"} 1");
    has_line(text, "switchyard_executor_capacity{executor=\"default\",plugin=\"fake\"} 7");
    has_line(text, "switchyard_executor_healthy{executor=\"default\",plugin=\"fake\"} 1");
    has_line(text, "# TYPE switchyard_executor_completed_total counter");
    has_line(text, "switchyard_executor_completed_total{executor=\"default\",plugin=\"fake\"} 1");
    has_line(text, "switchyard_executor_failed_total{executor=\"default\",plugin=\"fake\"} 1");
    has_line(text, "switchyard_dispatch_latency_seconds_count 3");
    has_line(text, "switchyard_dispatch_latency_seconds_bucket{le=\"+Inf\"} 3");
    has_line(text, "switchyard_task_duration_seconds_count 2");
    has_line(text, "# TYPE switchyard_store_write_seconds histogram");
    has_line(text, "switchyard_lease_age_seconds 0");
    assert_non_null(strstr(text, "\nswitchyard_build_info{version=\"" PACKAGE_VERSION "\",abi=\""));
    /* Every family once; every sample after its family's TYPE. */
    char *copy = strdup(text), *save = NULL;
    char families[64][96];
    size_t n_families = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[96];
        if (sscanf(line, "# TYPE %95s", name) == 1) {
            for (size_t i = 0; i < n_families; i++)
                assert_string_not_equal(families[i], name);
            assert_true(n_families < 64);
            strcpy(families[n_families++], name);
            continue;
        }
        if (line[0] == '#')
            continue;
        assert_true(n_families > 0);
        const char *fam = families[n_families - 1];
        assert_memory_equal(line, fam, strlen(fam));
    }
    free(copy);
    free(text);
    fake_complete(&env, "h", SY_OUTCOME_SUCCEEDED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outcomes),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_states_and_lease),
        cmocka_unit_test(test_reload_keeps_figures),
        cmocka_unit_test(test_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
