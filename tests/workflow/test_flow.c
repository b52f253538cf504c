/* Workflow files: `priority`, `limits`, `pool` and `pool_slots` read into
 * each task (the workflow's as its tasks' default), kept through the
 * canonical definition and the parse cache (and only where set), and
 * every mistake reported at its FILE:LINE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "base/diagnostics.h"
#include "base/util.h"
#include "workflow/workflow.h"

typedef th_wf_fixture fixture;

static int load_text(fixture *f, const char *text) { return th_wf_load(f, "f.cfg", text); }

static const char *const VALID =
    "workflow = { name = \"w\"; priority = 5;\n"
    "  limits = ( { key = \"db:{customer}\"; limit = 2; } );\n"
    "  pool = \"db\";\n"
    "  tasks = (\n"
    "    { id = \"a\"; },\n"
    "    { id = \"b\"; priority = -3; pool = \"api\"; pool_slots = 2;\n"
    "      limits = ( { key = \"x:{@tenant}:{a.b}\"; limit = 1; strategy = \"drop\"; },\n"
    "                 { key = \"y\"; limit = 7; strategy = \"cancel_in_progress\"; } ); },\n"
    "    { id = \"c\"; limits = (); pool_slots = 3; },\n"
    "    { id = \"d\"; command = [\"true\"]; }\n"
    "); };\n";

/* What VALID holds, whether read from the file, the definition or the
 * cache. */
static void check_valid(const sy_workflow *wf)
{
    const sy_task_def *t = wf->tasks;
    /* a: the workflow's priority, limits and pool (one slot). */
    assert_int_equal(t[0].priority, 5);
    assert_non_null(t[0].flow);
    assert_int_equal(t[0].flow->n_limits, 1);
    assert_string_equal(t[0].flow->limits[0].key, "db:{customer}");
    assert_int_equal(t[0].flow->limits[0].limit, 2);
    assert_int_equal(t[0].flow->limits[0].strategy, SY_LIMIT_QUEUE);
    assert_string_equal(t[0].flow->pool, "db");
    assert_int_equal(t[0].flow->pool_slots, 1);
    /* b: its own replace the workflow's. */
    assert_int_equal(t[1].priority, -3);
    assert_int_equal(t[1].flow->n_limits, 2);
    assert_string_equal(t[1].flow->limits[0].key, "x:{@tenant}:{a.b}");
    assert_int_equal(t[1].flow->limits[0].strategy, SY_LIMIT_DROP);
    assert_int_equal(t[1].flow->limits[1].limit, 7);
    assert_int_equal(t[1].flow->limits[1].strategy, SY_LIMIT_CANCEL_IN_PROGRESS);
    assert_string_equal(t[1].flow->pool, "api");
    assert_int_equal(t[1].flow->pool_slots, 2);
    /* c: no limits, the workflow's pool with 3 slots. */
    assert_int_equal(t[2].flow->n_limits, 0);
    assert_string_equal(t[2].flow->pool, "db");
    assert_int_equal(t[2].flow->pool_slots, 3);
    assert_int_equal(t[3].priority, 5);
}

static void test_valid(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, VALID), 0);
    check_valid(f->wf);
    /* The host's keys are not the executor's, but `priority` is both: an
     * executor with a queue of its own orders by the same number. */
    assert_null(json_object_get(f->wf->tasks[1].params, "limits"));
    assert_null(json_object_get(f->wf->tasks[1].params, "pool"));
    assert_null(json_object_get(f->wf->tasks[1].params, "pool_slots"));
    assert_int_equal(json_integer_value(json_object_get(f->wf->tasks[1].params, "priority")), -3);
    assert_null(json_object_get(f->wf->tasks[0].params, "priority"));
    sy_workflow *back = th_wf_read_back(f);
    check_valid(back);
    sy_workflow_free(back);
}

/* A workflow without flow control keeps the definition (and hash) it
 * had before flow control existed. */
static void test_definition_unchanged(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; } ); };\n"),
                     0);
    assert_non_null(strstr(f->wf->definition, "\"tasks\":[{\"id\":\"a\"}],"));
    assert_null(strstr(f->wf->definition, "priority"));
    assert_null(strstr(f->wf->definition, "flow"));
    assert_null(f->wf->tasks[0].flow);
    assert_int_equal(f->wf->tasks[0].priority, 0);
}

static void test_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(
        load_text(f,
                  "workflow = { name = \"w\"; priority = 2000000; pool_slots = 2;\n" /* 1 */
                  "  tasks = (\n"                                                   /* 2 */
                  "    { id = \"a\"; limits = ( { key = \"db:{c\"; limit = 0;\n"     /* 3 */
                  "        strategy = \"x\"; } ); },\n"                             /* 4 */
                  "    { id = \"b\"; limits = ( { limit = 1; } ); },\n"             /* 5 */
                  "    { id = \"c\"; limits = ( { key = \"}\"; limit = 1; },\n"     /* 6 */
                  "       { key = \"{@foo}\"; limit = 1; bogus = 1; } ); },\n"      /* 7 */
                  "    { id = \"d\"; limits = ( { key = \"k\"; limit = 1; },\n"     /* 8 */
                  "       { key = \"k\"; limit = 2; } ); },\n"                      /* 9 */
                  "    { id = \"e\"; pool = \"a::b\"; },\n"                         /* 10 */
                  "    { id = \"f\"; limits = \"k\"; priority = \"high\"; },\n"     /* 11 */
                  "    { id = \"g\"; limits = ( { key = \"{}\"; limit = 1; },\n"    /* 12 */
                  "       { key = \"{a..b}\"; limit = 1; } ); }\n"                  /* 13 */
                  "); };\n"),
        15);
    EXPECT("f.cfg:1: error:", "workflow: 'priority' must be an integer from -1000000 to 1000000");
    EXPECT("f.cfg:1: error:", "workflow: 'pool_slots' needs a 'pool'");
    EXPECT("f.cfg:3: error:", "task 'a': limits entry 1: key \"db:{c\": a '{' that is not closed");
    EXPECT("f.cfg:3: error:", "task 'a': limits entry 1: 'limit' must be an integer from 1 to");
    EXPECT("f.cfg:4: error:", "task 'a': limits entry 1: unknown strategy \"x\" (valid: queue, "
                              "cancel_newest, cancel_in_progress, drop)");
    EXPECT("f.cfg:5: error:", "task 'b': limits entry 1 has no 'key'");
    EXPECT("f.cfg:6: error:", "task 'c': limits entry 1: key \"}\": a '}' that no '{' opened");
    EXPECT("f.cfg:7: error:", "unknown key 'bogus' in task 'c': limits entry 2 (known: key, "
                              "limit, strategy)");
    EXPECT("f.cfg:7: error:", "task 'c': limits entry 2: key \"{@foo}\": an unknown '{@...}'");
    EXPECT("f.cfg:9: error:", "task 'd': limits entry 2: key \"k\" is already limited by entry 1");
    EXPECT("f.cfg:10: error:", "task 'e': 'pool' must name a pool of switchyard.cfg");
    EXPECT("f.cfg:11: error:", "task 'f': 'limits' must be a list of groups");
    EXPECT("f.cfg:11: error:", "task 'f': 'priority' must be an integer");
    EXPECT("f.cfg:12: error:", "task 'g': limits entry 1: key \"{}\": an empty '{}'");
    EXPECT("f.cfg:13: error:", "task 'g': limits entry 2: key \"{a..b}\": a path with an empty "
                               "segment");
}

/* Templates as the engine will read them. */
static void test_key_problem(void **state)
{
    (void)state;
    assert_null(sy_limit_key_problem("db"));
    assert_null(sy_limit_key_problem("db:{customer}:{$.a.0.b}:{@workflow}{@task}"));
    assert_non_null(sy_limit_key_problem(""));
    assert_non_null(sy_limit_key_problem("{a{b}}"));
    assert_non_null(sy_limit_key_problem("{@}"));
    char long_key[300];
    memset(long_key, 'k', sizeof long_key - 1);
    long_key[sizeof long_key - 1] = '\0';
    assert_non_null(sy_limit_key_problem(long_key));
    assert_string_equal(sy_limit_strategy_name(SY_LIMIT_CANCEL_NEWEST), "cancel_newest");
    assert_int_equal(sy_limit_strategy_parse("drop"), SY_LIMIT_DROP);
    assert_int_equal(sy_limit_strategy_parse("Drop"), -1);
}

/* A key's template filled in from the run's context and the namespace;
 * a path the context lacks fails with why. */
static void test_key_render(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"etl::daily\"; tenant = \"t1\";\n"
                                  "  tasks = ( { id = \"load\"; } ); };\n"),
                     0);
    const sy_task_def *t = &f->wf->tasks[0];
    json_t *ctx = json_loads("{\"customer\":\"acme\",\"n\":42,\"ok\":true,\"o\":{\"r\":\"eu\"},"
                             "\"nul\":null,\"list\":[1]}",
                             0, NULL);
    char err[256] = "";
    char *k = sy_limit_key_render("db:{customer}:{n}:{ok}:{o.r}:{@tenant}/{@workflow}/{@task}",
                                  ctx, f->wf, t, err, sizeof err);
    assert_non_null(k);
    assert_string_equal(k, "db:acme:42:true:eu:t1/etl::daily/load");
    free(k);
    k = sy_limit_key_render("plain", ctx, f->wf, t, err, sizeof err);
    assert_string_equal(k, "plain");
    free(k);
    assert_null(sy_limit_key_render("db:{region}", ctx, f->wf, t, err, sizeof err));
    assert_string_equal(err, "task 'load': key \"db:{region}\": 'region' is not in the run's "
                             "context");
    assert_null(sy_limit_key_render("{nul}", ctx, f->wf, t, err, sizeof err));
    assert_non_null(strstr(err, "'nul' is null"));
    assert_null(sy_limit_key_render("{list}", ctx, f->wf, t, err, sizeof err));
    assert_non_null(strstr(err, "'list' is an object or an array"));
    json_decref(ctx);
    /* Longer than SY_LIMIT_RENDERED_MAX once filled in. */
    json_t *big = json_object();
    char *text = malloc(SY_LIMIT_RENDERED_MAX + 2);
    memset(text, 'x', SY_LIMIT_RENDERED_MAX + 1);
    text[SY_LIMIT_RENDERED_MAX + 1] = '\0';
    json_object_set_new(big, "s", json_string(text));
    free(text);
    assert_null(sy_limit_key_render("{s}", big, f->wf, t, err, sizeof err));
    assert_non_null(strstr(err, "comes to more than 1024 bytes"));
    json_decref(big);
}

/* A definition whose flow is malformed is refused with why. */
static void test_bad_definition(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"limits\":[]}",
        "{\"limits\":[{\"key\":\"k\",\"limit\":0,\"strategy\":\"queue\"}]}",
        "{\"limits\":[{\"key\":\"{\",\"limit\":1,\"strategy\":\"queue\"}]}",
        "{\"limits\":[{\"key\":\"k\",\"limit\":1,\"strategy\":\"wait\"}]}",
        "{\"limits\":[{\"key\":\"k\",\"limit\":1,\"strategy\":\"queue\"},"
        "{\"key\":\"k\",\"limit\":1,\"strategy\":\"queue\"}]}",
        "{\"pool\":\"db\"}",
        "{\"pool\":\"db\",\"pool_slots\":0}",
        "{}",
        "{\"other\":1}",
    };
    th_wf_refuses_member("flow", bad, sizeof bad / sizeof *bad, "task 1: ");
}

/* Through the parse cache: the second load is a hit and holds the same. */
static void test_cache(void **state) { th_wf_cached_twice(*state, VALID, check_valid); }

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, th_wf_setup, th_wf_teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid),
        T(test_definition_unchanged),
        T(test_errors),
        T(test_key_problem),
        T(test_key_render),
        T(test_bad_definition),
        T(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
