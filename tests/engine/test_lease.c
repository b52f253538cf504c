/* Leases on the engine's clock: a host whose lease lapses while it is
 * busy (the fake clock jumps past it) writes nothing more, cancels its
 * attempts and says so in one line, then ends or comes back as a new host;
 * the host that takes the run over records the attempts as abandoned and
 * runs them again; a host whose run was taken while it believed its lease
 * held has its writes refused, counted and logged once, and goes on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../helpers.h"
#include "fake.h"
#include "service/runs.h"
#include "store/store.h"

#define LEASE_MS 30000

static const char workflow[] = "workflow = { name = \"w\"; tasks = (\n"
                               "  { id = \"a\"; hold = true; output = \"{\\\"a\\\": 1}\"; },\n"
                               "  { id = \"b\"; hold = true; },\n"
                               "  { id = \"c\"; after = [\"a\"]; }\n"
                               "); };\n";

/* --- what the store holds -------------------------------------------------------- */

static int dump_task(void *arg, const sy_task_record *t)
{
    char *buf = arg;
    size_t len = strlen(buf);
    snprintf(buf + len, 4096 - len, "%s %d %u %u %lld %s %s %s|", t->task_id, (int)t->state,
             t->attempts, t->recoveries, (long long)t->fence, t->host ? t->host : "-",
             t->output ? t->output : "-", t->error ? t->error : "-");
    return 0;
}

static int dump_event(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                      const char *detail, int64_t at)
{
    char *buf = arg;
    size_t len = strlen(buf);
    snprintf(buf + len, 4096 - len, "%u/%u %s %s @%lld|", idx, attempt, kind,
             detail ? detail : "-", (long long)at);
    return 0;
}

/* Every row and event of the run, and the run row, as text. */
static char *snapshot(sy_store *s, int64_t run)
{
    char *buf = calloc(1, 4096);
    sy_run_record r;
    assert_int_equal(sy_store_get_run(s, run, &r), SY_OK);
    snprintf(buf, 4096, "run %d %s %lld %lld|", (int)r.state, r.owner ? r.owner : "-",
             (long long)r.lease_epoch, (long long)r.finished);
    sy_run_record_clear(&r);
    assert_int_equal(sy_store_list_tasks(s, run, dump_task, buf), SY_OK);
    assert_int_equal(sy_store_list_events(s, run, dump_event, buf), SY_OK);
    return buf;
}

static sy_engine_counters counters(const fake_env *env)
{
    sy_engine_counters c;
    sy_engine_counters_get(env->engine, &c);
    return c;
}

/* The lease expires while the host is busy: a and b run, and the clock
 * jumps past the lease.  The next write (a's outcome) finds it lapsed:
 * nothing more lands in the store, b is cancelled with its executor, c
 * never starts, one line says why, and `run` ends. */
static void test_clock_jump_while_busy(void **state)
{
    (void)state;
    fake_env env;
    fake_open_lease(&env, workflow, LEASE_MS, false);
    fake_turn(&env);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_RUNNING);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_RUNNING);
    char *before = snapshot(env.store, env.run_id);
    assert_non_null(strstr(before, "a 2 1 0 1 " FAKE_OWNER " - -|"));

    th_capture cap;
    th_capture_start(&cap);
    fake_advance(&env, LEASE_MS + 1); /* the clock jumps; no write yet */
    assert_int_equal(counters(&env).lapses, 0);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    char *log = th_capture_end(&cap);

    char *after = snapshot(env.store, env.run_id);
    assert_string_equal(after, before);
    assert_int_equal(fake_cancels("b"), 1);
    assert_int_equal(fake_submits("c"), 0);
    assert_int_equal(th_count(log, "lost its lease"), 1);
    assert_non_null(strstr(log, "this host (" FAKE_OWNER ") lost its lease: its clock reads "
                                "1 ms past its lease on run 1"));
    assert_non_null(strstr(log, "cancels its 1 attempt and writes nothing more for its 1 "
                                "run; this command ends"));
    sy_engine_counters c = counters(&env);
    assert_int_equal(c.lapses, 1);
    assert_int_equal(c.runs_lost, 1);
    assert_int_equal(c.writes_refused, 0);
    assert_non_null(strstr(sy_engine_lapse_reason(env.engine), "lost its lease"));
    sy_engine_view v;
    assert_false(sy_engine_view_run(env.engine, env.run_id, &v));
    free(before);
    free(after);
    free(log);
    fake_close(&env);
}

/* Found at the lease's last millisecond too: a claim may take it then. */
static void test_lapse_at_the_deadline(void **state)
{
    (void)state;
    fake_env env;
    fake_open_lease(&env, workflow, LEASE_MS, false);
    fake_turn(&env);
    fake_advance(&env, LEASE_MS - 1);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(counters(&env).lapses, 0);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_int_equal(fake_submits("c"), 1);
    fake_advance(&env, 1);
    th_capture cap;
    th_capture_start(&cap);
    fake_complete(&env, "b", SY_OUTCOME_SUCCEEDED);
    free(th_capture_end(&cap));
    assert_int_equal(counters(&env).lapses, 1);
    assert_int_equal(fake_state(&env, "b"), SY_TASK_RUNNING);
    fake_close(&env);
}

/* An event is a write too: a failure recorded past the lease is not
 * written, and the host lapses at its next turn. */
static void test_event_past_the_lease(void **state)
{
    (void)state;
    fake_env env;
    fake_open_lease(&env, "workflow = { name = \"w\"; tasks = (\n"
                          "  { id = \"a\"; hold = true; retry = { attempts = 3; }; }\n"
                          "); };\n",
                    LEASE_MS, false);
    fake_turn(&env);
    char *before = snapshot(env.store, env.run_id);
    fake_advance(&env, LEASE_MS + 5);
    th_capture cap;
    th_capture_start(&cap);
    fake_complete(&env, "a", SY_OUTCOME_FAILED);
    free(th_capture_end(&cap));
    char *after = snapshot(env.store, env.run_id);
    assert_string_equal(after, before);
    assert_int_equal(counters(&env).lapses, 1);
    assert_int_equal(fake_submits("a"), 1);
    free(before);
    free(after);
    fake_close(&env);
}

/* `serve` comes back as a new host once its attempts are back; taking its
 * old run over (its lease long past), it records both attempts it had
 * Running as abandoned by its old id, runs them again, and `status` shows
 * them. */
static void test_serve_comes_back_and_takes_over(void **state)
{
    (void)state;
    fake_env env;
    fake_open_lease(&env, workflow, LEASE_MS, true);
    fake_turn(&env);
    fake_advance(&env, LEASE_MS + 1);
    th_capture cap;
    th_capture_start(&cap);
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    char *log = th_capture_end(&cap);
    assert_non_null(strstr(log, "it comes back as a new host once they are back"));
    assert_non_null(strstr(log, "this host comes back as " FAKE_OWNER ".1 (it was "
                                FAKE_OWNER ")"));
    assert_string_equal(sy_engine_owner(env.engine), FAKE_OWNER ".1");
    free(log);

    char err[512] = "";
    assert_int_equal(sy_engine_adopt(env.engine, env.run_id, true, err, sizeof err), SY_OK);
    fake_turn(&env);
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_RUNNING);
    assert_int_equal(a.attempts, 2);
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(fake_submits("b"), 2);
    assert_int_equal(counters(&env).abandoned, 2);
    fake_finish_attempt("a", 2, SY_OUTCOME_SUCCEEDED, NULL);
    fake_finish_attempt("b", 2, SY_OUTCOME_SUCCEEDED, NULL);
    fake_turn(&env);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);

    json_t *run = NULL;
    assert_int_equal(sy_runs_status(env.store, env.run_id, 0, &run, err, sizeof err), SY_OK);
    json_t *ta = json_array_get(json_object_get(run, "tasks"), 0);
    assert_string_equal(json_string_value(json_object_get(ta, "host")), FAKE_OWNER ".1");
    json_t *lost = json_object_get(ta, "abandoned");
    assert_int_equal(json_array_size(lost), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(lost, 0), "attempt")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(lost, 0), "host")),
                        FAKE_OWNER);
    json_t *tc = json_array_get(json_object_get(run, "tasks"), 2);
    assert_int_equal(json_array_size(json_object_get(tc, "abandoned")), 0);
    json_decref(run);
    char *after = snapshot(env.store, env.run_id);
    assert_non_null(strstr(after, "0/1 abandoned " FAKE_OWNER " @"));
    assert_non_null(strstr(after, "1/1 abandoned " FAKE_OWNER " @"));
    assert_non_null(strstr(after, "a 3 2 1 2 " FAKE_OWNER ".1 {\"a\":1} -|"));
    free(after);
    fake_close(&env);
}

/* --- a second host on the same store ---------------------------------------------- */

/* Its clock runs a minute ahead: it finds the first host's lease over
 * while the first host's own clock says it still holds. */
static int64_t ahead_clock(void) { return fake_now + 60000; }

typedef struct {
    sy_instance_entry instance;
    uv_loop_t loop;
    sy_engine *engine;
} other_host;

static void other_open(other_host *h, sy_store *store)
{
    char err[512];
    sy_instance_init(&h->instance, SY_DEFAULT_INSTANCE, &fake_executor, NULL);
    assert_int_equal(sy_instance_create(&h->instance, err, sizeof err), SY_OK);
    assert_int_equal(uv_loop_init(&h->loop), 0);
    sy_engine_opts o = {.store = store, .instances = &h->instance, .n_instances = 1,
                        .owner = "test:2", .clock = ahead_clock, .lease_ms = LEASE_MS,
                        .max_recoveries = 5};
    assert_int_equal(sy_engine_new(&h->engine, &h->loop, &o, err, sizeof err), SY_OK);
}

static void other_turn(other_host *h)
{
    for (int i = 0; i < 64; i++)
        uv_run(&h->loop, UV_RUN_NOWAIT);
}

static void other_close(other_host *h)
{
    sy_engine_free(h->engine);
    assert_int_equal(uv_loop_close(&h->loop), 0);
    sy_instance_destroy(&h->instance);
}

/* The run is taken over while its first host believes its lease holds:
 * the first host's late result is refused by the store, counted, and
 * logged once; the first host drops the run, cancels its other attempt
 * and goes on (no lapse).  The rows are the second host's. */
static void test_takeover_refuses_late_writes(void **state)
{
    (void)state;
    fake_env env;
    fake_open_lease(&env, workflow, LEASE_MS, false);
    fake_turn(&env);
    other_host h2;
    other_open(&h2, env.store);
    char err[512] = "";
    th_capture cap;
    th_capture_start(&cap);
    assert_int_equal(sy_engine_adopt(h2.engine, env.run_id, true, err, sizeof err), SY_OK);
    other_turn(&h2);
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(fake_task(&env, "a").attempts, 2);

    fake_finish_attempt("a", 1, SY_OUTCOME_SUCCEEDED, "{\"late\": true}");
    fake_turn(&env);
    char *log = th_capture_end(&cap);
    sy_engine_counters c = counters(&env);
    assert_true(c.writes_refused >= 1);
    assert_int_equal(c.runs_lost, 1);
    assert_int_equal(c.lapses, 0);
    assert_int_equal(th_count(log, "run 1: lost its lease"), 1);
    assert_non_null(strstr(log, "run 1 is held by test:2 (claim 2), not by " FAKE_OWNER
                                " (claim 1): not written"));
    assert_int_equal(fake_cancels("b"), 1);
    assert_int_equal(fake_submits("c"), 0); /* decided in the refused turn */
    fake_row a = fake_task(&env, "a");
    assert_int_equal(a.state, SY_TASK_RUNNING);
    assert_int_equal(a.attempts, 2);
    free(log);

    fake_finish_attempt("a", 2, SY_OUTCOME_SUCCEEDED, NULL);
    fake_finish_attempt("b", 2, SY_OUTCOME_SUCCEEDED, NULL);
    other_turn(&h2);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    char *after = snapshot(env.store, env.run_id);
    assert_non_null(strstr(after, "a 3 2 1 2 test:2 {\"a\":1} -|"));
    assert_null(strstr(after, "late"));
    free(after);
    other_close(&h2);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_jump_while_busy),
        cmocka_unit_test(test_lapse_at_the_deadline),
        cmocka_unit_test(test_event_past_the_lease),
        cmocka_unit_test(test_serve_comes_back_and_takes_over),
        cmocka_unit_test(test_takeover_refuses_late_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
