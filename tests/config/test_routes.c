/* Unit tests for host/route.c: loading routing files from
 * $SY_TEST_DATA/routes/ (tests/data/routes/), resolving, and the
 * diagnostics, whose file:line the planted errors pin down exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/diagnostics.h"
#include "config/routes.h"
#include "base/util.h"

/* The routes/ data directory, with a trailing slash. */
static char *data_dir(void)
{
    const char *env = getenv("SY_TEST_DATA");
    if (env && *env)
        return sy_asprintf("%s/routes/", env);
    char *dir = sy_path_dirname(__FILE__);
    char *out = sy_asprintf("%s/data/routes/", dir);
    free(dir);
    return out;
}

static char *data_path(const char *name)
{
    char *dir = data_dir();
    char *p = sy_asprintf("%s%s", dir, name);
    free(dir);
    return p;
}

typedef struct fixture {
    sy_routes r;
    sy_diags d;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    sy_routes_init(&f->r);
    sy_diags_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sy_routes_free(&f->r);
    sy_diags_free(&f->d);
    free(f);
    return 0;
}

static int load(fixture *f, const char *name)
{
    char *p = data_path(name);
    int n = sy_routes_add_file(&f->r, p, &f->d);
    free(p);
    return n;
}

static void dump(const sy_diags *d)
{
    for (size_t i = 0; i < d->n; i++)
        print_message("# diag %zu: %s:%d: %s\n", i,
                      d->v[i].file ? d->v[i].file : "(none)", d->v[i].line,
                      d->v[i].msg);
}

/* The diagnostic at `level` whose message holds `words`, asserted to sit
 * at file `file` (a suffix) and `line`. */
static void expect_diag(const sy_diags *d, sy_diag_level level,
                        const char *file, int line, const char *words)
{
    for (size_t i = 0; i < d->n; i++) {
        const sy_diag *g = &d->v[i];
        if (g->level != level || !strstr(g->msg, words) || g->line != line)
            continue;
        if (g->file && sy_str_ends_with(g->file, file))
            return;
    }
    print_error("no %s at %s:%d holding \"%s\"\n",
                level == SY_DIAG_ERROR ? "error" : "warning", file, line,
                words);
    dump(d);
    fail();
}

static void test_first_match_wins(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "basic.cfg"), 0);
    assert_int_equal(f->d.n, 0);
    assert_int_equal(f->r.n, 4);
    const char *exec = NULL;
    size_t tried = 0;
    const sy_route_rule *w =
        sy_routes_resolve(&f->r, "public::ml::train::fit", &exec, &tried);
    assert_non_null(w);
    assert_string_equal(exec, "gpu");
    assert_int_equal(tried, 1);
    assert_int_equal(w->line, 5);
    assert_true(sy_str_ends_with(w->file, "routes/basic.cfg"));
    assert_string_equal(w->glob.source, "*::ml::**");

    w = sy_routes_resolve(&f->r, "public::etl::load", &exec, &tried);
    assert_non_null(w);
    assert_string_equal(exec, "batch");
    assert_int_equal(tried, 2);

    /* `**::fit` would take it too, but rule 1 comes first. */
    w = sy_routes_resolve(&f->r, "t::ml::fit", &exec, &tried);
    assert_string_equal(exec, "gpu");
    assert_int_equal(tried, 1);

    w = sy_routes_resolve(&f->r, "t::w::fit", &exec, &tried);
    assert_string_equal(exec, "fitter");
    assert_int_equal(tried, 3);

    /* A rule spread over lines is placed at its opening brace. */
    w = sy_routes_resolve(&f->r, "private::x", &exec, &tried);
    assert_non_null(w);
    assert_string_equal(exec, "vault");
    assert_int_equal(tried, 4);
    assert_int_equal(w->line, 8);
}

static void test_default(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "basic.cfg"), 0);
    assert_string_equal(f->r.default_executor, "local");
    assert_int_equal(f->r.default_line, 3);
    assert_true(sy_str_ends_with(f->r.default_file, "basic.cfg"));
    const char *exec = NULL;
    size_t tried = 99;
    assert_null(sy_routes_resolve(&f->r, "other::thing", &exec, &tried));
    assert_string_equal(exec, "local");
    assert_int_equal(tried, 4);
    /* A malformed namespace matches no rule: the default takes it. */
    assert_null(sy_routes_resolve(&f->r, "public::ml::", &exec, &tried));
    assert_string_equal(exec, "local");
    assert_int_equal(tried, 4);
    /* Out-parameters are optional. */
    assert_non_null(sy_routes_resolve(&f->r, "a::ml", NULL, NULL));
}

static void test_empty_table(void **state)
{
    fixture *f = *state;
    const char *exec = "stale";
    size_t tried = 99;
    /* No rule and no routing default: the built-in default instance, the
     * same answer `route`, `graph`, `check` and the dispatcher give. */
    assert_null(sy_routes_resolve(&f->r, "a::b", &exec, &tried));
    assert_string_equal(exec, SY_DEFAULT_INSTANCE);
    assert_int_equal(tried, 0);
    exec = "stale";
    assert_null(sy_routes_resolve(NULL, "a::b", &exec, &tried));
    assert_string_equal(exec, SY_DEFAULT_INSTANCE);
    assert_int_equal(tried, 0);
    assert_int_equal(load(f, "empty_array.cfg"), 0);
    assert_int_equal(f->r.n, 0);
    assert_null(sy_routes_resolve(&f->r, "a::b", &exec, &tried));
    assert_string_equal(exec, "local");
}

static void test_planted_errors(void **state)
{
    fixture *f = *state;
    const char *e = "routes/errors.cfg";
    assert_int_equal(load(f, "errors.cfg"), 10);
    assert_int_equal(f->d.errors, 10);
    assert_int_equal(f->d.warnings, 0);
    expect_diag(&f->d, SY_DIAG_ERROR, e, 4,
                "unknown key 'colour' in routes (known: default, rules)");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 7,
                "unknown key 'exector' in rule (known: match, executor, to)");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 7, "rule without 'executor'");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 8, "rule without 'match'");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 9, "rule without 'executor'");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 10,
                "'match' must be a string, not an integer");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 11,
                "invalid pattern \"a::::b\": empty segment");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 12, "rule 7 is a string, not a group");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 14,
                "invalid pattern \"x[yz\": unclosed '['");
    expect_diag(&f->d, SY_DIAG_ERROR, e, 14, "'executor' is empty");
    /* The good rules survive, in order. */
    assert_int_equal(f->r.n, 3);
    assert_string_equal(f->r.rules[0].glob.source, "ok::first");
    assert_string_equal(f->r.rules[1].glob.source, "ok::second");
    assert_string_equal(f->r.rules[2].glob.source, "ok::third");
    assert_int_equal(f->r.rules[2].line, 15);
    assert_string_equal(f->r.default_executor, "local");
}

static void test_default_twice(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "default_a.cfg"), 0);
    assert_int_equal(load(f, "default_b.cfg"), 1);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/default_b.cfg", 4,
                "'default' given twice: first at ");
    assert_non_null(strstr(f->d.v[0].msg, "routes/default_a.cfg:3"));
    assert_string_equal(f->r.default_executor, "first");
    assert_int_equal(f->r.n, 1);
}

/* Twice the same group: `default` twice across groups of one file. */
static void test_default_twice_across_groups(void **state)
{
    fixture *f = *state;
    char *p = data_path("basic.cfg");
    config_t cfg;
    config_init(&cfg);
    int read = config_read_file(&cfg, p);
    free(p);
    if (read != CONFIG_TRUE)
        config_destroy(&cfg);
    assert_int_equal(read, CONFIG_TRUE);
    const config_setting_t *g = config_lookup(&cfg, "routes");
    assert_int_equal(sy_routes_add_group(&f->r, g, &f->d), 0);
    assert_int_equal(sy_routes_add_group(&f->r, g, &f->d), 1);
    assert_int_equal(sy_routes_add_group(&f->r, g, NULL), 1);
    config_destroy(&cfg);
    /* Everything kept was copied out of the destroyed configuration. */
    assert_int_equal(f->r.n, 12);
    expect_diag(&f->d, SY_DIAG_ERROR, "basic.cfg", 3, "given twice");
    assert_non_null(strstr(f->d.v[0].msg, "basic.cfg:3"));
    const char *exec;
    assert_non_null(sy_routes_resolve(&f->r, "private::z", &exec, NULL));
    assert_string_equal(exec, "vault");
}

/* A group read from a string has no file: it is named, not NULL. */
static void test_group_from_string(void **state)
{
    fixture *f = *state;
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, "routes = {\n rules = (\n"
                                              " { match = \"a::\"; "
                                              "executor = \"x\"; },\n"
                                              " { match = \"a::*\"; "
                                              "executor = \"y\"; } );\n};\n"),
                     CONFIG_TRUE);
    assert_int_equal(sy_routes_add_group(&f->r, config_lookup(&cfg, "routes"),
                                         &f->d),
                     1);
    config_destroy(&cfg);
    expect_diag(&f->d, SY_DIAG_ERROR, "<config>", 3,
                "invalid pattern \"a::\": empty segment");
    assert_int_equal(f->r.n, 1);
    assert_string_equal(f->r.rules[0].file, "<config>");
    assert_int_equal(f->r.rules[0].line, 4);
    assert_int_equal(sy_routes_add_group(&f->r, NULL, &f->d), 1);
}

/* Overflow lists: `to` or `executor`, a name or a list, for rules and the
 * default; the single name stays the one-element list. */
static void test_overflow_lists(void **state)
{
    fixture *f = *state;
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, "routes = {\n"
                                              " default = [\"d1\", \"d2\"];\n"
                                              " rules = (\n"
                                              "  { match = \"a::*\"; to = [\"x\", \"y\", \"z\"]; },\n"
                                              "  { match = \"b::*\"; executor = [\"y\"]; },\n"
                                              "  { match = \"c::*\"; to = \"z\"; },\n"
                                              "  { match = \"d::*\"; executor = \"w\"; },\n"
                                              "  { match = \"e::*\"; to = []; },\n"
                                              "  { match = \"f::*\"; to = (\"x\", 3); },\n"
                                              "  { match = \"g::*\"; to = [\"x\", \"x\"]; } );\n"
                                              "};\n"),
                     CONFIG_TRUE);
    assert_int_equal(sy_routes_add_group(&f->r, config_lookup(&cfg, "routes"), &f->d), 3);
    config_destroy(&cfg);
    expect_diag(&f->d, SY_DIAG_ERROR, "<config>", 8, "'to' is an empty list");
    expect_diag(&f->d, SY_DIAG_ERROR, "<config>", 9, "'to' must be a string, not an integer");
    expect_diag(&f->d, SY_DIAG_ERROR, "<config>", 10, "'to' names executor 'x' twice");
    assert_int_equal(f->r.n, 4);
    size_t n = 0;
    const char *const *to = sy_routes_targets(&f->r, &f->r.rules[0], &n);
    assert_int_equal(n, 3);
    assert_string_equal(to[0], "x");
    assert_string_equal(to[2], "z");
    assert_string_equal(f->r.rules[0].executor, "x");
    to = sy_routes_targets(&f->r, &f->r.rules[1], &n);
    assert_int_equal(n, 1);
    assert_string_equal(to[0], "y");
    assert_int_equal(f->r.rules[2].n_to, 1);
    assert_string_equal(f->r.rules[3].executor, "w");
    const char *exec = NULL;
    const sy_route_rule *win = sy_routes_resolve(&f->r, "q::r", &exec, NULL);
    assert_null(win);
    assert_string_equal(exec, "d1");
    to = sy_routes_targets(&f->r, win, &n);
    assert_int_equal(n, 2);
    assert_string_equal(to[1], "d2");
    /* No default at all: the implicit one alone. */
    sy_routes empty;
    sy_routes_init(&empty);
    to = sy_routes_targets(&empty, NULL, &n);
    assert_int_equal(n, 1);
    assert_string_equal(to[0], SY_DEFAULT_INSTANCE);
}

static void test_shadowing(void **state)
{
    fixture *f = *state;
    const char *s = "routes/shadow.cfg";
    assert_int_equal(load(f, "shadow.cfg"), 0);
    assert_int_equal(f->r.n, 8);
    sy_routes_check_shadowing(&f->r, &f->d);
    assert_int_equal(f->d.errors, 0);
    assert_int_equal(f->d.warnings, 3);
    expect_diag(&f->d, SY_DIAG_WARNING, s, 5,
                "rule \"public::ml::train::*\" can never match: every "
                "namespace it matches is taken by the earlier rule "
                "\"*::ml::**\" at ");
    expect_diag(&f->d, SY_DIAG_WARNING, s, 7,
                "rule \"a::[ab]\" can never match");
    expect_diag(&f->d, SY_DIAG_WARNING, s, 10, "rule \"xy*\" can never match");
    assert_non_null(strstr(f->d.v[0].msg, "routes/shadow.cfg:4"));
    assert_non_null(strstr(f->d.v[1].msg, "routes/shadow.cfg:6"));
    assert_non_null(strstr(f->d.v[2].msg, "routes/shadow.cfg:9"));
    sy_routes_check_shadowing(&f->r, NULL);
    sy_routes_check_shadowing(NULL, &f->d);
    assert_int_equal(f->d.warnings, 3);
}

static void test_no_shadowing_in_basic(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "basic.cfg"), 0);
    sy_routes_check_shadowing(&f->r, &f->d);
    assert_int_equal(f->d.n, 0);
}

static void test_syntax_error(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "syntax.cfg"), 1);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/syntax.cfg", 5, "syntax error");
    assert_int_equal(f->r.n, 0);
    assert_null(f->r.default_executor);
}

static void test_missing_file(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "no-such-file.cfg"), 1);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/no-such-file.cfg", 0,
                "cannot read routing file: No such file or directory");
    char *dir = data_dir();
    assert_int_equal(sy_routes_add_file(&f->r, dir, &f->d), 1);
    free(dir);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/", 0,
                "cannot read routing file: Is a directory");
    assert_int_equal(sy_routes_add_file(&f->r, NULL, &f->d), 1);
    assert_int_equal(sy_routes_add_file(&f->r, "", &f->d), 1);
    assert_int_equal(sy_routes_add_file(&f->r, "/nonexistent/x.cfg", NULL),
                     1);
}

static void test_top_level(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "toplevel.cfg"), 1);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/toplevel.cfg", 3,
                "unknown top-level key 'rutes'");
    assert_string_equal(f->r.default_executor, "local");
}

static void test_no_routes_group(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "noroutes.cfg"), 2);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/noroutes.cfg", 2,
                "unknown top-level key 'executors'");
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/noroutes.cfg", 0,
                "no 'routes' group");
}

static void test_wrong_types(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "array.cfg"), 3);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/array.cfg", 4,
                "'default' must be a string, not an integer");
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/array.cfg", 5,
                "rule 1 is a string, not a group");
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/array.cfg", 5,
                "rule 2 is a string, not a group");
    assert_int_equal(load(f, "wrongtypes.cfg"), 1);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/wrongtypes.cfg", 3,
                "'rules' must be a list");
    assert_int_equal(load(f, "routes_string.cfg"), 1);
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/routes_string.cfg", 2,
                "'routes' must be a group");
    assert_int_equal(f->r.n, 0);
    assert_null(f->r.default_executor);
}

static void test_include_relative_to_file(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "include.cfg"), 1);
    /* Named by its path, not only as the `@include` wrote it. */
    expect_diag(&f->d, SY_DIAG_ERROR, "routes/included_rules.cfg", 2,
                "invalid pattern \"inc::[x\": unclosed '['");
    assert_int_equal(f->r.n, 2);
    const char *exec;
    const sy_route_rule *w = sy_routes_resolve(&f->r, "inc::y", &exec, NULL);
    assert_non_null(w);
    assert_string_equal(exec, "inc");
    assert_true(sy_str_ends_with(w->file, "routes/included_rules.cfg"));
    assert_int_equal(w->line, 1);
}

static void test_free_is_idempotent(void **state)
{
    fixture *f = *state;
    assert_int_equal(load(f, "basic.cfg"), 0);
    sy_routes_free(&f->r);
    assert_int_equal(f->r.n, 0);
    assert_null(f->r.rules);
    sy_routes_free(&f->r);
    sy_routes_free(NULL);
    sy_routes_init(NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_first_match_wins),
        T(test_default),
        T(test_empty_table),
        T(test_planted_errors),
        T(test_default_twice),
        T(test_default_twice_across_groups),
        T(test_group_from_string),
        T(test_overflow_lists),
        T(test_shadowing),
        T(test_no_shadowing_in_basic),
        T(test_syntax_error),
        T(test_missing_file),
        T(test_top_level),
        T(test_no_routes_group),
        T(test_wrong_types),
        T(test_include_relative_to_file),
        T(test_free_is_idempotent),
    };
    return cmocka_run_group_tests_name("route: routing table", tests, NULL,
                                       NULL);
}
