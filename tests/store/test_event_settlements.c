/* What triggers made of named events (sy_store_event_settlements): for
 * the events of an id range, each trigger's settling, by event: the run
 * its firing started, or why it passed the event over; events outside
 * the range, runs settled as items and events nobody settled are not
 * listed.  On SQLite, then on PostgreSQL on a throwaway server when this
 * build has libpq. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../helpers.h"
#include "base/util.h"
#include "store/named_events.h"
#include "fixture.h"

static const char *const ids[] = {"x"};
static const char *const ns[] = {"public::r::x"};

static int64_t emit(sy_store *s, const char *name)
{
    int64_t id = -1;
    bool dup = true;
    OK(s, sy_store_emit(s, name, NULL, "{}", 0, 10, &id, &dup));
    assert_false(dup);
    return id;
}

/* Settles one item for trigger `key`: consumed (a run) or passed over. */
static int64_t settle(sy_store *s, const char *key, sy_item_source source, int64_t id,
                      const char *reason)
{
    sy_trigger_record t;
    OK(s, sy_store_trigger_open(s, key, 0, &t));
    sy_trigger_item it = {source, id, reason};
    sy_trigger_firing fr = {.key = key, .items = &it, .n_items = 1, .hash = HASH,
                            .tenant = "public", .workflow = "r", .context = "{}",
                            .n_tasks = 1, .task_ids = ids, .ns = ns};
    sy_fire_outcome out;
    int64_t run = 0;
    OK(s, sy_store_fire(s, &fr, 100, &out, &run));
    assert_int_equal(out, reason ? SY_FIRE_SETTLED : SY_FIRE_STARTED);
    return run;
}

typedef struct seen {
    size_t n;
    char line[8][128];
} seen;

static int note(void *arg, const sy_event_settlement *e)
{
    seen *s = arg;
    assert_true(s->n < 8);
    snprintf(s->line[s->n++], sizeof s->line[0], "%lld %s %lld %s", (long long)e->event_id,
             e->trigger, (long long)e->run_id, e->reason ? e->reason : "-");
    return 0;
}

static void test_settlements(void **state)
{
    fx *f = *state;
    int64_t e1 = emit(f->a, "landed");
    int64_t e2 = emit(f->a, "landed");
    int64_t e3 = emit(f->a, "landed");
    int64_t e4 = emit(f->a, "landed");
    int64_t r1 = settle(f->a, "public::r::a", SY_ITEM_EVENT, e1, NULL);
    settle(f->b, "public::r::b", SY_ITEM_EVENT, e1, "data.n: 2 is not 1");
    int64_t r2 = settle(f->b, "public::r::a", SY_ITEM_EVENT, e2, NULL);
    /* A run settled as an item of the same number is not an event's. */
    settle(f->a, "public::r::c", SY_ITEM_RUN, e2, NULL);
    settle(f->a, "public::r::a", SY_ITEM_EVENT, e4, NULL);
    assert_true(r1 > 0 && r2 > 0 && r1 != r2);

    seen s = {0};
    OK(f->a, sy_store_event_settlements(f->a, e1, e3, note, &s));
    char want[3][128];
    snprintf(want[0], sizeof want[0], "%lld public::r::a %lld -", (long long)e1, (long long)r1);
    snprintf(want[1], sizeof want[1], "%lld public::r::b 0 data.n: 2 is not 1", (long long)e1);
    snprintf(want[2], sizeof want[2], "%lld public::r::a %lld -", (long long)e2, (long long)r2);
    assert_int_equal(s.n, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(s.line[i], want[i]);

    /* e3, settled by none: nothing; an empty range: nothing. */
    s = (seen){0};
    OK(f->b, sy_store_event_settlements(f->b, e3, e3, note, &s));
    assert_int_equal(s.n, 0);
    OK(f->b, sy_store_event_settlements(f->b, e4, e1, note, &s));
    assert_int_equal(s.n, 0);
    assert_int_equal(sy_store_event_settlements(f->b, e1, e4, NULL, NULL), SY_EINVAL);
}

int main(void)
{
    const struct CMUnitTest sqlite_tests[] = {
        cmocka_unit_test_setup_teardown(test_settlements, fx_setup, fx_teardown)};
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        {"test_settlements (postgresql)", test_settlements, fx_setup_pg, fx_teardown, NULL}};
    return fx_run_groups("event_settlements", sqlite_tests, SY_ARRAY_LEN(sqlite_tests),
                         pg_tests, SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("event_settlements", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL,
                         0);
#endif
}
