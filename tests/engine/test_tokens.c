/* Completion tokens: complete() is applied once per accepted submit; a
 * second, late, foreign or NULL token is refused and counted, and never
 * reaches another task.  Busy submits burn no attempt; an output over the
 * bound is refused by its length alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "executor/host_api.h"
#include "fake.h"

static const fake_submission *sub(const char *task_id)
{
    for (size_t i = 0; i < fake.n_subs; i++)
        if (strcmp(fake.subs[i].task_id, task_id) == 0)
            return &fake.subs[i];
    fail_msg("task %s was never submitted", task_id);
    return NULL;
}

static void complete_with(sy_completion *token, const char *output)
{
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = output,
                     .output_len = output ? strlen(output) : 0};
    fake.api->complete(token, &res);
}

/* The second result of a plugin that completes twice is refused: the first
 * is the task's output, and other tasks see nothing of the second. */
static void test_twice(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; twice = true; output = \"{\\\"v\\\": 1}\"; },\n"
                    "  { id = \"b\"; after = [\"a\"]; },\n"
                    "  { id = \"c\"; output = \"{\\\"w\\\": 2}\"; },\n"
                    "  { id = \"d\"; after = [\"c\"]; }\n"
                    "); };\n");
    uint64_t unknown = sy_completion_refused(NULL);
    fake_turn(&env);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_task(&env, "a").attempts, 1);
    assert_non_null(strstr(sub("b")->input, "\"v\""));
    assert_null(strstr(sub("b")->input, "second"));
    assert_non_null(strstr(sub("d")->input, "\"w\""));
    assert_null(strstr(sub("d")->input, "second"));
    assert_int_equal(sy_completion_refused(fake.host), 1);
    assert_int_equal(sy_completion_refused(NULL), unknown);
    fake_close(&env);
}

/* A token kept past its attempt's end is refused, also once its slot has
 * been handed to the next attempt. */
static void test_after_release(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; },\n"
                    "  { id = \"b\"; after = [\"a\"]; hold = true; }\n"
                    "); };\n");
    fake_turn(&env);
    sy_completion *old = fake.subs[0].c;
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_RUNNING);
    assert_ptr_not_equal(sub("b")->c, old);

    complete_with(old, "{\"stale\": 1}");
    fake_turn(&env);
    assert_int_equal(sy_completion_refused(fake.host), 1);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_RUNNING);
    complete_with(old, "{\"stale\": 2}");
    fake_turn(&env);
    assert_int_equal(sy_completion_refused(fake.host), 2);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_RUNNING);

    fake_complete(&env, "b", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* Tokens the host never handed out, and NULL: refused without being read,
 * and the held attempt is untouched. */
static void test_foreign(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; hold = true; } ); };\n");
    fake_turn(&env);
    sy_completion *real = fake.subs[0].c;
    uint64_t before = sy_completion_refused(NULL) + sy_completion_refused(fake.host);
    struct { char junk[64]; } foreign;
    memset(&foreign, 0xa5, sizeof foreign);
    complete_with(NULL, "{}");
    complete_with((sy_completion *)&foreign, "{}");
    complete_with((sy_completion *)(uintptr_t)0xdeadbeef0ull, "{}");
    /* The real token's index under another generation. */
    complete_with((sy_completion *)((uintptr_t)real ^ ((uintptr_t)1 << (sizeof(uintptr_t) * 4))),
                  "{}");
    fake_turn(&env);
    assert_int_equal(sy_completion_refused(NULL) + sy_completion_refused(fake.host), before + 4);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    fake_close(&env);
}

/* After submit() refused the task, its token is dead. */
static void test_after_refused_submit(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; refuse = true; } ); };\n");
    fake_turn(&env);
    assert_int_equal(fake.n_refused, 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_FAILED);
    complete_with(fake.refused[0], "{}");
    fake_turn(&env);
    assert_int_equal(sy_completion_refused(fake.host), 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_FAILED);
    fake_close(&env);
}

/* A plugin that completes inside submit() and then refuses the task: the
 * refusal is what counts, the result is dropped as stale, and the attempt
 * is freed once, after its queued result. */
static void test_complete_then_refuse(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; complete_then_refuse = true; output = \"{\\\"v\\\": 1}\"; },\n"
                    "  { id = \"b\"; after = [\"a\"]; trigger = \"all_done\"; }\n"
                    "); };\n");
    fake_turn(&env);
    fake_row row = fake_task(&env, "a");
    assert_int_equal(row.state, SY_TASK_FAILED);
    assert_non_null(strstr(row.error, "refused the task"));
    assert_null(strstr(sub("b")->input, "\"v\""));
    /* b's attempt has had the slot since, so the instance may no longer be
     * known: the refusal is counted either way. */
    uint64_t before = sy_completion_refused(NULL) + sy_completion_refused(fake.host);
    complete_with(fake.subs[0].c, "{}");
    fake_turn(&env);
    assert_int_equal(sy_completion_refused(NULL) + sy_completion_refused(fake.host), before + 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_FAILED);
    fake_close(&env);
}

/* SY_EBUSY is no attempt: the task is offered again with the same number. */
static void test_busy_keeps_attempt(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; hold = true; } ); };\n");
    fake.busy = 2;
    fake_turn(&env);
    assert_int_equal(fake.n_busy, 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_READY);
    assert_int_equal(fake_task(&env, "a").attempts, 0);
    fake_wake();
    fake_turn(&env);
    fake_wake();
    fake_turn(&env);
    assert_int_equal(fake.n_busy, 2);
    assert_int_equal(fake.busy_attempts[0], 1);
    assert_int_equal(fake.busy_attempts[1], 1);
    assert_int_equal(fake.n_subs, 1);
    assert_int_equal(fake.subs[0].attempt, 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    assert_int_equal(fake_task(&env, "a").attempts, 1);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_task(&env, "a").attempts, 1);
    fake_close(&env);
}

/* An output over max_context_bytes fails the attempt by its length alone:
 * the fake claims a terabyte it does not have. */
static void test_oversized_output(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; huge = true; } ); };\n");
    fake_turn(&env);
    fake_row row = fake_task(&env, "a");
    assert_int_equal(row.state, SY_TASK_FAILED);
    assert_non_null(strstr(row.error, "more than max_context_bytes"));
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twice),
        cmocka_unit_test(test_after_release),
        cmocka_unit_test(test_foreign),
        cmocka_unit_test(test_after_refused_submit),
        cmocka_unit_test(test_complete_then_refuse),
        cmocka_unit_test(test_busy_keeps_attempt),
        cmocka_unit_test(test_oversized_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
