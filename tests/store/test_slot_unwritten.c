/* Takes within a grant not written (store/postgres/unwritten.h,
 * docs/flow-control.md "Takes not written"): on PostgreSQL a host whose
 * take or give-back stays within its grant and its row's bound `ahead`
 * leaves its count row as it was and keeps the difference itself, kept
 * only when its batch commits; another host taking the grant back leaves
 * it the bound, so the key never holds more than its limit; a waiter on
 * the key, or the grant made again, has the count written exactly.  Two
 * handles stand for two hosts, "h1" and "h2", each holding a run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/slots.h"
#include "store/waiters.h"
#include "fixture.h"

#ifdef SY_HAVE_LIBPQ
#define NOW 100
#define KEY "db:acme"
#define LIMIT 1000

static int64_t read_as(sy_store *s, const char *owner, int64_t n, bool keep)
{
    sy_slot_claim c = {KEY, LIMIT, n};
    int64_t held = -2;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_slot_room_as(s, owner, &c, 1, NOW, &held));
    if (!keep)
        OK(s, sy_store_commit(s));
    return held;
}

/* n slots of KEY for tenant "public", as holder (run, 0, elem). */
static sy_slot_take take_of(int64_t run, int64_t n, int64_t elem, int64_t epoch)
{
    return (sy_slot_take){KEY, LIMIT, n, {run, 0, elem, 1}, epoch, "public"};
}

/* Reads KEY for n in a batch left open, then takes t in it; whether
 * it was taken.  The batch is committed, or with `undo` rolled back. */
static bool take(sy_store *s, const char *owner, sy_slot_take t, bool undo)
{
    int64_t held = read_as(s, owner, t.n, true);
    bool done = false;
    if (held >= 0 && held + t.n <= LIMIT)
        OK(s, sy_store_put_slots(s, owner, &t, 1, NOW, &done));
    if (undo)
        sy_store_rollback(s);
    else
        OK(s, sy_store_commit(s));
    return done;
}

static void give_back(sy_store *s, const char *owner, sy_slot_take t)
{
    OK(s, sy_store_begin(s));
    OK(s, sy_store_return_takes(s, owner, &t, 1));
    OK(s, sy_store_commit(s));
}

/* A column of owner's row of KEY. */
static long long row(const char *owner, const char *column)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM slot_counts WHERE key = '%s' AND owner = '%s'",
             column, KEY, owner);
    return th_pg_int(fx_store_url, sql);
}

static void long_lease(fx *f)
{
    OK(f->a, sy_store_renew(f->a, "h1", 100000, NOW, NULL, NULL));
}

/* The first take writes the row and its bound; takes and give-backs
 * within both then leave it; past the bound, a give-back sent alone or
 * a grant made again, the count is written exactly. */
static void test_within_grant_not_written(void **state)
{
    fx *f = *state;
    long_lease(f);
    int64_t e = f->h1.epoch;
    assert_true(take(f->a, "h1", take_of(f->run, 1, 0, e), false));
    assert_int_equal(row("h1", "held"), 1);
    assert_int_equal(row("h1", "granted"), 250); /* 1 and an extra of 249 */
    assert_int_equal(row("h1", "ahead"), 64);
    assert_true(take(f->a, "h1", take_of(f->run, 60, 1, e), false));
    assert_true(take(f->a, "h1", take_of(f->run, 3, 2, e), false));
    assert_int_equal(row("h1", "held"), 1);
    /* Another host counts the grant, which covers the 64 held. */
    assert_int_equal(fx_room(f->b, KEY, LIMIT, NOW), 250);
    /* Past the bound (65 over the row's 1): written. */
    assert_true(take(f->a, "h1", take_of(f->run, 2, 3, e), false));
    assert_int_equal(row("h1", "held"), 66);
    assert_int_equal(row("h1", "ahead"), 64);
    /* A give-back carried by a take, within the grant: not written. */
    sy_slot_take back = take_of(f->run, 60, 1, e), one = take_of(f->run, 1, 4, e);
    sy_slot_claim c = {KEY, LIMIT, 1};
    int64_t held = -2;
    bool done = false;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &back, 1));
    OK(f->a, sy_store_slot_room_as(f->a, "h1", &c, 1, NOW, &held));
    OK(f->a, sy_store_put_slots(f->a, "h1", &one, 1, NOW, &done));
    OK(f->a, sy_store_commit(f->a));
    assert_true(done);
    assert_int_equal(row("h1", "held"), 66);
    /* A give-back alone, at the commit: not written either. */
    give_back(f->a, "h1", one);
    assert_int_equal(row("h1", "held"), 66);
    /* More than the grant leaves (250 - 6): made again from the count
     * written exactly first, 6 + 300. */
    assert_true(take(f->a, "h1", take_of(f->run, 300, 5, e), false));
    assert_int_equal(row("h1", "held"), 306);
    /* Its bound: 4 times the take, no more than the grant leaves. */
    assert_int_equal(row("h1", "ahead"), row("h1", "granted") - 306);
}

/* A batch rolled back leaves what was not written as it was. */
static void test_rolled_back_not_kept(void **state)
{
    fx *f = *state;
    long_lease(f);
    int64_t e = f->h1.epoch;
    sy_slot_take first = take_of(f->run, 1, 0, e);
    assert_true(take(f->a, "h1", first, false));
    assert_true(take(f->a, "h1", take_of(f->run, 20, 2, e), false));
    assert_true(take(f->a, "h1", take_of(f->run, 10, 1, e), true)); /* rolled back */
    give_back(f->a, "h1", first);
    assert_int_equal(row("h1", "held"), 1);
    /* Written with a grant made again: 1 + 20 - 1 + 300, not with the
     * 10 rolled back. */
    assert_true(take(f->a, "h1", take_of(f->run, 300, 3, e), false));
    assert_int_equal(row("h1", "held"), 320);
}

/* A grant taken back keeps its holder's bound: the takes it did not
 * write are inside it, so the key never holds more than its limit. */
static void test_taken_back_keeps_bound(void **state)
{
    fx *f = *state;
    long_lease(f);
    int64_t run2 = 0, e2 = fx_run_of_h2(f, 100000, &run2);
    int64_t e = f->h1.epoch;
    assert_true(take(f->a, "h1", take_of(f->run, 1, 0, e), false));
    assert_true(take(f->a, "h1", take_of(f->run, 60, 1, e), false)); /* 61 held, 1 written */
    assert_int_equal(row("h1", "held"), 1);
    /* h2 takes all the room it can find: h1's grant goes back to 65. */
    int64_t seen = read_as(f->b, "h2", 935, true);
    sy_store_rollback(f->b);
    assert_int_equal(seen, 65);
    sy_slot_take big = {KEY, LIMIT, 935, {run2, 0, 0, 1}, e2, "public"};
    assert_true(take(f->b, "h2", big, false));
    assert_int_equal(row("h1", "granted"), 65);
    /* h1 has 4 left in it, and the key no more beyond. */
    assert_true(take(f->a, "h1", take_of(f->run, 4, 2, e), false));
    assert_false(take(f->a, "h1", take_of(f->run, 1, 3, e), false));
    assert_int_equal(row("h1", "held"), 65);
    /* Every holder counted: exactly the limit. */
    assert_int_equal(th_pg_int(fx_store_url, "SELECT sum(n) FROM slot_holders"), LIMIT);
}

/* With a waiter on the key, a take within the grant is written whole,
 * with no bound and no extra. */
static void test_waiter_has_it_written(void **state)
{
    fx *f = *state;
    long_lease(f);
    int64_t run2 = 0, e2 = fx_run_of_h2(f, 100000, &run2);
    int64_t e = f->h1.epoch;
    assert_true(take(f->a, "h1", take_of(f->run, 1, 0, e), false));
    assert_true(take(f->a, "h1", take_of(f->run, 5, 1, e), false));
    assert_int_equal(row("h1", "held"), 1);
    sy_store_fence h2 = {"h2", e2};
    sy_slot_waiter w = {KEY, {run2, 0, 0, 0}, "public", 0, NOW, 1, NULL, false};
    OK(f->b, sy_store_begin(f->b));
    OK(f->b, sy_store_wait_slot(f->b, &h2, &w));
    OK(f->b, sy_store_commit(f->b));
    assert_true(take(f->a, "h1", take_of(f->run, 1, 2, e), false));
    assert_int_equal(row("h1", "held"), 7);
    assert_int_equal(row("h1", "ahead"), 0);
    assert_int_equal(row("h1", "granted"), 7);
}

/* A batch whose takes went unwritten (the quick statement), its
 * connection cut before the commit: replayed on a new one, it leaves
 * the same slots unwritten, once. */
static void test_replayed_not_written(void **state)
{
    fx *f = *state;
    long_lease(f);
    int64_t e = f->h1.epoch;
    assert_true(take(f->a, "h1", take_of(f->run, 1, 0, e), false));
    assert_true(take(f->a, "h1", take_of(f->run, 5, 1, e), false));
    assert_int_equal(read_as(f->a, "h1", 7, true), LIMIT - (250 - 6)); /* the grant's free */
    sy_slot_take t = take_of(f->run, 7, 2, e);
    bool done = false;
    OK(f->a, sy_store_put_slots(f->a, "h1", &t, 1, NOW, &done));
    assert_true(done);
    th_pg_exec(fx_store_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                             " WHERE pid <> pg_backend_pid() AND datname = current_database()");
    usleep(100 * 1000); /* the ended sessions' locks go with their processes */
    sy_slot_claim c = {KEY, LIMIT, 1};
    int64_t held = -2;
    OK(f->a, sy_store_slot_room_as(f->a, "h1", &c, 1, NOW, &held)); /* replays first */
    assert_int_equal(held, LIMIT - (250 - 13));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(row("h1", "held"), 1);
    /* Past the bound: written whole, the 12 not written counted once. */
    assert_true(take(f->a, "h1", take_of(f->run, 60, 3, e), false));
    assert_int_equal(row("h1", "held"), 73);
}

#endif

int main(void)
{
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        {"test_within_grant_not_written (postgresql)", test_within_grant_not_written,
         fx_setup_pg, fx_teardown, NULL},
        {"test_rolled_back_not_kept (postgresql)", test_rolled_back_not_kept, fx_setup_pg,
         fx_teardown, NULL},
        {"test_taken_back_keeps_bound (postgresql)", test_taken_back_keeps_bound, fx_setup_pg,
         fx_teardown, NULL},
        {"test_waiter_has_it_written (postgresql)", test_waiter_has_it_written, fx_setup_pg,
         fx_teardown, NULL},
        {"test_replayed_not_written (postgresql)", test_replayed_not_written, fx_setup_pg,
         fx_teardown, NULL},
    };
    return fx_run_groups("store_slot_unwritten", NULL, 0, pg, 5);
#else
    printf("1..0 # SKIP built without libpq\n");
    return 0;
#endif
}
