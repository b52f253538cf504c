/* Cached results (store/cache.h): an output kept under a key is read
 * back while it completed within the asked lifetime (hit), not after
 * (expiry), not under another key or task (miss); a newer output
 * replaces it; inside a batch that rolls back nothing is kept.  On
 * SQLite, then on PostgreSQL on a throwaway server when this build has
 * libpq. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/cache.h"
#include "fixture.h"

static int setup(void **state) { return fx_setup_on(state, "sqlite:store.db", false); }

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    th_pg_reset(th_pg_url());
    return fx_setup_on(state, th_pg_url(), false);
}
#endif

#define NS "public::w::x"

/* The output under (ns, key) completed at or after `since`, or NULL. */
static char *get(sy_store *s, const char *ns, const char *key, int64_t since, int64_t *run)
{
    char *out = NULL;
    int rc = sy_store_cache_get(s, ns, key, since, &out, run);
    if (rc == SY_ENOENT) {
        assert_null(out);
        return NULL;
    }
    OK(s, rc);
    return out;
}

static void test_hit_miss_expiry(void **state)
{
    fx *f = *state;
    assert_null(get(f->a, NS, "day=1", 0, NULL));
    OK(f->a, sy_store_cache_put(f->a, NS, "day=1", "{\"rows\":3}", 7, 0, 1000));
    int64_t run = 0;
    char *out = get(f->b, NS, "day=1", 1000, &run);
    assert_string_equal(out, "{\"rows\":3}");
    assert_true(run == 7);
    free(out);
    /* Another key, another task: misses. */
    assert_null(get(f->b, NS, "day=2", 0, NULL));
    assert_null(get(f->b, "public::w::y", "day=1", 0, NULL));
    /* Completed before the lifetime's start: expired. */
    assert_null(get(f->b, NS, "day=1", 1001, NULL));
    /* A newer completion replaces it. */
    OK(f->b, sy_store_cache_put(f->b, NS, "day=1", "{\"rows\":4}", 9, 0, 5000));
    out = get(f->a, NS, "day=1", 1001, &run);
    assert_string_equal(out, "{\"rows\":4}");
    assert_true(run == 9);
    free(out);
}

static void test_in_batch(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_cache_put(f->a, NS, "k", "{}", 1, 0, 10));
    sy_store_rollback(f->a);
    assert_null(get(f->a, NS, "k", 0, NULL));
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_cache_put(f->a, NS, "k", "{\"a\":1}", 1, 0, 10));
    OK(f->a, sy_store_commit(f->a));
    char *out = get(f->b, NS, "k", 0, NULL);
    assert_string_equal(out, "{\"a\":1}");
    free(out);
    assert_int_equal(sy_store_cache_put(f->a, NS, "", "{}", 1, 0, 10), SY_EINVAL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {T(test_hit_miss_expiry), T(test_in_batch)};
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {P(test_hit_miss_expiry), P(test_in_batch)};
    return fx_run_groups("cache", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("cache", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
