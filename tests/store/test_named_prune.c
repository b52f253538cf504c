/* Keeping named events and trigger rows to events_keep
 * (sy_store_prune_named): what is older than the cutoff and no trigger
 * needs goes (events of a name nobody listens to, events and items a
 * trigger settled, firings whose run ended); an event a trigger has not
 * settled yet stays, and so does the firing of a run in flight; a
 * trigger's `since` only moves forward.  On SQLite, then on PostgreSQL
 * when this build has libpq. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/named_events.h"
#include "fixture.h"

#define KEY_A "public::r::a"
#define KEY_B "public::r::b"

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

static const char *const ids[] = {"x"};
static const char *const ns[] = {"public::r::x"};

static int64_t emit(sy_store *s, const char *name, int64_t now)
{
    int64_t id = -1;
    bool dup = true;
    OK(s, sy_store_emit(s, name, NULL, "{}", 1000, now, &id, &dup));
    assert_true(id > 0 && !dup);
    return id;
}

static sy_fire_outcome fire(sy_store *s, const char *key, const sy_trigger_item *items,
                            size_t n, int64_t now, int64_t *run)
{
    sy_trigger_firing fr = {.key = key, .items = items, .n_items = n, .hash = HASH,
                            .tenant = "public", .workflow = "r", .context = "{}",
                            .n_tasks = 1, .task_ids = ids, .ns = ns};
    sy_fire_outcome out = SY_FIRE_TAKEN;
    int64_t id = -1;
    OK(s, sy_store_fire(s, &fr, now, &out, &id));
    if (run)
        *run = id;
    return out;
}

typedef struct {
    size_t n;
    int64_t id[8];
} seen;

static int note(void *arg, const sy_named_event *ev)
{
    seen *s = arg;
    assert_true(s->n < 8);
    s->id[s->n++] = ev->id;
    return 0;
}

static void test_prune(void **state)
{
    fx *f = *state;
    sy_trigger_record t;
    OK(f->a, sy_store_trigger_open(f->a, KEY_A, 100, &t));
    OK(f->a, sy_store_trigger_open(f->a, KEY_B, 100, &t));
    int64_t unheard = emit(f->a, "unheard", 150);
    int64_t e1 = emit(f->a, "landed", 200);
    int64_t other = emit(f->a, "other", 250);
    int64_t e2 = emit(f->a, "landed", 300);
    int64_t fresh = emit(f->a, "landed", 5000);
    /* A settles both old "landed" events: one fires a run, one is passed
     * over.  B has not settled "other" (a part of an AND still pending). */
    int64_t run = 0;
    sy_trigger_item fired = {SY_ITEM_EVENT, e1, NULL}, passed = {SY_ITEM_EVENT, e2, "no"};
    assert_int_equal(fire(f->a, KEY_A, &fired, 1, 400, &run), SY_FIRE_STARTED);
    assert_int_equal(fire(f->a, KEY_A, &passed, 1, 410, NULL), SY_FIRE_SETTLED);

    /* What the service works out: A needs nothing before the cutoff, B
     * needs "other" from its oldest unsettled event on. */
    sy_trigger_need triggers[] = {{KEY_A, 1000}, {KEY_B, 250}};
    sy_event_need needs[] = {{"landed", 1000}, {"other", 250}};
    sy_named_pruned n = {9, 9, 9};
    OK(f->b, sy_store_prune_named(f->b, 1000, triggers, 2, needs, 2, &n));
    assert_int_equal(n.events, 3); /* unheard, e1, e2 */
    assert_int_equal(n.items, 2);  /* A's two, settled before its new since */
    assert_int_equal(n.firings, 0); /* its run has not ended */
    seen s = {0};
    OK(f->a, sy_store_list_named_events(f->a, NULL, 8, note, &s));
    assert_int_equal(s.n, 2);
    assert_true(s.id[0] == fresh && s.id[1] == other);
    (void)unheard;
    /* B still finds its pending event; A listens from the cutoff on. */
    s = (seen){0};
    OK(f->a, sy_store_trigger_events(f->a, KEY_B, "other", 100, 8, note, &s));
    assert_true(s.n == 1 && s.id[0] == other);
    OK(f->a, sy_store_trigger_open(f->a, KEY_A, 9000, &t));
    assert_true(t.since == 1000 && t.firings == 1 && t.in_flight == 1 && t.last_run == run);
    s = (seen){0};
    OK(f->a, sy_store_trigger_events(f->a, KEY_A, "landed", t.since, 8, note, &s));
    assert_true(s.n == 1 && s.id[0] == fresh);

    /* The run ends: its firing goes; a since never moves back. */
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_run(f->a, run, NULL, SY_RUN_RUNNING, NULL, 500));
    OK(f->a, sy_store_update_run(f->a, run, NULL, SY_RUN_COMPLETED, NULL, 501));
    OK(f->a, sy_store_commit(f->a));
    sy_trigger_need back[] = {{KEY_A, 500}};
    OK(f->a, sy_store_prune_named(f->a, 1000, back, 1, needs, 2, &n));
    assert_true(n.events == 0 && n.items == 0 && n.firings == 1);
    OK(f->a, sy_store_trigger_open(f->a, KEY_A, 9000, &t));
    assert_true(t.since == 1000 && t.in_flight == 0 && t.firings == 1);
    /* A second pass finds nothing more. */
    OK(f->a, sy_store_prune_named(f->a, 1000, triggers, 2, needs, 2, &n));
    assert_true(n.events == 0 && n.items == 0 && n.firings == 0);
}

int main(void)
{
    const struct CMUnitTest sqlite_tests[] = {
        cmocka_unit_test_setup_teardown(test_prune, setup, fx_teardown)};
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        {"test_prune (postgresql)", test_prune, setup_pg, fx_teardown, NULL}};
    return fx_run_groups("named_prune", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("named_prune", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
