/* Unit tests for host/glob.c: matching, invalid patterns, subsumption and
 * namespace validation, mostly as tables so a failing row names itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/glob.h"
#include "base/util.h"

struct match_case {
    const char *pattern, *ns;
    bool want;
};

static const struct match_case match_cases[] = {
    /* The DESIGN example and its neighbours. */
    {"public::ml::train::fit", "public::ml::train::fit", true},
    {"*::ml::**", "public::ml::train::fit", true},
    {"public::ml::train::*", "public::ml::train::fit", true},
    {"public::ml::*", "public::ml::train::fit", false},
    {"public::*::fit", "public::ml::train::fit", false},
    {"public::**::fit", "public::ml::train::fit", true},
    {"public::*::*::fit", "public::ml::train::fit", true},
    /* Literals and anchoring at both ends. */
    {"a", "a", true},
    {"a", "b", false},
    {"a", "aa", false},
    {"aa", "a", false},
    {"a::b", "a::b", true},
    {"a::b", "a", false},
    {"a", "a::b", false},
    {"a::b", "a::b::c", false},
    {"b::c", "a::b::c", false},
    {"a::b", "xa::b", false},
    {"a::b", "a::bx", false},
    /* `**` at the start. */
    {"**::fit", "fit", true},
    {"**::fit", "a::b::fit", true},
    {"**::fit", "a::fit::b", false},
    {"**::fit", "fitx", false},
    /* `**` at the end. */
    {"a::**", "a", true},
    {"a::**", "a::b::c", true},
    {"a::**", "b::a", false},
    {"a::**", "ab", false},
    {"ml::**", "ml::a::b::c", true},
    /* `**` in the middle, zero segments included. */
    {"a::**::b", "a::b", true},
    {"a::**::b", "a::x::b", true},
    {"a::**::b", "a::x::y::z::b", true},
    {"a::**::b", "a::x::y", false},
    {"a::**::b", "b", false},
    {"a::**::b", "a::b::c", false},
    /* Several `**`. */
    {"**::x::**", "x", true},
    {"**::x::**", "a::x::b", true},
    {"**::x::**", "a::b", false},
    {"**::x::**", "a::xx::b", false},
    {"a::**::**::b", "a::b", true},
    {"a::**::**::b", "a::1::2::3::b", true},
    {"a::**::**::b", "a::1::2::3", false},
    {"**::a::**::b::**", "x::a::y::b::z", true},
    {"**::a::**::b::**", "x::b::y::a::z", false},
    {"**", "anything", true},
    {"**", "a::b::c", true},
    {"**::**", "a", true},
    /* Cases that need the matcher to backtrack. */
    {"**::a::b", "a::a::b", true},
    {"**::a::b", "a::b::a::b", true},
    {"**::a::b", "a::b::a", false},
    {"**::a::*::c", "a::a::x::c", true},
    /* `*` and `?` stay inside one segment. */
    {"*", "a", true},
    {"*", "a::b", false},
    {"ml::*", "ml::a", true},
    {"ml::*", "ml::a::b::c", false},
    {"a*a", "a", false},
    {"a*a", "aa", true},
    {"a*a", "aba", true},
    {"a*a", "ab", false},
    {"*x", "x", true},
    {"x*", "xyz", true},
    {"*y*", "xyz", true},
    {"*.*", ".hidden", true},
    {"?", "a", true},
    {"?", "ab", false},
    {"a?c", "abc", true},
    {"a?c", "a::c", false},
    {"a*c", "a::c", false},
    /* Classes. */
    {"[abc]", "b", true},
    {"[abc]", "d", false},
    {"[a-z]", "q", true},
    {"[a-z]", "Q", false},
    {"[!x]", "y", true},
    {"[!x]", "x", false},
    {"[^x]", "x", false},
    {"[]]", "]", true},
    {"[!]]", "a", true},
    {"[!]]", "]", false},
    {"[\\]]", "]", true},
    {"v[0-9][0-9]", "v42", true},
    {"v[0-9][0-9]", "v4", false},
    {"[[:digit:]]*", "9lives", true},
    {"[[:digit:]]*", "lives", false},
    {"[[:alpha:]-]", "-", true},
    /* Escapes. */
    {"\\*", "*", true},
    {"\\*", "a", false},
    {"a\\?", "a?", true},
    {"a\\?", "ab", false},
    {"a\\b", "ab", true},
    /* Case-sensitive. */
    {"ML::*", "ml::a", false},
    {"ml", "ML", false},
    {"[A-Z]", "a", false},
    {"Etl", "Etl", true},
    /* Malformed namespaces match nothing. */
    {"a::**", "a::", false},
    {"**", "", false},
    {"**", "::a", false},
    {"**", "a::::b", false},
    {"**", "a:b", false},
    {"*", "a:::b", false},
    {"**", "a:", false},
    {"a::b", "a::b::", false},
    {"*", ":", false},
};

static void test_match_table(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t i = 0; i < SY_ARRAY_LEN(match_cases); i++) {
        const struct match_case *c = &match_cases[i];
        sy_glob g;
        char err[256] = "";
        if (sy_glob_compile(&g, c->pattern, err, sizeof err) != 0) {
            print_error("row %zu: pattern \"%s\" does not compile: %s\n", i,
                        c->pattern, err);
            failures++;
            continue;
        }
        bool got = sy_glob_match(&g, c->ns);
        if (got != c->want) {
            print_error("row %zu: pattern \"%s\" ns \"%s\": expected %s, "
                        "got %s\n", i, c->pattern, c->ns,
                        c->want ? "match" : "no match",
                        got ? "match" : "no match");
            failures++;
        }
        sy_glob_free(&g);
    }
    assert_true(SY_ARRAY_LEN(match_cases) >= 60);
    assert_int_equal(failures, 0);
}

struct invalid_case {
    const char *pattern;
    const char *words[2]; /* each must appear in the error */
};

static const struct invalid_case invalid_cases[] = {
    {"", {"empty pattern", NULL}},
    {"::a", {"empty segment", "leading"}},
    {"a::", {"empty segment", "trailing"}},
    {"a::b::", {"empty segment", "trailing"}},
    {"a::::b", {"empty segment", NULL}},
    {"::", {"empty segment", NULL}},
    {"a**", {"'**' must be a whole segment", "a**"}},
    {"**a", {"'**' must be a whole segment", NULL}},
    {"***", {"'**' must be a whole segment", NULL}},
    {"x::a**b::y", {"'**' must be a whole segment", "a**b"}},
    {"a[bc", {"unclosed '['", "a[bc"}},
    {"[]", {"unclosed '['", NULL}},
    {"[!]", {"unclosed '['", NULL}},
    {"[\\]", {"unclosed '['", NULL}},
    {"x::[a-", {"unclosed '['", NULL}},
    {"[[:alpha:]", {"unclosed '['", NULL}},
    {"[[:alpha]", {"'[:'", NULL}},
    {"a:b", {"lone ':'", "a:b"}},
    {"a:::b", {"lone ':'", NULL}},
    {":a", {"lone ':'", NULL}},
    {"a:", {"lone ':'", NULL}},
    {"[:]", {"lone ':'", NULL}},
    {"a\\:", {"lone ':'", NULL}},
    {"a\\", {"trailing '\\'", NULL}},
    {"a\\::b", {"trailing '\\'", NULL}},
    {"[[:foo:]]", {"unknown character class", NULL}},
    {"[z-a]", {"reversed range", NULL}},
    {"[[.a.]]", {"not supported", NULL}},
    {"[[=a=]]", {"not supported", NULL}},
    {"[a-[:digit:]]", {"range", "character class"}},
    {"[[:digit:]-z]", {"range", "character class"}},
};

static void test_invalid_patterns(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t i = 0; i < SY_ARRAY_LEN(invalid_cases); i++) {
        const struct invalid_case *c = &invalid_cases[i];
        sy_glob g;
        char err[256] = "";
        if (sy_glob_compile(&g, c->pattern, err, sizeof err) == 0) {
            print_error("row %zu: pattern \"%s\" compiled; expected an "
                        "error\n", i, c->pattern);
            sy_glob_free(&g);
            failures++;
            continue;
        }
        bool zeroed = !g.source && !g.buf && !g.seg && g.nseg == 0;
        for (size_t w = 0; w < 2; w++)
            if (c->words[w] && !strstr(err, c->words[w])) {
                print_error("row %zu: pattern \"%s\": error \"%s\" lacks "
                            "\"%s\"\n", i, c->pattern, err, c->words[w]);
                failures++;
            }
        if (!zeroed || strchr(err, '\n')) {
            print_error("row %zu: pattern \"%s\": not zeroed or a multi-line "
                        "error\n", i, c->pattern);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static void test_null_arguments(void **state)
{
    (void)state;
    sy_glob g;
    char err[64] = "";
    assert_int_equal(sy_glob_compile(&g, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "empty pattern"));
    assert_int_equal(sy_glob_compile(NULL, "a", err, sizeof err), -1);
    assert_int_equal(sy_glob_compile(&g, "a::", NULL, 0), -1);
    assert_false(sy_glob_match(NULL, "a"));
    assert_int_equal(sy_glob_compile(&g, "**", NULL, 0), 0);
    assert_false(sy_glob_match(&g, NULL));
    assert_false(sy_glob_subsumes(&g, NULL));
    assert_false(sy_glob_subsumes(NULL, &g));
    sy_glob_free(&g);
    sy_glob_free(&g);
    sy_glob_free(NULL);
    /* A zeroed glob (a failed compile) matches nothing. */
    memset(&g, 0, sizeof g);
    assert_false(sy_glob_match(&g, "a"));
}

static void test_compiled_segments(void **state)
{
    (void)state;
    sy_glob g;
    assert_int_equal(sy_glob_compile(&g, "pub::**::t*::a\\b::[x]", NULL, 0),
                     0);
    assert_string_equal(g.source, "pub::**::t*::a\\b::[x]");
    assert_int_equal(g.nseg, 5);
    const sy_glob_seg_kind kinds[] = {SY_SEG_LITERAL, SY_SEG_GLOBSTAR,
                                      SY_SEG_WILD, SY_SEG_WILD, SY_SEG_WILD};
    const char *texts[] = {"pub", "**", "t*", "a\\b", "[x]"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(g.seg[i].kind, kinds[i]);
        assert_string_equal(g.seg[i].text, texts[i]);
        assert_int_equal(g.seg[i].len, strlen(texts[i]));
    }
    sy_glob_free(&g);
    assert_null(g.source);
}

/* A name is built at run time: tables of literals cannot hold 256 x's. */
static char *repeat(char c, size_t n)
{
    char *s = sy_xmalloc(n + 1);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void test_long_segments(void **state)
{
    (void)state;
    char *ok = repeat('x', SY_NS_SEGMENT_MAX);
    char *too_long = repeat('x', SY_NS_SEGMENT_MAX + 1);
    char *ns = sy_asprintf("a::%s", ok), *bad_ns = sy_asprintf("a::%s",
                                                               too_long);
    sy_glob star, globstar, literal;
    assert_int_equal(sy_glob_compile(&star, "a::*", NULL, 0), 0);
    assert_int_equal(sy_glob_compile(&globstar, "**", NULL, 0), 0);
    assert_int_equal(sy_glob_compile(&literal, bad_ns, NULL, 0), 0);
    assert_true(sy_glob_match(&star, ns));
    assert_false(sy_glob_match(&star, bad_ns));
    assert_false(sy_glob_match(&globstar, bad_ns));
    assert_false(sy_glob_match(&literal, bad_ns));
    sy_glob_free(&star);
    sy_glob_free(&globstar);
    sy_glob_free(&literal);
    free(ok);
    free(too_long);
    free(ns);
    free(bad_ns);
}

/* Many `**` against a long name that does not match must still finish at
 * once: the matcher is O(pattern x name), not exponential. */
static void test_many_globstars(void **state)
{
    (void)state;
    char pattern[512] = "", ns[512] = "";
    for (int i = 0; i < 30; i++)
        strcat(pattern, "**::a::");
    strcat(pattern, "b");
    for (int i = 0; i < 60; i++)
        strcat(ns, i ? "::a" : "a");
    sy_glob g;
    assert_int_equal(sy_glob_compile(&g, pattern, NULL, 0), 0);
    assert_false(sy_glob_match(&g, ns));
    strcat(ns, "::b");
    assert_true(sy_glob_match(&g, ns));
    sy_glob_free(&g);
    assert_int_equal(sy_glob_compile(&g, "**::**::**::**::**::**::**::**::"
                                          "**::**::**::**::**::**::**::z",
                                     NULL, 0),
                     0);
    ns[strlen(ns) - 1] = 'y';
    assert_false(sy_glob_match(&g, ns));
    sy_glob_free(&g);
}

struct subsume_case {
    const char *a, *b;
    bool want; /* a subsumes b */
};

static const struct subsume_case subsume_cases[] = {
    {"**", "a", true},
    {"**", "**", true},
    {"**", "a::**::b", true},
    {"**", "*::[ab]::?", true},
    {"a", "**", false},
    {"a::*", "a::b", true},
    {"a::*", "a::**", false},
    {"a::b", "a::*", false},
    {"a::b", "a::b", true},
    {"a::b", "a::c", false},
    {"*::ml::**", "public::ml::train::*", true},
    {"public::ml::train::*", "*::ml::**", false},
    {"*::ml::**", "*::ml", true},
    {"*::ml::**", "ml", false},
    {"a::[abc]", "a::b", true},
    {"a::[abc]", "a::[ab]", true},
    {"a::[abc]", "a::[a-d]", false},
    {"a::[a-d]", "a::[abc]", true},
    {"x*", "xy*", true},
    {"x*", "*x", false},
    {"*x", "x*", false},
    {"*", "x*", true},
    {"*", "[abc]?", true},
    {"x*", "x", true},
    {"x*y", "x*z*y", true},
    {"x*z*y", "x*y", false},
    {"a::**", "a::b::c", true},
    {"a::**", "a", true},
    {"a::**", "b", false},
    {"a::**::b", "a::x::b", true},
    {"a::**::b", "a::**::x::b", true},
    {"a::**::b", "a::**", false},
    {"**::a", "a", true},
    {"**::a", "**::a", true},
    {"a", "**::a", false},
    {"a::*::c", "a::b::c", true},
    {"a::*::c", "a::**::c", false},
    {"?", "[abc]", true},
    {"?", "*", false},
    {"?", "\\*", true},
    {"[!x]", "[ab]", true},
    {"[!a]", "[ab]", false},
    {"[!x]", "?", false},
    {"[!ab]", "[!abc]", true},
    {"[!abc]", "[!ab]", false},
    {"[[:alpha:]]", "[a-z]", true},
    {"[[:alnum:]]", "q", true},
    /* Sound under any locale: [[:alpha:]] may hold non-ASCII letters. */
    {"[a-zA-Z]", "[[:alpha:]]", false},
    {"a\\*", "a\\*", true},
    {"*", "a\\*", true},
    {"a\\*", "a*", false},
    {"a?", "a\\?", true},
    {"ab", "a[b]", true},
    {"a[b]", "ab", true},
    {"a\\b", "ab", true},
    {"ML::*", "ml::x", false},
};

static void test_subsumes_table(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t i = 0; i < SY_ARRAY_LEN(subsume_cases); i++) {
        const struct subsume_case *c = &subsume_cases[i];
        sy_glob a, b;
        char err[256] = "";
        int ra = sy_glob_compile(&a, c->a, err, sizeof err);
        int rb = sy_glob_compile(&b, c->b, err, sizeof err);
        if (ra != 0 || rb != 0) {
            print_error("row %zu: \"%s\" / \"%s\" does not compile: %s\n", i,
                        c->a, c->b, err);
            failures++;
        } else if (sy_glob_subsumes(&a, &b) != c->want) {
            print_error("row %zu: \"%s\" subsumes \"%s\": expected %s\n", i,
                        c->a, c->b, c->want ? "true" : "false");
            failures++;
        }
        sy_glob_free(&a);
        sy_glob_free(&b);
    }
    assert_int_equal(failures, 0);
}

/* Subsumption must be sound: whenever it says yes, every name in a sample
 * that b matches is matched by a. */
static void test_subsumes_is_sound_on_samples(void **state)
{
    (void)state;
    static const char *names[] = {
        "a", "b", "x", "xy", "xyz", "yx", "a::b", "a::c", "a::b::c",
        "public::ml::train::fit", "p::ml", "ml", "a::x::b", "ab", "a*",
        "a?", "q", "]", "-", "9",
    };
    size_t failures = 0;
    for (size_t i = 0; i < SY_ARRAY_LEN(subsume_cases); i++) {
        const struct subsume_case *c = &subsume_cases[i];
        sy_glob a, b;
        if (sy_glob_compile(&a, c->a, NULL, 0) != 0)
            continue;
        if (sy_glob_compile(&b, c->b, NULL, 0) == 0) {
            bool says = sy_glob_subsumes(&a, &b);
            for (size_t k = 0; says && k < SY_ARRAY_LEN(names); k++)
                if (sy_glob_match(&b, names[k]) &&
                    !sy_glob_match(&a, names[k])) {
                    print_error("\"%s\" said to subsume \"%s\" but misses "
                                "\"%s\"\n", c->a, c->b, names[k]);
                    failures++;
                }
            sy_glob_free(&b);
        }
        sy_glob_free(&a);
    }
    assert_int_equal(failures, 0);
}

struct ns_case {
    const char *ns;
    const char *word; /* NULL: valid */
};

static const struct ns_case ns_cases[] = {
    {"a", NULL},
    {"public::ml::train::fit", NULL},
    {"with-dash::und_er::d.ot", NULL},
    {"", "empty namespace"},
    {"a::", "empty segment 2"},
    {"::a", "empty segment 1"},
    {"a::::b", "empty segment 2"},
    {"a:b", "lone ':'"},
    {"a:::b", "lone ':'"},
    {"a:", "lone ':'"},
};

static void test_ns_validate(void **state)
{
    (void)state;
    size_t failures = 0;
    for (size_t i = 0; i < SY_ARRAY_LEN(ns_cases); i++) {
        const struct ns_case *c = &ns_cases[i];
        char err[256] = "";
        int rc = sy_ns_validate(c->ns, err, sizeof err);
        bool ok = c->word ? rc == -1 && strstr(err, c->word) : rc == 0;
        if (!ok) {
            print_error("row %zu: ns \"%s\": rc %d err \"%s\", expected %s\n",
                        i, c->ns, rc, err, c->word ? c->word : "valid");
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    char err[128] = "";
    assert_int_equal(sy_ns_validate(NULL, err, sizeof err), -1);
    assert_int_equal(sy_ns_validate("a::", NULL, 0), -1);
    char *seg = repeat('s', SY_NS_SEGMENT_MAX + 1);
    char *ns = sy_asprintf("t::%s", seg);
    assert_int_equal(sy_ns_validate(ns, err, sizeof err), -1);
    assert_non_null(strstr(err, "segment 2 is longer than 255"));
    seg[SY_NS_SEGMENT_MAX] = '\0';
    free(ns);
    ns = sy_asprintf("t::%s", seg);
    assert_int_equal(sy_ns_validate(ns, err, sizeof err), 0);
    free(ns);
    free(seg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_table),
        cmocka_unit_test(test_invalid_patterns),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_compiled_segments),
        cmocka_unit_test(test_long_segments),
        cmocka_unit_test(test_many_globstars),
        cmocka_unit_test(test_subsumes_table),
        cmocka_unit_test(test_subsumes_is_sound_on_samples),
        cmocka_unit_test(test_ns_validate),
    };
    return cmocka_run_group_tests_name("glob: namespace patterns", tests,
                                       NULL, NULL);
}
