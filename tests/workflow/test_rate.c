/* Workflow files: `rate_limits` read into each task (the workflow's as
 * its tasks' default, a task's own replacing them), `burst` defaulting to
 * `rate`, entries naming a rate limit of switchyard.cfg (`name`, with or
 * without a key), kept through the canonical definition and the parse
 * cache, and every mistake reported at its FILE:LINE. */
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

#include "fixture.h"
#include "base/diagnostics.h"
#include "base/util.h"
#include "workflow/workflow.h"

typedef th_wf_fixture fixture;

static int load_text(fixture *f, const char *text) { return th_wf_load(f, "f.cfg", text); }

static const char *const VALID =
    "workflow = { name = \"w\";\n"
    "  rate_limits = ( { key = \"api\"; rate = 10; interval = \"1s\"; } );\n"
    "  tasks = (\n"
    "    { id = \"a\"; },\n"
    "    { id = \"b\"; rate_limits = (\n"
    "        { key = \"api:{customer}\"; rate = 3; interval = \"1m\"; burst = 1; },\n"
    "        { key = \"{@task}\"; rate = 1; interval = 250; burst = 4; } ); },\n"
    "    { id = \"c\"; rate_limits = (); },\n"
    "    { id = \"d\"; limits = ( { key = \"db\"; limit = 2; } ); },\n"
    "    { id = \"e\"; rate_limits = ( { name = \"crm\"; },\n"
    "        { name = \"crm\"; key = \"{customer}\"; }, { key = \"crm\"; rate = 1; interval = 1; } ); }\n"
    "); };\n";

static void check_valid(const sy_workflow *wf)
{
    const sy_task_def *t = wf->tasks;
    /* a: the workflow's, its burst the rate. */
    assert_non_null(t[0].flow);
    assert_int_equal(t[0].flow->n_rates, 1);
    assert_string_equal(t[0].flow->rates[0].key, "api");
    assert_int_equal(t[0].flow->rates[0].rate, 10);
    assert_int_equal(t[0].flow->rates[0].interval_ms, 1000);
    assert_int_equal(t[0].flow->rates[0].burst, 10);
    /* b: its own replace the workflow's. */
    assert_int_equal(t[1].flow->n_rates, 2);
    assert_string_equal(t[1].flow->rates[0].key, "api:{customer}");
    assert_int_equal(t[1].flow->rates[0].rate, 3);
    assert_int_equal(t[1].flow->rates[0].interval_ms, 60000);
    assert_int_equal(t[1].flow->rates[0].burst, 1);
    assert_int_equal(t[1].flow->rates[1].interval_ms, 250);
    assert_int_equal(t[1].flow->rates[1].burst, 4);
    /* c: cleared, and nothing else left. */
    assert_null(t[2].flow);
    /* d: its limits beside the workflow's rate. */
    assert_int_equal(t[3].flow->n_limits, 1);
    assert_int_equal(t[3].flow->n_rates, 1);
    assert_null(t[3].flow->rates[0].name);
    /* e: named ones, their rate switchyard.cfg's; one of its own whose key
     * reads as the name is another bucket. */
    assert_int_equal(t[4].flow->n_rates, 3);
    assert_string_equal(t[4].flow->rates[0].name, "crm");
    assert_null(t[4].flow->rates[0].key);
    assert_int_equal(t[4].flow->rates[0].rate, 0);
    assert_int_equal(t[4].flow->rates[0].interval_ms, 0);
    assert_string_equal(t[4].flow->rates[1].name, "crm");
    assert_string_equal(t[4].flow->rates[1].key, "{customer}");
    assert_null(t[4].flow->rates[2].name);
    assert_string_equal(t[4].flow->rates[2].key, "crm");
}

static void test_valid(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, VALID), 0);
    check_valid(f->wf);
    /* The host's key, not the executor's. */
    assert_null(json_object_get(f->wf->tasks[1].params, "rate_limits"));
    sy_workflow *back = th_wf_read_back(f);
    check_valid(back);
    sy_workflow_free(back);
}

static void test_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(
        load_text(f,
                  "workflow = { name = \"w\"; rate_limits = \"api\";\n"                 /* 1 */
                  "  tasks = (\n"                                                      /* 2 */
                  "    { id = \"a\"; rate_limits = ( { key = \"x\"; rate = 0;\n"         /* 3 */
                  "        interval = \"1s\"; burst = 0; } ); },\n"                     /* 4 */
                  "    { id = \"b\"; rate_limits = ( { key = \"x\"; rate = -2;\n"        /* 5 */
                  "        interval = \"1 fortnight\"; } ); },\n"                       /* 6 */
                  "    { id = \"c\"; rate_limits = ( { key = \"x\"; rate = 1; } ); },\n" /* 7 */
                  "    { id = \"d\"; rate_limits = ( { key = \"x\"; rate = 1;\n"         /* 8 */
                  "        interval = \"0s\"; } ); },\n"                                /* 9 */
                  "    { id = \"e\"; rate_limits = ( { key = \"{c\"; rate = 1;\n"        /* 10 */
                  "        interval = 1000; every = 1; } ); },\n"                       /* 11 */
                  "    { id = \"f\"; rate_limits = ( { key = \"k\"; rate = 1;\n"         /* 12 */
                  "        interval = \"2d\"; },\n"                                     /* 13 */
                  "       { rate = 1; interval = 1; } ); },\n"                         /* 14 */
                  "    { id = \"g\"; rate_limits = ( { key = \"k\"; rate = 1; interval = 1; },\n" /* 15 */
                  "       { key = \"k\"; rate = 2; interval = 1; } ); }\n"              /* 16 */
                  "); };\n"),
        12);
    EXPECT("f.cfg:1: error:", "workflow: 'rate_limits' must be a list of groups");
    EXPECT("f.cfg:3: error:", "task 'a': rate_limits entry 1: 'rate' must be an integer from 1 "
                              "to 1000000");
    EXPECT("f.cfg:4: error:", "task 'a': rate_limits entry 1: 'burst' must be an integer from 1");
    EXPECT("f.cfg:5: error:", "task 'b': rate_limits entry 1: 'rate' must be an integer");
    EXPECT("f.cfg:6: error:", "task 'b': rate_limits entry 1: 'interval' must be a duration "
                              "from 1ms to 1d");
    EXPECT("f.cfg:7: error:", "task 'c': rate_limits entry 1 has no 'interval'");
    EXPECT("f.cfg:9: error:", "task 'd': rate_limits entry 1: 'interval' must be a duration");
    EXPECT("f.cfg:10: error:", "task 'e': rate_limits entry 1: key \"{c\": a '{' that is not "
                               "closed");
    EXPECT("f.cfg:11: error:", "unknown key 'every' in task 'e': rate_limits entry 1 (known: "
                               "key, rate, interval, burst, name)");
    EXPECT("f.cfg:13: error:", "task 'f': rate_limits entry 1: 'interval' must be a duration");
    EXPECT("f.cfg:14: error:", "task 'f': rate_limits entry 2 has no 'key'");
    EXPECT("f.cfg:16: error:", "task 'g': rate_limits entry 2: key \"k\" is already rate "
                               "limited by entry 1");
}

/* An entry that names a rate limit of switchyard.cfg: its name, and its
 * key alone beside it. */
static void test_named_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(
        load_text(f,
                  "workflow = { name = \"w\"; tasks = (\n"                                /* 1 */
                  "    { id = \"a\"; rate_limits = ( { name = \"crm\";\n"                 /* 2 */
                  "        rate = 2; burst = 1; } ); },\n"                                 /* 3 */
                  "    { id = \"b\"; rate_limits = ( { name = \"no good\"; } ); },\n"      /* 4 */
                  "    { id = \"c\"; rate_limits = ( { name = 5; } ); },\n"                /* 5 */
                  "    { id = \"d\"; rate_limits = ( { name = \"crm\"; key = \"{x\"; } ); },\n" /* 6 */
                  "    { id = \"e\"; rate_limits = ( { name = \"crm\"; },\n"              /* 7 */
                  "        { name = \"crm\"; } ); },\n"                                    /* 8 */
                  "    { id = \"f\"; rate_limits = ( { name = \"crm\"; key = \"k\"; },\n" /* 9 */
                  "        { name = \"crm\"; key = \"k\"; interval = 5; } ); }\n"          /* 10 */
                  "); };\n"),
        7);
    EXPECT("f.cfg:3: error:", "task 'a': rate_limits entry 1: 'rate' with 'name': the rate "
                              "limit 'crm' of switchyard.cfg says it");
    EXPECT("f.cfg:3: error:", "task 'a': rate_limits entry 1: 'burst' with 'name'");
    EXPECT("f.cfg:4: error:", "task 'b': rate_limits entry 1: 'name' must name a rate limit "
                              "of switchyard.cfg");
    EXPECT("f.cfg:5: error:", "task 'c': rate_limits entry 1: 'name' must name");
    EXPECT("f.cfg:6: error:", "task 'd': rate_limits entry 1: key \"{x\": a '{' that is not "
                              "closed");
    EXPECT("f.cfg:8: error:", "task 'e': rate_limits entry 2: rate limit 'crm' is already "
                              "named by entry 1");
    EXPECT("f.cfg:10: error:", "task 'f': rate_limits entry 2: 'interval' with 'name'");
}

/* A definition whose rate limits are malformed is refused with why. */
static void test_bad_definition(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"rate_limits\":[]}",
        "{\"rate_limits\":{}}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":0,\"interval_ms\":1000,\"burst\":1}]}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":1,\"interval_ms\":0,\"burst\":1}]}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":1,\"interval_ms\":86400001,\"burst\":1}]}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":1,\"interval_ms\":1000,\"burst\":0}]}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":1,\"interval_ms\":1000}]}",
        "{\"rate_limits\":[{\"key\":\"{\",\"rate\":1,\"interval_ms\":1000,\"burst\":1}]}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":1,\"interval_ms\":1000,\"burst\":1,\"x\":1}]}",
        "{\"rate_limits\":[{\"key\":\"k\",\"rate\":1,\"interval_ms\":1000,\"burst\":1},"
        "{\"key\":\"k\",\"rate\":2,\"interval_ms\":1000,\"burst\":1}]}",
        "{\"rate_limits\":[{\"name\":\"crm\",\"rate\":1}]}",
        "{\"rate_limits\":[{\"name\":\"no good\"}]}",
        "{\"rate_limits\":[{\"name\":5}]}",
        "{\"rate_limits\":[{\"name\":\"crm\",\"key\":\"{\"}]}",
        "{\"rate_limits\":[{\"name\":\"crm\",\"key\":5}]}",
        "{\"rate_limits\":[{\"name\":\"crm\"},{\"name\":\"crm\"}]}",
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
        T(test_errors),
        T(test_named_errors),
        T(test_bad_definition),
        T(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
