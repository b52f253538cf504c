/* timeout: at the deadline on the engine's clock the plugin is asked to
 * cancel, the attempt fails as timed out and is retried; what the plugin
 * reports afterwards is ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

static void test_deadline(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; timeout = \"5s\";\n"
                    "    retry = { attempts = 2; delay = \"1s\"; }; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);

    fake_advance(&env, 4999);
    assert_int_equal(fake_cancels("a"), 0);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);

    fake_advance(&env, 1);
    assert_int_equal(fake_cancels("a"), 1);
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_READY);
    assert_int_equal(a.attempts, 1);
    assert_non_null(strstr(a.error, "timed out after 5s (attempt 1)"));

    fake_advance(&env, 1000);
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    fake_advance(&env, 5000);
    assert_int_equal(fake_cancels("a"), 2);
    a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_FAILED);
    assert_int_equal(a.attempts, 2);
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);
    fake_close(&env);
}

/* An attempt that completes before its deadline disarms it. */
static void test_in_time(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; timeout = \"5s\"; }\n"
                    "); };\n");
    fake_turn(&env);
    fake_advance(&env, 4000);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    fake_advance(&env, 60000);
    assert_int_equal(fake_cancels("a"), 0);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_in_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
