/* Workflow files: `map`, `map_range` and `max_map` read into the task,
 * kept through the canonical definition (and only on mapped tasks), and
 * every mistake reported at its FILE:LINE; a map's size and items. */
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

static int load_text(fixture *f, const char *text) { return th_wf_load(f, "m.cfg", text); }

static void test_valid(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"w\"; max_map = 50000;\n"
                                  "  tasks = (\n"
                                  "    { id = \"a\"; },\n"
                                  "    { id = \"b\"; map = \"files\"; },\n"
                                  "    { id = \"c\"; map_range = [10, 20]; max_map = 10; },\n"
                                  "    { id = \"d\"; map_range = 7; },\n"
                                  "    { id = \"e\"; map = \"$.x.list\"; }\n"
                                  "); };\n"),
                     0);
    const sy_task_def *t = f->wf->tasks;
    assert_false(t[0].mapped);
    assert_int_equal(t[0].max_map, 0);
    assert_true(t[1].mapped);
    assert_string_equal(t[1].map, "files");
    assert_int_equal(t[1].max_map, 50000); /* the workflow's */
    assert_null(t[2].map);
    assert_int_equal(t[2].range_from, 10);
    assert_int_equal(t[2].range_to, 20);
    assert_int_equal(t[2].max_map, 10);
    assert_int_equal(t[3].range_from, 0);
    assert_int_equal(t[3].range_to, 7);
    assert_string_equal(t[4].map, "x.list");
    /* No map key among the executor's parameters. */
    assert_null(json_object_get(t[1].params, "map"));
    assert_null(json_object_get(t[2].params, "max_map"));
    /* Through the canonical definition and back. */
    assert_non_null(strstr(f->wf->definition, "\"map\":{\"key\":\"files\",\"max\":50000}"));
    assert_non_null(strstr(f->wf->definition, "\"map\":{\"max\":10,\"range\":[10,20]}"));
    sy_workflow *back = th_wf_read_back(f);
    assert_false(back->tasks[0].mapped);
    assert_string_equal(back->tasks[1].map, "files");
    assert_int_equal(back->tasks[1].max_map, 50000);
    assert_int_equal(back->tasks[2].range_from, 10);
    assert_int_equal(back->tasks[2].range_to, 20);
    sy_workflow_free(back);
}

/* An unmapped task's definition is what it was before maps existed. */
static void test_unmapped_definition_unchanged(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"w\"; max_map = 5;\n"
                                  "  tasks = ( { id = \"a\"; } ); };\n"),
                     0);
    assert_null(strstr(f->wf->definition, "map"));
}

static void test_errors(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"w\"; max_map = 0;\n"       /* 1 */
                                  "  tasks = (\n"                                   /* 2 */
                                  "    { id = \"a\"; map = 3; },\n"                 /* 3 */
                                  "    { id = \"b\"; map = \"x\";\n"                /* 4 */
                                  "      map_range = [0, 3]; },\n"                  /* 5 */
                                  "    { id = \"c\"; max_map = 4; },\n"             /* 6 */
                                  "    { id = \"d\"; map_range = [5, 2]; },\n"      /* 7 */
                                  "    { id = \"e\"; map_range = [0, 100];\n"       /* 8 */
                                  "      max_map = 10; },\n"                        /* 9 */
                                  "    { id = \"f\"; map = \"x\"; max_map = -1; },\n" /* 10 */
                                  "    { id = \"g\"; map_range = \"all\"; },\n"     /* 11 */
                                  "    { id = \"h\"; map = \"a..b\"; }\n"           /* 12 */
                                  "); };\n"),
                     9);
    EXPECT("m.cfg:1: error:", "workflow: 'max_map' must be an integer from 1 to");
    EXPECT("m.cfg:3: error:", "task 'a': 'map' must name an array in the input context");
    EXPECT("m.cfg:5: error:", "task 'b': 'map' and 'map_range' exclude each other");
    EXPECT("m.cfg:6: error:", "task 'c': 'max_map' without 'map' or 'map_range'");
    EXPECT("m.cfg:7: error:", "task 'd': 'map_range' must be [FROM, TO]");
    EXPECT("m.cfg:8: error:", "task 'e': 'map_range' has 100 elements, more than max_map 10");
    EXPECT("m.cfg:10: error:", "task 'f': 'max_map' must be an integer from 1 to");
    EXPECT("m.cfg:11: error:", "task 'g': 'map_range' must be [FROM, TO]");
    EXPECT("m.cfg:12: error:", "task 'h': 'map' must name an array");
}

static void test_size_and_items(void **state)
{
    fixture *f = *state;
    assert_int_equal(load_text(f, "workflow = { name = \"w\"; tasks = (\n"
                                  "  { id = \"l\"; map = \"in.files\"; max_map = 3; },\n"
                                  "  { id = \"r\"; map_range = [100, 103]; }\n"
                                  "); };\n"),
                     0);
    const sy_task_def *l = &f->wf->tasks[0], *r = &f->wf->tasks[1];
    json_t *ctx = json_loads("{\"in\":{\"files\":[\"p\",\"q\"]},\"s\":\"t\"}", 0, NULL);
    const json_t *list;
    int64_t n;
    char err[256];
    assert_true(sy_map_size(l, ctx, &list, &n, err, sizeof err));
    assert_int_equal(n, 2);
    json_t *item = sy_map_item(l, list, 1);
    assert_string_equal(json_string_value(item), "q");
    json_decref(item);
    assert_true(sy_map_size(r, ctx, &list, &n, err, sizeof err));
    assert_null(list);
    assert_int_equal(n, 3);
    item = sy_map_item(r, NULL, 2);
    assert_int_equal(json_integer_value(item), 102);
    json_decref(item);
    json_decref(ctx);
    ctx = json_loads("{\"in\":{\"files\":[1,2,3,4]}}", 0, NULL);
    assert_false(sy_map_size(l, ctx, &list, &n, err, sizeof err));
    assert_string_equal(err, "task 'l' maps over 4 elements, more than max_map 3 (raise "
                             "max_map on the task or the workflow)");
    json_decref(ctx);
    ctx = json_loads("{\"in\":{}}", 0, NULL);
    assert_false(sy_map_size(l, ctx, &list, &n, err, sizeof err));
    assert_string_equal(err,
                        "task 'l' maps over 'in.files', which is absent in its input context");
    json_decref(ctx);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, th_wf_setup, th_wf_teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid),
        T(test_unmapped_definition_unchanged),
        T(test_errors),
        T(test_size_and_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
