/* SY_OUTCOME_DEFERRED (ABI 1.1): an attempt the plugin defers is not
 * charged; the task waits Ready for the plugin's retry_after_ms or the
 * host's own growing backoff, under the same attempt number, and fails
 * only when deferred past the bound in a row.  sy_result.note is recorded
 * with the attempt; a 1.0-sized result is never read past its size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/run.h"
#include "fake.h"

/* The run's events, one "kind: detail" line each. */
typedef struct {
    char text[8192];
} events;

static int on_event(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                    const char *detail, int64_t at)
{
    (void)idx, (void)at;
    events *ev = arg;
    size_t n = strlen(ev->text);
    snprintf(ev->text + n, sizeof ev->text - n, "%u %s: %s\n", attempt, kind,
             detail ? detail : "");
    return 0;
}

static events read_events(fake_env *env)
{
    events ev = {{0}};
    assert_int_equal(sy_store_list_events(env->store, env->run_id, on_event, &ev), 0);
    return ev;
}

static const fake_submission *last_sub(const char *task_id)
{
    for (size_t i = fake.n_subs; i-- > 0;)
        if (strcmp(fake.subs[i].task_id, task_id) == 0)
            return &fake.subs[i];
    fail_msg("task %s was never submitted", task_id);
    return NULL;
}

static const char *one_task = "workflow = { name = \"w\"; tasks = (\n"
                              "  { id = \"a\"; hold = true; }\n"
                              "); };\n";

/* A task with no retries survives a deferral: nothing was charged, and it
 * runs again as attempt 1 once retry_after_ms has passed, not before. */
static void test_not_charged(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, one_task);
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 1);
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_DEFERRED,
                     .error = "throttled by the backend", .retry_after_ms = 500,
                     .note = "reason ConcurrentInvocationLimitExceeded"};
    fake_finish(&env, "a", &res);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_READY);
    assert_int_equal(fake_task(&env, "a").attempts, 0);
    fake_advance(&env, 499);
    assert_int_equal(fake_submits("a"), 1);
    fake_advance(&env, 1);
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(last_sub("a")->attempt, 1);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    assert_int_equal(fake_task(&env, "a").attempts, 1);
    events ev = read_events(&env);
    assert_non_null(strstr(ev.text, "1 deferred: throttled by the backend; offered again in 500ms"));
    assert_non_null(strstr(ev.text, "1 note: reason ConcurrentInvocationLimitExceeded"));
    fake_close(&env);
}

/* Without retry_after_ms the host backs off by itself, doubling: 10 ms,
 * then 20 ms. */
static void test_host_backoff(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, one_task);
    fake_turn(&env);
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_DEFERRED};
    fake_finish(&env, "a", &res);
    fake_advance(&env, 9);
    assert_int_equal(fake_submits("a"), 1);
    fake_advance(&env, 1);
    assert_int_equal(fake_submits("a"), 2);
    fake_finish(&env, "a", &res);
    fake_advance(&env, 19);
    assert_int_equal(fake_submits("a"), 2);
    fake_advance(&env, 1);
    assert_int_equal(fake_submits("a"), 3);
    assert_int_equal(last_sub("a")->attempt, 1);
    events ev = read_events(&env);
    assert_non_null(strstr(ev.text, "deferred by the executor; offered again in 10ms"));
    assert_non_null(strstr(ev.text, "deferred by the executor; offered again in 20ms"));
    fake_close(&env);
}

/* A plugin that defers for ever: the task fails after the bound, with the
 * instance named, and the other task of the run is untouched. */
static void test_bound(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; defer = true; retry = { attempts = 3; }; },\n"
                    "  { id = \"b\"; output = \"{\\\"b\\\": 1}\"; }\n"
                    "); };\n");
    fake_turn(&env);
    for (int i = 0; i < SY_DEFER_MAX + 5 && fake_state(&env, "a") != SY_TASK_FAILED; i++)
        fake_advance(&env, 1);
    assert_int_equal(fake.n_deferred, SY_DEFER_MAX + 1);
    fake_row row = fake_task(&env, "a");
    assert_int_equal(row.state, SY_TASK_FAILED);
    assert_int_equal(row.attempts, 0);
    char want[128];
    snprintf(want, sizeof want, "executor instance 'default' deferred the task %d times in a row",
             SY_DEFER_MAX);
    assert_non_null(strstr(row.error, want));
    assert_non_null(strstr(row.error, "told to defer"));
    assert_int_equal(fake_state(&env, "b"), SY_TASK_COMPLETED);
    fake_close(&env);
}

/* A note comes with any outcome: a success records it too. */
static void test_note_on_success(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, one_task);
    fake_turn(&env);
    sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED, .output = "{\"x\": 1}",
                     .output_len = 8, .note = "executed version 7"};
    fake_finish(&env, "a", &res);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    events ev = read_events(&env);
    assert_non_null(strstr(ev.text, "1 note: executed version 7"));
    fake_close(&env);
}

/* The note of an attempt that ends after its timeout (it is stale by
 * then) is still recorded. */
static void test_note_after_timeout(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; timeout = \"100ms\";\n"
                    "    cancel_note = \"the call may still complete\"; }\n"
                    "); };\n");
    fake_turn(&env);
    fake_advance(&env, 100);
    assert_int_equal(fake_cancels("a"), 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_FAILED);
    events ev = read_events(&env);
    assert_non_null(strstr(ev.text, "1 stale: "));
    assert_non_null(strstr(ev.text, "1 note: the call may still complete"));
    fake_close(&env);
}

/* A plugin built against 1.0 hands a smaller sy_result: whatever lies past
 * its size (here garbage where 1.1's fields would be) is never read. */
static void test_small_result_not_read_past(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, one_task);
    fake_turn(&env);
    sy_result res;
    memset(&res, 0xA5, sizeof res); /* a wild note pointer, a huge delay */
    res.size = (uint32_t)offsetof(sy_result, retry_after_ms);
    res.outcome = SY_OUTCOME_SUCCEEDED;
    res.output = NULL;
    res.output_len = 0;
    res.error = NULL;
    fake_finish(&env, "a", &res);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    events ev = read_events(&env);
    assert_null(strstr(ev.text, "note"));
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_charged),
        cmocka_unit_test(test_host_backoff),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_note_on_success),
        cmocka_unit_test(test_note_after_timeout),
        cmocka_unit_test(test_small_result_not_read_past),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
