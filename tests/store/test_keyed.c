/* Runs recorded under a key (store/keyed.h): a key used within its
 * window gives back its run and records nothing; after the window it
 * records a new run; hosts racing one key record one run.  A backfilled
 * tick is claimed once, against the live schedule too, and does not stop
 * the live schedule.  Each test runs on SQLite, then on PostgreSQL on a
 * throwaway server when this build has libpq. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/keyed.h"
#include "fixture.h"

#define MIN 60000

static int setup(void **state) { return fx_setup_on(state, "sqlite:store.db", false); }

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    th_pg_reset(th_pg_url());
    return fx_setup_on(state, th_pg_url(), false);
}
#endif

static const char *const ids[] = {"x", "y"};
static const char *const ns[] = {"public::w::x", "public::w::y"};
static const sy_store_new_run w_run = {HASH, "public", "w", "{}", 2, ids, ns, 0};

static int64_t submit(sy_store *s, const sy_store_new_run *r, const char *key, int64_t now,
                      bool want_created)
{
    int64_t id = -1;
    bool created = !want_created;
    OK(s, sy_store_create_run_keyed(s, r, key, 10 * MIN, now, &id, &created));
    assert_true(id > 0);
    assert_true(created == want_created);
    return id;
}

static int count_run(void *arg, const sy_run_record *r)
{
    (void)r;
    (*(int *)arg)++;
    return 0;
}

static int runs(sy_store *s)
{
    int n = 0;
    OK(s, sy_store_list_runs(s, 0, count_run, &n));
    return n;
}

static void test_same_key_same_run(void **state)
{
    fx *f = *state;
    int64_t first = submit(f->a, &w_run, "k1", MIN, true);
    /* Again within the window, from the other host too: the same run. */
    assert_true(submit(f->b, &w_run, "k1", 5 * MIN, false) == first);
    assert_true(submit(f->a, &w_run, "k1", 11 * MIN, false) == first);
    /* Another key, or the same key of another workflow: a run of its own. */
    int64_t other = submit(f->a, &w_run, "k2", 2 * MIN, true);
    sy_store_new_run v_run = w_run;
    v_run.workflow = "v";
    int64_t of_v = submit(f->a, &v_run, "k1", 2 * MIN, true);
    assert_true(other != first && of_v != first && of_v != other);
    assert_int_equal(runs(f->a), 3);
    sy_run_record r;
    OK(f->a, sy_store_get_run(f->a, first, &r));
    assert_int_equal(r.state, SY_RUN_PENDING);
    assert_int_equal(r.n_tasks, 2);
    sy_run_record_clear(&r);
}

static void test_after_window_new_run(void **state)
{
    fx *f = *state;
    int64_t first = submit(f->a, &w_run, "k", MIN, true);
    /* The window is 10 minutes: at 11 min + 1 ms the key is free again. */
    int64_t second = submit(f->b, &w_run, "k", 11 * MIN + 1, true);
    assert_true(second != first);
    assert_true(submit(f->a, &w_run, "k", 12 * MIN, false) == second);
    assert_int_equal(runs(f->a), 2);
}

static void test_bad_calls(void **state)
{
    fx *f = *state;
    int64_t id = 0;
    bool created = true;
    char longkey[SY_STORE_KEY_MAX + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    assert_int_equal(sy_store_create_run_keyed(f->a, &w_run, "", MIN, 1, &id, &created),
                     SY_EINVAL);
    assert_int_equal(sy_store_create_run_keyed(f->a, &w_run, longkey, MIN, 1, &id, &created),
                     SY_EINVAL);
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_create_run_keyed(f->a, &w_run, "k", MIN, 1, &id, &created),
                     SY_ESTATE);
    sy_store_rollback(f->a);
    /* No definition: neither the run nor the key is kept. */
    sy_store_new_run nodef = w_run;
    nodef.hash = "nope";
    assert_int_not_equal(sy_store_create_run_keyed(f->a, &nodef, "k", MIN, 1, &id, &created),
                         SY_OK);
    assert_int_equal(runs(f->a), 0);
    submit(f->a, &w_run, "k", 2, true);
}

/* Hosts submitting one key at once, each on its own connection: one run.
 * Threads, as test_ticks' race. */
enum { RACE_HOSTS = 4, RACE_KEYS = 10 };

typedef struct race_host {
    const char *dir;
    int64_t got[RACE_KEYS];
    int failed;
    char why[600];
} race_host;

static void *race_main(void *arg)
{
    race_host *h = arg;
    sy_store *s = NULL;
    if (sy_store_open(fx_store_url, h->dir, &s, h->why, sizeof h->why) != SY_OK) {
        h->failed = 1;
        return NULL;
    }
    for (int i = 0; i < RACE_KEYS && !h->failed; i++) {
        char key[16];
        snprintf(key, sizeof key, "key-%d", i);
        bool created;
        if (sy_store_create_run_keyed(s, &w_run, key, MIN, 1000 + i, &h->got[i],
                                      &created) != SY_OK) {
            snprintf(h->why, sizeof h->why, "%s: %s", key, sy_store_errmsg(s));
            h->failed = 1;
        }
    }
    sy_store_close(s);
    return NULL;
}

static void test_hosts_race(void **state)
{
    fx *f = *state;
    race_host hosts[RACE_HOSTS];
    pthread_t t[RACE_HOSTS];
    for (int h = 0; h < RACE_HOSTS; h++) {
        hosts[h] = (race_host){.dir = f->dir};
        assert_int_equal(pthread_create(&t[h], NULL, race_main, &hosts[h]), 0);
    }
    for (int h = 0; h < RACE_HOSTS; h++) {
        pthread_join(t[h], NULL);
        if (hosts[h].failed)
            fail_msg("host %d: %s", h, hosts[h].why);
    }
    assert_int_equal(runs(f->a), RACE_KEYS);
    for (int i = 0; i < RACE_KEYS; i++)
        for (int h = 1; h < RACE_HOSTS; h++)
            assert_true(hosts[h].got[i] == hosts[0].got[i] && hosts[0].got[i] > 0);
}

static bool backfill(sy_store *s, int64_t tick, int64_t *run)
{
    bool fired = true;
    int64_t id = -1;
    OK(s, sy_store_backfill_tick(s, &w_run, tick, tick + 5, &fired, &id));
    if (run)
        *run = id;
    return fired;
}

static bool fire(sy_store *s, int64_t tick)
{
    bool fired = false;
    OK(s, sy_store_fire_tick(s, HASH, "public", "w", tick, "{}", 2, ids, ns, tick, &fired,
                             NULL));
    return fired;
}

static void test_backfill_once(void **state)
{
    fx *f = *state;
    assert_true(fire(f->a, 10 * MIN));
    int64_t live = 0, run = 0, again = 0;
    OK(f->a, sy_store_last_tick(f->a, "public", "w", &live, &run));
    /* A tick the live schedule fired is not backfilled; its run is said. */
    assert_false(backfill(f->b, 10 * MIN, &again));
    assert_true(again == run);
    /* Older ticks are, once; reading a tick claims nothing. */
    bool claimed = true;
    OK(f->b, sy_store_tick_run(f->b, "public", "w", 5 * MIN, &claimed, &again));
    assert_false(claimed);
    assert_true(backfill(f->b, 5 * MIN, &run));
    OK(f->b, sy_store_tick_run(f->b, "public", "w", 5 * MIN, &claimed, &again));
    assert_true(claimed && again == run);
    assert_false(backfill(f->a, 5 * MIN, &again));
    assert_true(again == run && run > 0);
    /* A backfilled tick later than the live one: the live schedule still
     * fires the ticks before it, not that one, and its last tick is its
     * own. */
    assert_true(backfill(f->a, 20 * MIN, NULL));
    assert_true(fire(f->b, 15 * MIN));
    assert_false(fire(f->b, 20 * MIN));
    OK(f->a, sy_store_last_tick(f->a, "public", "w", &live, NULL));
    assert_true(live == 15 * MIN);
    assert_true(fire(f->a, 25 * MIN));
    assert_int_equal(runs(f->a), 5);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_same_key_same_run), T(test_after_window_new_run), T(test_bad_calls),
        T(test_hosts_race), T(test_backfill_once),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_same_key_same_run), P(test_after_window_new_run), P(test_bad_calls),
        P(test_hosts_race), P(test_backfill_once),
    };
    return fx_run_groups("keyed", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("keyed", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
