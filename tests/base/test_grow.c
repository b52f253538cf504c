/* sy_grow (base/util.h): room made by doubling from the first size, the
 * same buffer while it has room, and a size that cannot be allocated
 * refused with the buffer and its capacity as they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/util.h"

static void test_doubles_from_the_first(void **state)
{
    (void)state;
    size_t cap = 0;
    int *v = sy_grow(NULL, &cap, 5, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 8);
    for (int i = 0; i < 8; i++)
        v[i] = i;
    /* Room already: the same buffer, the same capacity. */
    assert_ptr_equal(sy_grow(v, &cap, 8, sizeof *v, 4), v);
    assert_int_equal(cap, 8);
    /* Past it: doubled until it holds the need, the contents kept. */
    v = sy_grow(v, &cap, 30, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 32);
    for (int i = 0; i < 8; i++)
        assert_int_equal(v[i], i);
    free(v);
}

static void test_a_need_of_none_is_one(void **state)
{
    (void)state;
    size_t cap = 0;
    char *v = sy_grow(NULL, &cap, 0, 1, 0);
    assert_non_null(v);
    assert_int_equal(cap, 1);
    free(v);
}

static void test_too_large_leaves_it_alone(void **state)
{
    (void)state;
    size_t cap = 0;
    uint64_t *v = sy_grow(NULL, &cap, 3, sizeof *v, 2);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    v[3] = 42;
    assert_null(sy_grow(v, &cap, SIZE_MAX / 4, sizeof *v, 2));
    assert_int_equal(cap, 4);
    assert_int_equal(v[3], 42); /* still the caller's, still whole */
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doubles_from_the_first),
        cmocka_unit_test(test_a_need_of_none_is_one),
        cmocka_unit_test(test_too_large_leaves_it_alone),
    };
    return cmocka_run_group_tests_name("grow", tests, NULL, NULL);
}
