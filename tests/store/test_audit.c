/* The audit trail (store/audit.h): rows added by one host and listed by
 * another with every field, newest first; each filter (time, who,
 * action, paging); a string over SY_AUDIT_TEXT_MAX cut; rows kept when
 * their run is deleted and deleted by age; the arguments refused.  Each
 * test runs on both stores: SQLite, then PostgreSQL on a throwaway server
 * when this build has libpq. */
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
#include "store/audit.h"
#include "fixture.h"

static int setup(void **state) { return fx_setup(state); }

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state) { return fx_setup_pg(state); }
#endif

typedef struct {
    size_t n;
    int64_t id[16], at[16];
    char who[16][64], action[16][32], target[16][64], detail[16][2048];
    bool ok[16];
    int status[16];
} listing;

static int collect(void *arg, const sy_audit_record *r)
{
    listing *l = arg;
    if (l->n == 16)
        return 1;
    size_t i = l->n++;
    l->id[i] = r->id;
    l->at[i] = r->at;
    fx_copy(l->who[i], sizeof l->who[i], r->who);
    fx_copy(l->action[i], sizeof l->action[i], r->action);
    fx_copy(l->target[i], sizeof l->target[i], r->target);
    fx_copy(l->detail[i], sizeof l->detail[i], r->detail);
    l->ok[i] = r->ok;
    l->status[i] = r->status;
    return 0;
}

static listing list(sy_store *s, sy_audit_filter f)
{
    listing l = {0};
    if (!f.limit)
        f.limit = 100;
    OK(s, sy_store_list_audit(s, &f, collect, &l));
    return l;
}

static void add(sy_store *s, int64_t at, const char *who, const char *action, bool ok)
{
    sy_audit_record r = {.at = at, .who = who, .role = "operate", .action = action,
                         .target = "run 7", .origin = "192.0.2.7", .ok = ok,
                         .status = ok ? 200 : 403, .detail = ok ? NULL : "refused"};
    OK(s, sy_store_add_audit(s, &r));
}

static void test_add_and_list(void **state)
{
    fx *f = *state;
    add(f->a, 1000, "ci", "submit", true);
    add(f->a, 2000, "ops", "cancel", false);
    /* The other handle: another host on the same store. */
    listing l = list(f->b, (sy_audit_filter){0});
    assert_int_equal(l.n, 2);
    assert_true(l.id[0] > l.id[1]);
    assert_string_equal(l.who[0], "ops");
    assert_string_equal(l.action[0], "cancel");
    assert_false(l.ok[0]);
    assert_int_equal(l.status[0], 403);
    assert_string_equal(l.detail[0], "refused");
    assert_string_equal(l.who[1], "ci");
    assert_true(l.ok[1]);
    assert_int_equal(l.at[1], 1000);
    assert_string_equal(l.target[1], "run 7");
    assert_string_equal(l.detail[1], "(null)");
}

static void test_filters(void **state)
{
    fx *f = *state;
    for (int i = 1; i <= 6; i++)
        add(f->a, i * 1000, i % 2 ? "ci" : "ops", i % 3 ? "submit" : "reload", true);
    assert_int_equal(list(f->a, (sy_audit_filter){.who = "ci"}).n, 3);
    assert_int_equal(list(f->a, (sy_audit_filter){.action = "reload"}).n, 2);
    assert_int_equal(list(f->a, (sy_audit_filter){.who = "ops", .action = "reload"}).n, 1);
    assert_int_equal(list(f->a, (sy_audit_filter){.since = 3000}).n, 4);
    assert_int_equal(list(f->a, (sy_audit_filter){.since = 3000, .until = 5000}).n, 2);
    listing page = list(f->a, (sy_audit_filter){.limit = 4});
    assert_int_equal(page.n, 4);
    assert_int_equal(page.at[0], 6000);
    listing next = list(f->a, (sy_audit_filter){.limit = 4, .before = page.id[3]});
    assert_int_equal(next.n, 2);
    assert_int_equal(next.at[0], 2000);
    assert_int_equal(next.at[1], 1000);
}

static void test_long_text_cut(void **state)
{
    fx *f = *state;
    char *big = malloc(5000);
    memset(big, 'x', 4999);
    big[4999] = '\0';
    sy_audit_record r = {.at = 1, .who = "ci", .role = "admin", .action = "reload",
                         .origin = "unix", .ok = false, .status = 422, .detail = big};
    OK(f->a, sy_store_add_audit(f->a, &r));
    free(big);
    listing l = list(f->a, (sy_audit_filter){0});
    assert_int_equal(l.n, 1);
    assert_int_equal(strlen(l.detail[0]), SY_AUDIT_TEXT_MAX);
    assert_string_equal(l.detail[0] + SY_AUDIT_TEXT_MAX - 3, "...");
}

static void test_retention(void **state)
{
    fx *f = *state;
    add(f->a, 1000, "ci", "submit", true);
    add(f->a, 2000, "ci", "retry", true);
    add(f->a, 9000, "ci", "cancel", true);
    /* A run's deletion is not the trail's. */
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_run(f->a, f->run, &f->h1, SY_RUN_COMPLETED, NULL, 300));
    OK(f->a, sy_store_commit(f->a));
    size_t deleted = 0;
    OK(f->a, sy_store_delete_finished(f->a, 1000000, 10, &deleted));
    assert_int_equal(deleted, 1);
    assert_int_equal(list(f->a, (sy_audit_filter){0}).n, 3);
    OK(f->a, sy_store_delete_audit(f->a, 2500, &deleted));
    assert_int_equal(deleted, 2);
    listing l = list(f->a, (sy_audit_filter){0});
    assert_int_equal(l.n, 1);
    assert_string_equal(l.action[0], "cancel");
}

static void test_bad_arguments(void **state)
{
    fx *f = *state;
    sy_audit_record r = {.at = 1, .who = "ci", .role = "admin", .origin = "cli"};
    assert_int_equal(sy_store_add_audit(f->a, &r), SY_EINVAL);
    fx_assert_contains(sy_store_errmsg(f->a), "action");
    listing l = {0};
    sy_audit_filter none = {.limit = 0};
    assert_int_equal(sy_store_list_audit(f->a, &none, collect, &l), SY_EINVAL);
    assert_int_equal(sy_store_delete_audit(f->a, 0, NULL), SY_EINVAL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_add_and_list), T(test_filters), T(test_long_text_cut), T(test_retention),
        T(test_bad_arguments),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_add_and_list), P(test_filters), P(test_long_text_cut), P(test_retention),
        P(test_bad_arguments),
    };
    return fx_run_groups("audit", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("audit", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
