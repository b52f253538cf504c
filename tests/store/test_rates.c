/* Rate limits' token buckets in the store (store/rates.h): a bucket
 * starts full (burst), refills `rate` tokens per interval and never past
 * burst, is shared by every handle on the store, is taken all or none
 * over an attempt's buckets, only under a fence that holds the run, and
 * only when the batch commits; a bucket another host's open batch is
 * taking counts as empty without waiting.  Each test runs on SQLite,
 * then on PostgreSQL on a throwaway server when this build has libpq (two
 * handles standing for two hosts). */
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
#include "store/rates.h"
#include "fixture.h"

#define NOW 100 /* inside h1's lease (claimed at 10 until 1000) */

/* Takes a token of each of the n claims on handle s in a batch of its
 * own; whether they were taken, and which bucket was empty for how
 * long. */
static bool take(sy_store *s, const sy_store_fence *fence, int64_t run,
                 const sy_rate_claim *c, size_t n, int64_t now, size_t *empty, int64_t *wait)
{
    bool taken = false;
    size_t e = 99;
    int64_t w = -2;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_take_rates(s, fence, run, c, n, now, &taken, &e, &w));
    OK(s, sy_store_commit(s));
    if (empty)
        *empty = e;
    if (wait)
        *wait = w;
    return taken;
}

/* Tokens in key's bucket as stored (whole ones). */
static int64_t tokens(sy_store *s, const char *key)
{
    sy_rate_bucket b = {0};
    bool found = false;
    OK(s, sy_store_rate_bucket(s, key, &b, &found));
    assert_true(found);
    return b.level / b.interval_ms;
}

/* The arithmetic alone: refill, the cap at burst, the wait. */
static void test_bucket_arithmetic(void **state)
{
    (void)state;
    sy_rate_claim c = {"k", 10, 1000, 2}; /* 10 a second, burst 2 */
    sy_rate_bucket b;
    int64_t wait = 0;
    assert_true(sy_rate_bucket_take(&b, true, &c, 0, &wait));
    assert_true(sy_rate_bucket_take(&b, false, &c, 0, &wait));
    assert_false(sy_rate_bucket_take(&b, false, &c, 0, &wait));
    assert_int_equal(wait, 100);
    assert_false(sy_rate_bucket_take(&b, false, &c, 30, &wait));
    assert_int_equal(wait, 70);
    assert_true(sy_rate_bucket_take(&b, false, &c, 100, &wait));
    /* A long pause fills it to burst, not past. */
    assert_true(sy_rate_bucket_take(&b, false, &c, 1000000000, &wait));
    assert_true(sy_rate_bucket_take(&b, false, &c, 1000000000, &wait));
    assert_false(sy_rate_bucket_take(&b, false, &c, 1000000000, &wait));
    /* A clock behind the last refill refills nothing, and may not use
     * the tokens that came after its time. */
    assert_false(sy_rate_bucket_take(&b, false, &c, 1000000000 - 5, &wait));
    assert_int_equal(wait, 105);
    assert_true(sy_rate_bucket_take(&b, false, &c, 1000000000 + 100, &wait));
    assert_true(sy_rate_bucket_take(&b, true, &c, 1000, &wait));
    assert_true(sy_rate_bucket_take(&b, false, &c, 1100, &wait)); /* 1 left, at 1100 */
    /* At 1050 half of that token had come: the rest comes at 1100. */
    assert_false(sy_rate_bucket_take(&b, false, &c, 1050, &wait));
    assert_int_equal(wait, 50);
    assert_true(sy_rate_bucket_take(&b, false, &c, 1100, &wait));
    /* 3 a minute: a token every 20 s, the wait rounded up. */
    sy_rate_claim slow = {"k", 3, 60000, 1};
    assert_true(sy_rate_bucket_take(&b, true, &slow, 0, &wait));
    assert_false(sy_rate_bucket_take(&b, false, &slow, 1, &wait));
    assert_int_equal(wait, 19999);
    /* The same bucket taken under another interval: converted, exactly
     * for whole tokens. */
    sy_rate_bucket full;
    assert_true(sy_rate_bucket_take(&full, true, &(sy_rate_claim){"k", 1, 1000, 5}, 0, &wait));
    sy_rate_claim other = {"k", 1, 7, 5};
    for (int i = 0; i < 4; i++)
        assert_true(sy_rate_bucket_take(&full, false, &other, 0, &wait));
    assert_false(sy_rate_bucket_take(&full, false, &other, 0, &wait));
}

/* Burst at once, then one per 1/rate, seen alike by both hosts. */
static void test_burst_then_rate(void **state)
{
    fx *f = *state;
    sy_rate_claim c = {"rate:api", 10, 1000, 2};
    size_t empty;
    int64_t wait;
    assert_true(take(f->a, &f->h1, f->run, &c, 1, NOW, NULL, NULL));
    assert_true(take(f->b, &f->h1, f->run, &c, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, f->run, &c, 1, NOW, &empty, &wait));
    assert_true(empty == 0 && wait == 100);
    assert_false(take(f->a, &f->h1, f->run, &c, 1, NOW + 99, NULL, &wait));
    assert_int_equal(wait, 1);
    assert_true(take(f->a, &f->h1, f->run, &c, 1, NOW + 100, NULL, NULL));
    assert_false(take(f->b, &f->h1, f->run, &c, 1, NOW + 150, NULL, &wait));
    assert_int_equal(wait, 50);
    /* 250 ms later: 2.5 tokens due, burst keeps 2. */
    assert_true(take(f->b, &f->h1, f->run, &c, 1, NOW + 500, NULL, NULL));
    assert_int_equal(tokens(f->a, "rate:api"), 1);
    /* Another key is its own bucket. */
    assert_true(take(f->a, &f->h1, f->run, &(sy_rate_claim){"rate:other", 1, 1000, 1}, 1,
                     NOW + 500, NULL, NULL));
}

static void test_all_or_none(void **state)
{
    fx *f = *state;
    sy_rate_claim one = {"rate:b", 1, 1000, 1};
    assert_true(take(f->a, &f->h1, f->run, &one, 1, NOW, NULL, NULL));
    sy_rate_claim both[] = {{"rate:a", 5, 1000, 5}, {"rate:b", 1, 1000, 1}};
    size_t empty = 99;
    int64_t wait = 0;
    assert_false(take(f->a, &f->h1, f->run, both, 2, NOW, &empty, &wait));
    assert_true(empty == 1 && wait == 1000);
    /* rate:a gave nothing: it has no row yet, or all 5 tokens. */
    sy_rate_bucket b;
    bool found = true;
    OK(f->a, sy_store_rate_bucket(f->a, "rate:a", &b, &found));
    assert_false(found);
    assert_true(take(f->a, &f->h1, f->run, both, 2, NOW + 1000, NULL, NULL));
    assert_int_equal(tokens(f->a, "rate:a"), 4);
    assert_int_equal(tokens(f->a, "rate:b"), 0);
}

/* Taken only under a fence that holds the run, and only when the batch
 * commits. */
static void test_fenced_and_rolled_back(void **state)
{
    fx *f = *state;
    sy_rate_claim c = {"rate:api", 1, 1000, 2};
    bool taken = true;
    size_t empty;
    int64_t wait;
    sy_store_fence stale = {"h1", f->h1.epoch + 1};
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_take_rates(f->a, &stale, f->run, &c, 1, NOW, &taken, &empty,
                                         &wait),
                     SY_STORE_EFENCED);
    assert_false(taken);
    OK(f->a, sy_store_commit(f->a));
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_take_rates(f->a, &f->h1, f->run, &c, 1, NOW, &taken, &empty, &wait));
    assert_true(taken);
    sy_store_rollback(f->a);
    /* Neither took a token: both are there. */
    assert_true(take(f->b, &f->h1, f->run, &c, 1, NOW, NULL, NULL));
    assert_true(take(f->b, &f->h1, f->run, &c, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, f->run, &c, 1, NOW, NULL, NULL));
}

static void test_bad_arguments(void **state)
{
    fx *f = *state;
    bool taken;
    size_t empty;
    int64_t wait;
    sy_rate_claim twice[] = {{"k", 1, 1000, 1}, {"k", 2, 1000, 1}};
    sy_rate_claim bad[] = {{"k", 0, 1000, 1}, {"k", 1, 0, 1}, {"k", 1, 1000, 0},
                           {"k", 1, 86400001, 1}, {"", 1, 1000, 1}};
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_take_rates(f->a, &f->h1, f->run, twice, 2, NOW, &taken, &empty,
                                         &wait),
                     SY_EINVAL);
    for (size_t i = 0; i < SY_ARRAY_LEN(bad); i++)
        assert_int_equal(sy_store_take_rates(f->a, &f->h1, f->run, &bad[i], 1, NOW, &taken,
                                             &empty, &wait),
                         SY_EINVAL);
    assert_int_equal(sy_store_take_rates(f->a, NULL, f->run, twice, 1, NOW, &taken, &empty,
                                         &wait),
                     SY_EINVAL);
    OK(f->a, sy_store_commit(f->a));
    /* Outside a batch: refused, nothing taken. */
    assert_int_equal(sy_store_take_rates(f->a, &f->h1, f->run, twice, 1, NOW, &taken, &empty,
                                         &wait),
                     SY_ESTATE);
    sy_rate_bucket b;
    bool found = true;
    OK(f->a, sy_store_rate_bucket(f->a, "k", &b, &found));
    assert_false(found);
}

/* The other host's open batch is taking the bucket: empty for this turn,
 * at once (no wait); once it commits, its take is counted. */
static void test_key_being_taken(void **state)
{
    fx *f = *state;
    sy_rate_claim c = {"rate:api", 1, 1000, 2};
    bool taken = false;
    size_t empty = 99;
    int64_t wait = 0;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_take_rates(f->a, &f->h1, f->run, &c, 1, NOW, &taken, &empty, &wait));
    assert_true(taken);
    assert_false(take(f->b, &f->h1, f->run, &c, 1, NOW, &empty, &wait));
    assert_true(empty == 0 && wait == -1);
    OK(f->a, sy_store_commit(f->a));
    assert_true(take(f->b, &f->h1, f->run, &c, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, f->run, &c, 1, NOW, NULL, &wait));
    assert_int_equal(wait, 1000);
}

/* Every bucket listed in key order, with its rate and burst as the last
 * take said and its tokens at the read's time by the take's arithmetic;
 * the callback stops the listing. */
typedef struct {
    int64_t now;
    char key[4][64];
    int64_t tokens[4], next[4], rate[4], burst[4];
    int n, stop;
} listed;

static int list_one(void *arg, const sy_rate_bucket_row *b)
{
    listed *l = arg;
    int64_t tokens = -2, next = -2;
    assert_true(l->n < 4);
    snprintf(l->key[l->n], sizeof l->key[0], "%s", b->key);
    assert_true(sy_rate_bucket_at(b, l->now, &tokens, &next));
    l->tokens[l->n] = tokens;
    l->next[l->n] = next;
    l->rate[l->n] = b->rate;
    l->burst[l->n] = b->burst;
    l->n++;
    return l->n == l->stop;
}

static listed list_at(sy_store *s, int64_t now, int stop)
{
    listed l = {.now = now, .stop = stop};
    OK(s, sy_store_list_rate_buckets(s, list_one, &l));
    return l;
}

static void test_listed(void **state)
{
    fx *f = *state;
    sy_rate_claim api = {"rate:api", 10, 1000, 2}, b = {"rate:b", 1, 1000, 1};
    listed l = list_at(f->b, NOW, 0);
    assert_int_equal(l.n, 0);
    assert_true(take(f->a, &f->h1, f->run, &b, 1, NOW, NULL, NULL));
    assert_true(take(f->a, &f->h1, f->run, &api, 1, NOW, NULL, NULL));
    assert_true(take(f->a, &f->h1, f->run, &api, 1, NOW, NULL, NULL));
    /* 150 ms on: 1.5 of api's tokens back (1 whole, the next in 50 ms),
     * 0.15 of b's; seen alike from the other host. */
    l = list_at(f->b, NOW + 150, 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.key[0], "rate:api");
    assert_int_equal(l.rate[0], 10);
    assert_int_equal(l.burst[0], 2);
    assert_int_equal(l.tokens[0], 1);
    assert_int_equal(l.next[0], 50);
    assert_string_equal(l.key[1], "rate:b");
    assert_int_equal(l.rate[1], 1);
    assert_int_equal(l.burst[1], 1);
    assert_int_equal(l.tokens[1], 0);
    assert_int_equal(l.next[1], 850);
    /* The listing took nothing; full buckets have no next token. */
    l = list_at(f->b, NOW + 1000000, 0);
    assert_int_equal(l.tokens[0], 2);
    assert_int_equal(l.next[0], -1);
    assert_int_equal(l.tokens[1], 1);
    assert_int_equal(l.next[1], -1);
    assert_int_equal(list_at(f->a, NOW, 1).n, 1);
    assert_int_equal(sy_store_list_rate_buckets(f->a, NULL, NULL), SY_EINVAL);
    /* A row whose rate and burst are not known says nothing. */
    sy_rate_bucket_row old = {"rate:old", {1000, NOW, 1000}, 0, 0};
    int64_t tokens = -2, next = -2;
    assert_false(sy_rate_bucket_at(&old, NOW, &tokens, &next));
    assert_true(tokens == -2 && next == -2);
}

#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
    const struct CMUnitTest sqlite[] = {
        BOTH(test_bucket_arithmetic),      BOTH(test_burst_then_rate),
        BOTH(test_all_or_none),            BOTH(test_fenced_and_rolled_back),
        BOTH(test_bad_arguments),          BOTH(test_listed),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_burst_then_rate),         PG(test_all_or_none),
        PG(test_fenced_and_rolled_back),  PG(test_bad_arguments),
        PG(test_key_being_taken),         PG(test_listed),
    };
    return fx_run_groups("store_rates", sqlite, SY_ARRAY_LEN(sqlite), pg, SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_rates", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
