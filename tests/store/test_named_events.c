/* Named events and trigger firings in the store (store/named_events.h):
 * an event is recorded once per key within the window; a trigger's items
 * are settled once, by one of the hosts that fire it, with its run, in one
 * transaction; debounce and the bound on runs in flight are checked under
 * the trigger's lock; what each trigger made of an event is listed by
 * event.  Each test runs on SQLite, then on PostgreSQL on a
 * throwaway server when this build has libpq (two handles standing for two
 * hosts). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "base/util.h"
#include "store/named_events.h"
#include "fixture.h"

#define KEY "public::r::t"

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
static const char *const ns[] = {"public::r::x", "public::r::y"};

typedef struct seen {
    size_t n;
    int64_t id[16];
    char data[16][64];
} seen;

static int note(void *arg, const sy_named_event *ev)
{
    seen *s = arg;
    assert_true(s->n < 16);
    s->id[s->n] = ev->id;
    fx_copy(s->data[s->n], sizeof s->data[s->n], ev->data);
    s->n++;
    return 0;
}

static int64_t emit(sy_store *s, const char *name, const char *key, const char *data,
                    int64_t now, bool *dup)
{
    int64_t id = -1;
    bool d = true;
    OK(s, sy_store_emit(s, name, key, data, 1000, now, &id, &d));
    assert_true(id > 0);
    if (dup)
        *dup = d;
    return id;
}

static void test_emit_key_window(void **state)
{
    fx *f = *state;
    bool dup = true;
    int64_t a = emit(f->a, "landed", "k1", "{\"n\":1}", 10000, &dup);
    assert_false(dup);
    /* The same key within the window, from the other host: the first. */
    assert_true(emit(f->b, "landed", "k1", "{\"n\":2}", 10500, &dup) == a);
    assert_true(dup);
    /* Another key, another name, no key: new events. */
    assert_true(emit(f->b, "landed", "k2", "{\"n\":3}", 10500, &dup) != a && !dup);
    assert_true(emit(f->b, "other", "k1", "{\"n\":4}", 10500, &dup) != a && !dup);
    emit(f->a, "landed", NULL, "{\"n\":5}", 10500, &dup);
    assert_false(dup);
    /* The window over: recorded again. */
    assert_true(emit(f->a, "landed", "k1", "{\"n\":6}", 11001, &dup) != a && !dup);
    seen s = {0};
    OK(f->a, sy_store_list_named_events(f->a, "landed", 10, note, &s));
    assert_int_equal(s.n, 4);
    assert_string_equal(s.data[0], "{\"n\":6}");
    assert_string_equal(s.data[3], "{\"n\":1}");
    s = (seen){0};
    OK(f->a, sy_store_list_named_events(f->a, NULL, 2, note, &s));
    assert_int_equal(s.n, 2);
}

/* Ends run `id` in `state` at `at`, as a host's batch would. */
static void end_run(sy_store *s, int64_t id, sy_run_state state, int64_t at)
{
    OK(s, sy_store_begin(s));
    OK(s, sy_store_update_run(s, id, NULL, SY_RUN_RUNNING, NULL, at - 1));
    OK(s, sy_store_update_run(s, id, NULL, state, state == SY_RUN_FAILED ? "x" : NULL, at));
    OK(s, sy_store_commit(s));
}

static sy_fire_outcome fire(sy_store *s, const sy_trigger_item *items, size_t n, int64_t now,
                            int64_t debounce, uint32_t max, int64_t *run)
{
    sy_trigger_firing fr = {.key = KEY, .items = items, .n_items = n, .debounce_ms = debounce,
                            .max_in_flight = max, .hash = HASH, .tenant = "public",
                            .workflow = "r", .context = "{\"trigger\":{}}", .n_tasks = 2,
                            .task_ids = ids, .ns = ns};
    sy_fire_outcome out = SY_FIRE_TAKEN;
    int64_t id = -1;
    OK(s, sy_store_fire(s, &fr, now, &out, &id));
    if (run)
        *run = id;
    return out;
}

static void test_fire_once(void **state)
{
    fx *f = *state;
    sy_trigger_record t;
    OK(f->a, sy_store_trigger_open(f->a, KEY, 5000, &t));
    assert_true(t.since == 5000 && t.firings == 0);
    /* Registered once: the other host reads the first's `since`. */
    OK(f->b, sy_store_trigger_open(f->b, KEY, 9000, &t));
    assert_true(t.since == 5000);
    int64_t old = emit(f->a, "landed", NULL, "{}", 4000, NULL);
    int64_t e1 = emit(f->a, "landed", NULL, "{\"n\":1}", 6000, NULL);
    int64_t e2 = emit(f->a, "landed", NULL, "{\"n\":2}", 6001, NULL);
    seen s = {0};
    OK(f->a, sy_store_trigger_events(f->a, KEY, "landed", t.since, 10, note, &s));
    assert_int_equal(s.n, 2);
    assert_true(s.id[0] == e1 && s.id[1] == e2 && old < e1);
    int64_t run = 0;
    sy_trigger_item one = {SY_ITEM_EVENT, e1, NULL};
    assert_int_equal(fire(f->a, &one, 1, 7000, 0, 0, &run), SY_FIRE_STARTED);
    assert_true(run > 0);
    /* The other host, late: nothing written. */
    int64_t none = -1;
    assert_int_equal(fire(f->b, &one, 1, 7001, 0, 0, &none), SY_FIRE_TAKEN);
    assert_true(none == 0);
    /* Passed over with a reason: settled, no run. */
    sy_trigger_item skip = {SY_ITEM_EVENT, e2, "data.n: 2 is not 1"};
    assert_int_equal(fire(f->b, &skip, 1, 7002, 0, 0, NULL), SY_FIRE_SETTLED);
    s = (seen){0};
    OK(f->b, sy_store_trigger_events(f->b, KEY, "landed", t.since, 10, note, &s));
    assert_int_equal(s.n, 0);
    OK(f->b, sy_store_trigger_open(f->b, KEY, 9000, &t));
    assert_true(t.firings == 1 && t.last_run == run && t.last_fired == 7000);
    assert_true(t.in_flight == 1);
    sy_run_record r;
    OK(f->b, sy_store_get_run(f->b, run, &r));
    assert_int_equal(r.state, SY_RUN_PENDING);
    assert_string_equal(r.context, "{\"trigger\":{}}");
    sy_run_record_clear(&r);
}

static int why(void *arg, sy_item_source source, int64_t id, const char *reason, int64_t at)
{
    (void)id;
    (void)at;
    assert_int_equal(source, SY_ITEM_EVENT);
    fx_copy(arg, 64, reason);
    return 0;
}

static void test_passed_reasons(void **state)
{
    fx *f = *state;
    sy_trigger_record t;
    OK(f->a, sy_store_trigger_open(f->a, KEY, 0, &t));
    int64_t e = emit(f->a, "landed", NULL, "{}", 1, NULL);
    sy_trigger_item skip = {SY_ITEM_EVENT, e, "no match"};
    assert_int_equal(fire(f->a, &skip, 1, 2, 0, 0, NULL), SY_FIRE_SETTLED);
    char got[64] = "";
    OK(f->a, sy_store_trigger_passed(f->a, KEY, 5, why, got));
    assert_string_equal(got, "no match");
}

static void test_debounce_and_bound(void **state)
{
    fx *f = *state;
    sy_trigger_record t;
    OK(f->a, sy_store_trigger_open(f->a, KEY, 0, &t));
    int64_t e[4];
    for (int i = 0; i < 4; i++)
        e[i] = emit(f->a, "landed", NULL, "{}", 10 + i, NULL);
    sy_trigger_item it[4];
    for (int i = 0; i < 4; i++)
        it[i] = (sy_trigger_item){SY_ITEM_EVENT, e[i], NULL};
    int64_t run = 0;
    assert_int_equal(fire(f->a, &it[0], 1, 1000, 500, 0, &run), SY_FIRE_STARTED);
    /* Within the window of the last firing: refused, then allowed. */
    assert_int_equal(fire(f->b, &it[1], 1, 1499, 500, 0, NULL), SY_FIRE_EARLY);
    assert_int_equal(fire(f->b, &it[1], 1, 1500, 500, 0, NULL), SY_FIRE_STARTED);
    /* Two runs in flight: a bound of 2 refuses a third until one ends. */
    assert_int_equal(fire(f->b, &it[2], 1, 1600, 0, 2, NULL), SY_FIRE_BUSY);
    end_run(f->a, run, SY_RUN_COMPLETED, 1602);
    assert_int_equal(fire(f->b, &it[2], 1, 1603, 0, 2, NULL), SY_FIRE_STARTED);
    /* Several items consumed by one firing (an AND, or debounced). */
    sy_trigger_item two[2] = {it[3], {SY_ITEM_EVENT, e[0], NULL}};
    assert_int_equal(fire(f->b, two, 2, 2000, 0, 0, NULL), SY_FIRE_TAKEN);
    assert_int_equal(fire(f->b, two, 1, 2000, 0, 0, NULL), SY_FIRE_STARTED);
}

typedef struct runs_seen {
    size_t n;
    int64_t id[4];
} runs_seen;

static int note_run(void *arg, const sy_finished_run *r)
{
    runs_seen *s = arg;
    assert_true(s->n < 4);
    s->id[s->n++] = r->id;
    return 0;
}

static void test_finished_runs(void **state)
{
    fx *f = *state;
    sy_trigger_record t;
    OK(f->a, sy_store_trigger_open(f->a, KEY, 0, &t));
    int64_t a = 0, b = 0;
    OK(f->a, sy_store_create_run(f->a, HASH, "public", "up", "{}", 2, ids, ns, 1, &a));
    OK(f->a, sy_store_create_run(f->a, HASH, "public", "up", "{}", 2, ids, ns, 1, &b));
    end_run(f->a, a, SY_RUN_COMPLETED, 3);
    end_run(f->a, b, SY_RUN_FAILED, 4);
    runs_seen s = {0};
    unsigned done = 1u << SY_RUN_COMPLETED;
    OK(f->a, sy_store_trigger_runs(f->a, KEY, "public", "up", done, 0, 10, note_run, &s));
    assert_true(s.n == 1 && s.id[0] == a);
    s = (runs_seen){0};
    OK(f->a, sy_store_trigger_runs(f->a, KEY, "public", "up", done | 1u << SY_RUN_FAILED, 0,
                                   10, note_run, &s));
    assert_int_equal(s.n, 2);
    sy_trigger_item it = {SY_ITEM_RUN, a, NULL};
    assert_int_equal(fire(f->b, &it, 1, 5, 0, 0, NULL), SY_FIRE_STARTED);
    s = (runs_seen){0};
    OK(f->a, sy_store_trigger_runs(f->a, KEY, "public", "up", done, 0, 10, note_run, &s));
    assert_int_equal(s.n, 0);
}

static void test_not_in_batch(void **state)
{
    fx *f = *state;
    int64_t id;
    bool dup;
    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(sy_store_emit(f->a, "n", NULL, "{}", 0, 1, &id, &dup), SY_ESTATE);
    sy_store_rollback(f->a);
    assert_int_equal(sy_store_emit(f->a, "", NULL, "{}", 0, 1, &id, &dup), SY_EINVAL);
}

/* Hosts settling the same events at once, each on its own connection:
 * every event fires exactly one run. */
enum { RACE_HOSTS = 3, RACE_EVENTS = 12 };

typedef struct race_host {
    const char *dir;
    int64_t *events;
    int failed;
    char why[300];
} race_host;

static void *race_main(void *arg)
{
    race_host *h = arg;
    sy_store *s = NULL;
    if (sy_store_open(fx_store_url, h->dir, &s, h->why, sizeof h->why) != SY_OK) {
        h->failed = 1;
        return NULL;
    }
    for (int i = 0; i < RACE_EVENTS && !h->failed; i++) {
        sy_trigger_item it = {SY_ITEM_EVENT, h->events[i], NULL};
        sy_trigger_firing fr = {.key = KEY, .items = &it, .n_items = 1, .hash = HASH,
                                .tenant = "public", .workflow = "r", .context = "{}",
                                .n_tasks = 2, .task_ids = ids, .ns = ns};
        sy_fire_outcome out;
        if (sy_store_fire(s, &fr, 100 + i, &out, NULL) != SY_OK) {
            snprintf(h->why, sizeof h->why, "event %d: %s", i, sy_store_errmsg(s));
            h->failed = 1;
        }
    }
    sy_store_close(s);
    return NULL;
}

static int count_run(void *arg, const sy_run_record *r)
{
    (void)r;
    (*(int *)arg)++;
    return 0;
}

static void test_hosts_race(void **state)
{
    fx *f = *state;
    sy_trigger_record t;
    OK(f->a, sy_store_trigger_open(f->a, KEY, 0, &t));
    int64_t events[RACE_EVENTS];
    for (int i = 0; i < RACE_EVENTS; i++)
        events[i] = emit(f->a, "landed", NULL, "{}", 10, NULL);
    race_host hosts[RACE_HOSTS];
    pthread_t th[RACE_HOSTS];
    for (int h = 0; h < RACE_HOSTS; h++) {
        hosts[h] = (race_host){.dir = f->dir, .events = events};
        assert_int_equal(pthread_create(&th[h], NULL, race_main, &hosts[h]), 0);
    }
    for (int h = 0; h < RACE_HOSTS; h++) {
        pthread_join(th[h], NULL);
        if (hosts[h].failed)
            fail_msg("host %d: %s", h, hosts[h].why);
    }
    int n = 0;
    OK(f->a, sy_store_list_runs(f->a, 0, count_run, &n));
    assert_int_equal(n, RACE_EVENTS);
    OK(f->a, sy_store_trigger_open(f->a, KEY, 0, &t));
    assert_true(t.firings == RACE_EVENTS);
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
                            .n_tasks = 2, .task_ids = ids, .ns = ns};
    sy_fire_outcome out;
    int64_t run = 0;
    OK(s, sy_store_fire(s, &fr, 100, &out, &run));
    assert_int_equal(out, reason ? SY_FIRE_SETTLED : SY_FIRE_STARTED);
    return run;
}

typedef struct settled {
    size_t n;
    char line[8][128];
} settled;

static int note_settled(void *arg, const sy_event_settlement *e)
{
    settled *s = arg;
    assert_true(s->n < 8);
    snprintf(s->line[s->n++], sizeof s->line[0], "%lld %s %lld %s", (long long)e->event_id,
             e->trigger, (long long)e->run_id, e->reason ? e->reason : "-");
    return 0;
}

/* What triggers made of the events of an id range, by event: the run a
 * firing started, or why it passed the event over; events outside the
 * range, runs settled as items and events nobody settled are not listed. */
static void test_settlements(void **state)
{
    fx *f = *state;
    int64_t e1 = emit(f->a, "landed", NULL, "{}", 10, NULL);
    int64_t e2 = emit(f->a, "landed", NULL, "{}", 10, NULL);
    int64_t e3 = emit(f->a, "landed", NULL, "{}", 10, NULL);
    int64_t e4 = emit(f->a, "landed", NULL, "{}", 10, NULL);
    int64_t r1 = settle(f->a, "public::r::a", SY_ITEM_EVENT, e1, NULL);
    settle(f->b, "public::r::b", SY_ITEM_EVENT, e1, "data.n: 2 is not 1");
    int64_t r2 = settle(f->b, "public::r::a", SY_ITEM_EVENT, e2, NULL);
    /* A run settled as an item of the same number is not an event's. */
    settle(f->a, "public::r::c", SY_ITEM_RUN, e2, NULL);
    settle(f->a, "public::r::a", SY_ITEM_EVENT, e4, NULL);
    assert_true(r1 > 0 && r2 > 0 && r1 != r2);

    settled s = {0};
    OK(f->a, sy_store_event_settlements(f->a, e1, e3, note_settled, &s));
    char want[3][128];
    snprintf(want[0], sizeof want[0], "%lld public::r::a %lld -", (long long)e1, (long long)r1);
    snprintf(want[1], sizeof want[1], "%lld public::r::b 0 data.n: 2 is not 1", (long long)e1);
    snprintf(want[2], sizeof want[2], "%lld public::r::a %lld -", (long long)e2, (long long)r2);
    assert_int_equal(s.n, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(s.line[i], want[i]);

    /* e3, settled by none: nothing; an empty range: nothing. */
    s = (settled){0};
    OK(f->b, sy_store_event_settlements(f->b, e3, e3, note_settled, &s));
    assert_int_equal(s.n, 0);
    OK(f->b, sy_store_event_settlements(f->b, e4, e1, note_settled, &s));
    assert_int_equal(s.n, 0);
    assert_int_equal(sy_store_event_settlements(f->b, e1, e4, NULL, NULL), SY_EINVAL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
#define ALL(X) X(test_emit_key_window), X(test_fire_once), X(test_passed_reasons), \
               X(test_debounce_and_bound), X(test_finished_runs), X(test_not_in_batch), \
               X(test_hosts_race), X(test_settlements)
    const struct CMUnitTest sqlite_tests[] = {ALL(T)};
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {ALL(P)};
    return fx_run_groups("named_events", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("named_events", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
