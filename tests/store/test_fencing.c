/* Attempt tokens in the store (store.h, "Fencing"): a task row moves from
 * token to token as attempts start, one writer at a time, and every write
 * of a task and every event about it lands only while the row holds the
 * writer's token and the run the writer's claim, checked in the write's
 * own statement.  Each test but the SQLite migration's runs on both stores:
 * SQLite, then PostgreSQL on a throwaway server when this build has
 * libpq (two connections standing for two hosts). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
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

static int setup(void **state)
{
    return fx_setup(state);
}

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    return fx_setup_pg(state);
}
#endif

/* The row of task idx, its strings copied into the caller's buffers. */
typedef struct {
    sy_task_state state;
    uint32_t attempts;
    int64_t fence;
    char host[64], output[64];
} row;

struct find {
    uint32_t idx;
    row r;
};

static int find_task(void *arg, const sy_task_record *t)
{
    struct find *f = arg;
    if (t->idx == f->idx) {
        f->r.state = t->state;
        f->r.attempts = t->attempts;
        f->r.fence = t->fence;
        snprintf(f->r.host, sizeof f->r.host, "%s", t->host ? t->host : "-");
        snprintf(f->r.output, sizeof f->r.output, "%s", t->output ? t->output : "-");
    }
    return 0;
}

static row task_row(sy_store *s, int64_t run, uint32_t idx)
{
    struct find f = {.idx = idx};
    OK(s, sy_store_list_tasks(s, run, find_task, &f));
    return f.r;
}

/* The write that marks task idx Running for attempt `attempt` and moves
 * its token from `from` to `to`. */
static int start(sy_store *s, int64_t run, const sy_store_fence *fence, uint32_t idx,
                 uint32_t attempt, int64_t from, int64_t to)
{
    sy_task_record t = {.idx = idx, .state = SY_TASK_RUNNING, .attempts = attempt,
                        .started = 100, .fence = to};
    return sy_store_update_task(s, run, fence, from, &t);
}

static int complete(sy_store *s, int64_t run, const sy_store_fence *fence, uint32_t idx,
                    uint32_t attempt, int64_t token, const char *output)
{
    sy_task_record t = {.idx = idx, .state = SY_TASK_COMPLETED, .attempts = attempt,
                        .output = (char *)output, .finished = 200, .fence = token};
    return sy_store_update_task(s, run, fence, token, &t);
}

/* A new store's rows start at token 0 with no host; starting an attempt
 * moves the token and records the fence's owner as its host; its outcome
 * lands under the same token. */
static void test_start_and_complete(void **state)
{
    fx *f = *state;
    row r = task_row(f->a, f->run, 0);
    assert_int_equal(r.fence, 0);
    assert_string_equal(r.host, "-");
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    OK(f->a, sy_store_commit(f->a));
    r = task_row(f->a, f->run, 0);
    assert_int_equal(r.state, SY_TASK_RUNNING);
    assert_int_equal(r.fence, 1);
    assert_string_equal(r.host, "h1");
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, complete(f->a, f->run, &f->h1, 0, 1, 1, "{\"n\":1}"));
    OK(f->a, sy_store_commit(f->a));
    r = task_row(f->a, f->run, 0);
    assert_int_equal(r.state, SY_TASK_COMPLETED);
    assert_int_equal(r.fence, 1);
    assert_string_equal(r.output, "{\"n\":1}");
    assert_string_equal(r.host, "h1");
}

/* Two writers starting an attempt from the same token: the first wins,
 * the second is refused with the token and host it lost to, and the row
 * keeps the winner's write.  A later write of the loser's attempt (its
 * outcome) is refused as well, in a batch that stays usable. */
static void test_start_is_compare_and_set(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    /* The same claim, from the token it no longer holds. */
    assert_int_equal(start(f->a, f->run, &f->h1, 0, 1, 0, 1), SY_STORE_EFENCED);
    fx_assert_contains(sy_store_errmsg(f->a),
                    "task 0 of run 1 is at attempt token 1 (started by h1), not 0");
    assert_int_equal(complete(f->a, f->run, &f->h1, 0, 1, 0, "{\"late\":1}"),
                     SY_STORE_EFENCED);
    /* The other task of the run is unaffected. */
    OK(f->a, start(f->a, f->run, &f->h1, 1, 1, 0, 1));
    OK(f->a, sy_store_commit(f->a));
    row r = task_row(f->a, f->run, 0);
    assert_int_equal(r.state, SY_TASK_RUNNING);
    assert_int_equal(r.fence, 1);
    assert_string_equal(r.output, "-");
    assert_int_equal(task_row(f->a, f->run, 1).fence, 1);
}

/* The batch's first write for a run checks its claim and later ones skip
 * that check: the token is checked on every one of them. */
static void test_token_checked_on_held_claim(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    assert_int_equal(complete(f->a, f->run, &f->h1, 1, 1, 5, "{}"), SY_STORE_EFENCED);
    fx_assert_contains(sy_store_errmsg(f->a), "is at attempt token 0");
    OK(f->a, complete(f->a, f->run, &f->h1, 1, 1, 0, "{\"y\":1}"));
    OK(f->a, sy_store_commit(f->a));
    assert_string_equal(task_row(f->a, f->run, 1).output, "{\"y\":1}");
}

/* A token never goes back, and a missing task is still SY_ENOENT. */
static void test_token_bounds(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 3));
    assert_int_equal(start(f->a, f->run, &f->h1, 0, 2, 3, 2), SY_EINVAL);
    fx_assert_contains(sy_store_errmsg(f->a), "attempt token 3 would go back to 2");
    assert_int_equal(start(f->a, f->run, &f->h1, 7, 1, 0, 1), SY_ENOENT);
    fx_assert_contains(sy_store_errmsg(f->a), "run 1 has no task 7");
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(task_row(f->a, f->run, 0).fence, 3);
}

struct events {
    size_t n;
    char text[512];
};

static int collect_event(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                         const char *detail, int64_t at)
{
    (void)at;
    struct events *e = arg;
    size_t len = strlen(e->text);
    snprintf(e->text + len, sizeof e->text - len, "%u/%u %s %s;", idx, attempt, kind,
             detail ? detail : "NULL");
    e->n++;
    return 0;
}

/* An event lands only while its task holds the writer's token (and its run
 * the writer's claim); without a fence it lands regardless. */
static void test_events_follow_the_token(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    OK(f->a, sy_store_commit(f->a));
    OK(f->a, sy_store_add_event(f->a, f->run, &f->h1, 1, 0, 1, "failed", "current", 300));
    assert_int_equal(sy_store_add_event(f->a, f->run, &f->h1, 0, 0, 1, "failed", "stale", 300),
                     SY_STORE_EFENCED);
    fx_assert_contains(sy_store_errmsg(f->a), "add_event: task 0 of run 1 is at attempt token 1");
    assert_int_equal(sy_store_add_event(f->a, f->run, &f->h1, 0, 9, 1, "failed", "x", 300),
                     SY_ENOENT);
    OK(f->a, sy_store_add_event(f->a, f->run, NULL, 0, 0, 1, "note", "a tool's", 300));
    struct events e = {0};
    OK(f->a, sy_store_list_events(f->a, f->run, collect_event, &e));
    assert_string_equal(e.text, "0/1 failed current;0/1 note a tool's;");
}

/* A host paused past its lease: h2 takes the run over on another handle
 * and starts the next attempt; h1's late outcome, retry and events are all
 * refused, whatever token they name, and the rows keep h2's values.  The
 * abandoned attempt is h2's to record, naming h1. */
static void test_takeover_moves_both_tokens(void **state)
{
    fx *f = *state;
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, start(f->a, f->run, &f->h1, 0, 1, 0, 1));
    OK(f->a, sy_store_commit(f->a));
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 9000, 1001, NULL, 0, &got));
    assert_true(got);
    sy_store_fence h2 = {"h2", fx_epoch(f->b, f->run)};
    row seen = task_row(f->b, f->run, 0);
    assert_string_equal(seen.host, "h1");
    OK(f->b, sy_store_add_event(f->b, f->run, &h2, seen.fence, 0, 1, "abandoned", seen.host,
                                1002));
    OK(f->b, sy_store_begin(f->b));
    OK(f->b, start(f->b, f->run, &h2, 0, 2, seen.fence, seen.fence + 1));
    OK(f->b, sy_store_commit(f->b));

    OK(f->a, sy_store_begin(f->a));
    assert_int_equal(complete(f->a, f->run, &f->h1, 0, 1, 1, "{\"by\":\"h1\"}"),
                     SY_STORE_EFENCED);
    fx_assert_contains(sy_store_errmsg(f->a), "held by h2");
    assert_int_equal(complete(f->a, f->run, &f->h1, 0, 1, 2, "{\"by\":\"h1\"}"),
                     SY_STORE_EFENCED);
    assert_int_equal(start(f->a, f->run, &f->h1, 0, 2, 1, 2), SY_STORE_EFENCED);
    assert_int_equal(sy_store_add_event(f->a, f->run, &f->h1, 2, 0, 1, "stale", "h1", 1200),
                     SY_STORE_EFENCED);
    OK(f->a, sy_store_commit(f->a));

    OK(f->b, sy_store_begin(f->b));
    OK(f->b, complete(f->b, f->run, &h2, 0, 2, 2, "{\"by\":\"h2\"}"));
    OK(f->b, sy_store_commit(f->b));
    row r = task_row(f->a, f->run, 0);
    assert_int_equal(r.state, SY_TASK_COMPLETED);
    assert_int_equal(r.attempts, 2);
    assert_int_equal(r.fence, 2);
    assert_string_equal(r.host, "h2");
    assert_string_equal(r.output, "{\"by\":\"h2\"}");
    struct events e = {0};
    OK(f->a, sy_store_list_events(f->a, f->run, collect_event, &e));
    assert_string_equal(e.text, "0/1 abandoned h1;");
}

/* A file of schema 2 (before attempt tokens) is migrated: its rows get
 * token 0 and no host, and work on from there. */
static void test_migrates_schema_2(void **state)
{
    fx *f = *state;
    char *path = sy_path_join(f->dir, "old.db");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    const char *old =
        "CREATE TABLE definitions (hash TEXT PRIMARY KEY NOT NULL, tenant TEXT NOT NULL,"
        " workflow TEXT NOT NULL, definition TEXT NOT NULL, created INTEGER NOT NULL);"
        "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL,"
        " tenant TEXT NOT NULL, workflow TEXT NOT NULL, state INTEGER NOT NULL,"
        " context TEXT, owner TEXT, lease_until INTEGER NOT NULL DEFAULT 0,"
        " cancel_requested INTEGER NOT NULL DEFAULT 0, created INTEGER NOT NULL,"
        " started INTEGER NOT NULL DEFAULT 0, finished INTEGER NOT NULL DEFAULT 0,"
        " error TEXT, n_tasks INTEGER NOT NULL,"
        " lease_epoch INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE tasks (run_id INTEGER NOT NULL, idx INTEGER NOT NULL,"
        " task_id TEXT NOT NULL, ns TEXT NOT NULL, state INTEGER NOT NULL DEFAULT 0,"
        " attempts INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0,"
        " recoveries INTEGER NOT NULL DEFAULT 0, executor TEXT, error TEXT, output TEXT,"
        " ready_at INTEGER NOT NULL DEFAULT 0, started INTEGER NOT NULL DEFAULT 0,"
        " finished INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, idx)) WITHOUT ROWID;"
        "CREATE TABLE events (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL,"
        " idx INTEGER NOT NULL, attempt INTEGER NOT NULL, kind TEXT NOT NULL,"
        " detail TEXT, at INTEGER NOT NULL);"
        "INSERT INTO definitions VALUES ('d1', 'public', 'w', '{}', 1);"
        "INSERT INTO runs (hash, tenant, workflow, state, owner, lease_until, created,"
        " n_tasks, lease_epoch) VALUES ('d1', 'public', 'w', 1, 'old', 5, 1, 1, 4);"
        "INSERT INTO tasks (run_id, idx, task_id, ns, state, attempts)"
        " VALUES (1, 0, 'x', 'public::w::x', 2, 1);"
        "PRAGMA user_version = 2;";
    assert_int_equal(sqlite3_exec(db, old, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    sy_store *s = NULL;
    char err[512] = "";
    if (sy_store_open("sqlite:old.db", f->dir, &s, err, sizeof err) != SY_OK)
        fail_msg("open: %s", err);
    row r = task_row(s, 1, 0);
    assert_int_equal(r.state, SY_TASK_RUNNING);
    assert_int_equal(r.fence, 0);
    assert_string_equal(r.host, "-");
    bool got = false;
    OK(s, sy_store_claim_run(s, 1, "new", 9000, 100, NULL, 0, &got));
    assert_true(got);
    sy_store_fence fence = {"new", fx_epoch(s, 1)};
    assert_int_equal(fence.epoch, 5);
    OK(s, sy_store_begin(s));
    OK(s, start(s, 1, &fence, 0, 2, 0, 1));
    OK(s, sy_store_commit(s));
    assert_string_equal(task_row(s, 1, 0).host, "new");
    sy_store_close(s);
    free(path);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_start_and_complete),
        T(test_start_is_compare_and_set),
        T(test_token_checked_on_held_claim),
        T(test_token_bounds),
        T(test_events_follow_the_token),
        T(test_takeover_moves_both_tokens),
        T(test_migrates_schema_2),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_start_and_complete),
        P(test_start_is_compare_and_set),
        P(test_token_checked_on_held_claim),
        P(test_token_bounds),
        P(test_events_follow_the_token),
        P(test_takeover_moves_both_tokens),
    };
    /* One plan for the TAP driver: both stores' tests in one group. */
    return fx_run_groups("fencing", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("fencing", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
