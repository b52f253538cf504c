/* The process groups attempts run (store.h, sy_store_record_process):
 * recorded for the attempt the task holds, listed back with every field,
 * replaced when recorded again, refused for an attempt no longer current
 * and for a claim taken over, and deleted with their run.  Each test runs
 * on both stores: SQLite, then PostgreSQL on a throwaway server when this
 * build has libpq. */
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
#endif
#include "base/util.h"
#include "store/store.h"
#include "fixture.h"

static int setup(void **state)
{
    return fx_setup(state);
}

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    return fx_setup_pg(state);
}
#endif

/* The write that marks task idx Running for attempt `attempt` and moves
 * its token from `from` to `to`. */
static int start(sy_store *s, int64_t run, const sy_store_fence *fence, uint32_t idx,
                 uint32_t attempt, int64_t from, int64_t to)
{
    sy_task_record t = {.idx = idx, .state = SY_TASK_RUNNING, .attempts = attempt,
                        .started = 100, .fence = to};
    return sy_store_update_task(s, run, fence, from, &t);
}


typedef struct {
    size_t n;
    sy_process_record v[8];
    char text[8][3][64];
} listing;

static int collect(void *arg, const sy_process_record *p)
{
    listing *l = arg;
    if (l->n == 8)
        return 1;
    l->v[l->n] = *p;
    const char *s[3] = {p->host, p->machine, p->boot_id};
    for (int i = 0; i < 3; i++)
        snprintf(l->text[l->n][i], 64, "%s", s[i] ? s[i] : "-");
    l->n++;
    return 0;
}

static listing list(sy_store *s, int64_t run)
{
    listing l = {0};
    OK(s, sy_store_list_processes(s, run, collect, &l));
    return l;
}

static sy_process_record group(uint32_t idx, uint32_t attempt, int64_t pgid, uint64_t start)
{
    return (sy_process_record){.idx = idx, .attempt = attempt, .machine = "m-1",
                               .boot_id = "b-1", .pgid = pgid, .start_time = start,
                               .recorded = 500};
}

/* In a batch, after the write that started the attempt: listed back with
 * the fence's owner as its host; recorded again, the row is replaced. */
static void test_record_and_list(void **state)
{
    fx *f = *state;
    assert_int_equal(list(f->a, f->run).n, 0);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 1, 1, 0, 1));
    sy_process_record p = group(1, 1, 4242, 123456789012ull);
    OK(f->a, sy_store_record_process(f->a, f->run, &f->h1, 1, &p));
    OK(f->a, sy_store_commit(f->a));
    listing l = list(f->b, f->run);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.v[0].idx, 1);
    assert_int_equal(l.v[0].attempt, 1);
    assert_int_equal(l.v[0].pgid, 4242);
    assert_true(l.v[0].start_time == 123456789012ull);
    assert_int_equal(l.v[0].recorded, 500);
    assert_string_equal(l.text[0][0], "h1");
    assert_string_equal(l.text[0][1], "m-1");
    assert_string_equal(l.text[0][2], "b-1");
    /* Alone (its own transaction), the same group with a new start. */
    p.start_time = 77;
    OK(f->a, sy_store_record_process(f->a, f->run, &f->h1, 1, &p));
    p.pgid = 4343;
    OK(f->a, sy_store_record_process(f->a, f->run, &f->h1, 1, &p));
    l = list(f->a, f->run);
    assert_int_equal(l.n, 2);
    assert_true(l.v[0].start_time == 77);
    assert_int_equal(l.v[1].pgid, 4343);
}

/* An attempt whose token the task no longer holds, or a claim another
 * host took over, records nothing. */
static void test_record_is_fenced(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 2, 1, 2));
    OK(f->a, sy_store_commit(f->a));
    sy_process_record p = group(0, 1, 5000, 10);
    assert_int_equal(sy_store_record_process(f->a, f->run, &f->h1, 1, &p),
                     SY_STORE_EFENCED);
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 9000, 2000, NULL, 0, &got));
    assert_true(got);
    p.attempt = 2;
    assert_int_equal(sy_store_record_process(f->a, f->run, &f->h1, 2, &p),
                     SY_STORE_EFENCED);
    assert_int_equal(list(f->a, f->run).n, 0);
    /* Bad arguments are refused before the store sees them. */
    p.pgid = 1;
    assert_int_equal(sy_store_record_process(f->a, f->run, NULL, 0, &p), SY_EINVAL);
}

/* Retention deletes a finished run's groups with it. */
static void test_deleted_with_run(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    sy_process_record p = group(0, 1, 6000, 10);
    OK(f->a, sy_store_record_process(f->a, f->run, &f->h1, 1, &p));
    OK(f->a, sy_store_update_run(f->a, f->run, &f->h1, SY_RUN_COMPLETED, NULL, 300));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(list(f->a, f->run).n, 1);
    size_t deleted = 0;
    OK(f->a, sy_store_delete_finished(f->a, 1000000, 10, &deleted));
    assert_int_equal(deleted, 1);
    assert_int_equal(list(f->a, f->run).n, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_record_and_list),
        T(test_record_is_fenced),
        T(test_deleted_with_run),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_record_and_list),
        P(test_record_is_fenced),
        P(test_deleted_with_run),
    };
    return fx_run_groups("processes", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("processes", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
