/* Mapped tasks in the store, on SQLite and PostgreSQL alike: a map's size,
 * element rows made by their first write, fenced by the run's claim and
 * each element's token, listed in order, counted by state, and gone with
 * their run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

typedef struct {
    char *dir;
    sy_store *s;
    int64_t run;
} fx;

static sy_store *open_ok(const char *url, const char *base)
{
    sy_store *s = NULL;
    char err[512] = "";
    if (sy_store_open(url, base, &s, err, sizeof err) != SY_OK)
        fail_msg("open %s: %s", url, err);
    return s;
}

#define OK(call)                                                                   \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != SY_OK)                                                          \
            fail_msg("%s: %d %s", #call, rc_, sy_store_errmsg(f->s));              \
    } while (0)

/* A run of one task, `m`, claimed by "h1" (epoch 1). */
static int setup_with(void **state, const char *url)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    f->s = open_ok(url, f->dir);
    static const char *const ids[] = {"m"}, *const ns[] = {"public::w::m"};
    OK(sy_store_put_definition(f->s, "h", "public", "w", "{}"));
    OK(sy_store_create_run(f->s, "h", "public", "w", "{}", 1, ids, ns, 1000, &f->run));
    bool got = false;
    OK(sy_store_claim_run(f->s, f->run, "h1", 99999999, 1000, NULL, 0, &got));
    assert_true(got);
    *state = f;
    return 0;
}

static int setup_file(void **state) { return setup_with(state, "sqlite:store.db"); }

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    th_pg_reset(th_pg_url());
    return setup_with(state, th_pg_url());
}
#endif

static int teardown(void **state)
{
    fx *f = *state;
    sy_store_close(f->s);
    th_rmtree(f->dir);
    free(f);
    return 0;
}

static sy_store_fence fence(fx *f)
{
    sy_run_record r;
    assert_int_equal(sy_store_get_run(f->s, f->run, &r), SY_OK);
    int64_t epoch = r.lease_epoch;
    sy_run_record_clear(&r);
    return (sy_store_fence){"h1", epoch};
}

static sy_task_record element(sy_task_state state, int64_t token, const char *output)
{
    return (sy_task_record){.idx = 0, .state = state, .attempts = 1, .executor = "default",
                            .output = (char *)output, .fence = token};
}

struct seen {
    int64_t elems[16];
    char outputs[16][32];
    sy_task_state states[16];
    size_t n;
    sy_map_record m;
    int maps;
};

static int on_element(void *arg, int64_t elem, const sy_task_record *t)
{
    struct seen *c = arg;
    assert_true(c->n < 16);
    c->elems[c->n] = elem;
    c->states[c->n] = t->state;
    snprintf(c->outputs[c->n++], 32, "%s", t->output ? t->output : "-");
    return 0;
}

static int on_map(void *arg, const sy_map_record *m)
{
    struct seen *c = arg;
    c->m = *m;
    c->maps++;
    return 0;
}

static void test_elements(void **state)
{
    fx *f = *state;
    sy_store_fence h1 = fence(f);
    OK(sy_store_begin(f->s));
    OK(sy_store_put_map(f->s, f->run, &h1, 0, 3));
    OK(sy_store_put_map(f->s, f->run, &h1, 0, 3)); /* again: no-op */
    /* Made by their first writes, out of order. */
    sy_task_record t = element(SY_TASK_READY, 0, NULL);
    OK(sy_store_update_element(f->s, f->run, &h1, 0, 2, &t));
    OK(sy_store_update_element(f->s, f->run, &h1, 0, 0, &t));
    /* Past the map's size: no such element. */
    assert_int_equal(sy_store_update_element(f->s, f->run, &h1, 0, 3, &t), SY_STORE_EFENCED);
    /* An attempt starts: token 0 -> 1; then it completes under token 1. */
    t = element(SY_TASK_RUNNING, 1, NULL);
    OK(sy_store_update_element(f->s, f->run, &h1, 0, 2, &t));
    t = element(SY_TASK_COMPLETED, 1, "{\"y\":2}");
    OK(sy_store_update_element(f->s, f->run, &h1, 1, 2, &t));
    /* A write naming a token the row no longer holds is refused. */
    t = element(SY_TASK_FAILED, 0, NULL);
    assert_int_equal(sy_store_update_element(f->s, f->run, &h1, 0, 2, &t), SY_STORE_EFENCED);
    OK(sy_store_commit(f->s));

    struct seen c = {0};
    OK(sy_store_list_elements(f->s, f->run, 0, false, on_element, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.elems[0], 0);
    assert_int_equal(c.elems[1], 2);
    assert_string_equal(c.outputs[1], "{\"y\":2}");
    assert_int_equal(c.states[1], SY_TASK_COMPLETED);
    memset(&c, 0, sizeof c);
    OK(sy_store_list_elements(f->s, f->run, 0, true, on_element, &c));
    assert_int_equal(c.n, 1); /* only the open one */
    assert_int_equal(c.elems[0], 0);
    memset(&c, 0, sizeof c);
    OK(sy_store_list_maps(f->s, f->run, on_map, &c));
    assert_int_equal(c.maps, 1);
    assert_int_equal(c.m.idx, 0);
    assert_int_equal(c.m.size, 3);
    assert_int_equal(c.m.created, 2);
    assert_int_equal(c.m.count[SY_TASK_READY], 1);
    assert_int_equal(c.m.count[SY_TASK_COMPLETED], 1);
}

/* Another host's claim: this one's element writes are refused. */
static void test_fenced_by_claim(void **state)
{
    fx *f = *state;
    sy_store_fence h1 = fence(f);
    OK(sy_store_begin(f->s));
    OK(sy_store_put_map(f->s, f->run, &h1, 0, 2));
    sy_task_record t = element(SY_TASK_READY, 0, NULL);
    OK(sy_store_update_element(f->s, f->run, &h1, 0, 0, &t));
    OK(sy_store_commit(f->s));
    bool got = false;
    const char *stale[] = {"h1"};
    OK(sy_store_claim_run(f->s, f->run, "h2", 99999999, 2000, stale, 1, &got));
    assert_true(got);
    OK(sy_store_begin(f->s));
    assert_int_equal(sy_store_update_element(f->s, f->run, &h1, 0, 1, &t), SY_STORE_EFENCED);
    assert_int_equal(sy_store_update_element(f->s, f->run, &h1, 0, 0, &t), SY_STORE_EFENCED);
    assert_int_equal(sy_store_put_map(f->s, f->run, &h1, 0, 2), SY_STORE_EFENCED);
    sy_store_rollback(f->s);
    struct seen c = {0};
    OK(sy_store_list_elements(f->s, f->run, 0, false, on_element, &c));
    assert_int_equal(c.n, 1);
    /* Gone with their run. */
    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, f->run, NULL, SY_RUN_COMPLETED, NULL, 3000));
    OK(sy_store_commit(f->s));
    size_t deleted = 0;
    OK(sy_store_delete_finished(f->s, 4000, 10, &deleted));
    assert_int_equal(deleted, 1);
    memset(&c, 0, sizeof c);
    OK(sy_store_list_elements(f->s, f->run, 0, false, on_element, &c));
    assert_int_equal(c.n, 0);
    OK(sy_store_list_maps(f->s, f->run, on_map, &c));
    assert_int_equal(c.maps, 0);
}

int main(void)
{
#define F(fn) {#fn " (sqlite)", fn, setup_file, teardown, NULL}
#define P(fn) {#fn " (postgresql)", fn, setup_pg, teardown, NULL}
    const struct CMUnitTest all[] = {
        F(test_elements),
        F(test_fenced_by_claim),
#ifdef SY_HAVE_LIBPQ
        P(test_elements),
        P(test_fenced_by_claim),
#endif
    };
    size_t n = SY_ARRAY_LEN(all);
#ifdef SY_HAVE_LIBPQ
    if (!th_pg_url())
        n -= 2;
#endif
    return _cmocka_run_group_tests("elements", all, n, NULL, NULL);
}
