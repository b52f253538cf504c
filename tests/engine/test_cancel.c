/* cancel: what has not started is Skipped, what runs is asked to cancel,
 * and the run ends Cancelled once it is back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

static void test_cancel_run(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; },\n"
                    "  { id = \"b\"; after = [\"a\"]; },\n"
                    "  { id = \"c\"; fail = true; retry = { attempts = 2; delay = \"1m\"; }; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    assert_int_equal(fake_state(&env, "c"), SY_TASK_READY); /* in its backoff */

    assert_int_equal(sy_engine_cancel(env.engine, env.run_id, "stop it"), SY_OK);
    fake_turn(&env);
    assert_int_equal(fake_cancels("a"), 1);
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_CANCELLED);
    assert_string_equal(a.error, "cancelled with its run");
    fake_row b = fake_task(&env, "b");
    assert_int_equal(b.state, SY_TASK_SKIPPED);
    assert_string_equal(b.error, "run cancelled");
    assert_int_equal(fake_state(&env, "c"), SY_TASK_SKIPPED);
    assert_int_equal(fake_run_state(&env), SY_RUN_CANCELLED);

    /* c's backoff was disarmed with it. */
    fake_advance(&env, 120000);
    assert_int_equal(fake_submits("c"), 1);
    assert_int_equal(sy_engine_cancel(env.engine, env.run_id, "again"), SY_ENOENT);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
