/* Wake-ups between hosts (sy_store_listen, sy_store_wakeups): a submit,
 * a release of live runs and a cancel request for an owned run wake a
 * listening handle, on its socket, at once; a rolled-back submit does
 * not; a lost listening connection says so and listening again works.
 * SQLite has none: its hosts poll. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "store/store.h"
#include "base/util.h"

static sy_store *open_ok(const char *url, const char *base)
{
    sy_store *s = NULL;
    char err[512] = "";
    int rc = sy_store_open(url, base, &s, err, sizeof err);
    if (rc != SY_OK)
        fail_msg("open %s: %d %s", url, rc, err);
    return s;
}

static void test_sqlite_has_none(void **state)
{
    (void)state;
    sy_store *s = open_ok("sqlite::memory:", NULL);
    int fd = 7;
    size_t n = 3;
    assert_int_equal(sy_store_listen(s, &fd), SY_OK);
    assert_int_equal(fd, -1);
    assert_int_equal(sy_store_wakeups(s, &n), SY_OK);
    assert_int_equal(n, 0);
    assert_int_equal(sy_store_listen(NULL, &fd), SY_EINVAL);
    assert_int_equal(sy_store_listen(s, NULL), SY_EINVAL);
    assert_int_equal(sy_store_wakeups(s, NULL), SY_EINVAL);
    sy_store_close(s);
}

#ifdef SY_HAVE_LIBPQ
typedef struct {
    char *dir;
    const char *url;
    sy_store *s; /* the listening host */
    sy_store *o; /* another host, or a submitting command */
    int fd;
} fx;

static int setup_pg(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    f->url = th_pg_url();
    th_pg_reset(f->url);
    f->s = open_ok(f->url, f->dir);
    f->o = open_ok(f->url, f->dir);
    assert_int_equal(sy_store_put_definition(f->o, "d1", "public", "etl", "{}"), SY_OK);
    assert_int_equal(sy_store_listen(f->s, &f->fd), SY_OK);
    assert_true(f->fd >= 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sy_store_close(f->s);
    sy_store_close(f->o);
    th_rmtree(f->dir);
    free(f);
    return 0;
}

/* The wake-ups that came within `ms`, read the way a host's loop reads
 * them: when the socket is readable. */
static size_t wakeups_within(fx *f, int ms)
{
    size_t total = 0;
    struct pollfd p = {.fd = f->fd, .events = POLLIN};
    while (poll(&p, 1, ms) == 1) {
        size_t n = 0;
        assert_int_equal(sy_store_wakeups(f->s, &n), SY_OK);
        total += n;
        ms = 50; /* whatever else is on its way */
    }
    return total;
}

static int64_t submit(sy_store *s)
{
    static const char *const ids[] = {"a"}, *const ns[] = {"public::etl::a"};
    int64_t id = 0;
    if (sy_store_create_run(s, "d1", "public", "etl", "{}", 1, ids, ns, 1, &id) != SY_OK)
        fail_msg("create_run: %s", sy_store_errmsg(s));
    return id;
}

static void test_submit_wakes(void **state)
{
    fx *f = *state;
    assert_int_equal(wakeups_within(f, 0), 0);
    submit(f->o);
    assert_true(wakeups_within(f, 2000) >= 1);
    /* Nothing more until the next one. */
    assert_int_equal(wakeups_within(f, 100), 0);
    submit(f->o);
    submit(f->o);
    assert_true(wakeups_within(f, 2000) >= 1);
}

static void test_failed_submit_is_silent(void **state)
{
    fx *f = *state;
    static const char *const ids[] = {"a"}, *const ns[] = {"public::etl::a"};
    int64_t id = 0;
    assert_int_not_equal(sy_store_create_run(f->o, "nope", "public", "etl", "{}", 1, ids,
                                             ns, 1, &id),
                         SY_OK);
    assert_int_equal(wakeups_within(f, 300), 0);
}

static void test_release_and_cancel_wake(void **state)
{
    fx *f = *state;
    int64_t id = submit(f->o);
    assert_true(wakeups_within(f, 2000) >= 1);
    bool got = false;
    assert_int_equal(sy_store_claim_run(f->o, id, "h2", 9000, 10, NULL, 0, &got), SY_OK);
    assert_true(got);
    assert_int_equal(wakeups_within(f, 100), 0);
    /* Its owner is told to act on the cancel. */
    assert_int_equal(sy_store_request_cancel(f->o, id, 20), SY_OK);
    assert_true(wakeups_within(f, 2000) >= 1);
    /* A draining host's runs are for the others to take now. */
    assert_int_equal(sy_store_release(f->o, "h2"), SY_OK);
    assert_true(wakeups_within(f, 2000) >= 1);
    /* Releasing nothing wakes nobody. */
    assert_int_equal(sy_store_release(f->o, "h2"), SY_OK);
    assert_int_equal(wakeups_within(f, 200), 0);
}

static void test_lost_then_listen_again(void **state)
{
    fx *f = *state;
    th_pg_exec(f->url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                       " WHERE pid <> pg_backend_pid() AND datname = current_database()"
                       " AND query LIKE 'LISTEN%'");
    /* The server's goodbye may come first, the end of the connection
     * next. */
    struct pollfd p = {.fd = f->fd, .events = POLLIN};
    size_t n = 0;
    int rc = SY_OK;
    for (int i = 0; i < 10 && rc == SY_OK && poll(&p, 1, 2000) == 1; i++)
        rc = sy_store_wakeups(f->s, &n);
    assert_int_equal(rc, SY_EIO);
    assert_non_null(strstr(sy_store_errmsg(f->s), "listening connection was lost"));
    assert_int_equal(sy_store_wakeups(f->s, &n), SY_EIO);
    assert_int_equal(sy_store_listen(f->s, &f->fd), SY_OK);
    submit(f->o);
    assert_true(wakeups_within(f, 2000) >= 1);
}
#endif

int main(void)
{
#define P(fn) {#fn " (postgresql)", fn, setup_pg, teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        cmocka_unit_test(test_sqlite_has_none),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_submit_wakes),
        P(test_failed_submit_is_silent),
        P(test_release_and_cancel_wake),
        P(test_lost_then_listen_again),
    };
    size_t n_pg = th_pg_url() ? SY_ARRAY_LEN(pg_tests) : 0;
#else
    size_t n_pg = 0;
#endif
    size_t n = SY_ARRAY_LEN(sqlite_tests);
    struct CMUnitTest *all = calloc(n + n_pg, sizeof *all);
    memcpy(all, sqlite_tests, sizeof sqlite_tests);
#ifdef SY_HAVE_LIBPQ
    memcpy(all + n, pg_tests, n_pg * sizeof *all);
#endif
    int failed = _cmocka_run_group_tests("wakeups", all, n + n_pg, NULL, NULL);
    free(all);
    return failed;
}
