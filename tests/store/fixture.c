/* fixture.c -- see fixture.h. */
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
#include "fixture.h"
#include "store/slots.h"

const char *fx_store_url = "sqlite:store.db";

sy_store *fx_open(const char *dir)
{
    sy_store *s = NULL;
    char err[512] = "";
    if (sy_store_open(fx_store_url, dir, &s, err, sizeof err) != SY_OK)
        fail_msg("open: %s", err);
    return s;
}

int64_t fx_epoch(sy_store *s, int64_t run)
{
    sy_run_record r;
    OK(s, sy_store_get_run(s, run, &r));
    int64_t epoch = r.lease_epoch;
    sy_run_record_clear(&r);
    return epoch;
}

int64_t fx_run_of_h2(fx *f, int64_t until, int64_t *run)
{
    static const char *const ids[] = {"x"};
    static const char *const ns[] = {"public::w::x"};
    bool got = false;
    OK(f->b, sy_store_create_run(f->b, HASH, "public", "w", "{}", 1, ids, ns, 1, run));
    OK(f->b, sy_store_claim_run(f->b, *run, "h2", until, 10, NULL, 0, &got));
    assert_true(got);
    return fx_epoch(f->b, *run);
}

int64_t fx_room(sy_store *s, const char *key, int64_t limit, int64_t now)
{
    sy_slot_claim c = {key, limit, 1};
    int64_t held = -2;
    OK(s, sy_store_begin(s));
    OK(s, sy_store_slot_room(s, &c, 1, now, &held));
    OK(s, sy_store_commit(s));
    return held;
}

void fx_assert_contains(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("\"%s\" does not contain \"%s\"", haystack ? haystack : "(null)",
                 needle);
}

int fx_setup_on(void **state, const char *url, bool claimed_run)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    fx_store_url = url;
    f->a = fx_open(f->dir);
    f->b = fx_open(f->dir);
    OK(f->a, sy_store_put_definition(f->a, HASH, "public", "w", "{}"));
    if (claimed_run) {
        static const char *const ids[] = {"x", "y"};
        static const char *const ns[] = {"public::w::x", "public::w::y"};
        OK(f->a, sy_store_create_run(f->a, HASH, "public", "w", "{}", 2, ids, ns, 1, &f->run));
        bool got = false;
        OK(f->a, sy_store_claim_run(f->a, f->run, "h1", 1000, 10, NULL, 0, &got));
        assert_true(got);
        f->h1 = (sy_store_fence){"h1", fx_epoch(f->a, f->run)};
    }
    *state = f;
    return 0;
}

int fx_setup(void **state)
{
    return fx_setup_on(state, "sqlite:store.db", true);
}

#ifdef SY_HAVE_LIBPQ
int fx_setup_pg(void **state)
{
    th_pg_reset(th_pg_url());
    return fx_setup_on(state, th_pg_url(), true);
}
#endif

int fx_teardown(void **state)
{
    fx *f = *state;
    sy_store_close(f->a);
    sy_store_close(f->b);
    th_rmtree(f->dir);
    free(f);
    return 0;
}

int fx_run_groups(const char *name, const struct CMUnitTest *sqlite, size_t n,
                  const struct CMUnitTest *pg, size_t n_pg)
{
#ifdef SY_HAVE_LIBPQ
    if (!th_pg_url())
        n_pg = 0;
#else
    n_pg = 0;
#endif
    struct CMUnitTest *all = calloc(n + n_pg + 1, sizeof *all);
    if (!all)
        return 1;
    if (n) /* a program of PostgreSQL tests only has no SQLite group */
        memcpy(all, sqlite, n * sizeof *all);
    if (n_pg)
        memcpy(all + n, pg, n_pg * sizeof *all);
    int failed = _cmocka_run_group_tests(name, all, n + n_pg, NULL, NULL);
    free(all);
    return failed;
}

void fx_copy(char *dst, size_t len, const char *s)
{
    snprintf(dst, len, "%s", s ? s : "(null)");
}

void fx_note_refusal(void *arg, size_t i, int status)
{
    fx_refusals *r = arg;
    assert_true(r->n < 8);
    r->i[r->n] = i;
    r->status[r->n] = status;
    fx_copy(r->why[r->n], sizeof r->why[r->n], sy_store_errmsg(r->s));
    r->n++;
}
