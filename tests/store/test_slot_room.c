/* A turn's slots in two steps (store/slots.h): sy_store_slot_room reads
 * what each key holds (its counters, or its live holders counted when
 * the counters leave no room), sy_store_put_slots writes the takes
 * decided against that, and sy_store_return_takes gives them back by
 * key, never twice.  On PostgreSQL a key another host's batch has read
 * is busy (-1) without a wait, and a put that would exceed a key's
 * limit writes nothing.  SQLite first, then PostgreSQL on a throwaway
 * server when this build has libpq (two handles standing for two
 * hosts). */
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

static sy_slot_take take_of(const fx *f, const char *key, int64_t limit, int64_t n,
                            int64_t elem, const sy_store_fence *fence)
{
    return (sy_slot_take){key, limit, n, {f->run, 0, elem, 1}, fence->epoch, NULL};
}

/* What key's counters or live holders say, in a batch of its own. */
static int64_t room(sy_store *s, const char *key, int64_t limit, int64_t n, int64_t now)
{
    sy_slot_claim c = {key, limit, n};
    int64_t held = -2;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_slot_room(s, &c, 1, now, &held));
    OK(s, sy_store_commit(s));
    return held;
}

static bool put(sy_store *s, const char *owner, const sy_slot_take *t, size_t n, int64_t now)
{
    bool done = false;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_put_slots(s, owner, t, n, now, &done));
    OK(s, sy_store_commit(s));
    return done;
}

static void give_back(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    OK(s, sy_store_begin(s));
    OK(s, sy_store_return_takes(s, owner, t, n));
    OK(s, sy_store_commit(s));
}

typedef struct { const char *key; int64_t live, rows; } count_arg;

static int count_key(void *arg, const sy_slot_record *r)
{
    count_arg *c = arg;
    if (strcmp(r->key, c->key) == 0) {
        c->rows++;
        if (r->live)
            c->live += r->n;
    }
    return 0;
}

static int64_t live(sy_store *s, const char *key, int64_t now, int64_t *rows)
{
    count_arg c = {key, 0, 0};
    OK(s, sy_store_list_slots(s, now, count_key, &c));
    if (rows)
        *rows = c.rows;
    return c.live;
}

/* Takes written together, counted, given back by key once. */
static void test_put_and_return(void **state)
{
    fx *f = *state;
    assert_int_equal(room(f->a, "pool:gpu", 4, 1, NOW), 0);
    sy_slot_take t[] = {take_of(f, "pool:gpu", 4, 1, 0, &f->h1),
                        take_of(f, "pool:gpu", 4, 2, 1, &f->h1),
                        take_of(f, "db:acme", 2, 1, 0, &f->h1)};
    assert_true(put(f->a, "h1", t, 3, NOW));
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 3);
    assert_int_equal(live(f->a, "db:acme", NOW, NULL), 1);
    /* Read back through the counters, by the other host too. */
    assert_int_equal(room(f->b, "pool:gpu", 4, 1, NOW), 3);
    assert_int_equal(room(f->b, "db:acme", 2, 1, NOW), 1);
    give_back(f->a, "h1", &t[1], 1);
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 1);
    assert_int_equal(room(f->b, "pool:gpu", 4, 1, NOW), 1);
    /* Another owner's name gives back nothing. */
    give_back(f->a, "h2", &t[0], 1);
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 1);
    sy_slot_take rest[] = {t[0], t[2]};
    give_back(f->a, "h1", rest, 2);
    assert_int_equal(live(f->a, "pool:gpu", NOW, NULL), 0);
    assert_int_equal(room(f->b, "pool:gpu", 4, 1, NOW), 0);
    assert_int_equal(room(f->b, "db:acme", 2, 1, NOW), 0);
}

/* A dead host's takes hold nothing for the host that took its run over,
 * whether the counts leave room or not. */
static void test_room_counts_when_full(void **state)
{
    fx *f = *state;
    sy_slot_take t[] = {take_of(f, "db:acme", 2, 1, 0, &f->h1),
                        take_of(f, "db:acme", 2, 1, 1, &f->h1)};
    assert_true(put(f->a, "h1", t, 2, NOW));
    assert_int_equal(room(f->a, "db:acme", 2, 1, NOW), 2);
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 1001, NULL, 0, &got));
    assert_true(got);
    /* The counters say 2 of 2: the live count says 0. */
    assert_int_equal(room(f->b, "db:acme", 2, 1, 1500), 0);
    /* With room by the counts, what they say: the counts of both stores
     * are per run, under the claim that took them, so exact. */
    assert_int_equal(room(f->b, "db:acme", 5, 1, 1500), 0);
    int64_t rows = 0;
    assert_int_equal(live(f->b, "db:acme", 1500, &rows), 0);
    assert_int_equal(rows, 2);
}

static void test_bad_arguments(void **state)
{
    fx *f = *state;
    int64_t held;
    bool done;
    sy_slot_claim zero = {"k", 0, 1}, empty = {"", 1, 1};
    sy_slot_take t = take_of(f, "k", 1, 1, 0, &f->h1), no_token = t;
    no_token.holder.token = 0;
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_slot_room(f->a, &zero, 1, NOW, &held), SY_EINVAL);
    assert_int_equal(sy_store_slot_room(f->a, &empty, 1, NOW, &held), SY_EINVAL);
    assert_int_equal(sy_store_put_slots(f->a, "h1", &no_token, 1, NOW, &done), SY_EINVAL);
    assert_int_equal(sy_store_put_slots(f->a, NULL, &t, 1, NOW, &done), SY_EINVAL);
    assert_int_equal(sy_store_return_takes(f->a, NULL, &t, 1), SY_EINVAL);
    OK(f->a, sy_store_commit(f->a));
    /* Outside a batch: refused, nothing written. */
    assert_int_equal(sy_store_slot_room(f->a, &(sy_slot_claim){"k", 1, 1}, 1, NOW, &held),
                     SY_ESTATE);
    assert_int_equal(sy_store_put_slots(f->a, "h1", &t, 1, NOW, &done), SY_ESTATE);
    assert_int_equal(sy_store_return_takes(f->a, "h1", &t, 1), SY_ESTATE);
    assert_int_equal(live(f->a, "k", NOW, NULL), 0);
}

#ifdef SY_HAVE_LIBPQ
/* The other host's open batch read the key: busy for this one, at once;
 * once it commits, its takes are counted. */
static void test_room_busy(void **state)
{
    fx *f = *state;
    sy_slot_claim c = {"db:acme", 2, 1};
    int64_t held = -2;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_slot_room(f->a, &c, 1, NOW, &held));
    assert_int_equal(held, 0);
    sy_slot_take t = take_of(f, "db:acme", 2, 1, 0, &f->h1);
    bool done = false;
    OK(f->a, sy_store_put_slots(f->a, "h1", &t, 1, NOW, &done));
    assert_true(done);
    assert_int_equal(room(f->b, "db:acme", 2, 1, NOW), -1);
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(room(f->b, "db:acme", 2, 1, NOW), 1);
}

/* A put that would take a key over the largest limit its takes name
 * writes nothing (a batch replayed after others took the key). */
static void test_put_over_limit(void **state)
{
    fx *f = *state;
    sy_slot_take t[] = {take_of(f, "db:acme", 2, 1, 0, &f->h1),
                        take_of(f, "db:acme", 2, 1, 1, &f->h1),
                        take_of(f, "db:acme", 3, 1, 2, &f->h1),
                        take_of(f, "db:acme", 3, 1, 3, &f->h1)};
    assert_true(put(f->a, "h1", t, 2, NOW));
    assert_false(put(f->b, "h1", &t[2], 2, NOW));
    assert_int_equal(live(f->a, "db:acme", NOW, NULL), 2);
    assert_int_equal(room(f->b, "db:acme", 3, 1, NOW), 2);
    assert_true(put(f->b, "h1", &t[2], 1, NOW));
    assert_int_equal(live(f->a, "db:acme", NOW, NULL), 3);
}
#endif

#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
    const struct CMUnitTest sqlite[] = {
        BOTH(test_put_and_return),
        BOTH(test_room_counts_when_full),
        BOTH(test_bad_arguments),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_put_and_return), PG(test_room_counts_when_full), PG(test_bad_arguments),
        PG(test_room_busy),      PG(test_put_over_limit),
    };
    return fx_run_groups("store_slot_room", sqlite, SY_ARRAY_LEN(sqlite), pg,
                         SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_slot_room", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
