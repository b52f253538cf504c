/* Resuming (executor ABI 1.4): a host that takes over a run whose host
 * lapsed hands an attempt found Running back to its plugin's resume(),
 * under the same attempt number and with what is left of its timeout,
 * instead of abandoning it and retrying the task; a refused resume falls
 * back to that, saying why; a plugin without resume() sees no change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../helpers.h"
#include "fake.h"
#include "service/runs.h"
#include "store/store.h"

#define LEASE_MS 30000

static const char workflow[] =
    "workflow = { name = \"w\"; tasks = (\n"
    "  { id = \"a\"; hold = true; timeout = \"40s\"; },\n"
    "  { id = \"b\"; hold = true; refuse_resume = true; },\n"
    "  { id = \"c\"; after = [\"a\"]; }\n"
    "); };\n";

static sy_engine_counters counters(const fake_env *env)
{
    sy_engine_counters c;
    sy_engine_counters_get(env->engine, &c);
    return c;
}

/* The first host runs a and b, lapses, and comes back as a new host that
 * takes its own old run over. */
static void lapse_and_take_over(fake_env *env)
{
    fake_open_lease(env, workflow, LEASE_MS, true);
    fake_turn(env);
    assert_int_equal(fake_submits("a"), 1);
    fake_advance(env, LEASE_MS + 1);
    th_capture cap;
    th_capture_start(&cap);
    fake_complete(env, "b", SY_OUTCOME_SUCCEEDED); /* lands past the lease */
    free(th_capture_end(&cap));
    assert_string_equal(sy_engine_owner(env->engine), FAKE_OWNER ".1");
    char err[512] = "";
    assert_int_equal(sy_engine_adopt(env->engine, env->run_id, true, err, sizeof err), SY_OK);
    fake_turn(env);
}

static json_t *task_status(fake_env *env, size_t idx, json_t **run)
{
    char err[512] = "";
    assert_int_equal(sy_runs_status(env->store, env->run_id, 0, run, err, sizeof err), SY_OK);
    return json_array_get(json_object_get(*run, "tasks"), idx);
}

/* a goes on as attempt 1 with what is left of its 40 s; b, refused,
 * is abandoned and retried as attempt 2; the run completes. */
static void test_resumed_attempt_goes_on(void **state)
{
    (void)state;
    fake_descriptor = &fake_executor_resuming;
    fake_env env;
    lapse_and_take_over(&env);

    assert_int_equal(fake.n_resumes, 2);
    for (size_t i = 0; i < fake.n_resumes; i++)
        assert_int_equal(fake.resumes[i].attempt, 1);
    /* One of the two is a's: 40 s less the 30.001 s gone by. */
    assert_true(fake.resumes[0].timeout_ms == 9999 || fake.resumes[1].timeout_ms == 9999);
    assert_int_equal(fake_submits("a"), 2); /* the first host's, and the resume */
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_RUNNING);
    assert_int_equal(a.attempts, 1);
    fake_row b = fake_task(&env, "b");
    assert_int_equal(b.state, SY_TASK_RUNNING);
    assert_int_equal(b.attempts, 2);
    assert_non_null(strstr(b.error, "executor 'default' could not resume it (status -8): "
                                    "the cluster says no"));
    sy_engine_counters c = counters(&env);
    assert_int_equal(c.resumed, 1);
    assert_int_equal(c.abandoned, 1);

    json_t *run = NULL;
    json_t *ta = task_status(&env, 0, &run);
    /* The row names the host that follows the attempt now. */
    assert_string_equal(json_string_value(json_object_get(ta, "host")), FAKE_OWNER ".1");
    json_t *resumed = json_object_get(ta, "resumed");
    assert_int_equal(json_array_size(resumed), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(resumed, 0), "attempt")),
                     1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(resumed, 0), "host")),
                        FAKE_OWNER);
    assert_int_equal(json_array_size(json_object_get(ta, "abandoned")), 0);
    json_t *tb = json_array_get(json_object_get(run, "tasks"), 1);
    assert_int_equal(json_array_size(json_object_get(tb, "abandoned")), 1);
    assert_int_equal(json_array_size(json_object_get(tb, "resumed")), 0);
    json_decref(run);

    fake_finish_attempt("a", 1, SY_OUTCOME_SUCCEEDED, NULL);
    fake_finish_attempt("b", 2, SY_OUTCOME_SUCCEEDED, NULL);
    fake_turn(&env);
    assert_int_equal(fake_task(&env, "a").attempts, 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
    fake_descriptor = NULL;
}

/* The resumed attempt's deadline is the original one: past it, the
 * attempt is cancelled and times out, as it would have on its first host. */
static void test_resumed_attempt_keeps_its_deadline(void **state)
{
    (void)state;
    fake_descriptor = &fake_executor_resuming;
    fake_env env;
    lapse_and_take_over(&env);
    assert_int_equal(fake_cancels("a"), 1); /* the first host's, at its lapse */
    fake_advance(&env, 9998);
    assert_int_equal(fake_cancels("a"), 1);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    fake_advance(&env, 2);
    assert_int_equal(fake_cancels("a"), 2);
    fake_turn(&env);
    /* Timed out 40 s after its first start, not after the take-over (the
     * built-in retry does not retry a timeout). */
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_FAILED);
    assert_int_equal(a.attempts, 1);
    assert_non_null(strstr(a.error, "timed out after"));
    fake_close(&env);
    fake_descriptor = NULL;
}

/* Without resume() nothing changes: both are abandoned and retried. */
static void test_without_resume_abandoned(void **state)
{
    (void)state;
    fake_descriptor = NULL;
    fake_env env;
    lapse_and_take_over(&env);
    assert_int_equal(fake.n_resumes, 0);
    assert_int_equal(fake_task(&env, "a").attempts, 2);
    assert_int_equal(fake_task(&env, "b").attempts, 2);
    sy_engine_counters c = counters(&env);
    assert_int_equal(c.resumed, 0);
    assert_int_equal(c.abandoned, 2);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resumed_attempt_goes_on),
        cmocka_unit_test(test_resumed_attempt_keeps_its_deadline),
        cmocka_unit_test(test_without_resume_abandoned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
