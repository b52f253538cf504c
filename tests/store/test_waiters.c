/* Slot waiters held in the store (store/waiters.h): a task's row is
 * registered once per key (its first `since` kept), moved when it waits
 * for another key, deleted with the task or its run; rows count only
 * under a live claim (a dead host's stop counting with its lease, a
 * take-over's old rows never count again) and reaping deletes the dead
 * ones; a key's holders are summed by tenant.  Each test runs on SQLite,
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
#include "store/waiters.h"
#include "fixture.h"

#define NOW 100 /* inside h1's lease (claimed at 10 until 1000) */

static sy_slot_holder task(const fx *f, uint32_t idx, int64_t elem)
{
    return (sy_slot_holder){f->run, idx, elem, 0};
}

static void wait_for(sy_store *s, const sy_store_fence *fence, const char *key,
                     sy_slot_holder t, int64_t priority, int64_t since)
{
    sy_slot_waiter w = {.key = key, .task = t, .tenant = "public", .priority = priority,
                        .since = since, .n = 1};
    OK(s, sy_store_begin(s));
    OK(s, sy_store_wait_slot(s, fence, &w));
    OK(s, sy_store_commit(s));
}

static void unwait(sy_store *s, sy_slot_holder t, bool whole_run)
{
    OK(s, sy_store_begin(s));
    OK(s, sy_store_unwait_slot(s, &t, whole_run));
    OK(s, sy_store_commit(s));
}

/* What a listing saw: rows, live ones, and the last row's fields. */
typedef struct {
    size_t rows, live;
    int64_t elem_sum, since, priority;
    char key[64], owner[16];
} seen;

static int note(void *arg, const sy_slot_waiter *w)
{
    seen *s = arg;
    s->rows++;
    s->live += w->live;
    s->elem_sum += w->task.elem;
    s->since = w->since;
    s->priority = w->priority;
    fx_copy(s->key, sizeof s->key, w->key);
    fx_copy(s->owner, sizeof s->owner, w->owner);
    return 0;
}

static seen of_keys(sy_store *s, const char *k1, const char *k2, int64_t now)
{
    const char *keys[] = {k1, k2};
    seen got = {0};
    OK(s, sy_store_key_waiters(s, keys, k2 ? 2 : 1, now, note, &got));
    return got;
}

static seen all(sy_store *s, int64_t now)
{
    seen got = {0};
    OK(s, sy_store_list_waiters(s, now, note, &got));
    return got;
}

static void test_register_once_and_move(void **state)
{
    fx *f = *state;
    wait_for(f->a, &f->h1, "pool:gpu", task(f, 0, 3), 5, 40);
    /* Registered again (another host's view of the same task, or a
     * retry): one row, its first `since` kept, its priority the new. */
    wait_for(f->b, &f->h1, "pool:gpu", task(f, 0, 3), 7, 90);
    seen got = of_keys(f->b, "pool:gpu", NULL, NOW);
    assert_int_equal(got.rows, 1);
    assert_int_equal(got.since, 40);
    assert_int_equal(got.priority, 7);
    /* Another task of the run, another element: a row each. */
    wait_for(f->a, &f->h1, "pool:gpu", task(f, 0, 4), 0, 50);
    wait_for(f->a, &f->h1, "key:db", task(f, 1, -1), 0, 60);
    assert_int_equal(of_keys(f->a, "pool:gpu", NULL, NOW).rows, 2);
    assert_int_equal(of_keys(f->a, "pool:gpu", "key:db", NOW).rows, 3);
    /* Waiting for another key moves the row: one per task. */
    wait_for(f->a, &f->h1, "key:db", task(f, 0, 3), 0, 95);
    got = of_keys(f->a, "pool:gpu", NULL, NOW);
    assert_int_equal(got.rows, 1);
    assert_int_equal(got.elem_sum, 4);
    assert_int_equal(of_keys(f->a, "key:db", NULL, NOW).rows, 2);
    /* The task took its slots: its row goes, only its. */
    unwait(f->a, task(f, 0, 3), false);
    assert_int_equal(of_keys(f->a, "key:db", NULL, NOW).rows, 1);
    assert_int_equal(all(f->a, NOW).rows, 2);
    /* The run ended: every row of it goes. */
    unwait(f->b, task(f, 0, 0), true);
    assert_int_equal(all(f->a, NOW).rows, 0);
}

static void test_fenced_by_lease_and_claim(void **state)
{
    fx *f = *state;
    wait_for(f->a, &f->h1, "pool:gpu", task(f, 0, 0), 0, 50);
    /* While h1's lease holds (until 1000) the waiter counts. */
    assert_int_equal(of_keys(f->b, "pool:gpu", NULL, 999).rows, 1);
    /* h1 died: at its lease's end its waiter counts for nothing. */
    assert_int_equal(of_keys(f->b, "pool:gpu", NULL, 1000).rows, 0);
    seen got = all(f->b, 1000);
    assert_true(got.rows == 1 && got.live == 0);
    assert_string_equal(got.owner, "h1");
    /* h2 claims the run: the old row never counts again, even under a
     * lease that holds, and h2's own registration counts once. */
    bool claimed = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 1001, NULL, 0, &claimed));
    assert_true(claimed);
    sy_store_fence h2 = {"h2", fx_epoch(f->b, f->run)};
    assert_int_equal(of_keys(f->b, "pool:gpu", NULL, 1500).rows, 0);
    wait_for(f->b, &f->h1, "pool:gpu", task(f, 1, -1), 0, 1400); /* under the old claim */
    wait_for(f->b, &h2, "pool:gpu", task(f, 0, 0), 0, 1500);
    got = of_keys(f->b, "pool:gpu", NULL, 1500);
    assert_int_equal(got.rows, 1);
    assert_int_equal(got.since, 50); /* still waiting since it first did */
    /* Reaping deletes the dead rows only. */
    size_t n = 0;
    OK(f->a, sy_store_reap_waiters(f->a, 1500, &n));
    assert_int_equal(n, 1);
    got = all(f->a, 1500);
    assert_true(got.rows == 1 && got.live == 1);
    assert_string_equal(got.owner, "h2");
}

typedef struct {
    char tenant[16][16];
    int64_t held[16];
    size_t n;
} shares;

static int note_share(void *arg, const char *tenant, int64_t held)
{
    shares *s = arg;
    if (s->n < 16) {
        fx_copy(s->tenant[s->n], sizeof s->tenant[0], tenant);
        s->held[s->n++] = held;
    }
    return 0;
}

/* Key's shares by tenant at `now`, as another host reads them. */
static shares shares_of(sy_store *st, const char *key, int64_t now)
{
    shares s = {0};
    OK(st, sy_store_key_shares(st, key, now, note_share, &s));
    return s;
}

static void share_is(const shares *s, size_t i, const char *tenant, int64_t held)
{
    assert_true(i < s->n);
    assert_string_equal(s->tenant[i], tenant);
    assert_int_equal(s->held[i], held);
}

static void test_shares_by_tenant(void **state)
{
    fx *f = *state;
    /* A second run, of tenant "b", claimed by h1 too. */
    const char *ids[] = {"x"}, *ns[] = {"w.x"};
    int64_t run_b = 0;
    bool got = false;
    OK(f->a, sy_store_create_run(f->a, HASH, "b", "w", "{}", 1, ids, ns, 1, &run_b));
    OK(f->a, sy_store_claim_run(f->a, run_b, "h1", 1000, 10, NULL, 0, &got));
    assert_true(got);
    sy_store_fence fb = {"h1", fx_epoch(f->a, run_b)};
    sy_slot_claim c = {"pool:p", 10, 2};
    bool taken = false;
    size_t full;
    int64_t held;
    OK(f->a, sy_store_begin(f->a));
    for (int64_t e = 0; e < 3; e++) {
        sy_slot_holder h = {f->run, 0, e, 1};
        OK(f->a, sy_store_take_slots(f->a, &f->h1, &h, &c, 1, NOW, &taken, &full, &held));
        assert_true(taken);
    }
    sy_slot_holder hb = {run_b, 0, -1, 1};
    c.n = 1;
    OK(f->a, sy_store_take_slots(f->a, &fb, &hb, &c, 1, NOW, &taken, &full, &held));
    assert_true(taken);
    OK(f->a, sy_store_commit(f->a));
    shares s = shares_of(f->b, "pool:p", NOW);
    assert_int_equal(s.n, 2);
    share_is(&s, 0, "b", 1);
    share_is(&s, 1, "public", 6);
    /* Past the lease: nobody holds anything. */
    assert_int_equal(shares_of(f->b, "pool:p", 1000).n, 0);
}

/* The turn's takes as the engine writes them, with their runs' tenants,
 * in no order (PostgreSQL sums them by key and tenant before it writes):
 * the counts and the shares are per tenant, and a give-back of some takes
 * off what they took. */
static void test_shares_of_summed_takes(void **state)
{
    fx *f = *state;
    const char *ids[] = {"x"}, *ns[] = {"w.x"};
    int64_t run_b = 0;
    bool got = false, put = false;
    OK(f->a, sy_store_create_run(f->a, HASH, "b", "w", "{}", 1, ids, ns, 1, &run_b));
    OK(f->a, sy_store_claim_run(f->a, run_b, "h1", 1000, 10, NULL, 0, &got));
    assert_true(got);
    int64_t eb = fx_epoch(f->a, run_b);
    sy_slot_take t[] = {
        {"pool:p", 10, 1, {f->run, 0, 0, 1}, f->h1.epoch, "public"},
        {"pool:p", 10, 2, {run_b, 0, -1, 1}, eb, "b"},
        {"pool:q", 10, 1, {f->run, 0, 2, 1}, f->h1.epoch, "public"},
        {"pool:p", 8, 1, {f->run, 0, 1, 1}, f->h1.epoch, "public"},
    };
    sy_slot_claim c[] = {{"pool:p", 10, 4}, {"pool:q", 10, 1}};
    int64_t held[2];
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_slot_room_as(f->a, "h1", c, 2, NOW, held));
    OK(f->a, sy_store_put_slots(f->a, "h1", t, 4, NOW, &put));
    assert_true(put);
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(fx_room(f->b, "pool:p", 10, NOW), 4);
    assert_int_equal(fx_room(f->b, "pool:q", 10, NOW), 1);
    shares s = shares_of(f->b, "pool:p", NOW);
    assert_int_equal(s.n, 2);
    share_is(&s, 0, "b", 2);
    share_is(&s, 1, "public", 2);
    /* Tenant b's take and one of public's given back. */
    sy_slot_take back[] = {t[1], t[3]};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_takes(f->a, "h1", back, 2));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(fx_room(f->b, "pool:p", 10, NOW), 1);
    assert_int_equal(fx_room(f->b, "pool:q", 10, NOW), 1);
    s = shares_of(f->b, "pool:p", NOW);
    assert_int_equal(s.n, 1);
    share_is(&s, 0, "public", 1);
}

static void test_bad_arguments(void **state)
{
    fx *f = *state;
    sy_slot_waiter w = {.key = "", .task = task(f, 0, -1), .tenant = "public", .n = 1};
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_wait_slot(f->a, &f->h1, &w), SY_EINVAL);
    w.key = "k";
    w.n = 0;
    assert_int_equal(sy_store_wait_slot(f->a, &f->h1, &w), SY_EINVAL);
    w.n = 1;
    assert_int_equal(sy_store_wait_slot(f->a, NULL, &w), SY_EINVAL);
    OK(f->a, sy_store_commit(f->a));
    /* Outside a batch: refused, nothing written. */
    assert_int_equal(sy_store_wait_slot(f->a, &f->h1, &w), SY_ESTATE);
    sy_slot_holder t = task(f, 0, -1);
    assert_int_equal(sy_store_unwait_slot(f->a, &t, false), SY_ESTATE);
    const char *none[1] = {NULL};
    seen got = {0};
    assert_int_equal(sy_store_key_waiters(f->a, none, 1, NOW, note, &got), SY_EINVAL);
    assert_int_equal(sy_store_key_waiters(f->a, none, 0, NOW, note, &got), SY_EINVAL);
    OK(f->a, sy_store_begin(f->a));
    size_t n = 0;
    assert_int_equal(sy_store_reap_waiters(f->a, NOW, &n), SY_ESTATE);
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(all(f->a, NOW).rows, 0);
}

#define BOTH(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define PG(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
    const struct CMUnitTest sqlite[] = {
        BOTH(test_register_once_and_move), BOTH(test_fenced_by_lease_and_claim),
        BOTH(test_shares_by_tenant),       BOTH(test_bad_arguments),
        BOTH(test_shares_of_summed_takes),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        PG(test_register_once_and_move), PG(test_fenced_by_lease_and_claim),
        PG(test_shares_by_tenant),       PG(test_bad_arguments),
        PG(test_shares_of_summed_takes),
    };
    return fx_run_groups("store_waiters", sqlite, SY_ARRAY_LEN(sqlite), pg, SY_ARRAY_LEN(pg));
#else
    return fx_run_groups("store_waiters", sqlite, SY_ARRAY_LEN(sqlite), NULL, 0);
#endif
}
