/* observe: the engine tells its observer each task and run state change
 * after the batch that wrote it committed (what the observer reads from
 * the store then agrees), in order; with no observer nothing is kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

typedef struct seen {
    fake_env *env;
    char log[2048];
    size_t n, mismatched;
} seen;

static void on_event(void *arg, const sy_engine_event *ev)
{
    seen *s = arg;
    size_t len = strlen(s->log);
    snprintf(s->log + len, sizeof s->log - len, "%s%s:%s:%u", len ? " " : "",
             ev->task ? ev->task : "run", ev->state, ev->task ? ev->attempt : 0);
    s->n++;
    assert_int_equal(ev->run_id, s->env->run_id);
    assert_string_equal(ev->workflow, "w");
    /* Committed: the store says the same already. */
    const char *stored = ev->task ? sy_task_state_name(fake_state(s->env, ev->task))
                                  : sy_run_state_name(fake_run_state(s->env));
    if (strcmp(stored, ev->state) != 0)
        s->mismatched++;
}

static void test_changes_in_order(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; },\n"
                    "  { id = \"b\"; after = [\"a\"]; fail = true; }\n"
                    "); };\n");
    seen s = {.env = &env};
    sy_engine_observe(env.engine, on_event, &s);
    fake_turn(&env);
    assert_string_equal(s.log, "a:Running:1");
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_string_equal(s.log, "a:Running:1 a:Completed:1 b:Running:1 b:Failed:1 run:Failed:0");
    assert_int_equal(s.mismatched, 0);
    fake_close(&env);
}

/* Elements of a mapped task are told with their index, their failure
 * with its error. */
typedef struct elems {
    size_t running, completed, failed, bad;
} elems;

static void on_element(void *arg, const sy_engine_event *ev)
{
    elems *s = arg;
    /* The mapped task itself comes with element -1. */
    if (!ev->task || strcmp(ev->task, "m") != 0 || ev->element < 0)
        return;
    if (ev->element >= 3)
        s->bad++;
    if (strcmp(ev->state, "Running") == 0)
        s->running++;
    else if (strcmp(ev->state, "Completed") == 0)
        s->completed++;
    else if (strcmp(ev->state, "Failed") == 0 && ev->error && strstr(ev->error, "told to end so"))
        s->failed++;
}

static void test_elements(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"m\"; map_range = 3; hold = true; }\n"
                    "); };\n");
    elems s = {0};
    sy_engine_observe(env.engine, on_element, &s);
    fake_turn(&env);
    assert_int_equal(s.running, 3);
    fake_finish_attempt("m", 1, SY_OUTCOME_SUCCEEDED, NULL);
    fake_finish_attempt("m", 1, SY_OUTCOME_SUCCEEDED, NULL);
    fake_finish_attempt("m", 1, SY_OUTCOME_FAILED, NULL);
    fake_turn(&env);
    assert_int_equal(s.completed, 2);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.bad, 0);
    fake_close(&env);
}

static void test_stopped(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; },\n"
                    "  { id = \"b\"; after = [\"a\"]; }\n"
                    "); };\n");
    seen s = {.env = &env};
    sy_engine_observe(env.engine, on_event, &s);
    fake_turn(&env);
    assert_int_equal(s.n, 1);
    sy_engine_observe(env.engine, NULL, NULL);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    assert_int_equal(s.n, 1);
    /* Observing again hears what comes after, not what went before. */
    sy_engine_observe(env.engine, on_event, &s);
    fake_turn(&env);
    assert_int_equal(s.n, 1);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes_in_order),
        cmocka_unit_test(test_elements),
        cmocka_unit_test(test_stopped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
