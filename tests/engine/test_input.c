/* input: a task's input is the initial context merged with the outputs of
 * all its ancestors in topological order (later wins, objects merge), built
 * from its direct dependencies' contexts, through skipped tasks too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fake.h"

static void test_later_wins_objects_merge(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; output = \"{\\\"k\\\":\\\"a\\\",\\\"x\\\":{\\\"p\\\":1}}\"; },\n"
                    "  { id = \"b\"; after = [\"a\"]; output = \"{\\\"k\\\":\\\"b\\\"}\"; },\n"
                    "  { id = \"c\"; after = [\"a\"]; output = \"{\\\"x\\\":{\\\"q\\\":2}}\"; },\n"
                    "  { id = \"d\"; after = [\"c\", \"b\"]; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_string_equal(fake_input("a"), "{}");
    assert_string_equal(fake_input("b"), "{\"k\":\"a\",\"x\":{\"p\":1}}");
    /* b is later than a in topological order whichever way d lists its
     * dependencies; c's object merges into a's. */
    assert_string_equal(fake_input("d"), "{\"k\":\"b\",\"x\":{\"p\":1,\"q\":2}}");
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

static void test_through_skipped_and_held(void **state)
{
    (void)state;
    fake_env env;
    /* s is skipped by its `when`: its descendants still see a's output.
     * h ends later than b and c; b is before c in topological order. */
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; output = \"{\\\"k\\\":\\\"a\\\"}\"; },\n"
                    "  { id = \"s\"; after = [\"a\"]; output = \"{\\\"k\\\":\\\"s\\\"}\";\n"
                    "    when = ( { path = \"k\"; equals = \"nothing\"; } ); },\n"
                    "  { id = \"h\"; hold = true; output = \"{\\\"h\\\":[1,2]}\"; },\n"
                    "  { id = \"b\"; after = [\"s\"]; trigger = \"all_done\";\n"
                    "    output = \"{\\\"b\\\":true}\"; },\n"
                    "  { id = \"c\"; after = [\"b\", \"h\"]; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_state(&env, "s"), SY_TASK_SKIPPED);
    assert_string_equal(fake_input("b"), "{\"k\":\"a\"}");
    assert_int_equal(fake_submits("c"), 0);
    fake_complete(&env, "h", SY_OUTCOME_SUCCEEDED);
    assert_string_equal(fake_input("c"), "{\"k\":\"a\",\"h\":[1,2],\"b\":true}");
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_later_wins_objects_merge),
        cmocka_unit_test(test_through_skipped_and_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
