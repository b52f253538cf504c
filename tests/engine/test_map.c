/* map: a mapped task runs one element per item of its list (or range),
 * made in bounded batches; its dependents get the outputs in order; each
 * element retries on its own; an empty list skips the map; max_map fails
 * it; a new host goes on with a map another left half done. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "fake.h"

/* The workflow: `a` outputs FILES, `m` maps over them (with KEYS), `b`
 * after `m` (holding, so its input can be read). */
static void open_map(fake_env *env, const char *files, const char *keys, const char *b_keys)
{
    char wf[2048];
    snprintf(wf, sizeof wf,
             "workflow = { name = \"w\"; tasks = (\n"
             "  { id = \"a\"; output = \"{\\\"files\\\": %s}\"; },\n"
             "  { id = \"m\"; after = [\"a\"]; map = \"files\"; echo = true; %s },\n"
             "  { id = \"b\"; after = [\"m\"]; hold = true; %s }\n"
             "); };\n",
             files, keys, b_keys);
    fake_open(env, wf);
}

static const fake_submission *last_of(const char *task_id)
{
    for (size_t i = fake.n_subs; i-- > 0;)
        if (strcmp(fake.subs[i].task_id, task_id) == 0)
            return &fake.subs[i];
    return NULL;
}

/* Completes every held attempt, then turns the loop. */
static void finish_held(fake_env *env)
{
    for (size_t i = 0; i < fake.n_subs; i++)
        if (!fake.subs[i].done)
            fake_finish_attempt(fake.subs[i].task_id, fake.subs[i].attempt,
                                SY_OUTCOME_SUCCEEDED, NULL);
    fake_turn(env);
}

struct counts {
    sy_map_record m;
    int maps;
};

static int count_map(void *arg, const sy_map_record *m)
{
    struct counts *c = arg;
    c->m = *m;
    c->maps++;
    return 0;
}

static sy_map_record map_row(fake_env *env)
{
    struct counts c = {0};
    assert_int_equal(sy_store_list_maps(env->store, env->run_id, count_map, &c), SY_OK);
    assert_int_equal(c.maps, 1);
    return c.m;
}

static void test_reduce_in_order(void **state)
{
    (void)state;
    fake_env env;
    open_map(&env, "[\\\"x\\\", \\\"y\\\", \\\"z\\\"]", "", "");
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 3);
    assert_int_equal(fake_state(&env, "m"), SY_TASK_COMPLETED);
    /* Each element got its item and index, not the whole list. */
    const fake_submission *s = &fake.subs[1];
    assert_non_null(strstr(s->input, "\"item\":\"x\""));
    assert_non_null(strstr(s->input, "\"map_index\":0"));
    assert_null(strstr(s->input, "\"files\""));
    const fake_submission *b = last_of("b");
    assert_non_null(b);
    assert_non_null(strstr(b->input, "\"m\":[{\"i\":0,\"item\":\"x\"},{\"i\":1,\"item\":\"y\"},"
                                     "{\"i\":2,\"item\":\"z\"}]"));
    sy_map_record m = map_row(&env);
    assert_int_equal(m.size, 3);
    assert_int_equal(m.count[SY_TASK_COMPLETED], 3);
    fake_complete(&env, "b", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* Elements are made as slots free: never more rows than the window (8
 * here, 512 by default). */
static void test_lazy_batches(void **state)
{
    (void)state;
    fake_env env;
    fake_map_window = 8;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"m\"; map_range = [5, 25]; hold = true; },\n"
                    "  { id = \"b\"; after = [\"m\"]; }\n"
                    "); };\n");
    fake_map_window = 0;
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 8);
    sy_map_record m = map_row(&env);
    assert_int_equal(m.size, 20);
    assert_int_equal(m.created, 8);
    assert_int_equal(m.count[SY_TASK_RUNNING], 8);
    assert_int_equal(fake_state(&env, "m"), SY_TASK_RUNNING);
    /* Three end: three more are made, no more. */
    for (int i = 0; i < 3; i++)
        fake_finish_attempt("m", 1, SY_OUTCOME_SUCCEEDED, NULL);
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 11);
    assert_int_equal(map_row(&env).created, 11);
    finish_held(&env);
    assert_int_equal(fake_submits("m"), 19);
    finish_held(&env);
    assert_int_equal(fake_submits("m"), 20);
    assert_non_null(strstr(fake.subs[19].input, "\"item\":24"));
    finish_held(&env);
    m = map_row(&env);
    assert_int_equal(m.count[SY_TASK_COMPLETED], 20);
    assert_int_equal(fake_state(&env, "m"), SY_TASK_COMPLETED);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* The default window. */
static void test_default_window(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"m\"; map_range = 600; hold = true; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 512);
    assert_int_equal(map_row(&env).created, 512);
    assert_int_equal(sy_engine_cancel(env.engine, env.run_id, "asked"), SY_OK);
    fake_turn(&env);
    fake_close(&env);
}

static void test_element_retry(void **state)
{
    (void)state;
    fake_env env;
    open_map(&env, "[1, 2, 3, 4]",
             "fail_index = 2; fail_once = true; retry = { attempts = 2; delay = 100; };", "");
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 4);
    assert_int_equal(fake_state(&env, "m"), SY_TASK_RUNNING);
    fake_advance(&env, 100);
    assert_int_equal(fake_submits("m"), 5);
    assert_int_equal(last_of("m")->attempt, 2);
    assert_non_null(strstr(last_of("m")->input, "\"map_index\":2"));
    assert_int_equal(fake_state(&env, "m"), SY_TASK_COMPLETED);
    assert_non_null(strstr(last_of("b")->input, "{\"i\":2,\"item\":3}"));
    fake_close(&env);
}

static void test_element_fails(void **state)
{
    (void)state;
    fake_env env;
    open_map(&env, "[1, 2, 3, 4]", "fail_index = 2;", "");
    fake_turn(&env);
    /* The others still ran; the map fails as a whole. */
    assert_int_equal(fake_submits("m"), 4);
    fake_row m = fake_task(&env, "m");
    assert_int_equal(m.state, SY_TASK_FAILED);
    assert_string_equal(m.error, "1 of 4 elements failed; the first: [2] told to fail");
    assert_int_equal(fake_state(&env, "b"), SY_TASK_SKIPPED);
    assert_int_equal(map_row(&env).count[SY_TASK_FAILED], 1);
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);
    fake_close(&env);
}

static void test_empty_list_skips(void **state)
{
    (void)state;
    fake_env env;
    open_map(&env, "[]", "", "trigger = \"none_failed\";");
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 0);
    fake_row m = fake_task(&env, "m");
    assert_int_equal(m.state, SY_TASK_SKIPPED);
    assert_non_null(strstr(m.error, "empty list"));
    assert_int_equal(fake_submits("b"), 1);
    fake_close(&env);
}

static void test_max_map(void **state)
{
    (void)state;
    fake_env env;
    open_map(&env, "[1, 2, 3, 4, 5]", "max_map = 3;", "");
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 0);
    fake_row m = fake_task(&env, "m");
    assert_int_equal(m.state, SY_TASK_FAILED);
    assert_string_equal(m.error, "task 'm' maps over 5 elements, more than max_map 3 "
                                 "(raise max_map on the task or the workflow)");
    fake_close(&env);
}

static void test_not_a_list(void **state)
{
    (void)state;
    fake_env env;
    open_map(&env, "\\\"one\\\"", "", "");
    fake_turn(&env);
    fake_row m = fake_task(&env, "m");
    assert_int_equal(m.state, SY_TASK_FAILED);
    assert_string_equal(m.error,
                        "task 'm' maps over 'files', which is not an array in its input context");
    fake_close(&env);
}

/* Cancelling a run stops making elements and ends the map Cancelled once
 * those in flight are back. */
static void test_cancel(void **state)
{
    (void)state;
    fake_env env;
    fake_map_window = 8;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"m\"; map_range = 1000; hold = true; }\n"
                    "); };\n");
    fake_map_window = 0;
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 8);
    assert_int_equal(sy_engine_cancel(env.engine, env.run_id, "asked"), SY_OK);
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 8);
    assert_int_equal(fake_state(&env, "m"), SY_TASK_CANCELLED);
    assert_int_equal(fake_run_state(&env), SY_RUN_CANCELLED);
    sy_map_record m = map_row(&env);
    assert_int_equal(m.count[SY_TASK_CANCELLED], 8);
    assert_int_equal(m.created, 8);
    fake_close(&env);
}

/* A list deeper in the context is taken out of its element's input too. */
static void test_dotted_path(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; output = \"{\\\"in\\\": {\\\"files\\\": [4, 5], "
                    "\\\"keep\\\": 1}}\"; },\n"
                    "  { id = \"m\"; after = [\"a\"]; map = \"in.files\"; echo = true; },\n"
                    "  { id = \"z\"; after = [\"m\"]; hold = true; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 2);
    assert_non_null(strstr(last_of("m")->input, "\"in\":{\"keep\":1}"));
    assert_non_null(strstr(last_of("m")->input, "\"item\":5"));
    assert_null(strstr(last_of("m")->input, "files"));
    assert_int_equal(fake_state(&env, "m"), SY_TASK_COMPLETED);
    /* The output it came from is untouched: a task after the map sees it
     * whole. */
    assert_non_null(strstr(last_of("z")->input, "\"files\":[4,5]"));
    fake_complete(&env, "z", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* A map over another map's outputs: the second maps over the list the
 * first passed on. */
static void test_map_of_a_map(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"m1\"; map_range = [10, 13]; echo = true; },\n"
                    "  { id = \"m2\"; after = [\"m1\"]; map = \"m1\"; echo = true; },\n"
                    "  { id = \"b\"; after = [\"m2\"]; hold = true; }\n"
                    "); };\n");
    fake_turn(&env);
    assert_int_equal(fake_submits("m1"), 3);
    assert_int_equal(fake_submits("m2"), 3);
    assert_non_null(strstr(last_of("b")->input,
                           "\"m2\":[{\"i\":0,\"item\":{\"i\":0,\"item\":10}},"
                           "{\"i\":1,\"item\":{\"i\":1,\"item\":11}},"
                           "{\"i\":2,\"item\":{\"i\":2,\"item\":12}}]"));
    fake_complete(&env, "b", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    fake_close(&env);
}

/* --- a second host goes on with a map the first left half done -------------- */

#define LEASE_MS 10000

static int64_t ahead_clock(void) { return fake_now + 60000; }

typedef struct {
    sy_instance_entry instance;
    uv_loop_t loop;
    sy_engine *engine;
} other_host;

static void other_turn(other_host *h)
{
    for (int i = 0; i < 64; i++)
        uv_run(&h->loop, UV_RUN_NOWAIT);
}

static int check_element(void *arg, int64_t elem, const sy_task_record *t)
{
    int64_t *next = arg;
    char want[64];
    snprintf(want, sizeof want, "{\"i\":%lld,\"item\":%lld}", (long long)elem,
             (long long)elem);
    assert_int_equal(elem, *next);
    assert_int_equal(t->state, SY_TASK_COMPLETED);
    assert_string_equal(t->output, want);
    (*next)++;
    return 0;
}

/* The first host (a window of 8) made 11 elements of 20 and finished 3
 * when it stopped; the host that takes the run over runs the 8 left in
 * flight again (no element lost), never one that completed, makes the
 * other 9, and makes no element twice. */
static void test_recovery(void **state)
{
    (void)state;
    fake_env env;
    fake_map_window = 8;
    fake_open_lease(&env, "workflow = { name = \"w\"; tasks = (\n"
                          "  { id = \"m\"; map_range = 20; hold = true; echo = true; }\n"
                          "); };\n",
                    LEASE_MS, false);
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 8);
    for (size_t i = 0; i < 3; i++)
        fake_finish_attempt("m", 1, SY_OUTCOME_SUCCEEDED, NULL);
    fake_turn(&env);
    assert_int_equal(fake_submits("m"), 11);
    sy_map_record m = map_row(&env);
    assert_int_equal(m.created, 11);
    assert_int_equal(m.count[SY_TASK_COMPLETED], 3);
    assert_int_equal(m.count[SY_TASK_RUNNING], 8);

    other_host h2;
    char err[512] = "";
    sy_instance_init(&h2.instance, SY_DEFAULT_INSTANCE, &fake_executor, NULL);
    assert_int_equal(sy_instance_create(&h2.instance, err, sizeof err), SY_OK);
    assert_int_equal(uv_loop_init(&h2.loop), 0);
    sy_engine_opts o = {.store = env.store, .instances = &h2.instance, .n_instances = 1,
                        .owner = "test:2", .clock = ahead_clock, .lease_ms = LEASE_MS,
                        .max_recoveries = 5, .map_window = 8};
    fake_map_window = 0;
    assert_int_equal(sy_engine_new(&h2.engine, &h2.loop, &o, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(h2.engine, env.run_id, true, err, sizeof err), SY_OK);
    other_turn(&h2);
    assert_int_equal(fake_submits("m"), 19);
    assert_int_equal(map_row(&env).count[SY_TASK_RUNNING], 8);

    /* The first host's late result is refused; it drops the run. */
    fake_finish_attempt("m", 1, SY_OUTCOME_SUCCEEDED, NULL);
    fake_turn(&env);
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < fake.n_subs; i++)
            if (!fake.subs[i].done)
                fake_finish_attempt("m", fake.subs[i].attempt, SY_OUTCOME_SUCCEEDED, NULL);
        other_turn(&h2);
    }
    assert_int_equal(fake_submits("m"), 28);
    assert_int_equal(fake_state(&env, "m"), SY_TASK_COMPLETED);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    int64_t next = 0;
    assert_int_equal(sy_store_list_elements(env.store, env.run_id, 0, false, check_element,
                                            &next),
                     SY_OK);
    assert_int_equal(next, 20);
    sy_engine_free(h2.engine);
    assert_int_equal(uv_loop_close(&h2.loop), 0);
    sy_instance_destroy(&h2.instance);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_in_order), cmocka_unit_test(test_lazy_batches),
        cmocka_unit_test(test_default_window),
        cmocka_unit_test(test_element_retry),   cmocka_unit_test(test_element_fails),
        cmocka_unit_test(test_empty_list_skips), cmocka_unit_test(test_max_map),
        cmocka_unit_test(test_not_a_list),      cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_dotted_path),     cmocka_unit_test(test_map_of_a_map),    cmocka_unit_test(test_recovery),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
