/* The PostgreSQL store's number per key (store/postgres/key_table.h),
 * which keeps what a host's grants leave free and the slots a batch
 * gives back: found by key for their owner only, emptied by another
 * owner, by a clear, and once SY_PG_KEY_TABLE_MAX keys are kept, so
 * that a host taking a key per customer keeps a small table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "store/postgres/key_table.h"

static void test_found_for_owner(void **state)
{
    (void)state;
    sy_pg_key_table h = {0};
    int64_t v = -1;
    assert_false(sy_pg_key_get(&h, "h1", "pool:p", &v));
    sy_pg_key_set(&h, "h1", "pool:p", 74);
    sy_pg_key_set(&h, "h1", "k:1", 0);
    assert_true(sy_pg_key_get(&h, "h1", "pool:p", &v));
    assert_int_equal(v, 74);
    assert_true(sy_pg_key_get(&h, "h1", "k:1", &v));
    assert_int_equal(v, 0);
    sy_pg_key_set(&h, "h1", "pool:p", 12); /* noted again: the last wins */
    assert_true(sy_pg_key_get(&h, "h1", "pool:p", &v));
    assert_int_equal(v, 12);
    assert_int_equal(h.n, 2);
    /* Added to: a key given back by two tenants sums both. */
    sy_pg_key_add(&h, "h1", "pool:p", 3);
    sy_pg_key_add(&h, "h1", "k:3", 2);
    assert_true(sy_pg_key_get(&h, "h1", "pool:p", &v));
    assert_int_equal(v, 15);
    assert_true(sy_pg_key_get(&h, "h1", "k:3", &v));
    assert_int_equal(v, 2);
    assert_int_equal(h.n, 3);
    assert_false(sy_pg_key_get(&h, "h1", "k:2", &v));
    /* Another owner's grants are not h1's. */
    assert_false(sy_pg_key_get(&h, "h2", "pool:p", &v));
    sy_pg_keys_free(&h);
}

static void test_another_owner_empties(void **state)
{
    (void)state;
    sy_pg_key_table h = {0};
    int64_t v = -1;
    sy_pg_key_set(&h, "h1", "pool:p", 5);
    sy_pg_key_set(&h, "h2", "k:1", 7);
    assert_false(sy_pg_key_get(&h, "h1", "pool:p", &v));
    assert_false(sy_pg_key_get(&h, "h2", "pool:p", &v));
    assert_true(sy_pg_key_get(&h, "h2", "k:1", &v));
    assert_int_equal(v, 7);
    assert_int_equal(h.n, 1);
    sy_pg_keys_clear(&h);
    assert_false(sy_pg_key_get(&h, "h2", "k:1", &v));
    sy_pg_key_set(&h, "h2", "k:1", 3); /* usable after a clear */
    assert_true(sy_pg_key_get(&h, "h2", "k:1", &v));
    assert_int_equal(v, 3);
    sy_pg_keys_free(&h);
}

static void test_bounded(void **state)
{
    (void)state;
    sy_pg_key_table h = {0};
    char key[32];
    for (int i = 0; i < SY_PG_KEY_TABLE_MAX; i++) {
        snprintf(key, sizeof key, "customer:%d", i);
        sy_pg_key_set(&h, "h1", key, i);
    }
    assert_int_equal(h.n, SY_PG_KEY_TABLE_MAX);
    int64_t v = -1;
    assert_true(sy_pg_key_get(&h, "h1", "customer:4095", &v));
    assert_int_equal(v, 4095);
    /* One more: the table starts again with it alone. */
    sy_pg_key_set(&h, "h1", "customer:new", 9);
    assert_int_equal(h.n, 1);
    assert_false(sy_pg_key_get(&h, "h1", "customer:0", &v));
    assert_true(sy_pg_key_get(&h, "h1", "customer:new", &v));
    assert_int_equal(v, 9);
    sy_pg_keys_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_for_owner),
        cmocka_unit_test(test_another_owner_empties),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests_name("store_pg_key_table", tests, NULL, NULL);
}
#else
int main(void)
{
    printf("1..0 # SKIP built without libpq\n");
    return 0;
}
#endif
