/* Cached task results: a task whose cache key, rendered from its input,
 * matches one a completed attempt of the same task put within the
 * lifetime completes with that output without a submit (a run event
 * says so, its dependents see the output); another key, an expired
 * entry or a key that cannot be rendered runs the task.  The engine's
 * observer hears of a hit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/metrics.h"
#include "fake.h"
#include "service/runs.h"
#include "store/store.h"

/* Records a run of env's workflow with `ctx`, adopts it, runs it to its
 * end; env->run_id becomes it. */
static void next_run(fake_env *env, const char *ctx)
{
    char err[256] = "";
    int64_t id = 0;
    assert_int_equal(sy_runs_record(env->store, env->wf, ctx, &id, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(env->engine, id, true, err, sizeof err), SY_OK);
    env->run_id = id;
    fake_turn(env);
    assert_int_equal(fake_run_state(env), SY_RUN_COMPLETED);
}

typedef struct {
    int cached;
    char detail[256];
} events;

static int on_event(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                    const char *detail, int64_t at)
{
    (void)idx, (void)attempt, (void)at;
    events *ev = arg;
    if (strcmp(kind, "cached") == 0 || strcmp(kind, "cache") == 0) {
        ev->cached += strcmp(kind, "cached") == 0;
        snprintf(ev->detail, sizeof ev->detail, "%s", detail ? detail : "");
    }
    return 0;
}

static events events_of(fake_env *env)
{
    events ev = {0};
    assert_int_equal(sy_store_list_events(env->store, env->run_id, on_event, &ev), SY_OK);
    return ev;
}

#define WORKFLOW(KEY, LIFETIME)                                                               \
    "workflow = { name = \"w\"; tasks = (\n"                                                 \
    "  { id = \"a\"; output = \"{\\\"rows\\\":7}\";\n"                                        \
    "    cache = { key = \"" KEY "\"; lifetime = \"" LIFETIME "\"; }; },\n"                   \
    "  { id = \"b\"; after = [\"a\"]; }\n"                                                    \
    "); };\n"

static void test_hit(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WORKFLOW("{@task}", "1h"));
    int64_t first = env.run_id;
    fake_turn(&env);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    assert_int_equal(fake_submits("a"), 1);
    next_run(&env, "{}");
    /* Not submitted again; Completed, its output passed on. */
    assert_int_equal(fake_submits("a"), 1);
    assert_int_equal(fake_submits("b"), 2);
    assert_int_equal(fake_state(&env, "a"), SY_TASK_COMPLETED);
    assert_string_equal(fake_input("b"), "{\"rows\":7}");
    events ev = events_of(&env);
    assert_int_equal(ev.cached, 1);
    char want[96];
    snprintf(want, sizeof want, "completed from the cache: the output of run %lld",
             (long long)first);
    assert_string_equal(ev.detail, want);
    const sy_engine_metrics *m = sy_engine_metrics_get(env.engine);
    assert_int_equal(m->cache_hits, 1);
    assert_int_equal(m->cache_misses, 1);
    fake_close(&env);
}

typedef struct heard {
    fake_env *env;
    int hits;
    char line[128];
} heard;

static void on_observed(void *arg, const sy_engine_event *ev)
{
    heard *h = arg;
    if (!ev->cached_from)
        return;
    h->hits++;
    snprintf(h->line, sizeof h->line, "%lld %s %s %u %lld", (long long)ev->run_id, ev->task,
             ev->state, ev->attempt, (long long)ev->cached_from);
    /* Told after the commit: the store says Completed already. */
    assert_int_equal(fake_state(h->env, "a"), SY_TASK_COMPLETED);
}

/* The observer (the admin API's event stream) hears of the hit, once,
 * with the run whose output it took; a task that ran is no hit. */
static void test_hit_observed(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WORKFLOW("{@task}", "1h"));
    heard h = {.env = &env};
    sy_engine_observe(env.engine, on_observed, &h);
    int64_t first = env.run_id;
    fake_turn(&env);
    assert_int_equal(h.hits, 0);
    next_run(&env, "{}");
    assert_int_equal(h.hits, 1);
    char want[128];
    snprintf(want, sizeof want, "%lld a Completed 1 %lld", (long long)env.run_id,
             (long long)first);
    assert_string_equal(h.line, want);
    fake_close(&env);
}

static void test_miss_other_key(void **state)
{
    (void)state;
    fake_env env;
    /* The first run's context has no `file`: the key cannot be rendered,
     * the task runs and nothing is kept, with why. */
    fake_open(&env, WORKFLOW("{file}", "1h"));
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 1);
    assert_non_null(strstr(events_of(&env).detail, "not looked up in the cache: "));
    next_run(&env, "{\"file\":\"x\"}");
    assert_int_equal(fake_submits("a"), 2);
    next_run(&env, "{\"file\":\"y\"}");
    assert_int_equal(fake_submits("a"), 3);
    assert_int_equal(events_of(&env).cached, 0);
    next_run(&env, "{\"file\":\"x\"}");
    assert_int_equal(fake_submits("a"), 3);
    assert_int_equal(events_of(&env).cached, 1);
    const sy_engine_metrics *m = sy_engine_metrics_get(env.engine);
    assert_int_equal(m->cache_hits, 1);
    assert_int_equal(m->cache_misses, 2);
    fake_close(&env);
}

static void test_expired(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WORKFLOW("{@task}", "10s"));
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 1);
    fake_now += 9000;
    next_run(&env, "{}");
    assert_int_equal(fake_submits("a"), 1);
    /* Past the lifetime of the entry the first run put: it runs, and puts
     * a new one. */
    fake_now += 2000;
    next_run(&env, "{}");
    assert_int_equal(fake_submits("a"), 2);
    assert_int_equal(events_of(&env).cached, 0);
    fake_now += 9000;
    next_run(&env, "{}");
    assert_int_equal(fake_submits("a"), 2);
    fake_close(&env);
}

/* A run reopened with no_cache (retry --no-cache) runs its tasks again
 * though the cache holds their key. */
static void test_no_cache(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WORKFLOW("{@task}", "1h"));
    fake_turn(&env);
    next_run(&env, "{}");
    assert_int_equal(fake_submits("a"), 1);
    static const uint32_t both[] = {0, 1};
    assert_int_equal(sy_store_reopen_run(env.store, env.run_id, both, 2, true, fake_now), SY_OK);
    char err[256] = "";
    assert_int_equal(sy_engine_adopt(env.engine, env.run_id, true, err, sizeof err), SY_OK);
    fake_turn(&env);
    assert_int_equal(fake_run_state(&env), SY_RUN_COMPLETED);
    assert_int_equal(fake_submits("a"), 2);
    const sy_engine_metrics *m = sy_engine_metrics_get(env.engine);
    assert_int_equal(m->cache_hits, 1);
    assert_int_equal(m->cache_misses, 2);
    /* A run without the flag finds the cache again. */
    next_run(&env, "{}");
    assert_int_equal(fake_submits("a"), 2);
    fake_close(&env);
}

/* A failed attempt puts nothing. */
static void test_failure_not_kept(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, "workflow = { name = \"w\"; tasks = (\n"
                    "  { id = \"a\"; hold = true; retry = { attempts = 1; };\n"
                    "    cache = { key = \"k\"; lifetime = \"1h\"; }; }\n"
                    "); };\n");
    fake_turn(&env);
    fake_complete(&env, "a", SY_OUTCOME_FAILED);
    assert_int_equal(fake_run_state(&env), SY_RUN_FAILED);
    char err[256] = "";
    int64_t id = 0;
    assert_int_equal(sy_runs_record(env.store, env.wf, "{}", &id, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(env.engine, id, true, err, sizeof err), SY_OK);
    env.run_id = id;
    fake_turn(&env);
    assert_int_equal(fake_submits("a"), 2);
    fake_close(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit),
        cmocka_unit_test(test_hit_observed),
        cmocka_unit_test(test_miss_other_key),
        cmocka_unit_test(test_expired),
        cmocka_unit_test(test_no_cache),
        cmocka_unit_test(test_failure_not_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
