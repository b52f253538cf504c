/* A refused write inside a batched turn, on PostgreSQL: the turn's task
 * rows go in one statement (store/postgres/batch.c), fenced per row.  A
 * host holds two runs; another host takes the first over while the first
 * host believes its lease holds.  Both runs' results land in the same turn
 * of the first host: the late one is refused by its row's fence, named
 * with its reason, its run dropped after the commit (once, one log line),
 * while the other run's write lands in the same statement and the run
 * goes on to its end.  Skipped without libpq or a PostgreSQL to start. */
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
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "service/runs.h"
#include "store/store.h"

#define LEASE_MS 30000

static const char workflow[] = "workflow = { name = \"w\"; tasks = (\n"
                               "  { id = \"a\"; hold = true; output = \"{\\\"a\\\": 1}\"; },\n"
                               "  { id = \"c\"; after = [\"a\"]; }\n"
                               "); };\n";

#ifdef SY_HAVE_LIBPQ
struct row {
    const char *id;
    sy_task_state state;
    uint32_t attempts;
    char host[64], output[64];
};

static int find(void *arg, const sy_task_record *t)
{
    struct row *r = arg;
    if (strcmp(t->task_id, r->id) == 0) {
        r->state = t->state;
        r->attempts = t->attempts;
        snprintf(r->host, sizeof r->host, "%s", t->host ? t->host : "-");
        snprintf(r->output, sizeof r->output, "%s", t->output ? t->output : "-");
    }
    return 0;
}

static struct row task(sy_store *s, int64_t run, const char *id)
{
    struct row r = {.id = id};
    assert_int_equal(sy_store_list_tasks(s, run, find, &r), SY_OK);
    return r;
}

static sy_run_state run_state(sy_store *s, int64_t run)
{
    sy_run_record r;
    assert_int_equal(sy_store_get_run(s, run, &r), SY_OK);
    sy_run_state st = r.state;
    sy_run_record_clear(&r);
    return st;
}

/* The second host's clock runs a minute ahead: the first host's lease is
 * over for it while the first host's own clock says it still holds. */
static int64_t ahead_clock(void) { return fake_now + 60000; }

static void test_refused_in_batch_drops_its_run(void **state)
{
    (void)state;
    const char *url = th_pg_url();
    if (!url)
        skip();
    th_pg_reset(url);
    fake_store_url = url;
    fake_env env;
    fake_open_lease(&env, workflow, LEASE_MS, false);
    fake_store_url = NULL;
    char err[512] = "";
    int64_t second;
    assert_int_equal(sy_runs_record(env.store, env.wf, "{}", &second, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(env.engine, second, true, err, sizeof err), SY_OK);
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 2);

    sy_instance_entry inst;
    uv_loop_t loop;
    sy_engine *h2;
    sy_instance_init(&inst, SY_DEFAULT_INSTANCE, &fake_executor, NULL);
    assert_int_equal(sy_instance_create(&inst, err, sizeof err), SY_OK);
    assert_int_equal(uv_loop_init(&loop), 0);
    sy_engine_opts o = {.store = env.store, .instances = &inst, .n_instances = 1,
                        .owner = "test:2", .clock = ahead_clock, .lease_ms = LEASE_MS,
                        .max_recoveries = 5};
    assert_int_equal(sy_engine_new(&h2, &loop, &o, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(h2, env.run_id, true, err, sizeof err), SY_OK);
    for (int i = 0; i < 64; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(fake_submits("a"), 3);

    /* Both held first attempts end; the first host writes both in one
     * turn. */
    th_capture cap;
    th_capture_start(&cap);
    fake_finish_attempt("a", 1, SY_OUTCOME_SUCCEEDED, "{\"x\": 1}");
    fake_finish_attempt("a", 1, SY_OUTCOME_SUCCEEDED, "{\"x\": 1}");
    fake_turn(&env);
    char *log = th_capture_end(&cap);
    sy_engine_counters c;
    sy_engine_counters_get(env.engine, &c);
    /* a's outcome and c made Ready: both rows went in the statement and
     * both were refused; the run is dropped once. */
    assert_int_equal(c.writes_refused, 2);
    assert_int_equal(c.runs_lost, 1);
    assert_int_equal(c.lapses, 0);
    assert_int_equal(th_count(log, "lost its lease"), 1);
    assert_int_equal(th_count(log, "update_task: run 1 is held by test:2 (claim 2), not by "
                                FAKE_OWNER " (claim 1): not written"), 1);

    struct row late = task(env.store, env.run_id, "a");
    assert_int_equal(late.state, SY_TASK_RUNNING);
    assert_int_equal(late.attempts, 2);
    assert_string_equal(late.host, "test:2");
    assert_string_equal(late.output, "-");
    struct row on = task(env.store, second, "a");
    assert_int_equal(on.state, SY_TASK_COMPLETED);
    assert_string_equal(on.output, "{\"x\":1}");
    assert_int_equal(run_state(env.store, second), SY_RUN_COMPLETED);
    assert_int_equal(fake_submits("c"), 1);
    free(log);

    fake_finish_attempt("a", 2, SY_OUTCOME_SUCCEEDED, NULL);
    for (int i = 0; i < 64; i++)
        uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(run_state(env.store, env.run_id), SY_RUN_COMPLETED);
    sy_engine_free(h2);
    assert_int_equal(uv_loop_close(&loop), 0);
    sy_instance_destroy(&inst);
    fake_close(&env);
}
#else
static void test_refused_in_batch_drops_its_run(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_in_batch_drops_its_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
