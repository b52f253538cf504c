/* A turn's task-row writes in one call (store.h, sy_store_update_tasks):
 * each write fenced exactly as sy_store_update_task fences it, the refused
 * ones named one by one with their reason before the call returns, the
 * others landed, the batch usable.  Each test runs on SQLite (one write at
 * a time behind the same interface), then on PostgreSQL when this build
 * has libpq (one statement for the lot). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#include "store/postgres/internal.h"
#endif
#include "base/util.h"
#include "store/store.h"
#include "fixture.h"

typedef struct {
    sy_task_state state;
    int64_t fence;
    char host[64], output[128], executor[64], error[64];
} row;

struct find {
    uint32_t idx;
    row r;
};

static int find_task(void *arg, const sy_task_record *t)
{
    struct find *f = arg;
    if (t->idx == f->idx) {
        f->r.state = t->state;
        f->r.fence = t->fence;
        fx_copy(f->r.host, sizeof f->r.host, t->host);
        fx_copy(f->r.output, sizeof f->r.output, t->output);
        fx_copy(f->r.executor, sizeof f->r.executor, t->executor);
        fx_copy(f->r.error, sizeof f->r.error, t->error);
    }
    return 0;
}

static row task_row(sy_store *s, int64_t run, uint32_t idx)
{
    struct find f = {.idx = idx};
    OK(s, sy_store_list_tasks(s, run, find_task, &f));
    return f.r;
}

/* Characters an array literal must escape, an empty string and the word
 * NULL: each comes back as it was written, and a NULL stays NULL. */
#define TRICKY "{\"a\": \"b\\\\c, d\", \"e\": [1, 2], \"f\": \"NULL\"}"

/* One call with a write that lands and three that do not: a stale claim
 * (the run was taken over), a stale attempt token under the claim this
 * batch holds, a task that does not exist.  Each refused one is named with
 * its own reason; only the first lands, and the batch commits. */
static void test_each_refusal_named(void **state)
{
    fx *f = *state;
    static const char *const ids[] = {"x", "y"};
    static const char *const ns[] = {"public::w::x", "public::w::y"};
    int64_t other;
    OK(f->a, sy_store_create_run(f->a, HASH, "public", "w", "{}", 2, ids, ns, 1, &other));
    bool got = false;
    OK(f->a, sy_store_claim_run(f->a, other, "h1", 1000, 10, NULL, 0, &got));
    assert_true(got);
    sy_store_fence old = {"h1", fx_epoch(f->a, other)};
    OK(f->b, sy_store_claim_run(f->b, other, "h2", 9000, 1001, NULL, 0, &got));
    assert_true(got);

    sy_task_record ok = {.idx = 0, .state = SY_TASK_RUNNING, .attempts = 1, .started = 100,
                         .executor = "NULL", .error = "", .output = TRICKY, .fence = 1};
    sy_task_record late = {.idx = 0, .state = SY_TASK_COMPLETED, .attempts = 1,
                           .output = "{\"late\": 1}", .finished = 200, .fence = 0};
    sy_task_record stale = {.idx = 1, .state = SY_TASK_COMPLETED, .attempts = 1,
                            .output = "{\"stale\": 1}", .finished = 200, .fence = 5};
    sy_task_record missing = {.idx = 7, .state = SY_TASK_RUNNING, .attempts = 1, .fence = 1};
    sy_store_task_write w[] = {
        {f->run, &f->h1, 0, &ok},
        {other, &old, 0, &late},
        {f->run, &f->h1, 5, &stale},
        {f->run, &f->h1, 0, &missing},
    };
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w, 4, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));

    assert_int_equal(r.n, 3);
    assert_int_equal(r.i[0], 1);
    assert_int_equal(r.status[0], SY_STORE_EFENCED);
    fx_assert_contains(r.why[0], "held by h2");
    assert_int_equal(r.i[1], 2);
    assert_int_equal(r.status[1], SY_STORE_EFENCED);
    fx_assert_contains(r.why[1], "task 1 of run 1 is at attempt token 0");
    assert_int_equal(r.i[2], 3);
    assert_int_equal(r.status[2], SY_ENOENT);
    fx_assert_contains(r.why[2], "run 1 has no task 7");

    row a = task_row(f->a, f->run, 0);
    assert_int_equal(a.state, SY_TASK_RUNNING);
    assert_int_equal(a.fence, 1);
    assert_string_equal(a.host, "h1");
    assert_string_equal(a.output, TRICKY);
    assert_string_equal(a.executor, "NULL");
    assert_string_equal(a.error, "");
    row b = task_row(f->a, f->run, 1);
    assert_int_equal(b.state, SY_TASK_NOT_STARTED);
    assert_int_equal(b.fence, 0);
    assert_string_equal(b.output, "(null)");
    row c = task_row(f->a, other, 0);
    assert_int_equal(c.state, SY_TASK_NOT_STARTED);
    assert_string_equal(c.output, "(null)");
    assert_string_equal(c.host, "(null)");
}

/* Once the claim this batch checked is taken over, a second call in a
 * later batch is refused for every row of the run, NULL fields and all;
 * without a fence a write lands regardless. */
static void test_takeover_refuses_the_lot(void **state)
{
    fx *f = *state;
    sy_task_record t0 = {.idx = 0, .state = SY_TASK_RUNNING, .attempts = 1, .fence = 1};
    sy_task_record t1 = {.idx = 1, .state = SY_TASK_RUNNING, .attempts = 1, .fence = 1};
    sy_store_task_write w[] = {{f->run, &f->h1, 0, &t0}, {f->run, &f->h1, 0, &t1}};
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);

    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 9000, 1001, NULL, 0, &got));
    assert_true(got);
    t0.state = t1.state = SY_TASK_COMPLETED;
    t0.output = t1.output = "{\"by\":\"h1\"}";
    w[0].token = w[1].token = 1;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 2);
    assert_int_equal(r.status[0], SY_STORE_EFENCED);
    assert_int_equal(r.status[1], SY_STORE_EFENCED);
    fx_assert_contains(r.why[1], "held by h2");
    assert_int_equal(task_row(f->a, f->run, 0).state, SY_TASK_RUNNING);
    assert_int_equal(task_row(f->a, f->run, 1).state, SY_TASK_RUNNING);

    sy_store_task_write tool[] = {{f->run, NULL, 0, &t0}};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, tool, 1, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 2);
    assert_int_equal(task_row(f->a, f->run, 0).state, SY_TASK_COMPLETED);
}

/* Outside a batch the call is refused; an invalid write refuses the whole
 * call before anything is sent; no writes is nothing to do. */
static void test_bad_calls(void **state)
{
    fx *f = *state;
    sy_task_record good = {.idx = 0, .state = SY_TASK_RUNNING, .attempts = 1, .fence = 1};
    sy_task_record back = {.idx = 1, .state = SY_TASK_RUNNING, .attempts = 1, .fence = 2};
    sy_store_task_write w[] = {{f->run, &f->h1, 0, &good}, {f->run, &f->h1, 3, &back}};
    fx_refusals r = {.s = f->a};
    assert_int_equal(sy_store_update_tasks(f->a, w, 1, fx_note_refusal, &r), SY_ESTATE);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w, 0, fx_note_refusal, &r));
    assert_int_equal(sy_store_update_tasks(f->a, w, 2, fx_note_refusal, &r), SY_EINVAL);
    fx_assert_contains(sy_store_errmsg(f->a), "attempt token 3 would go back to 2");
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);
    assert_int_equal(task_row(f->a, f->run, 0).fence, 0);
}

#ifdef SY_HAVE_LIBPQ
/* A batch of 2,000 rows written to a run of 5,000 tasks (analyzed) reads
 * each row by the primary key, in the first plans of the connection too:
 * a planner that saw the arrays' lengths hashed the whole table for them
 * in each connection's first five writes (SY_PG_ARRAY in
 * postgres/internal.h).  The write's statement is prepared by a first
 * write; its next run is asked for its plan, as the first five are made
 * (EXPLAIN EXECUTE, with arrays of 2,000 made at planning). */
static void test_big_batch_by_index(void **state)
{
    fx *f = *state;
    enum { N = 5000, ROWS = 2000 };
    const char **ids = malloc(N * sizeof *ids), **ns = malloc(N * sizeof *ns);
    char (*text)[32] = malloc(N * sizeof *text);
    assert_non_null(ids && ns && text);
    for (size_t i = 0; i < N; i++) {
        snprintf(text[i], sizeof text[i], "t%zu", i);
        ids[i] = text[i];
        ns[i] = text[i];
    }
    int64_t big;
    OK(f->a, sy_store_create_run(f->a, HASH, "public", "w", "{}", N, ids, ns, 1, &big));
    free(ids);
    free(ns);
    free(text);
    th_pg_exec(fx_store_url, "ANALYZE tasks");
    sy_task_record t0 = {.idx = 0, .state = SY_TASK_RUNNING, .attempts = 1, .fence = 1};
    sy_store_task_write w[] = {{f->run, &f->h1, 0, &t0}};
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w, 1, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);

    char sql[1024];
    snprintf(sql, sizeof sql,
             "EXPLAIN EXECUTE sy%d(array_fill(%lld::bigint, ARRAY[%d]), array_fill(0, ARRAY[%d]),"
             " array_fill(2, ARRAY[%d]), array_fill(1, ARRAY[%d]), array_fill(0, ARRAY[%d]),"
             " array_fill(0, ARRAY[%d]), array_fill(NULL::text, ARRAY[%d]),"
             " array_fill(NULL::text, ARRAY[%d]), array_fill(NULL::text, ARRAY[%d]),"
             " array_fill(0::bigint, ARRAY[%d]), array_fill(0::bigint, ARRAY[%d]),"
             " array_fill(0::bigint, ARRAY[%d]), array_fill('h1'::text, ARRAY[%d]),"
             " array_fill(1::bigint, ARRAY[%d]), array_fill(1::bigint, ARRAY[%d]),"
             " array_fill(0::bigint, ARRAY[%d]), array_fill(NULL::text, ARRAY[%d]),"
             " array_fill(0, ARRAY[%d]), '{}'::text[], ARRAY[%lld]::bigint[])",
             (int)SY_PG_UPDATE_TASKS, (long long)big, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS,
             ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS, ROWS,
             (long long)big);
    PGresult *res = PQexec(sy_pg_handle(f->a)->conn, sql);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    char plan[8192] = "";
    for (int i = 0; i < PQntuples(res); i++) {
        strncat(plan, PQgetvalue(res, i, 0), sizeof plan - strlen(plan) - 2);
        strcat(plan, "\n");
    }
    PQclear(res);
    if (strstr(plan, "Seq Scan on tasks") || !strstr(plan, "Index Scan using tasks_pkey"))
        fail_msg("the batched write's plan reads tasks whole:\n%s", plan);
}
#endif

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_each_refusal_named),
        T(test_takeover_refuses_the_lot),
        T(test_bad_calls),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_each_refusal_named),
        P(test_takeover_refuses_the_lot),
        P(test_bad_calls),
        P(test_big_batch_by_index),
    };
    return fx_run_groups("task_writes", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("task_writes", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
