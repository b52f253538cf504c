/* The grant order of a contended key (engine/grant.h): higher priority
 * first; within a priority the tenant furthest below its weighted share
 * of the key's holders, then the oldest; a waiter gains a point per
 * aging step, so that it overtakes newer waiters of a higher priority in
 * time; the first waiter the free slots fit is the one granted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/util.h"
#include "engine/grant.h"

#define AGING 1000

/* A waiter known by its run id alone. */
static sy_grant_waiter w(int64_t run, int64_t priority, int64_t since, int64_t share,
                         int64_t n)
{
    return (sy_grant_waiter){run, 0, -1, priority, since, n, share, 0};
}

static void assert_runs(const sy_grant_waiter *v, const int64_t *runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].run_id != runs[i])
            fail_msg("position %zu: run %lld, expected %lld", i, (long long)v[i].run_id,
                     (long long)runs[i]);
}

static void test_priority_then_oldest(void **state)
{
    (void)state;
    sy_grant_waiter v[] = {w(1, 0, 10, 0, 1), w(2, 5, 30, 0, 1), w(3, 0, 5, 0, 1),
                           w(4, 5, 20, 0, 1)};
    assert_true(sy_grant_order(v, 4, 40, AGING));
    assert_runs(v, (int64_t[]){4, 2, 3, 1}, 4);
}

static void test_weighted_share_before_age(void **state)
{
    (void)state;
    /* Tenant a (weight 1, stride 3) holds 1 slot: share 3; tenant b
     * (weight 3, stride 1) holds 2: share 2.  b is further below its
     * share and goes first although a's waiter is older; with b holding
     * 3 (share 3) the tie goes to the oldest. */
    sy_grant_waiter v[] = {w(1, 0, 10, 3, 1), w(2, 0, 20, 2, 1), w(3, 0, 30, 2, 1)};
    assert_true(sy_grant_order(v, 3, 40, AGING));
    assert_runs(v, (int64_t[]){2, 3, 1}, 3);
    sy_grant_waiter tie[] = {w(1, 0, 10, 3, 1), w(2, 0, 20, 3, 1)};
    assert_true(sy_grant_order(tie, 2, 40, AGING));
    assert_runs(tie, (int64_t[]){1, 2}, 2);
}

static void test_aging_overtakes(void **state)
{
    (void)state;
    /* Run 1 (priority 0) has waited 3 steps at 3000: aged 3, above run
     * 2's 2 (priority 2, just arrived), below run 3's 5. */
    sy_grant_waiter v[] = {w(2, 2, 3000, 0, 1), w(1, 0, 0, 0, 1), w(3, 5, 3000, 0, 1)};
    assert_true(sy_grant_order(v, 3, 3000, AGING));
    assert_runs(v, (int64_t[]){3, 1, 2}, 3);
    /* Earlier, at 1000, it had not: 1 < 2. */
    sy_grant_waiter u[] = {w(2, 2, 1000, 0, 1), w(1, 0, 0, 0, 1)};
    assert_true(sy_grant_order(u, 2, 1000, AGING));
    assert_runs(u, (int64_t[]){2, 1}, 2);
    /* A tie in aged priority goes to the higher class. */
    sy_grant_waiter t[] = {w(1, 0, 0, 0, 1), w(2, 2, 2000, 0, 1)};
    assert_true(sy_grant_order(t, 2, 2000, AGING));
    assert_runs(t, (int64_t[]){2, 1}, 2);
    assert_true(sy_grant_before(&t[0], &t[1], 2000, AGING));
    assert_false(sy_grant_before(&t[1], &t[0], 2000, AGING));
}

static void test_first_that_fits(void **state)
{
    (void)state;
    sy_grant_waiter v[] = {w(1, 0, 10, 0, 3), w(2, 0, 20, 0, 1), w(3, 0, 30, 0, 2)};
    assert_int_equal(sy_grant_first(v, 3, 3), 0);
    assert_int_equal(sy_grant_first(v, 3, 2), 1);
    assert_int_equal(sy_grant_first(v, 3, 0), 3);
    assert_int_equal(sy_grant_first(v, 0, 5), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_then_oldest),
        cmocka_unit_test(test_weighted_share_before_age),
        cmocka_unit_test(test_aging_overtakes),
        cmocka_unit_test(test_first_that_fits),
    };
    return cmocka_run_group_tests_name("engine_grant", tests, NULL, NULL);
}
