/* A turn's element-row writes in one call (store.h,
 * sy_store_update_elements): each write made and fenced exactly as
 * sy_store_update_element makes it (a first write makes the row), the
 * refused ones named one by one with their reason before the call
 * returns, the others landed, the batch usable.  Each test runs on SQLite
 * (one write at a time behind the same interface), then on PostgreSQL when
 * this build has libpq (one statement for the lot). */
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
#include "store/store.h"
#include "fixture.h"

/* The element rows of task 0, in element order. */
struct rows {
    size_t n;
    int64_t elem[8];
    sy_task_state state[8];
    int64_t fence[8];
    char host[8][32], output[8][128];
};

static int on_element(void *arg, int64_t elem, const sy_task_record *t)
{
    struct rows *r = arg;
    assert_true(r->n < 8);
    r->elem[r->n] = elem;
    r->state[r->n] = t->state;
    r->fence[r->n] = t->fence;
    fx_copy(r->host[r->n], sizeof r->host[r->n], t->host);
    fx_copy(r->output[r->n], sizeof r->output[r->n], t->output);
    r->n++;
    return 0;
}

static struct rows elements(sy_store *s, int64_t run)
{
    struct rows r = {0};
    OK(s, sy_store_list_elements(s, run, 0, false, on_element, &r));
    return r;
}

/* Characters an array literal must escape and the word NULL: each comes
 * back as it was written. */
#define TRICKY "{\"a\": \"b\\\\c, d\", \"e\": [1, 2], \"f\": \"NULL\"}"

static sy_task_record element(sy_task_state state, int64_t token, const char *output)
{
    return (sy_task_record){.idx = 0, .state = state, .attempts = 1, .executor = "default",
                            .output = (char *)output, .fence = token};
}

/* Task x maps over 3 elements.  One call makes two rows (one Ready, one
 * whose attempt starts) and is refused one past the map's end; the next
 * completes one, and is refused a stale token on a row and a token on a
 * row never made.  Each refused write is named with its reason, the
 * others land, and both batches commit. */
static void test_each_refusal_named(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 0, 3));
    sy_task_record ready = element(SY_TASK_READY, 0, TRICKY);
    sy_task_record past = element(SY_TASK_READY, 0, NULL);
    sy_task_record start = element(SY_TASK_RUNNING, 1, NULL);
    sy_store_element_write w[] = {
        {f->run, &f->h1, 0, 0, &ready},
        {f->run, &f->h1, 0, 5, &past},
        {f->run, &f->h1, 0, 1, &start},
    };
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_update_elements(f->a, w, 3, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 1);
    assert_int_equal(r.i[0], 1);
    assert_int_equal(r.status[0], SY_STORE_EFENCED);
    fx_assert_contains(r.why[0], "task 0[5] no longer holds attempt token 0");

    sy_task_record stale = element(SY_TASK_FAILED, 3, NULL);
    sy_task_record done = element(SY_TASK_COMPLETED, 1, "{\"y\": 2}");
    sy_task_record never = element(SY_TASK_COMPLETED, 2, NULL);
    sy_store_element_write w2[] = {
        {f->run, &f->h1, 3, 0, &stale},
        {f->run, &f->h1, 1, 1, &done},
        {f->run, &f->h1, 2, 2, &never},
    };
    r.n = 0;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_elements(f->a, w2, 3, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 2);
    assert_int_equal(r.i[0], 0);
    assert_int_equal(r.status[0], SY_STORE_EFENCED);
    fx_assert_contains(r.why[0], "task 0[0] no longer holds attempt token 3");
    assert_int_equal(r.i[1], 2);
    assert_int_equal(r.status[1], SY_STORE_EFENCED);
    fx_assert_contains(r.why[1], "task 0[2] no longer holds attempt token 2");

    struct rows e = elements(f->a, f->run);
    assert_int_equal(e.n, 2);
    assert_int_equal(e.elem[0], 0);
    assert_int_equal(e.state[0], SY_TASK_READY);
    assert_int_equal(e.fence[0], 0);
    assert_string_equal(e.output[0], TRICKY);
    assert_string_equal(e.host[0], "(null)");
    assert_int_equal(e.elem[1], 1);
    assert_int_equal(e.state[1], SY_TASK_COMPLETED);
    assert_int_equal(e.fence[1], 1);
    assert_string_equal(e.host[1], "h1");
    assert_string_equal(e.output[1], "{\"y\": 2}");
}

/* Once another host has claimed the run, every write of the old claim is
 * refused, a row already there and a first write alike; without a fence
 * a write lands regardless, and one without its map is named as such. */
static void test_takeover_refuses_the_lot(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 0, 2));
    sy_task_record t0 = element(SY_TASK_RUNNING, 1, NULL);
    sy_store_element_write w[] = {{f->run, &f->h1, 0, 0, &t0}};
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_update_elements(f->a, w, 1, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);

    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 9000, 1001, NULL, 0, &got));
    assert_true(got);
    sy_task_record done = element(SY_TASK_COMPLETED, 1, "{\"by\":\"h1\"}");
    sy_task_record first = element(SY_TASK_READY, 0, NULL);
    sy_store_element_write late[] = {{f->run, &f->h1, 1, 0, &done},
                                     {f->run, &f->h1, 0, 1, &first}};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_elements(f->a, late, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 2);
    assert_int_equal(r.status[0], SY_STORE_EFENCED);
    assert_int_equal(r.status[1], SY_STORE_EFENCED);
    fx_assert_contains(r.why[0], "held by h2");
    fx_assert_contains(r.why[1], "held by h2");
    struct rows e = elements(f->a, f->run);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.state[0], SY_TASK_RUNNING);

    sy_task_record nomap = element(SY_TASK_READY, 0, NULL);
    nomap.idx = 1;
    sy_store_element_write tool[] = {{f->run, NULL, 1, 0, &done},
                                     {f->run, NULL, 0, 9, &nomap}};
    r.n = 0;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_elements(f->a, tool, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 1);
    assert_int_equal(r.i[0], 1);
    assert_int_equal(r.status[0], SY_ENOENT);
    fx_assert_contains(r.why[0], "has no map at task 1 with element 9");
    e = elements(f->a, f->run);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.state[0], SY_TASK_COMPLETED);
    assert_string_equal(e.output[0], "{\"by\":\"h1\"}");
}

/* Outside a batch the call is refused; an invalid write refuses the whole
 * call before anything is sent; no writes is nothing to do. */
static void test_bad_calls(void **state)
{
    fx *f = *state;
    sy_task_record good = element(SY_TASK_READY, 0, NULL);
    sy_task_record back = element(SY_TASK_RUNNING, 2, NULL);
    sy_store_element_write w[] = {{f->run, &f->h1, 0, 0, &good}, {f->run, &f->h1, 3, 1, &back}};
    fx_refusals r = {.s = f->a};
    assert_int_equal(sy_store_update_elements(f->a, w, 1, fx_note_refusal, &r), SY_ESTATE);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 0, 2));
    OK(f->a, sy_store_update_elements(f->a, w, 0, fx_note_refusal, &r));
    assert_int_equal(sy_store_update_elements(f->a, w, 2, fx_note_refusal, &r), SY_EINVAL);
    fx_assert_contains(sy_store_errmsg(f->a), "attempt token 3 would go back to 2");
    w[0].elem = -1;
    assert_int_equal(sy_store_update_elements(f->a, w, 1, fx_note_refusal, &r), SY_EINVAL);
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);
    assert_int_equal(elements(f->a, f->run).n, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_each_refusal_named),
        T(test_takeover_refuses_the_lot),
        T(test_bad_calls),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_each_refusal_named),
        P(test_takeover_refuses_the_lot),
        P(test_bad_calls),
    };
    return fx_run_groups("element_writes", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("element_writes", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
