/* capacity: a task the instance has no room for stays Ready; room alone
 * does not re-offer it, the plugin's wake() does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "fake.h"

static void test_wait_for_wake(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; },\n"
                    "  { id = \"b\"; hold = true; },\n"
                    "  { id = \"c\"; hold = true; }\n"
                    "); };\n");
    fake.capacity = 1;
    fake_turn(&env);
    assert_int_equal(fake.n_subs, 1);
    assert_string_equal(fake.subs[0].task_id, "a");
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_READY);
    assert_int_equal(fake_state(&env, "c"), SY_TASK_READY);

    /* A slot frees but the plugin says nothing: b and c keep waiting. */
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake.n_subs, 1);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_READY);

    /* wake(): offered again, one fits, in the order they became Ready. */
    fake_wake();
    fake_turn(&env);
    assert_int_equal(fake.n_subs, 2);
    assert_string_equal(fake.subs[1].task_id, "b");
    assert_int_equal(fake_state(&env, "b"), SY_TASK_RUNNING);
    assert_int_equal(fake_state(&env, "c"), SY_TASK_READY);

    fake_complete(&env, "b", SY_OUTCOME_SUCCEEDED);
    fake_wake();
    fake_turn(&env);
    assert_int_equal(fake_submits("c"), 1);
    fake_complete(&env, "c", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* No capacity at all: nothing is submitted, and nothing fails. */
static void test_zero_capacity(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; } ); };\n");
    fake.capacity = 0;
    fake_turn(&env);
    assert_int_equal(fake.n_subs, 0);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_READY);
    fake.capacity = SY_CAPACITY_UNLIMITED;
    fake_wake();
    fake_turn(&env);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_for_wake),
        cmocka_unit_test(test_zero_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
