/* The ticks schedules fire (store.h, "schedules"): a tick is claimed with
 * its run in one transaction, once, by one of the hosts that fire it; a
 * tick older than the newest fired is refused; the last tick is read
 * back.  Each test runs on SQLite, then on PostgreSQL on a throwaway
 * server when this build has libpq (two handles standing for two hosts). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/store.h"
#include "fixture.h"

#define MIN 60000

static int setup(void **state)
{
    return fx_setup_on(state, "sqlite:store.db", false);
}

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    th_pg_reset(th_pg_url());
    return fx_setup_on(state, th_pg_url(), false);
}
#endif

static const char *const ids[] = {"x", "y"};
static const char *const ns[] = {"public::w::x", "public::w::y"};

static bool fire(sy_store *s, const char *workflow, int64_t tick, int64_t *run)
{
    bool fired = true;
    int64_t id = -1;
    char ctx[64];
    snprintf(ctx, sizeof ctx, "{\"tick\":%lld}", (long long)tick);
    OK(s, sy_store_fire_tick(s, HASH, "public", workflow, tick, ctx, 2, ids, ns, tick + 5,
                             &fired, &id));
    if (!fired)
        assert_true(id == 0);
    if (run)
        *run = id;
    return fired;
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

static void test_fire_once(void **state)
{
    fx *f = *state;
    int64_t tick = 0, run = 0, last = -1, last_run = -1;
    OK(f->a, sy_store_last_tick(f->a, "public", "w", &last, &last_run));
    assert_true(last == 0 && last_run == 0);
    assert_true(fire(f->a, "w", 10 * MIN, &run));
    assert_true(run > 0);
    /* The other host, and the same one again: refused, nothing recorded. */
    assert_false(fire(f->b, "w", 10 * MIN, NULL));
    assert_false(fire(f->a, "w", 10 * MIN, NULL));
    assert_int_equal(runs(f->a), 1);
    OK(f->b, sy_store_last_tick(f->b, "public", "w", &tick, &last_run));
    assert_true(tick == 10 * MIN);
    assert_true(last_run == run);
    /* The run is an ordinary Pending run with its tasks and context. */
    sy_run_record r;
    OK(f->b, sy_store_get_run(f->b, run, &r));
    assert_int_equal(r.state, SY_RUN_PENDING);
    assert_string_equal(r.context, "{\"tick\":600000}");
    assert_int_equal(r.n_tasks, 2);
    sy_run_record_clear(&r);
}

static void test_older_tick_refused(void **state)
{
    fx *f = *state;
    assert_true(fire(f->a, "w", 20 * MIN, NULL));
    assert_false(fire(f->b, "w", 19 * MIN, NULL));
    assert_true(fire(f->b, "w", 21 * MIN, NULL));
    /* Another workflow's ticks are its own. */
    assert_true(fire(f->b, "v", 19 * MIN, NULL));
    int64_t tick = 0;
    OK(f->a, sy_store_last_tick(f->a, "public", "w", &tick, NULL));
    assert_true(tick == 21 * MIN);
    OK(f->a, sy_store_last_tick(f->a, "public", "v", &tick, NULL));
    assert_true(tick == 19 * MIN);
    assert_int_equal(runs(f->a), 3);
}

static void test_not_in_batch(void **state)
{
    fx *f = *state;
    bool fired = true;
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_fire_tick(f->a, HASH, "public", "w", MIN, "{}", 2, ids, ns, 1,
                                        &fired, NULL),
                     SY_ESTATE);
    sy_store_rollback(f->a);
    /* No definition: nothing claimed either (one transaction). */
    int64_t run = 0;
    int rc = sy_store_fire_tick(f->a, "nope", "public", "w", MIN, "{}", 2, ids, ns, 1, &fired,
                                &run);
    assert_int_not_equal(rc, SY_OK);
    int64_t tick = -1;
    OK(f->a, sy_store_last_tick(f->a, "public", "w", &tick, NULL));
    assert_true(tick == 0);
    assert_true(fire(f->a, "w", MIN, NULL));
}

/* Hosts firing the same ticks at once, each on its own connection: every
 * tick is recorded exactly once.  Threads, not processes: a child forked
 * from a process whose store already runs its checkpoint thread can
 * inherit an allocator lock held at the fork and hang (seen under ASan). */
enum { RACE_HOSTS = 4, RACE_TICKS = 15 };

typedef struct race_host {
    const char *dir;
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
    for (int i = 1; i <= RACE_TICKS && !h->failed; i++) {
        bool fired;
        if (sy_store_fire_tick(s, HASH, "public", "w", (int64_t)i * MIN, "{}", 2, ids, ns, i,
                               &fired, NULL) != SY_OK) {
            snprintf(h->why, sizeof h->why, "tick %d: %s", i, sy_store_errmsg(s));
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
    assert_int_equal(runs(f->a), RACE_TICKS);
    int64_t tick = 0;
    OK(f->a, sy_store_last_tick(f->a, "public", "w", &tick, NULL));
    assert_true(tick == RACE_TICKS * MIN);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_fire_once),
        T(test_older_tick_refused),
        T(test_not_in_batch),
        T(test_hosts_race),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_fire_once),
        P(test_older_tick_refused),
        P(test_not_in_batch),
        P(test_hosts_race),
    };
    return fx_run_groups("ticks", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("ticks", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
