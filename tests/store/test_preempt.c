/* Cancel requests on slot rows (store/preempt.h): a request marks the
 * key's oldest live holder, one at a time per key; the holder's host
 * (and only it) lists it, with why; a holder that is gone takes the
 * request with it.  Each test runs on SQLite, then on PostgreSQL on a
 * throwaway server when this build has libpq (two handles standing for
 * two hosts). */
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
#include "store/preempt.h"
#include "fixture.h"

#define NOW 100 /* inside h1's lease (claimed at 10 until 1000) */

static void take(sy_store *s, const sy_store_fence *fence, sy_slot_holder h, int64_t now)
{
    sy_slot_claim c = {"key:db", 2, 1};
    bool taken = false;
    size_t full;
    int64_t held;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_take_slots(s, fence, &h, &c, 1, now, &taken, &full, &held));
    OK(s, sy_store_commit(s));
    assert_true(taken);
}

static bool ask(sy_store *s, int64_t now)
{
    bool asked = false;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_request_slot_cancel(s, "key:db", now, "for a newer task", &asked));
    OK(s, sy_store_commit(s));
    return asked;
}

typedef struct { size_t n; sy_slot_holder h; char why[64]; } seen_arg;

static int note(void *arg, const sy_cancel_request *r)
{
    seen_arg *a = arg;
    a->n++;
    a->h = r->holder;
    snprintf(a->why, sizeof a->why, "%s", r->why);
    return 0;
}

static seen_arg requests(sy_store *s, const char *owner, int64_t now)
{
    seen_arg a = {0};
    OK(s, sy_store_list_cancel_requests(s, owner, now, note, &a));
    return a;
}

static void test_oldest_asked_once(void **state)
{
    fx *f = *state;
    take(f->a, &f->h1, (sy_slot_holder){f->run, 1, -1, 4}, NOW - 10);
    take(f->a, &f->h1, (sy_slot_holder){f->run, 0, -1, 1}, NOW);
    assert_int_equal(requests(f->b, "h1", NOW).n, 0);
    /* From the other handle: the oldest holder (task 1) is marked. */
    assert_true(ask(f->b, NOW));
    seen_arg got = requests(f->a, "h1", NOW);
    assert_int_equal(got.n, 1);
    assert_int_equal(got.h.idx, 1);
    assert_int_equal(got.h.token, 4);
    assert_string_equal(got.why, "for a newer task");
    /* One at a time per key. */
    assert_false(ask(f->b, NOW));
    assert_int_equal(requests(f->a, "h1", NOW).n, 1);
    /* Only the holder's host sees it. */
    assert_int_equal(requests(f->a, "h2", NOW).n, 0);
    /* The holder gives its slot back: the request goes with it, and the
     * next one may be asked. */
    sy_slot_holder gone = {f->run, 1, -1, 4};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_slots(f->a, &gone, 1));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(requests(f->a, "h1", NOW).n, 0);
    assert_true(ask(f->b, NOW));
    assert_int_equal(requests(f->a, "h1", NOW).h.idx, 0);
    /* Past h1's lease nothing is live: nothing to act on. */
    assert_int_equal(requests(f->a, "h1", 1000).n, 0);
}

static void test_nothing_held(void **state)
{
    fx *f = *state;
    assert_false(ask(f->a, NOW));
    bool asked = true;
    assert_int_equal(sy_store_request_slot_cancel(f->a, "key:db", NOW, "x", &asked), SY_ESTATE);
    assert_int_equal(sy_store_request_slot_cancel(f->a, "", NOW, "x", &asked), SY_EINVAL);
}

#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
    const struct CMUnitTest sqlite[] = {
        BOTH(test_oldest_asked_once),
        BOTH(test_nothing_held),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_oldest_asked_once),
        PG(test_nothing_held),
    };
    return fx_run_groups("store_preempt", sqlite, SY_ARRAY_LEN(sqlite), pg, SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_preempt", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
