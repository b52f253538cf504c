/* trigger rules, applied by the engine: with one dependency Failed and one
 * Completed, each rule runs or skips its task, and skipping propagates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

static void test_rules(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"bad\"; fail = true; },\n"
                    "  { id = \"good\"; },\n"
                    "  { id = \"all_success\"; after = [\"bad\", \"good\"]; },\n"
                    "  { id = \"all_done\"; after = [\"bad\", \"good\"]; trigger = \"all_done\"; },\n"
                    "  { id = \"all_failed\"; after = [\"bad\", \"good\"]; trigger = \"all_failed\"; },\n"
                    "  { id = \"one_success\"; after = [\"bad\", \"good\"]; trigger = \"one_success\"; },\n"
                    "  { id = \"one_failed\"; after = [\"bad\", \"good\"]; trigger = \"one_failed\"; },\n"
                    "  { id = \"none_failed\"; after = [\"bad\", \"good\"]; trigger = \"none_failed\"; },\n"
                    "  { id = \"below_skip\"; after = [\"all_success\"]; },\n"
                    "  { id = \"always\"; after = [\"all_success\"]; trigger = \"always\"; }\n"
                    "); };\n");
    fake_turn(&env);
    struct { const char *id; sy_task_state want; } cases[] = {
        {"bad", SY_TASK_FAILED},
        {"good", SY_TASK_COMPLETED},
        {"all_success", SY_TASK_SKIPPED},
        {"all_done", SY_TASK_COMPLETED},
        {"all_failed", SY_TASK_SKIPPED},
        {"one_success", SY_TASK_COMPLETED},
        {"one_failed", SY_TASK_COMPLETED},
        {"none_failed", SY_TASK_SKIPPED},
        {"below_skip", SY_TASK_SKIPPED},
        {"always", SY_TASK_COMPLETED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sy_task_state got = fake_state(&env, cases[i].id);
        if (got != cases[i].want)
            fail_msg("%s is %s, not %s", cases[i].id, sy_task_state_name(got),
                     sy_task_state_name(cases[i].want));
        /* A Skipped task never reaches the plugin. */
        assert_int_equal(fake_submits(cases[i].id), cases[i].want != SY_TASK_SKIPPED);
    }
    assert_non_null(strstr(fake_task(&env, "all_success").error,
                           "trigger all_success does not hold: bad Failed, good Completed"));
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
