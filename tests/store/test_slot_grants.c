/* Slots granted to a host ahead (store/slots.h, sy_store_slot_room_as;
 * store/postgres/grants.c): a host reading a key for its turn is granted
 * what the turn may take and, while the key has plenty of room, an
 * extra for its next turns; every other host counts the grant as held,
 * so grants and holders together never pass the limit; a host takes
 * within its grant under the key's lock in shared mode, which another
 * host's grant being made (exclusive) makes busy; a grant left unused
 * is taken back by a host that needs the room; a grant ends with its
 * host's leases and is renewed with them.  PostgreSQL on a throwaway
 * server (two handles standing for two hosts, "h1" and "h2", each
 * holding a run); on SQLite, whose batch holds the write lock, the
 * owner changes nothing. */
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
#include "store/postgres/internal.h"
#endif
#include "base/util.h"
#include "store/slots.h"
#include "store/waiters.h"
#include "fixture.h"

#define NOW 100  /* inside both leases (claimed at 10 until 1000) */
#define KEY "pool:p"

/* What `owner` reads of KEY (limit, n) in a batch of its own, or with
 * `keep` in the batch left open. */
static int64_t read_as(sy_store *s, const char *owner, int64_t limit, int64_t n, int64_t now,
                       bool keep)
{
    sy_slot_claim c = {KEY, limit, n};
    int64_t held = -2;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_slot_room_as(s, owner, &c, 1, now, &held));
    if (!keep)
        OK(s, sy_store_commit(s));
    return held;
}

/* What KEY holds (limit) for no host in particular, read by handle s in
 * a batch of its own at `now`: every host's holders and grants. */
static int64_t read_all(sy_store *s, int64_t limit, int64_t now)
{
    return fx_room(s, KEY, limit, now);
}

static sy_slot_take take_of(int64_t run, int64_t limit, int64_t n, int64_t elem,
                            int64_t epoch)
{
    return (sy_slot_take){KEY, limit, n, {run, 0, elem, 1}, epoch, NULL};
}

/* Puts t in the open batch and commits; whether it was written. */
static bool put_and_commit(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                           int64_t now)
{
    bool done = false;
    OK(s, sy_store_put_slots(s, owner, t, n, now, &done));
    OK(s, sy_store_commit(s));
    return done;
}

/* Both hosts' leases renewed to 100000: a grant is taken within only
 * while its host's lease has 5 s left (store/postgres/grants.c). */
static void long_leases(fx *f)
{
    OK(f->a, sy_store_renew(f->a, "h1", 100000, NOW, NULL, NULL));
    OK(f->b, sy_store_renew(f->b, "h2", 100000, NOW, NULL, NULL));
}

static bool on_pg(void)
{
    return strncmp(fx_store_url, "postgres", 8) == 0;
}

/* A grant counts as held for the other host; the holder's takes stay
 * within it; what is given back is free in the grant again. */
static void test_grant_counted_by_others(void **state)
{
    fx *f = *state;
    int64_t run2 = 0, e2 = fx_run_of_h2(f, 1000, &run2);
    long_leases(f);
    /* h1 may take 1 of 1000: granted 1 and, the key empty, an extra of
     * min(max(4 * 1, 1024), (1000 - 1) / 4) = 249. */
    int64_t h1 = read_as(f->a, "h1", 1000, 1, NOW, true);
    assert_int_equal(h1, on_pg() ? 1000 - 250 : 0);
    sy_slot_take t = take_of(f->run, 1000, 1, 0, f->h1.epoch);
    assert_true(put_and_commit(f->a, "h1", &t, 1, NOW));
    /* Read by another host (or none): h1's grant, not its one take. */
    assert_int_equal(read_all(f->b, 1000, NOW), on_pg() ? 250 : 1);
    /* h2 may take 700: 750 are free beside h1's grant. */
    int64_t h2 = read_as(f->b, "h2", 1000, 700, NOW, true);
    assert_true(h2 >= 0 && h2 + 700 <= 1000);
    sy_slot_take big = {KEY, 1000, 700, {run2, 0, 0, 1}, e2, NULL};
    assert_true(put_and_commit(f->b, "h2", &big, 1, NOW));
    if (!on_pg())
        return;
    /* Past its grant, a take counts every other host: 1 + 300 held by
     * h1 and 700 by h2 would pass the limit (a batch replayed after h2
     * took the rest fails). */
    sy_slot_take over = take_of(f->run, 1000, 300, 1, f->h1.epoch);
    OK(f->a, sy_store_begin(f->a));
    assert_false(put_and_commit(f->a, "h1", &over, 1, NOW));
    /* Given back: free in h1's grant again, which keeps no more than
     * its extra (249) beyond what h1 holds (0 now); read within it. */
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &t, 1));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(read_as(f->a, "h1", 1000, 1, NOW, false), 1000 - 249);
}

/* Within a grant, the key's slots' lock is taken shared; making or
 * raising a grant takes the key's grants' lock exclusive, which takes
 * within a grant do not take: a host is granted while another takes
 * within its own, and a second host making a grant at the same moment
 * finds the key busy. */
static void test_grant_locks(void **state)
{
    fx *f = *state;
    int64_t run2 = 0;
    fx_run_of_h2(f, 1000, &run2);
    long_leases(f);
    /* Granted 1 and an extra of 249; at the commit, as nothing was
     * taken, no more than the extra beyond what h1 holds: 249. */
    assert_int_equal(read_as(f->a, "h1", 1000, 1, NOW, false), 1000 - 250);
    /* h1 reads within its grant (shared) and stays in its batch. */
    assert_int_equal(read_as(f->a, "h1", 1000, 1, NOW, true), 1000 - 249);
    /* h2 has no grant: it is granted 1 and an extra of (751 - 1) / 4,
     * h1's grant counted, while h1 takes within its own. */
    assert_int_equal(read_as(f->b, "h2", 1000, 1, NOW, true), 1000 - 1 - 187);
    OK(f->a, sy_store_commit(f->a));
    /* h2 holds the grants' lock in its open batch: h1 still takes within
     * its grant, and finds the key busy only to raise it. */
    assert_int_equal(read_as(f->a, "h1", 1000, 1, NOW, false), 1000 - 249);
    assert_int_equal(read_as(f->a, "h1", 1000, 300, NOW, false), -1);
    OK(f->b, sy_store_commit(f->b));
    assert_true(read_as(f->a, "h1", 1000, 300, NOW, false) >= 0);
}

/* Taking a grant back counts the other hosts' holders: it needs the
 * key's slots' lock exclusive too, which a host taking within its grant
 * shares.  h2 needs all of a key of 300 while h1 takes within its grant
 * of 74: h2 finds the key too full (not busy), and takes the grant back
 * once h1's batch is over. */
static void test_grant_take_back_locks(void **state)
{
    fx *f = *state;
    int64_t run2 = 0;
    fx_run_of_h2(f, 1000, &run2);
    long_leases(f);
    assert_int_equal(read_as(f->a, "h1", 300, 1, NOW, false), 300 - 75);
    assert_int_equal(read_as(f->a, "h1", 300, 1, NOW, true), 300 - 74);
    /* 226 free beside h1's grant: what h2's grant can have, not 300. */
    assert_int_equal(read_as(f->b, "h2", 300, 300, NOW, false), 74);
    OK(f->a, sy_store_commit(f->a));
    /* Now h1's unused grant is taken back: all 300 for h2. */
    assert_int_equal(read_as(f->b, "h2", 300, 300, NOW, false), 0);
}

/* A grant made for a turn that took nothing (its tasks were behind
 * another host's waiter) is taken back by the host that needs the room:
 * on a key of 1, h1's grant of the only slot goes to h2. */
static void test_grant_taken_back(void **state)
{
    fx *f = *state;
    int64_t run2 = 0, e2 = fx_run_of_h2(f, 1000, &run2);
    assert_int_equal(read_as(f->a, "h1", 1, 1, NOW, false), 0); /* granted 1 */
    int64_t held = read_as(f->b, "h2", 1, 1, NOW, true);
    assert_int_equal(held, 0);
    sy_slot_take t = {KEY, 1, 1, {run2, 0, 0, 1}, e2, NULL};
    assert_true(put_and_commit(f->b, "h2", &t, 1, NOW));
    /* h1's grant is gone: the key is h2's. */
    assert_int_equal(read_as(f->a, "h1", 1, 1, NOW, false), 1);
    sy_slot_take mine = take_of(f->run, 1, 1, 0, f->h1.epoch);
    OK(f->a, sy_store_begin(f->a));
    assert_false(put_and_commit(f->a, "h1", &mine, 1, NOW));
}

/* Slots given back are free again for a read and a take in the same
 * batch: on PostgreSQL the give-back waits for the batch's take and goes
 * with it, one write of the key's row (store/postgres/slots.c), and a
 * give-back no take carries goes at the commit. */
static void test_given_back_then_taken(void **state)
{
    fx *f = *state;
    long_leases(f);
    /* Limit 2, both held by h1 (no extra: too little room). */
    int64_t held = read_as(f->a, "h1", 2, 2, NOW, true);
    assert_int_equal(held, 0);
    sy_slot_take two[] = {take_of(f->run, 2, 1, 0, f->h1.epoch),
                          take_of(f->run, 2, 1, 1, f->h1.epoch)};
    assert_true(put_and_commit(f->a, "h1", two, 2, NOW));
    assert_int_equal(read_all(f->b, 2, NOW), 2);
    /* One given back and, in the same batch, read and taken again. */
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &two[0], 1));
    sy_slot_claim c = {KEY, 2, 1};
    held = -2;
    OK(f->a, sy_store_slot_room_as(f->a, "h1", &c, 1, NOW, &held));
    assert_int_equal(held, 1);
    sy_slot_take again = take_of(f->run, 2, 1, 2, f->h1.epoch);
    assert_true(put_and_commit(f->a, "h1", &again, 1, NOW));
    assert_int_equal(read_all(f->b, 2, NOW), 2);
    /* Full again: one more would pass the limit, in the batch or after. */
    assert_int_equal(read_as(f->a, "h1", 2, 1, NOW, false), 2);
    /* Both given back, nothing taken: at the commit, free for h2. */
    OK(f->a, sy_store_begin(f->a));
    sy_slot_take back[] = {two[1], again};
    OK(f->a, sy_store_return_takes(f->a, "h1", back, 2));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(read_all(f->b, 2, NOW), 0);
}

static int sum_share(void *arg, const char *tenant, int64_t held)
{
    (void)tenant;
    *(int64_t *)arg += held;
    return 0;
}

/* What KEY's holders hold by tenant, summed, read by handle s. */
static int64_t shares_of(sy_store *s)
{
    int64_t sum = 0;
    OK(s, sy_store_key_shares(s, KEY, NOW, sum_share, &sum));
    return sum;
}

/* Within a grant, the give-back and the take of one batch on PostgreSQL
 * are one write of the key's row: the read between them counts the
 * slots given back as free, and what is held, by tenant too, comes out
 * as if each had been written alone. */
static void test_given_back_within_grant(void **state)
{
    fx *f = *state;
    long_leases(f);
    /* h1 is granted 2 and an extra of 249 and takes 2. */
    assert_int_equal(read_as(f->a, "h1", 1000, 2, NOW, true), on_pg() ? 1000 - 251 : 0);
    sy_slot_take two[] = {take_of(f->run, 1000, 1, 0, f->h1.epoch),
                          take_of(f->run, 1000, 1, 1, f->h1.epoch)};
    assert_true(put_and_commit(f->a, "h1", two, 2, NOW));
    assert_int_equal(shares_of(f->b), 2);
    /* One given back, then 3 read and taken: the grant had 249 free,
     * and 250 with the one given back. */
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &two[0], 1));
    sy_slot_claim c = {KEY, 1000, 3};
    int64_t held = -2;
    OK(f->a, sy_store_slot_room_as(f->a, "h1", &c, 1, NOW, &held));
    assert_int_equal(held, on_pg() ? 1000 - 250 : 1);
    sy_slot_take three = take_of(f->run, 1000, 3, 2, f->h1.epoch);
    assert_true(put_and_commit(f->a, "h1", &three, 1, NOW));
    /* Held: 2 - 1 + 3; the grant kept (251), as others count it. */
    assert_int_equal(shares_of(f->b), 4);
    assert_int_equal(read_all(f->b, 1000, NOW), on_pg() ? 251 : 4);
    /* All given back with no take in the batch: sent at the commit. */
    OK(f->a, sy_store_begin(f->a));
    sy_slot_take rest[] = {two[1], three};
    OK(f->a, sy_store_return_takes(f->a, "h1", rest, 2));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(shares_of(f->b), 0);
    assert_int_equal(read_all(f->b, 1000, NOW), on_pg() ? 249 : 0);
}

#ifdef SY_HAVE_LIBPQ
/* What `owner`'s grant of KEY is as handle s's open batch sees it. */
static int64_t granted_in_batch(sy_store *s, const char *owner)
{
    const char *v[] = {KEY, owner};
    PGresult *r = PQexecParams(sy_pg_handle(s)->conn,
                               "SELECT granted FROM slot_counts WHERE key = $1 AND owner = $2",
                               2, NULL, v, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_int_equal(PQntuples(r), 1);
    int64_t g = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return g;
}
#endif

/* A turn read a key under its shared lock and takes within what it
 * found, under no grants' lock: a give-back of the batch sent alone
 * before the take (here by the tenants' shares, which count it) keeps
 * that grant, where it would otherwise have lowered it to what is held
 * and the extra, below what the read found free. */
static void test_read_grant_kept_by_give_back(void **state)
{
#ifdef SY_HAVE_LIBPQ
    fx *f = *state;
    long_leases(f);
    /* Granted 2 and an extra of 249: 251; 2 taken. */
    assert_int_equal(read_as(f->a, "h1", 1000, 2, NOW, true), 1000 - 251);
    sy_slot_take two[] = {take_of(f->run, 1000, 1, 0, f->h1.epoch),
                          take_of(f->run, 1000, 1, 1, f->h1.epoch)};
    assert_true(put_and_commit(f->a, "h1", two, 2, NOW));
    /* One given back; 250 read free (249 and the one given back). */
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", &two[0], 1));
    sy_slot_claim c = {KEY, 1000, 250};
    int64_t held = -2;
    OK(f->a, sy_store_slot_room_as(f->a, "h1", &c, 1, NOW, &held));
    assert_int_equal(held, 1000 - 250);
    /* The give-back goes alone, and the grant stays 251 (not 250). */
    assert_int_equal(shares_of(f->a), 1);
    assert_int_equal(granted_in_batch(f->a, "h1"), 251);
    sy_slot_take all = take_of(f->run, 1000, 250, 2, f->h1.epoch);
    assert_true(put_and_commit(f->a, "h1", &all, 1, NOW));
    assert_int_equal(shares_of(f->b), 251);
#else
    (void)state;
#endif
}

/* A host remembers what its grants leave free, to lock only those keys
 * shared without reading them first (store/postgres/hints.h).  A grant
 * taken back since is read again under the lock: h1's hint of 74 free
 * finds the key h2's, never a slot beyond the limit. */
static void test_grant_hint_taken_back(void **state)
{
    fx *f = *state;
    int64_t run2 = 0, e2 = fx_run_of_h2(f, 1000, &run2);
    long_leases(f);
    /* Limit 300: h1 is granted 1 and an extra of (300 - 1) / 4 = 74,
     * which it keeps at the commit: its hint, 74 free. */
    assert_int_equal(read_as(f->a, "h1", 300, 1, NOW, false), 300 - 75);
    assert_int_equal(read_as(f->a, "h1", 300, 1, NOW, false), 300 - 74);
    /* h2 needs all 300: it takes h1's unused grant back and takes them. */
    assert_int_equal(read_as(f->b, "h2", 300, 300, NOW, true), 0);
    sy_slot_take all = {KEY, 300, 300, {run2, 0, 0, 1}, e2, NULL};
    assert_true(put_and_commit(f->b, "h2", &all, 1, NOW));
    /* h1's hint still says 74: the read under the lock says the key is
     * full, and no take of h1's passes. */
    assert_int_equal(read_as(f->a, "h1", 300, 1, NOW, false), 300);
    sy_slot_take mine = take_of(f->run, 300, 1, 0, f->h1.epoch);
    OK(f->a, sy_store_begin(f->a));
    assert_false(put_and_commit(f->a, "h1", &mine, 1, NOW));
    assert_int_equal(read_all(f->b, 300, NOW), 300);
}

/* A grant made for a turn that took less keeps, at its commit, no more
 * than its extra beyond what its host holds. */
static void test_grant_trimmed_at_commit(void **state)
{
    fx *f = *state;
    long_leases(f);
    /* Limit 8: no extra (too little room); granted 5, 2 taken. */
    assert_int_equal(read_as(f->a, "h1", 8, 5, NOW, true), 8 - 5);
    sy_slot_take t = take_of(f->run, 8, 2, 0, f->h1.epoch);
    assert_true(put_and_commit(f->a, "h1", &t, 1, NOW));
    assert_int_equal(read_all(f->b, 8, NOW), 2);
    /* Granted 3 more, none taken: back to what is held at the commit. */
    assert_int_equal(read_as(f->a, "h1", 8, 3, NOW, false), 8 - 3);
    assert_int_equal(read_all(f->b, 8, NOW), 2);
}

/* A grant ends with its host's leases (then it holds nothing for the
 * others) and is renewed with them. */
static void test_grant_lives_with_lease(void **state)
{
    fx *f = *state;
    int64_t run2 = 0;
    fx_run_of_h2(f, 1000, &run2);
    assert_true(read_as(f->a, "h1", 1000, 1, NOW, false) >= 0);
    /* h2 may take 700 of the 750 free beside it: no extra (50 left). */
    assert_int_equal(read_as(f->b, "h2", 1000, 700, NOW, false), 1000 - 700);
    /* h1 renews to 3000: its grant lives on past 1000, h2's (not
     * renewed) ends there. */
    OK(f->a, sy_store_renew(f->a, "h1", 3000, 500, NULL, NULL));
    assert_int_equal(read_all(f->b, 1000, 1500), 249); /* its extra, kept after its commit */
    /* Past 3000 h1's leases ended: its grant holds nothing. */
    assert_int_equal(read_all(f->b, 1000, 3500), 0);
}

#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}
#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest sqlite[] = {BOTH(test_grant_counted_by_others),
                                        BOTH(test_given_back_then_taken),
                                        BOTH(test_given_back_within_grant)};
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_grant_counted_by_others), PG(test_grant_locks),
        PG(test_grant_taken_back),        PG(test_grant_lives_with_lease),
        PG(test_grant_trimmed_at_commit), PG(test_grant_hint_taken_back),
        PG(test_given_back_then_taken),   PG(test_given_back_within_grant),
        PG(test_grant_take_back_locks),   PG(test_read_grant_kept_by_give_back),
    };
    return fx_run_groups("store_slot_grants", sqlite, SY_ARRAY_LEN(sqlite), pg,
                         SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_slot_grants", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
