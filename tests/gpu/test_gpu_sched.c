/* The gpu plugin's scheduler (plugins/gpu/sched.c), driven directly: best
 * fit by island, model and memory, priorities, the EASY reservation and
 * backfill, the wait bound, sharing by memory, drains, and the FIFO and
 * first-fit baselines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sched.h"

/* A scheduler of `n` H100s (80 GiB) on the islands given (NULL: all 0). */
static sy_gs *mk(int n, const int *islands)
{
    static sy_gs s;
    memset(&s, 0, sizeof s);
    assert_int_equal(sy_gs_init(&s, n, 64), 0);
    for (int i = 0; i < n; i++) {
        s.dev[i].island = islands ? islands[i] : 0;
        s.dev[i].mem_mib = 81920;
        s.dev[i].model = "H100-SXM5-80GB";
    }
    return &s;
}

static sy_gs_job job(int gpus, int64_t expected)
{
    sy_gs_job j;
    memset(&j, 0, sizeof j);
    j.gpus = gpus;
    j.expected_ms = expected;
    return j;
}

static void queue(sy_gs *s, sy_gs_job *j, int64_t now)
{
    assert_int_equal(sy_gs_enqueue(s, j, now), 0);
}

static void test_best_fit_island(void **st)
{
    (void)st;
    /* Island 0 has four devices, island 1 two: a 2-GPU task takes island
     * 1 whole and leaves the four together for a 4-GPU task. */
    static const int isl[] = {0, 0, 0, 0, 1, 1};
    sy_gs *s = mk(6, isl);
    sy_gs_job a = job(2, 100), b = job(4, 100);
    queue(s, &a, 0);
    queue(s, &b, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &a);
    assert_int_equal(a.devs[0], 4);
    assert_int_equal(a.devs[1], 5);
    assert_ptr_equal(sy_gs_next(s, 0), &b);
    for (int i = 0; i < 4; i++)
        assert_int_equal(b.devs[i], i);
    assert_null(sy_gs_next(s, 0));
    sy_gs_release(s, &a);
    sy_gs_release(s, &b);
    sy_gs_fini(s);
}

static void test_spans_fewest_islands(void **st)
{
    (void)st;
    /* No island holds three: the task takes the fullest island first. */
    static const int isl[] = {0, 1, 1, 2, 2};
    sy_gs *s = mk(5, isl);
    sy_gs_job a = job(3, 100);
    queue(s, &a, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &a);
    assert_int_equal(s->dev[0].whole, 0);
    assert_int_equal(a.ndevs, 3);
    sy_gs_fini(s);
}

static void test_model_and_memory(void **st)
{
    (void)st;
    sy_gs *s = mk(3, NULL);
    s->dev[1].model = "A100-PCIE-40GB";
    s->dev[1].mem_mib = 40960;
    sy_gs_job a = job(1, 100), b = job(1, 100), big = job(1, 100);
    a.model = "A100*";
    b.mem_mib = 60000;
    big.model = "A100*";
    big.mem_mib = 60000;
    char why[256];
    assert_false(sy_gs_feasible(s, &big, why, sizeof why));
    assert_non_null(strstr(why, "has 0 that match"));
    queue(s, &a, 0);
    queue(s, &b, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &a);
    assert_int_equal(a.devs[0], 1);
    assert_ptr_equal(sy_gs_next(s, 0), &b);
    assert_int_not_equal(b.devs[0], 1);
    sy_gs_fini(s);
}

static void test_priority(void **st)
{
    (void)st;
    sy_gs *s = mk(1, NULL);
    sy_gs_job lo = job(1, 100), hi = job(1, 100), mid = job(1, 100);
    hi.priority = 10;
    mid.priority = 5;
    queue(s, &lo, 0);
    queue(s, &mid, 1);
    queue(s, &hi, 2);
    assert_ptr_equal(sy_gs_next(s, 3), &hi);
    sy_gs_release(s, &hi);
    assert_ptr_equal(sy_gs_next(s, 4), &mid);
    sy_gs_release(s, &mid);
    assert_ptr_equal(sy_gs_next(s, 5), &lo);
    sy_gs_fini(s);
}

/* Four devices: one busy until t=100, three until t=1000; a 4-GPU task
 * waits with a reservation at t=1000. */
static sy_gs *reserved_setup(sy_gs_job *r1, sy_gs_job *r3, sy_gs_job *big)
{
    sy_gs *s = mk(4, NULL);
    *r1 = job(1, 100);
    *r3 = job(3, 1000);
    *big = job(4, 500);
    queue(s, r3, 0);
    assert_ptr_equal(sy_gs_next(s, 0), r3);
    queue(s, r1, 0);
    assert_ptr_equal(sy_gs_next(s, 0), r1);
    queue(s, big, 0);
    assert_null(sy_gs_next(s, 0));
    assert_ptr_equal(s->reserved_for, big);
    assert_int_equal(s->shadow_ms, 1000);
    return s;
}

static void test_backfill_only_before_reservation(void **st)
{
    (void)st;
    sy_gs_job r1, r3, big;
    sy_gs *s = reserved_setup(&r1, &r3, &big);
    sy_gs_release(s, &r1);                   /* device 0 frees at t=100 */
    sy_gs_job longer = job(1, 5000), shorter = job(1, 800);
    queue(s, &longer, 100);
    queue(s, &shorter, 100);
    /* The long one would delay the 4-GPU task: only the short one, which
     * ends at t=900 < 1000, is backfilled. */
    assert_ptr_equal(sy_gs_next(s, 100), &shorter);
    assert_null(sy_gs_next(s, 100));
    sy_gs_release(s, &shorter);
    sy_gs_release(s, &r3);                    /* t=1000: all four free */
    assert_ptr_equal(sy_gs_next(s, 1000), &big);
    assert_null(sy_gs_next(s, 1000));
    sy_gs_fini(s);
}

static void test_backfill_on_unreserved_device(void **st)
{
    (void)st;
    /* The waiting task wants H100s; the A100 is outside its reservation,
     * so a long task may take it. */
    sy_gs *s = mk(3, NULL);
    s->dev[2].model = "A100";
    sy_gs_job run = job(2, 1000), big = job(2, 10), longer = job(1, 99999);
    big.model = "H100*";
    queue(s, &run, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &run);
    assert_int_not_equal(run.devs[0], 2);
    assert_int_not_equal(run.devs[1], 2);
    queue(s, &big, 1);
    queue(s, &longer, 2);
    assert_ptr_equal(sy_gs_next(s, 3), &longer);
    assert_int_equal(longer.devs[0], 2);
    sy_gs_fini(s);
}

static void test_fifo_blocks(void **st)
{
    (void)st;
    sy_gs_job r1, r3, big;
    sy_gs *s = reserved_setup(&r1, &r3, &big);
    s->policy = SY_GS_FIFO;
    sy_gs_release(s, &r1);
    sy_gs_job small = job(1, 1);
    queue(s, &small, 100);
    assert_null(sy_gs_next(s, 100));
    sy_gs_fini(s);
}

static void test_first_fit_starves(void **st)
{
    (void)st;
    sy_gs_job r1, r3, big;
    sy_gs *s = reserved_setup(&r1, &r3, &big);
    s->policy = SY_GS_FIRST_FIT;
    sy_gs_release(s, &r1);
    sy_gs_job longer = job(1, 5000);
    queue(s, &longer, 100);
    /* No reservation: the long task takes the device the 4-GPU task
     * needs. */
    assert_ptr_equal(sy_gs_next(s, 100), &longer);
    sy_gs_fini(s);
}

static void test_wait_bound(void **st)
{
    (void)st;
    sy_gs *s = mk(2, NULL);
    s->wait_bound[2] = 1000;
    sy_gs_job run = job(1, 100000), big = job(2, 100), hi = job(1, 100);
    hi.priority = 100;
    queue(s, &run, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &run);
    queue(s, &big, 0);
    queue(s, &hi, 10);
    /* Before the bound the high-priority task is first and runs. */
    assert_ptr_equal(sy_gs_next(s, 20), &hi);
    sy_gs_release(s, &hi);
    assert_null(sy_gs_overdue(s, 999));
    assert_ptr_equal(sy_gs_overdue(s, 1000), &big);
    assert_null(sy_gs_overdue(s, 1001));      /* reported once */
    sy_gs_job hi2 = job(1, 200000);
    hi2.priority = 100;
    queue(s, &hi2, 1001);
    /* Past its bound the 2-GPU task goes first: it holds the reservation,
     * and the high-priority task, which would end after it starts and so
     * delay it, waits (below the bound it would have run at once). */
    assert_null(sy_gs_next(s, 1002));
    assert_ptr_equal(s->reserved_for, &big);
    sy_gs_release(s, &run);
    assert_ptr_equal(sy_gs_next(s, 1003), &big);
    sy_gs_fini(s);
}

static void test_share(void **st)
{
    (void)st;
    sy_gs *s = mk(2, NULL);
    s->share = true;
    sy_gs_job a = job(1, 100), b = job(1, 100), c = job(1, 100),
              whole = job(2, 100);
    a.share = b.share = c.share = true;
    a.mem_mib = b.mem_mib = 30000;
    c.mem_mib = 30000;
    queue(s, &a, 0);
    queue(s, &b, 0);
    queue(s, &c, 0);
    queue(s, &whole, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &a);
    assert_ptr_equal(sy_gs_next(s, 0), &b);
    assert_int_equal(a.devs[0], b.devs[0]);   /* best fit: the shared one */
    assert_ptr_equal(sy_gs_next(s, 0), &c);   /* 90000 > 81920: the other */
    assert_int_not_equal(c.devs[0], a.devs[0]);
    assert_int_equal(s->dev[a.devs[0]].mem_used, 60000);
    assert_null(sy_gs_next(s, 0));            /* whole devices: none idle */
    sy_gs_release(s, &a);
    sy_gs_release(s, &b);
    sy_gs_release(s, &c);
    assert_ptr_equal(sy_gs_next(s, 1), &whole);
    sy_gs_fini(s);
}

static void test_share_off_means_whole(void **st)
{
    (void)st;
    sy_gs *s = mk(1, NULL);
    sy_gs_job a = job(1, 100), b = job(1, 100);
    a.share = b.share = true;
    a.mem_mib = b.mem_mib = 1000;
    queue(s, &a, 0);
    queue(s, &b, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &a);
    assert_null(sy_gs_next(s, 0));
    sy_gs_fini(s);
}

static void test_drain(void **st)
{
    (void)st;
    sy_gs *s = mk(2, NULL);
    s->dev[0].drained = true;
    sy_gs_job a = job(1, 100), b = job(1, 100), two = job(2, 100);
    assert_true(sy_gs_feasible(s, &two, NULL, 0)); /* drained may resume */
    queue(s, &a, 0);
    queue(s, &b, 0);
    assert_ptr_equal(sy_gs_next(s, 0), &a);
    assert_int_equal(a.devs[0], 1);
    assert_null(sy_gs_next(s, 0));
    s->dev[0].drained = false;
    assert_ptr_equal(sy_gs_next(s, 0), &b);
    assert_int_equal(b.devs[0], 0);
    sy_gs_fini(s);
}

static void test_queue_bounds_and_remove(void **st)
{
    (void)st;
    sy_gs s;
    memset(&s, 0, sizeof s);
    assert_int_equal(sy_gs_init(&s, 1, 2), 0);
    s.dev[0].mem_mib = 1;
    sy_gs_job a = job(1, 1), b = job(1, 1), c = job(1, 1);
    assert_int_equal(sy_gs_enqueue(&s, &a, 0), 0);
    assert_int_equal(sy_gs_enqueue(&s, &b, 0), 0);
    assert_int_equal(sy_gs_enqueue(&s, &c, 0), -1);
    assert_true(sy_gs_remove(&s, &a));
    assert_false(sy_gs_remove(&s, &a));
    assert_int_equal(sy_gs_queued(&s), 1);
    assert_ptr_equal(sy_gs_next(&s, 0), &b);
    assert_int_equal(sy_gs_running(&s), 1);
    assert_false(sy_gs_dev_idle(&s, 0));
    sy_gs_release(&s, &b);
    assert_true(sy_gs_dev_idle(&s, 0));
    sy_gs_fini(&s);
}

static void test_estimate(void **st)
{
    (void)st;
    sy_gs *s = mk(1, NULL);
    sy_gs_job j = job(1, 0);
    assert_int_equal(sy_gs_estimate(s, &j), 3600 * 1000);
    j.timeout_ms = 500;
    assert_int_equal(sy_gs_estimate(s, &j), 500);
    j.expected_ms = 200;
    assert_int_equal(sy_gs_estimate(s, &j), 200);
    sy_gs_fini(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_best_fit_island),
        cmocka_unit_test(test_spans_fewest_islands),
        cmocka_unit_test(test_model_and_memory),
        cmocka_unit_test(test_priority),
        cmocka_unit_test(test_backfill_only_before_reservation),
        cmocka_unit_test(test_backfill_on_unreserved_device),
        cmocka_unit_test(test_fifo_blocks),
        cmocka_unit_test(test_first_fit_starves),
        cmocka_unit_test(test_wait_bound),
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_share_off_means_whole),
        cmocka_unit_test(test_drain),
        cmocka_unit_test(test_queue_bounds_and_remove),
        cmocka_unit_test(test_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
