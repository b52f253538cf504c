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
        cmocka_unit_test(test_stopped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
