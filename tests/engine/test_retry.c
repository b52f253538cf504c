/* retry: a failed attempt is Ready again after the policy's delay on the
 * engine's clock, not a moment before; the last failure fails the task. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

static void test_backoff(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; fail = true;\n"
                    "    retry = { attempts = 3; delay = \"10s\"; backoff = 2.0; }; },\n"
                    "  { id = \"b\"; after = [\"a\"]; }\n"
                    "); };\n");
    int64_t start = fake_now;
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 1);
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_READY);
    assert_int_equal(a.attempts, 1);
    assert_int_equal(a.ready_at, start + 10000);
    assert_string_equal(a.error, "told to fail");

    fake_advance(&env, 9999);
    assert_int_equal(fake_submits("a"), 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_READY);

    fake_advance(&env, 1); /* 10 s: the second attempt, then 20 s more */
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(fake.subs[1].attempt, 2);
    a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_READY);
    assert_int_equal(a.attempts, 2);
    assert_int_equal(a.ready_at, start + 10000 + 20000);

    fake_advance(&env, 19999);
    assert_int_equal(fake_submits("a"), 2);
    fake_advance(&env, 1);
    assert_int_equal(fake_submits("a"), 3);
    a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_FAILED);
    assert_int_equal(a.attempts, 3);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_SKIPPED);
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);
    /* Nothing is left to fire. */
    fake_advance(&env, 3600000);
    assert_int_equal(fake_submits("a"), 3);
    fake_close(&env);
}

/* A retry that succeeds completes the task and lets its dependents run. */
static void test_retry_then_success(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; retry = { attempts = 2; delay = 500; }; },\n"
                    "  { id = \"b\"; after = [\"a\"]; }\n"
                    "); };\n");
    fake_turn(&env);
    fake_complete(&env, "a", SY_OUTCOME_FAILED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_READY);
    fake_advance(&env, 500);
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_retry_then_success),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
