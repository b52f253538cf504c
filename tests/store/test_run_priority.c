/* A run's priority (submit --priority): written with the run in the
 * transaction that records it, keyed or not, read back by whichever host
 * loads it; 0 when none was given; out of SY_PRIORITY_MIN..MAX refused
 * with nothing written.  On SQLite, then on PostgreSQL (a throwaway
 * server) when this build has libpq. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/keyed.h"
#include "store/store.h"
#include "workflow/workflow.h"
#include "fixture.h"

static const char *const ids[] = {"x", "y"};
static const char *const ns[] = {"public::w::x", "public::w::y"};

static int setup(void **state) { return fx_setup_on(state, "sqlite:store.db", false); }

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    th_pg_reset(th_pg_url());
    return fx_setup_on(state, th_pg_url(), false);
}
#endif

/* The priority as the other handle (another host) reads it back. */
static int32_t priority_of(fx *f, int64_t run)
{
    sy_run_record r;
    OK(f->b, sy_store_get_run(f->b, run, &r));
    int32_t p = r.priority;
    sy_run_record_clear(&r);
    return p;
}

static void test_stored_with_the_run(void **state)
{
    fx *f = *state;
    sy_store_new_run r = {HASH, "public", "w", "{}", 2, ids, ns, 7};
    int64_t hi = 0, low = 0, none = 0;
    OK(f->a, sy_store_create_run_with(f->a, &r, 1, &hi));
    r.priority = SY_PRIORITY_MIN;
    OK(f->a, sy_store_create_run_with(f->a, &r, 2, &low));
    OK(f->a, sy_store_create_run(f->a, HASH, "public", "w", "{}", 2, ids, ns, 3, &none));
    assert_int_equal(priority_of(f, hi), 7);
    assert_int_equal(priority_of(f, low), SY_PRIORITY_MIN);
    assert_int_equal(priority_of(f, none), 0);
}

/* Under a key: the first submit's priority; the second, within the
 * window, records nothing, its priority neither. */
static void test_keyed(void **state)
{
    fx *f = *state;
    sy_store_new_run r = {HASH, "public", "w", "{}", 2, ids, ns, SY_PRIORITY_MAX};
    int64_t first = 0, again = 0;
    bool created = false;
    OK(f->a, sy_store_create_run_keyed(f->a, &r, "k1", 60000, 10, &first, &created));
    assert_true(created);
    r.priority = -3;
    OK(f->a, sy_store_create_run_keyed(f->a, &r, "k1", 60000, 20, &again, &created));
    assert_false(created);
    assert_int_equal(again, first);
    assert_int_equal(priority_of(f, first), SY_PRIORITY_MAX);
}

static int count(void *arg, const sy_run_record *r)
{
    (void)r;
    ++*(size_t *)arg;
    return 0;
}

static void test_out_of_range(void **state)
{
    fx *f = *state;
    sy_store_new_run r = {HASH, "public", "w", "{}", 2, ids, ns, SY_PRIORITY_MAX + 1};
    int64_t id = 0;
    assert_int_equal(sy_store_create_run_with(f->a, &r, 1, &id), SY_EINVAL);
    fx_assert_contains(sy_store_errmsg(f->a), "priority out of range");
    r.priority = SY_PRIORITY_MIN - 1;
    assert_int_equal(sy_store_create_run_with(f->a, &r, 1, &id), SY_EINVAL);
    size_t n = 0;
    OK(f->a, sy_store_list_runs(f->a, 0, count, &n));
    assert_int_equal(n, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_stored_with_the_run),
        T(test_keyed),
        T(test_out_of_range),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_stored_with_the_run),
        P(test_keyed),
        P(test_out_of_range),
    };
    return fx_run_groups("run_priority", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("run_priority", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
