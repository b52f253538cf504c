/* Flow-control slots held in the store (store/slots.h): a key's limit is
 * never exceeded, a task takes all its keys or none, slots come back when
 * the attempt returns them, when the holder's lease ends and when another
 * host claims the run (never twice), and a key another host's open batch
 * is taking counts as full without waiting.  Each test runs on SQLite,
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
#include "store/slots.h"
#include "fixture.h"

#define NOW 100 /* inside h1's lease (claimed at 10 until 1000) */

static sy_slot_holder elem(const fx *f, int64_t e)
{
    return (sy_slot_holder){f->run, 0, e, 1};
}

/* Takes `n` claims for holder h on handle s in a batch of its own;
 * whether they were taken, and which was full. */
static bool take(sy_store *s, const sy_store_fence *fence, sy_slot_holder h,
                 const sy_slot_claim *c, size_t n, int64_t now, size_t *full, int64_t *held)
{
    bool taken = false;
    size_t f = 99;
    int64_t used = -2;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_take_slots(s, fence, &h, c, n, now, &taken, &f, &used));
    OK(s, sy_store_commit(s));
    if (full)
        *full = f;
    if (held)
        *held = used;
    return taken;
}

static void give_back(sy_store *s, sy_slot_holder h)
{
    OK(s, sy_store_begin(s));
    OK(s, sy_store_return_slots(s, &h, 1));
    OK(s, sy_store_commit(s));
}

typedef struct { const char *key; int64_t live, dead; } count_arg;

static int count_key(void *arg, const sy_slot_record *r)
{
    count_arg *c = arg;
    if (strcmp(r->key, c->key) == 0) {
        if (r->live)
            c->live += r->n;
        else
            c->dead += r->n;
    }
    return 0;
}

static int64_t live(sy_store *s, const char *key, int64_t now, int64_t *dead)
{
    count_arg c = {key, 0, 0};
    OK(s, sy_store_list_slots(s, now, count_key, &c));
    if (dead)
        *dead = c.dead;
    return c.live;
}

static void test_limit_held_and_returned(void **state)
{
    fx *f = *state;
    sy_slot_claim c = {"db:acme", 2, 1};
    size_t full;
    int64_t held;
    assert_true(take(f->a, &f->h1, elem(f, 0), &c, 1, NOW, NULL, NULL));
    /* The other host sees the first's holder: one left. */
    assert_true(take(f->b, &f->h1, elem(f, 1), &c, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, elem(f, 2), &c, 1, NOW, &full, &held));
    assert_true(full == 0 && held == 2);
    assert_int_equal(live(f->a, "db:acme", NOW, NULL), 2);
    /* Another key is its own. */
    sy_slot_claim other = {"db:globex", 2, 1};
    assert_true(take(f->a, &f->h1, elem(f, 2), &other, 1, NOW, NULL, NULL));
    /* The attempt ends: its slot is back, and only its. */
    give_back(f->a, elem(f, 0));
    assert_int_equal(live(f->a, "db:acme", NOW, NULL), 1);
    assert_true(take(f->b, &f->h1, elem(f, 3), &c, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, elem(f, 4), &c, 1, NOW, NULL, NULL));
    /* A return for an attempt that holds nothing changes nothing. */
    give_back(f->a, (sy_slot_holder){f->run, 1, -1, 7});
    assert_int_equal(live(f->a, "db:acme", NOW, NULL), 2);
}

static void test_all_or_none(void **state)
{
    fx *f = *state;
    sy_slot_claim one = {"api", 1, 1};
    assert_true(take(f->a, &f->h1, elem(f, 0), &one, 1, NOW, NULL, NULL));
    sy_slot_claim both[] = {{"pool:db", 5, 1}, {"api", 1, 1}};
    size_t full = 99;
    int64_t held = -2;
    assert_false(take(f->a, &f->h1, elem(f, 1), both, 2, NOW, &full, &held));
    assert_true(full == 1 && held == 1);
    /* The pool's key was not taken either. */
    assert_int_equal(live(f->a, "pool:db", NOW, NULL), 0);
    give_back(f->a, elem(f, 0));
    assert_true(take(f->a, &f->h1, elem(f, 1), both, 2, NOW, NULL, NULL));
    assert_int_equal(live(f->a, "pool:db", NOW, NULL), 1);
    assert_int_equal(live(f->a, "api", NOW, NULL), 1);
}

static void test_pool_slots_counted(void **state)
{
    fx *f = *state;
    sy_slot_claim three = {"pool:gpu", 4, 3}, two = {"pool:gpu", 4, 2};
    sy_slot_claim one = {"pool:gpu", 4, 1};
    assert_true(take(f->a, &f->h1, elem(f, 0), &three, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, elem(f, 1), &two, 1, NOW, NULL, NULL));
    assert_true(take(f->b, &f->h1, elem(f, 1), &one, 1, NOW, NULL, NULL));
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 4);
    /* A pool made larger by a reload: the next take sees the new size. */
    sy_slot_claim bigger = {"pool:gpu", 6, 2};
    assert_true(take(f->a, &f->h1, elem(f, 2), &bigger, 1, NOW, NULL, NULL));
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 6);
}

static void test_lease_end_returns_once(void **state)
{
    fx *f = *state;
    sy_slot_claim c = {"db:acme", 1, 1};
    assert_true(take(f->a, &f->h1, elem(f, 0), &c, 1, NOW, NULL, NULL));
    /* While h1's lease holds (until 1000), the slot is held. */
    assert_false(take(f->b, &f->h1, elem(f, 1), &c, 1, 999, NULL, NULL));
    /* h1 died: at its lease's end the slot counts for nothing. */
    int64_t dead = 0;
    assert_int_equal(live(f->b, "db:acme", 1000, &dead), 0);
    assert_int_equal(dead, 1);
    /* h2 claims the run: a new epoch, and the old holder can never count
     * again, even under a lease that holds. */
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 1001, NULL, 0, &got));
    assert_true(got);
    sy_store_fence h2 = {"h2", fx_epoch(f->b, f->run)};
    assert_int_equal(live(f->b, "db:acme", 1500, NULL), 0);
    assert_true(take(f->b, &h2, elem(f, 1), &c, 1, 1500, NULL, NULL));
    assert_false(take(f->b, &h2, elem(f, 2), &c, 1, 1500, NULL, NULL));
    /* A holder taken under a claim that no longer holds counts for
     * nothing (its attempt's start was refused in the same batch). */
    assert_true(take(f->a, &f->h1, elem(f, 3), &(sy_slot_claim){"db:x", 1, 1}, 1, 1500,
                     NULL, NULL));
    assert_int_equal(live(f->a, "db:x", 1500, NULL), 0);
    /* Reaping deletes the dead rows only. */
    size_t n = 0;
    OK(f->a, sy_store_reap_slots(f->a, 1500, &n));
    assert_int_equal(n, 2);
    assert_int_equal(live(f->a, "db:acme", 1500, &dead), 1);
    assert_int_equal(dead, 0);
}

static void test_run_returns_all(void **state)
{
    fx *f = *state;
    sy_slot_claim c[] = {{"a", 3, 1}, {"b", 3, 1}};
    assert_true(take(f->a, &f->h1, elem(f, 0), c, 2, NOW, NULL, NULL));
    assert_true(take(f->a, &f->h1, (sy_slot_holder){f->run, 1, -1, 4}, c, 2, NOW, NULL, NULL));
    assert_int_equal(live(f->a, "a", NOW, NULL), 2);
    give_back(f->a, (sy_slot_holder){f->run, 0, -1, 0});
    assert_int_equal(live(f->a, "a", NOW, NULL), 0);
    assert_int_equal(live(f->a, "b", NOW, NULL), 0);
}

static void test_bad_arguments(void **state)
{
    fx *f = *state;
    bool taken;
    size_t full;
    int64_t held;
    sy_slot_holder h = elem(f, 0);
    sy_slot_claim twice[] = {{"k", 1, 1}, {"k", 2, 1}};
    sy_slot_claim zero = {"k", 0, 1};
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_take_slots(f->a, &f->h1, &h, twice, 2, NOW, &taken, &full, &held),
                     SY_EINVAL);
    assert_int_equal(sy_store_take_slots(f->a, &f->h1, &h, &zero, 1, NOW, &taken, &full, &held),
                     SY_EINVAL);
    assert_int_equal(sy_store_take_slots(f->a, NULL, &h, twice, 1, NOW, &taken, &full, &held),
                     SY_EINVAL);
    OK(f->a, sy_store_commit(f->a));
    /* Outside a batch: refused, nothing taken. */
    assert_int_equal(sy_store_take_slots(f->a, &f->h1, &h, twice, 1, NOW, &taken, &full, &held),
                     SY_ESTATE);
    assert_int_equal(live(f->a, "k", NOW, NULL), 0);
}

/* The other host's open batch is taking the key: full for this turn, at
 * once (no wait); once it commits, its holder is counted. */
static void test_key_being_taken(void **state)
{
    fx *f = *state;
    sy_slot_claim c = {"db:acme", 2, 1};
    bool taken = false;
    size_t full = 99;
    int64_t held = 0;
    sy_slot_holder h0 = elem(f, 0);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_take_slots(f->a, &f->h1, &h0, &c, 1, NOW, &taken, &full, &held));
    assert_true(taken);
    assert_false(take(f->b, &f->h1, elem(f, 1), &c, 1, NOW, &full, &held));
    assert_true(full == 0 && held == -1);
    OK(f->a, sy_store_commit(f->a));
    assert_true(take(f->b, &f->h1, elem(f, 1), &c, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, elem(f, 2), &c, 1, NOW, &full, &held));
    assert_true(held == 2);
}

/* A take reads the key's counters (what its rows hold, live or not) and
 * counts the live holders only when the counters leave no room: the
 * rows of a dead host are counted there until reaped, yet never keep a
 * slot from the host that took its run over, and never let a key go
 * over its limit. */
static void test_counters_dead_host(void **state)
{
    fx *f = *state;
    sy_slot_claim c = {"db:acme", 2, 1};
    size_t full;
    int64_t held;
    assert_true(take(f->a, &f->h1, elem(f, 0), &c, 1, NOW, NULL, NULL));
    assert_true(take(f->a, &f->h1, elem(f, 1), &c, 1, NOW, NULL, NULL));
    /* h1 dies; h2 takes its run over and takes the key's two slots. */
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 1001, NULL, 0, &got));
    assert_true(got);
    sy_store_fence h2 = {"h2", fx_epoch(f->b, f->run)};
    assert_true(take(f->b, &h2, elem(f, 2), &c, 1, 1500, NULL, NULL));
    assert_true(take(f->b, &h2, elem(f, 3), &c, 1, 1500, NULL, NULL));
    assert_false(take(f->b, &h2, elem(f, 4), &c, 1, 1500, &full, &held));
    assert_true(full == 0 && held == 2);
    /* Reaped, the dead rows leave the counters too: room again only when
     * h2 gives one back, and one slot of it. */
    size_t n = 0;
    OK(f->a, sy_store_reap_slots(f->a, 1500, &n));
    assert_int_equal(n, 2);
    assert_false(take(f->a, &h2, elem(f, 4), &c, 1, 1500, NULL, &held));
    assert_int_equal(held, 2);
    give_back(f->b, elem(f, 2));
    assert_true(take(f->a, &h2, elem(f, 4), &c, 1, 1500, NULL, NULL));
    assert_false(take(f->a, &h2, elem(f, 5), &c, 1, 1500, NULL, &held));
    assert_int_equal(held, 2);
    /* Every slot of the run given back at once: the whole limit free. */
    give_back(f->b, (sy_slot_holder){f->run, 0, -1, 0});
    assert_int_equal(live(f->a, "db:acme", 1500, NULL), 0);
    assert_true(take(f->a, &h2, elem(f, 6), &c, 1, 1500, NULL, NULL));
    assert_true(take(f->b, &h2, elem(f, 7), &c, 1, 1500, NULL, NULL));
    assert_false(take(f->b, &h2, elem(f, 8), &c, 1, 1500, NULL, NULL));
}

/* A pool's size changed by reload while its slots are held: smaller, no
 * take until the holders are under it; larger, the new room at once. */
static void test_counters_pool_resized(void **state)
{
    fx *f = *state;
    for (int e = 0; e < 4; e++)
        assert_true(take(f->a, &f->h1, elem(f, e), &(sy_slot_claim){"pool:gpu", 4, 1}, 1, NOW,
                         NULL, NULL));
    sy_slot_claim small = {"pool:gpu", 2, 1};
    int64_t held;
    assert_false(take(f->b, &f->h1, elem(f, 4), &small, 1, NOW, NULL, &held));
    assert_int_equal(held, 4);
    give_back(f->a, elem(f, 0));
    give_back(f->a, elem(f, 1));
    assert_false(take(f->b, &f->h1, elem(f, 4), &small, 1, NOW, NULL, NULL));
    give_back(f->a, elem(f, 2));
    assert_true(take(f->b, &f->h1, elem(f, 4), &small, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, elem(f, 5), &small, 1, NOW, NULL, NULL));
    sy_slot_claim big = {"pool:gpu", 6, 2};
    assert_true(take(f->a, &f->h1, elem(f, 5), &big, 1, NOW, NULL, NULL));
    assert_true(take(f->b, &f->h1, elem(f, 6), &big, 1, NOW, NULL, NULL));
    assert_false(take(f->b, &f->h1, elem(f, 7), &(sy_slot_claim){"pool:gpu", 6, 1}, 1, NOW,
                          NULL, &held));
    assert_int_equal(held, 6);
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 6);
}

#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
    const struct CMUnitTest sqlite[] = {
        BOTH(test_limit_held_and_returned), BOTH(test_all_or_none),
        BOTH(test_pool_slots_counted),      BOTH(test_lease_end_returns_once),
        BOTH(test_run_returns_all),         BOTH(test_bad_arguments),
        BOTH(test_counters_dead_host),      BOTH(test_counters_pool_resized),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_limit_held_and_returned), PG(test_all_or_none),
        PG(test_pool_slots_counted),      PG(test_lease_end_returns_once),
        PG(test_run_returns_all),         PG(test_bad_arguments),
        PG(test_key_being_taken),           PG(test_counters_dead_host),
        PG(test_counters_pool_resized),
    };
    return fx_run_groups("store_slots", sqlite, SY_ARRAY_LEN(sqlite), pg, SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_slots", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
