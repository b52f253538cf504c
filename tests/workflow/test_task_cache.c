/* Workflow files: a task's `cache` (key template and lifetime) read,
 * kept through the canonical definition and the parse cache (and only
 * where set), and every mistake reported at its FILE:LINE. */
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
    "workflow = { name = \"w\";\n"
    "  tasks = (\n"
    "    { id = \"a\"; cache = { key = \"{file}:{@task}\"; lifetime = \"1h\"; }; },\n"
    "    { id = \"b\"; command = [\"true\"]; cache = { key = \"k\"; lifetime = 250; }; },\n"
    "    { id = \"c\"; }\n"
    "); };\n";

static void check_valid(const sy_workflow *wf)
{
    const sy_task_def *t = wf->tasks;
    assert_non_null(t[0].cache);
    assert_string_equal(t[0].cache->key, "{file}:{@task}");
    assert_int_equal(t[0].cache->lifetime_ms, 3600000);
    assert_non_null(t[1].cache);
    assert_string_equal(t[1].cache->key, "k");
    assert_int_equal(t[1].cache->lifetime_ms, 250);
    assert_null(t[2].cache);
}

static void test_valid(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, VALID), 0);
    check_valid(f->wf);
    /* The host's key, not the executor's. */
    assert_null(json_object_get(f->wf->tasks[1].params, "cache"));
    assert_non_null(json_object_get(f->wf->tasks[1].params, "command"));
    sy_workflow *back = th_wf_read_back(f);
    check_valid(back);
    sy_workflow_free(back);
}

/* A workflow without a cache keeps the definition (and hash) it had. */
static void test_definition_unchanged(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"w\"; tasks = ( { id = \"a\"; } ); };\n"),
                     0);
    assert_non_null(strstr(f->wf->definition, "\"tasks\":[{\"id\":\"a\"}],"));
    assert_null(strstr(f->wf->definition, "cache"));
}

static void test_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(
        load_text(f,
                  "workflow = { name = \"w\";\n"                                         /* 1 */
                  "  tasks = (\n"                                                        /* 2 */
                  "    { id = \"a\"; cache = { key = \"db:{c\"; lifetime = \"1h\"; }; },\n" /* 3 */
                  "    { id = \"b\"; cache = { lifetime = \"1h\"; }; },\n"                /* 4 */
                  "    { id = \"c\"; cache = { key = \"k\"; }; },\n"                      /* 5 */
                  "    { id = \"d\"; cache = { key = \"k\"; lifetime = \"soon\"; }; },\n" /* 6 */
                  "    { id = \"e\"; cache = { key = \"k\"; lifetime = 0; }; },\n"        /* 7 */
                  "    { id = \"f\"; cache = \"k\"; },\n"                                 /* 8 */
                  "    { id = \"g\"; cache = { key = 3; lifetime = 1; bogus = 1; }; },\n" /* 9 */
                  "    { id = \"h\"; cache = { key = \"{@x}\"; lifetime = 1; }; },\n"     /* 10 */
                  "    { id = \"i\"; map = \"files\"; cache = { key = \"k\"; lifetime = 1; }; }\n" /* 11 */
                  "); };\n"),
        10);
    EXPECT("f.cfg:3: error:", "task 'a': cache: key \"db:{c\": a '{' that is not closed");
    EXPECT("f.cfg:4: error:", "task 'b': cache has no 'key'");
    EXPECT("f.cfg:5: error:", "task 'c': cache has no 'lifetime' (e.g. lifetime = \"1h\";)");
    EXPECT("f.cfg:6: error:", "'lifetime':");
    EXPECT("f.cfg:7: error:", "task 'e': cache: 'lifetime' must be more than 0");
    EXPECT("f.cfg:8: error:", "task 'f': cache must be a group");
    EXPECT("f.cfg:9: error:", "unknown key 'bogus' in task 'g': cache (known: key, lifetime)");
    EXPECT("f.cfg:9: error:", "task 'g': cache: key: it must be a string");
    EXPECT("f.cfg:10: error:", "task 'h': cache: key \"{@x}\": an unknown '{@...}'");
    EXPECT("f.cfg:11: error:", "task 'i': a mapped task cannot have a 'cache'");
}

/* A definition whose cache is malformed is refused with why. */
static void test_bad_definition(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{}",
        "\"k\"",
        "{\"key\":\"k\"}",
        "{\"key\":\"k\",\"lifetime_ms\":0}",
        "{\"key\":\"k\",\"lifetime_ms\":\"1h\"}",
        "{\"key\":\"{\",\"lifetime_ms\":1}",
        "{\"key\":\"k\",\"lifetime_ms\":1,\"other\":1}",
    };
    th_wf_refuses_member("cache", bad, sizeof bad / sizeof *bad, "task 1: \"cache\"");
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
        T(test_bad_definition),
        T(test_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
