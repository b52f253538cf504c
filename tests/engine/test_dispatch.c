/* dispatch: tasks start in dependency order, first Ready first submitted,
 * each marked Running in the store before its plugin sees it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

static const char *const diamond = "workflow = { name = \"diamond\"; tasks = (\n"
                                   "  { id = \"a\"; },\n"
                                   "  { id = \"b\"; after = [\"a\"]; },\n"
                                   "  { id = \"c\"; after = [\"a\"]; },\n"
                                   "  { id = \"d\"; after = [\"b\", \"c\"]; }\n"
                                   "); };\n";

static void test_order(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, diamond);
    fake_turn(&env);
    const char *want[] = {"a", "b", "c", "d"};
    assert_int_equal(fake.n_subs, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(fake.subs[i].task_id, want[i]);
        assert_int_equal(fake.subs[i].attempt, 1);
        assert_int_equal(fake_state(&env, want[i]), SY_TASK_COMPLETED);
        assert_int_equal(fake_task(&env, want[i]).attempts, 1);
    }
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* A held task is Running in the store while its plugin has it; its
 * dependents wait NotStarted until it completes. */
static void test_running_before_submit(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; },\n"
                    "  { id = \"b\"; after = [\"a\"]; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_NOT_STARTED);
    assert_int_equal(fake_submits("b"), 0);
    sy_engine_view v;
    assert_true(sy_engine_view_run(env.engine, env.run_id, &v));
    assert_int_equal(v.n_running, 1);
    assert_int_equal(v.n_done, 0);

    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_running_before_submit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
