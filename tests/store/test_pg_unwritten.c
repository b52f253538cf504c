/* What a host took within its grants without writing their rows
 * (store/postgres/unwritten.h): found by owner and key; a batch's
 * changes kept when it commits and dropped when it is rolled back;
 * entries left at 0 removed without losing the others; the statement's
 * list holds each key once, with the one tenant of its takes; full at
 * SY_PG_UNWRITTEN_MAX keys, when a new key is not listed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "store/postgres/unwritten.h"
#include "store/store.h"

static int64_t count_of(const sy_pg_unwritten *u, const char *owner, const char *key)
{
    int64_t n = -1;
    const char *tenant;
    sy_pg_unwritten_get(u, owner, key, &n, &tenant);
    return n;
}

static void test_kept_on_commit(void **state)
{
    (void)state;
    sy_pg_unwritten u = {0};
    assert_int_equal(count_of(&u, "h1", "k"), 0);
    assert_int_equal(sy_pg_unwritten_stage(&u, "h1", "k", 5, "a"), SY_OK);
    assert_int_equal(count_of(&u, "h1", "k"), 5); /* the batch sees its own */
    sy_pg_unwritten_rollback(&u);
    assert_int_equal(count_of(&u, "h1", "k"), 0);
    assert_int_equal(u.n, 0);
    assert_int_equal(sy_pg_unwritten_stage(&u, "h1", "k", 5, "a"), SY_OK);
    sy_pg_unwritten_commit(&u);
    assert_int_equal(sy_pg_unwritten_stage(&u, "h1", "k", -2, "a"), SY_OK);
    sy_pg_unwritten_rollback(&u);
    int64_t n;
    const char *tenant;
    sy_pg_unwritten_get(&u, "h1", "k", &n, &tenant);
    assert_int_equal(n, 5);
    assert_string_equal(tenant, "a");
    /* Another owner's key of the same name is its own. */
    assert_int_equal(count_of(&u, "h2", "k"), 0);
    /* Written (0): gone at the commit. */
    assert_int_equal(sy_pg_unwritten_stage(&u, "h1", "k", 0, NULL), SY_OK);
    sy_pg_unwritten_commit(&u);
    assert_int_equal(u.n, 0);
    sy_pg_unwritten_free(&u);
}

/* Many keys, every other one then written: those left are all found,
 * with their counts, however the removals moved them. */
static void test_removed_keep_the_rest(void **state)
{
    (void)state;
    sy_pg_unwritten u = {0};
    char key[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof key, "k:%d", i);
        assert_int_equal(sy_pg_unwritten_stage(&u, "h1", key, i + 1, "a"), SY_OK);
    }
    sy_pg_unwritten_commit(&u);
    assert_int_equal(u.n, 3000);
    for (int i = 0; i < 3000; i += 2) {
        snprintf(key, sizeof key, "k:%d", i);
        assert_int_equal(sy_pg_unwritten_stage(&u, "h1", key, 0, NULL), SY_OK);
    }
    sy_pg_unwritten_commit(&u);
    assert_int_equal(u.n, 1500);
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof key, "k:%d", i);
        assert_int_equal(count_of(&u, "h1", key), i % 2 ? i + 1 : 0);
    }
    sy_pg_unwritten_forget(&u, "h1");
    assert_int_equal(u.n, 0);
    assert_int_equal(count_of(&u, "h1", "k:1"), 0);
    sy_pg_unwritten_free(&u);
}

static void test_list(void **state)
{
    (void)state;
    sy_pg_unwritten u = {0};
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "a", "t1"), SY_OK);
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "b", "t1"), SY_OK);
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "a", "t1"), SY_OK); /* once */
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "b", "t2"), SY_OK);
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "c", NULL), SY_OK);
    assert_int_equal(u.n_list, 3);
    assert_string_equal(u.list[0], "a");
    assert_string_equal(sy_pg_unwritten_list_tenant(&u, "h1", "a"), "t1");
    assert_null(sy_pg_unwritten_list_tenant(&u, "h1", "b")); /* two tenants */
    assert_null(sy_pg_unwritten_list_tenant(&u, "h1", "c")); /* not known */
    /* Listed for one tenant after two: still none. */
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "b", "t1"), SY_OK);
    assert_null(sy_pg_unwritten_list_tenant(&u, "h1", "b"));
    sy_pg_unwritten_list_clear(&u);
    assert_int_equal(u.n_list, 0);
    assert_null(sy_pg_unwritten_list_tenant(&u, "h1", "a"));
    /* Keys listed and never staged leave nothing behind. */
    sy_pg_unwritten_commit(&u);
    assert_int_equal(u.n, 0);
    sy_pg_unwritten_free(&u);
}

/* Full: a key not kept is not listed (its row is written); one kept is. */
static void test_full(void **state)
{
    (void)state;
    sy_pg_unwritten u = {0};
    char key[32];
    for (int i = 0; i < SY_PG_UNWRITTEN_MAX; i++) {
        snprintf(key, sizeof key, "c:%d", i);
        assert_int_equal(sy_pg_unwritten_stage(&u, "h1", key, 1, "a"), SY_OK);
    }
    sy_pg_unwritten_commit(&u);
    assert_false(sy_pg_unwritten_room(&u, "h1", "c:new"));
    assert_true(sy_pg_unwritten_room(&u, "h1", "c:7"));
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "c:new", "a"), SY_OK);
    assert_int_equal(sy_pg_unwritten_list(&u, "h1", "c:7", "a"), SY_OK);
    assert_int_equal(u.n_list, 1);
    assert_string_equal(u.list[0], "c:7");
    sy_pg_unwritten_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_on_commit),
        cmocka_unit_test(test_removed_keep_the_rest),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_full),
    };
    return cmocka_run_group_tests_name("store_pg_unwritten", tests, NULL, NULL);
}
#else
int main(void)
{
    printf("1..0 # SKIP built without libpq\n");
    return 0;
}
#endif
