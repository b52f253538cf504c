/* Attempt logs and reopening a finished run (store.h): a log lands under
 * the run's claim and its task's attempt token like an event, one row per
 * attempt and stream, gone with its run; a reopened run is Pending with no
 * owner and a new claim epoch, its listed tasks NotStarted with their
 * attempt counts kept, the others untouched.  Every test runs on SQLite,
 * then on PostgreSQL (a throwaway server) when this build has libpq. */
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

static sy_run_record run_of(sy_store *s, int64_t run)
{
    sy_run_record r;
    OK(s, sy_store_get_run(s, run, &r));
    return r;
}

/* A run of two tasks claimed by h1 on handle a (fixture.h), task 0's
 * first attempt started (token 1). */
static int started(void **state, int rc)
{
    fx *f = *state;
    sy_task_record t = {.idx = 0, .state = SY_TASK_RUNNING, .attempts = 1, .started = 100,
                        .fence = 1};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_task(f->a, f->run, &f->h1, 0, &t));
    OK(f->a, sy_store_commit(f->a));
    return rc;
}

static int setup(void **state) { return started(state, fx_setup(state)); }

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state) { return started(state, fx_setup_pg(state)); }
#endif

/* The logs of a run as "idx/attempt/stream=text(size,dropped);..." */
static int take(void *arg, const sy_log_record *l)
{
    char *buf = arg;
    size_t n = strlen(buf);
    snprintf(buf + n, 1024 - n, "%u/%u/%s=%s(%lld,%lld);", l->idx, l->attempt, l->stream,
             l->text, (long long)l->size, (long long)l->dropped);
    return 0;
}

static const char *logs_of(sy_store *s, int64_t run, char *buf)
{
    buf[0] = '\0';
    OK(s, sy_store_list_logs(s, run, 0, take, buf));
    return buf;
}

static sy_log_record rec(uint32_t idx, uint32_t attempt, const char *stream, const char *text)
{
    return (sy_log_record){.idx = idx, .attempt = attempt, .stream = stream, .text = text,
                           .size = (int64_t)strlen(text), .at = 500};
}

/* Stdout before stderr, by task and attempt; a second write of the same
 * attempt and stream replaces the first. */
static void test_logs_round_trip(void **state)
{
    fx *f = *state;
    char buf[1024];
    assert_string_equal(logs_of(f->a, f->run, buf), "");
    sy_log_record e = rec(0, 1, "stderr", "oops\nfailed");
    sy_log_record o = rec(0, 1, "stdout", "partial");
    OK(f->a, sy_store_add_log(f->a, f->run, &f->h1, 1, &e));
    OK(f->a, sy_store_add_log(f->a, f->run, &f->h1, 1, &o));
    assert_string_equal(logs_of(f->b, f->run, buf),
                        "0/1/stdout=partial(7,0);0/1/stderr=oops\nfailed(11,0);");
    e = rec(0, 1, "stderr", "head\n[... 9 bytes dropped ...]\ntail");
    e.size = 20;
    e.dropped = 9;
    OK(f->a, sy_store_add_log(f->a, f->run, &f->h1, 1, &e));
    assert_string_equal(logs_of(f->a, f->run, buf),
                        "0/1/stdout=partial(7,0);0/1/stderr=head\n[... 9 bytes dropped "
                        "...]\ntail(20,9);");
    /* Unfenced (a tool outside any host). */
    o = rec(1, 1, "stdout", "y's");
    OK(f->a, sy_store_add_log(f->a, f->run, NULL, 0, &o));
    assert_non_null(strstr(logs_of(f->a, f->run, buf), "1/1/stdout=y's(3,0);"));
    /* Only those recorded at `since` or later. */
    o = rec(1, 2, "stderr", "later");
    o.at = 900;
    OK(f->a, sy_store_add_log(f->a, f->run, NULL, 0, &o));
    buf[0] = '\0';
    OK(f->a, sy_store_list_logs(f->a, f->run, 600, take, buf));
    assert_string_equal(buf, "1/2/stderr=later(5,0);");
    assert_int_equal(sy_store_list_logs(f->a, f->run + 100, 0, take, buf), SY_ENOENT);
    assert_int_equal(sy_store_add_log(f->a, f->run, &f->h1, 1, NULL), SY_EINVAL);
}

/* A log lands only under the claim and the attempt token its writer
 * holds, as an event does. */
static void test_logs_are_fenced(void **state)
{
    fx *f = *state;
    char buf[1024];
    sy_log_record e = rec(0, 1, "stderr", "late");
    /* A stale token: the row holds 1. */
    assert_int_equal(sy_store_add_log(f->a, f->run, &f->h1, 0, &e), SY_STORE_EFENCED);
    /* Another host takes the run over: h1's claim is gone. */
    const char *stale[] = {"h1"};
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 20, stale, 1, &got));
    assert_true(got);
    assert_int_equal(sy_store_add_log(f->a, f->run, &f->h1, 1, &e), SY_STORE_EFENCED);
    assert_string_equal(logs_of(f->a, f->run, buf), "");
}

static void finish(fx *f)
{
    sy_task_record x = {.idx = 0, .state = SY_TASK_COMPLETED, .attempts = 1,
                        .output = "{\"x\":1}", .finished = 200, .fence = 1};
    sy_task_record y = {.idx = 1, .state = SY_TASK_FAILED, .attempts = 3, .failures = 3,
                        .error = "boom", .finished = 200, .fence = 0};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_update_task(f->a, f->run, &f->h1, 1, &x));
    OK(f->a, sy_store_update_task(f->a, f->run, &f->h1, 0, &y));
    OK(f->a, sy_store_update_run(f->a, f->run, &f->h1, SY_RUN_FAILED, "1 task failed", 300));
    OK(f->a, sy_store_commit(f->a));
}

struct tasks {
    sy_task_state state[2];
    uint32_t attempts[2], failures[2];
    int64_t fence[2];
    bool has_output[2], has_error[2];
};

static int take_task(void *arg, const sy_task_record *t)
{
    struct tasks *ts = arg;
    ts->state[t->idx] = t->state;
    ts->attempts[t->idx] = t->attempts;
    ts->failures[t->idx] = t->failures;
    ts->fence[t->idx] = t->fence;
    ts->has_output[t->idx] = t->output != NULL;
    ts->has_error[t->idx] = t->error != NULL;
    return 0;
}

/* Only a finished run is reopened; it becomes Pending for anyone to
 * claim, the listed tasks NotStarted with their attempts kept, the
 * others (and their outputs) untouched, and its last claim is refused. */
/* A reopen for `retry --no-cache` is kept with the run. */
static void test_reopen_no_cache(void **state)
{
    fx *f = *state;
    static const uint32_t y[] = {1};
    finish(f);
    OK(f->b, sy_store_reopen_run(f->b, f->run, y, 1, true, 400));
    sy_run_record r = run_of(f->a, f->run);
    assert_int_equal(r.state, SY_RUN_PENDING);
    assert_true(r.no_cache);
    sy_run_record_clear(&r);
}

static void test_reopen(void **state)
{
    fx *f = *state;
    static const uint32_t y[] = {1};
    assert_int_equal(sy_store_reopen_run(f->a, f->run, y, 1, false, 400), SY_ESTATE);
    assert_non_null(strstr(sy_store_errmsg(f->a), "Running, not finished"));
    finish(f);
    assert_int_equal(sy_store_reopen_run(f->a, f->run + 100, y, 1, false, 400), SY_ENOENT);
    static const uint32_t bad[] = {1, 7};
    assert_int_equal(sy_store_reopen_run(f->a, f->run, bad, 2, false, 400), SY_EINVAL);
    sy_run_record r = run_of(f->b, f->run);
    assert_int_equal(r.state, SY_RUN_FAILED); /* the refused call changed nothing */
    int64_t epoch = r.lease_epoch;
    sy_run_record_clear(&r);

    OK(f->b, sy_store_reopen_run(f->b, f->run, y, 1, false, 400));
    r = run_of(f->a, f->run);
    assert_int_equal(r.state, SY_RUN_PENDING);
    assert_null(r.owner);
    assert_null(r.error);
    assert_int_equal(r.finished, 0);
    assert_true(r.lease_epoch > epoch);
    assert_false(r.no_cache);
    sy_run_record_clear(&r);
    struct tasks ts = {0};
    OK(f->a, sy_store_list_tasks(f->a, f->run, take_task, &ts));
    assert_int_equal(ts.state[0], SY_TASK_COMPLETED);
    assert_true(ts.has_output[0]);
    assert_int_equal(ts.state[1], SY_TASK_NOT_STARTED);
    assert_int_equal(ts.attempts[1], 3);
    assert_int_equal(ts.failures[1], 0);
    assert_false(ts.has_error[1]);
    /* The host that ran it before writes nothing more. */
    sy_log_record e = rec(0, 1, "stderr", "late");
    assert_int_equal(sy_store_add_log(f->a, f->run, &f->h1, 1, &e), SY_STORE_EFENCED);
    /* A second reopen is refused: it is Pending now. */
    assert_int_equal(sy_store_reopen_run(f->a, f->run, y, 1, false, 400), SY_ESTATE);
    /* Any host may claim it. */
    bool got = false;
    OK(f->b, sy_store_claim_run(f->b, f->run, "h2", 5000, 500, NULL, 0, &got));

    assert_true(got);
}

/* Logs go with their run. */
static void test_logs_go_with_their_run(void **state)
{
    fx *f = *state;
    sy_log_record e = rec(0, 1, "stderr", "x");
    OK(f->a, sy_store_add_log(f->a, f->run, &f->h1, 1, &e));
    finish(f);
    size_t deleted = 0;
    OK(f->a, sy_store_delete_finished(f->a, 10000, 10, &deleted));
    assert_int_equal(deleted, 1);
    char buf[1024] = "";
    assert_int_equal(sy_store_list_logs(f->a, f->run, 0, take, buf), SY_ENOENT);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fx_teardown)
#define P(fn) {#fn " (postgresql)", fn, setup_pg, fx_teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        T(test_logs_round_trip),
        T(test_logs_are_fenced),
        T(test_reopen),
        T(test_reopen_no_cache),
        T(test_logs_go_with_their_run),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_logs_round_trip),
        P(test_logs_are_fenced),
        P(test_reopen),
        P(test_reopen_no_cache),
        P(test_logs_go_with_their_run),
    };
    return fx_run_groups("logs", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), pg_tests,
                         SY_ARRAY_LEN(pg_tests));
#else
    return fx_run_groups("logs", sqlite_tests, SY_ARRAY_LEN(sqlite_tests), NULL, 0);
#endif
}
