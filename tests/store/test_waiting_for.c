/* A Waiting task's reason (store.h, sy_task_record.waiting_for): written
 * with the row by the single and the batched writes of tasks and of
 * elements, read back as written (characters an array literal escapes
 * included), cleared by a write without one; a Waiting element is listed
 * among the open ones.  SQLite, then PostgreSQL when this build has libpq. */
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

/* Quotes, a backslash, a comma, braces and the word NULL. */
#define WHY "waiting for key:db:\"a\\b\", {x} NULL (2 of 2 held)"

struct rows {
    size_t n;
    sy_task_state state[8];
    char why[8][128];
};

static int on_task(void *arg, const sy_task_record *t)
{
    struct rows *r = arg;
    assert_true(r->n < 8);
    r->state[r->n] = t->state;
    fx_copy(r->why[r->n], sizeof r->why[r->n], t->waiting_for);
    r->n++;
    return 0;
}

static int on_element(void *arg, int64_t elem, const sy_task_record *t)
{
    (void)elem;
    return on_task(arg, t);
}

static struct rows tasks(sy_store *s, int64_t run)
{
    struct rows r = {0};
    OK(s, sy_store_list_tasks(s, run, on_task, &r));
    return r;
}

static struct rows elements(sy_store *s, int64_t run, bool open_only)
{
    struct rows r = {0};
    OK(s, sy_store_list_elements(s, run, 0, open_only, on_element, &r));
    return r;
}

static sy_task_record row(uint32_t idx, sy_task_state state, int64_t token, const char *why)
{
    return (sy_task_record){.idx = idx, .state = state, .fence = token,
                            .waiting_for = (char *)why};
}

static void test_task_rows(void **state)
{
    fx *f = *state;
    /* One write alone, one of a batch. */
    sy_task_record x = row(0, SY_TASK_WAITING, 0, WHY);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_task(f->a, f->run, &f->h1, 0, &x));
    OK(f->a, sy_store_commit(f->a));
    sy_task_record y = row(1, SY_TASK_WAITING, 0, "waiting for pool:gpu (4 of 4 held)");
    sy_store_task_write w[] = {{f->run, &f->h1, 0, &y}};
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w, 1, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);
    struct rows t = tasks(f->b, f->run);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.state[0], SY_TASK_WAITING);
    assert_string_equal(t.why[0], WHY);
    assert_int_equal(t.state[1], SY_TASK_WAITING);
    assert_string_equal(t.why[1], "waiting for pool:gpu (4 of 4 held)");
    /* Starting clears it (no reason written), in a batch of two. */
    sy_task_record xs = row(0, SY_TASK_RUNNING, 1, NULL);
    sy_task_record yd = row(1, SY_TASK_DROPPED, 0, NULL);
    sy_store_task_write w2[] = {{f->run, &f->h1, 0, &xs}, {f->run, &f->h1, 0, &yd}};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_tasks(f->a, w2, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);
    t = tasks(f->b, f->run);
    assert_int_equal(t.state[0], SY_TASK_RUNNING);
    assert_string_equal(t.why[0], "(null)");
    assert_int_equal(t.state[1], SY_TASK_DROPPED);
    assert_string_equal(t.why[1], "(null)");
}

static void test_element_rows(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_put_map(f->a, f->run, &f->h1, 0, 3));
    OK(f->a, sy_store_commit(f->a));
    /* Element 0 alone (made by the write), 1 and 2 in a batch. */
    sy_task_record e0 = row(0, SY_TASK_WAITING, 0, WHY);
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_element(f->a, f->run, &f->h1, 0, 0, &e0));
    OK(f->a, sy_store_commit(f->a));
    sy_task_record e1 = row(0, SY_TASK_WAITING, 0, "waiting for tenant:a (1 of 1 held)");
    sy_task_record e2 = row(0, SY_TASK_COMPLETED, 0, NULL);
    sy_store_element_write w[] = {{f->run, &f->h1, 0, 1, &e1}, {f->run, &f->h1, 0, 2, &e2}};
    fx_refusals r = {.s = f->a};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_elements(f->a, w, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);
    /* The open ones: both Waiting elements, not the Completed one. */
    struct rows e = elements(f->b, f->run, true);
    assert_int_equal(e.n, 2);
    assert_int_equal(e.state[0], SY_TASK_WAITING);
    assert_string_equal(e.why[0], WHY);
    assert_string_equal(e.why[1], "waiting for tenant:a (1 of 1 held)");
    /* Element 1 starts: its reason goes; element 0's is rewritten. */
    sy_task_record s1 = row(0, SY_TASK_RUNNING, 1, NULL);
    sy_task_record w0 = row(0, SY_TASK_WAITING, 0, "waiting for key:other (1 of 1 held)");
    sy_store_element_write w2[] = {{f->run, &f->h1, 0, 1, &s1}, {f->run, &f->h1, 0, 0, &w0}};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_elements(f->a, w2, 2, fx_note_refusal, &r));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(r.n, 0);
    e = elements(f->b, f->run, false);
    assert_int_equal(e.n, 3);
    assert_string_equal(e.why[0], "waiting for key:other (1 of 1 held)");
    assert_int_equal(e.state[1], SY_TASK_RUNNING);
    assert_string_equal(e.why[1], "(null)");
    assert_string_equal(e.why[2], "(null)");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, fx_setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_task_rows),
        T(test_element_rows),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_task_rows),
        P(test_element_rows),
    };
    return fx_run_groups("waiting_for", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("waiting_for", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
