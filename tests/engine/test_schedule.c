/* Schedules in serving engines (engine/schedule.h), on an injected clock:
 * two engines on one store standing for two hosts fire each tick of a
 * Europe/Berlin schedule once, across the night the clocks fall back (a
 * wildcard job in both passes of the repeated hour, a fixed one in the
 * first) and the night they spring forward (a fixed job in the skipped
 * hour at the jump); each run carries its tick in its context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../helpers.h"
#include "base/tz.h"
#include "engine/engine.h"
#include "engine/schedule.h"

static int64_t now_ms;
static int64_t test_clock(void) { return now_ms; }

#define MINUTE ((int64_t)60000)

typedef struct {
    char *dir;
    sy_workflow *wfs[2];
    sy_store *store[2];
    uv_loop_t loop[2];
    sy_engine *e[2];
} hosts;

static sy_workflow *load(const char *dir, const char *name, const char *text)
{
    char *path = th_write(dir, name, text);
    sy_diags d;
    sy_diags_init(&d);
    sy_workflow *wf = NULL;
    int errors = sy_workflow_load_file(path, NULL, NULL, &wf, &d);
    if (errors)
        th_diag_dump(&d);
    sy_diags_free(&d);
    free(path);
    assert_int_equal(errors, 0);
    return wf;
}

static void open_hosts_with(hosts *h, const char *start_iso, const char *first,
                            const char *second)
{
    memset(h, 0, sizeof *h);
    int y, mo, d, hh, mi;
    assert_int_equal(sscanf(start_iso, "%d-%d-%dT%d:%dZ", &y, &mo, &d, &hh, &mi), 5);
    now_ms = (sy_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + hh * 3600 + mi * 60) *
             1000;
    h->dir = th_mkdtemp();
    h->wfs[0] = load(h->dir, "first.cfg", first);
    h->wfs[1] = load(h->dir, "second.cfg", second);
    char url[4200], err[512];
    snprintf(url, sizeof url, "sqlite:%s/store.db", h->dir);
    for (int i = 0; i < 2; i++)
        assert_int_equal(sy_store_open(url, h->dir, &h->store[i], err, sizeof err), SY_OK);
}

/* Starts an engine per store: each reads its schedules (and the store's
 * last ticks) now. */
static void start_engines(hosts *h)
{
    char err[512];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(uv_loop_init(&h->loop[i]), 0);
        sy_engine_opts o = {
            .store = h->store[i],
            .owner = i ? "host:2" : "host:1",
            .workflows = h->wfs,
            .n_workflows = 2,
            .clock = test_clock,
            .schedule_clock = test_clock,
            .lease_ms = (int64_t)24 * 3600 * 1000,
            .serve = true,
        };
        assert_int_equal(sy_engine_new(&h->e[i], &h->loop[i], &o, err, sizeof err), SY_OK);
        sy_schedule_start(h->e[i]);
    }
}

static void open_hosts(hosts *h, const char *start_iso)
{
    open_hosts_with(h, start_iso,
                    "workflow = { name = \"wild\"; schedule = \"*/30 * * * *\";\n"
                    "  timezone = \"Europe/Berlin\"; tasks = ( { id = \"a\"; } ); };\n",
                    "workflow = { name = \"fixed\"; schedule = \"30 2 * * *\";\n"
                    "  timezone = \"Europe/Berlin\"; tasks = ( { id = \"a\"; } ); };\n");
    start_engines(h);
}

static void close_hosts(hosts *h)
{
    for (int i = 0; i < 2; i++) {
        sy_engine_free(h->e[i]);
        assert_int_equal(uv_loop_close(&h->loop[i]), 0);
        sy_store_close(h->store[i]);
        sy_workflow_free(h->wfs[i]);
    }
    th_rmtree(h->dir);
}

/* Moves the clock to `until` in steps of `step`, both hosts firing what
 * is due at each, in turns of who goes first. */
static void walk(hosts *h, int64_t step, int64_t until)
{
    for (int turn = 0; now_ms < until; turn++) {
        now_ms += step;
        sy_schedule_fire_due(h->e[turn % 2]);
        sy_schedule_fire_due(h->e[(turn + 1) % 2]);
    }
}

typedef struct {
    char text[2048];
} listing;

/* "workflow@local" of every run, oldest first, space-separated. */
static int add_run(void *arg, const sy_run_record *r)
{
    listing *l = arg;
    json_t *ctx = json_loads(r->context, 0, NULL);
    const char *local =
        json_string_value(json_object_get(json_object_get(ctx, "schedule"), "local"));
    char one[128];
    snprintf(one, sizeof one, "%s@%s", r->workflow, local ? local : "?");
    /* Newest first from the store: prepend. */
    size_t n = strlen(one) + (l->text[0] ? 1 : 0), len = strlen(l->text);
    if (n + len < sizeof l->text) {
        memmove(l->text + n, l->text, len + 1);
        memcpy(l->text, one, strlen(one));
        if (len)
            l->text[n - 1] = ' ';
    }
    json_decref(ctx);
    return 0;
}

static void expect_runs(hosts *h, const char *want)
{
    listing l = {""};
    assert_int_equal(sy_store_list_runs(h->store[0], 0, add_run, &l), SY_OK);
    if (strcmp(l.text, want) != 0)
        fail_msg("runs:\n  got  %s\n  want %s", l.text, want);
}

static void counts(hosts *h, uint64_t *fired, uint64_t *refused)
{
    *fired = *refused = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t f, r;
        sy_schedule_counts(h->e[i], &f, &r);
        *fired += f;
        *refused += r;
    }
}

static void test_fall_back(void **state)
{
    (void)state;
    hosts h;
    /* 01:50 CEST; the clocks go from 03:00 CEST back to 02:00 CET at 01:00Z. */
    open_hosts(&h, "2026-10-24T23:50Z");
    walk(&h, 5 * MINUTE, now_ms + 140 * MINUTE);
    expect_runs(&h, "wild@2026-10-25T02:00:00+02:00 wild@2026-10-25T02:30:00+02:00 "
                    "fixed@2026-10-25T02:30:00+02:00 wild@2026-10-25T02:00:00+01:00 "
                    "wild@2026-10-25T02:30:00+01:00 wild@2026-10-25T03:00:00+01:00");
    uint64_t fired, refused;
    counts(&h, &fired, &refused);
    assert_int_equal(fired, 6);
    assert_int_equal(refused, 6); /* the other host, each time */
    close_hosts(&h);
}

static void test_spring_forward(void **state)
{
    (void)state;
    hosts h;
    /* 01:40 CET; the clocks go from 02:00 CET to 03:00 CEST at 01:00Z. */
    open_hosts(&h, "2026-03-29T00:40Z");
    walk(&h, 7 * MINUTE, now_ms + 70 * MINUTE);
    expect_runs(&h, "wild@2026-03-29T03:00:00+02:00 fixed@2026-03-29T03:00:00+02:00 "
                    "wild@2026-03-29T03:30:00+02:00");
    close_hosts(&h);
}

/* An ordinary day: a tick every half hour from the start on, none from
 * before it. */
static void test_steady(void **state)
{
    (void)state;
    hosts h;
    open_hosts(&h, "2026-06-01T10:00Z");
    walk(&h, 30 * MINUTE, now_ms + 60 * MINUTE);
    expect_runs(&h, "wild@2026-06-01T12:30:00+02:00 wild@2026-06-01T13:00:00+02:00");
    close_hosts(&h);
}

static int count_runs(void *arg, const sy_run_record *r)
{
    (void)r;
    (*(int *)arg)++;
    return 0;
}

static int runs_of(hosts *h)
{
    int n = 0;
    assert_int_equal(sy_store_list_runs(h->store[0], 0, count_runs, &n), SY_OK);
    return n;
}

/* Hosts started three hours after the last tick of an every-minute
 * schedule: "all" fires the latest catchup_max missed ticks, oldest first,
 * a batch per wake; "latest" the latest alone. */
static void test_catchup(void **state)
{
    (void)state;
    hosts h;
    open_hosts_with(&h, "2026-06-01T13:00Z",
                    "workflow = { name = \"all\"; schedule = \"* * * * *\";\n"
                    "  catchup = \"all\"; catchup_max = 50; tasks = ( { id = \"a\"; } ); };\n",
                    "workflow = { name = \"latest\"; schedule = \"@hourly\";\n"
                    "  catchup = \"latest\"; tasks = ( { id = \"a\"; } ); };\n");
    /* What the store says was fired last: three hours ago. */
    int64_t last = now_ms - 180 * MINUTE;
    static const char *const ids[] = {"a"};
    for (int i = 0; i < 2; i++) {
        const sy_workflow *wf = h.wfs[i];
        const char *ns[] = {wf->tasks[0].ns};
        bool fired = false;
        assert_int_equal(sy_store_put_definition(h.store[0], wf->hash, wf->tenant, wf->name,
                                                 wf->definition),
                         SY_OK);
        assert_int_equal(sy_store_fire_tick(h.store[0], wf->hash, wf->tenant, wf->name, last,
                                            "{}", 1, ids, ns, last, &fired, NULL),
                         SY_OK);
        assert_true(fired);
    }
    start_engines(&h);
    int before = runs_of(&h);
    assert_int_equal(before, 2);
    now_ms += 30 * 1000;
    sy_schedule_fire_due(h.e[0]);
    /* One batch of "all", and "latest"'s one tick. */
    assert_int_equal(runs_of(&h), before + 20 + 1);
    for (int i = 0; i < 5; i++)
        sy_schedule_fire_due(h.e[i % 2]);
    assert_int_equal(runs_of(&h), before + 50 + 1);
    int64_t tick = 0;
    assert_int_equal(sy_store_last_tick(h.store[0], "public", "all", &tick, NULL), SY_OK);
    assert_true(tick == now_ms - 30 * 1000);
    assert_int_equal(sy_store_last_tick(h.store[0], "public", "latest", &tick, NULL), SY_OK);
    assert_true(tick == now_ms - 30 * 1000);
    close_hosts(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fall_back),
        cmocka_unit_test(test_spring_forward),
        cmocka_unit_test(test_steady),
        cmocka_unit_test(test_catchup),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
