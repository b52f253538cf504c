/* cfgint: every integer libconfig would wrap is an error at its line, and
 * nothing else is: not strings, comments, names, floats, or what fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libconfig.h>

#include "config/integers.h"
#include "../helpers.h"

static void assert_diag(const sy_diags *d, size_t i, int line, const char *needle)
{
    assert_true(i < d->n);
    if (d->v[i].line != line || !strstr(d->v[i].msg, needle))
        fail_msg("diagnostic %zu: line %d \"%s\"; wanted line %d with \"%s\"", i,
                 d->v[i].line, d->v[i].msg, line, needle);
}

static void test_flags_what_wraps(void **state)
{
    (void)state;
    static const char text[] =
        "a = 2147483647;\n"            /* 1: fits */
        "b = 2147483648;\n"            /* 2: wraps */
        "c = -2147483648;\n"           /* 3: fits */
        "d = -2147483649;\n"           /* 4: wraps */
        "e = 0x7FFFFFFF; f = 0x80000000;\n" /* 5: the second wraps */
        "g = 3000000000L; h = 0xFFFFFFFFL;\n" /* 6: 64-bit, fine */
        "i = (1, 5000000000, 2);\n"    /* 7: inside a list */
        "j = 99999999999999999999L;\n" /* 8: beyond 64 bits */
        "k = 3000000000.0; l = 3e10; m = 1.5e-7;\n"; /* 9: floats */
    sy_diags d;
    sy_diags_init(&d);
    assert_int_equal(sy_cfg_check_ints_text(text, "t.cfg", &d), 5);
    assert_int_equal(d.errors, 5);
    assert_diag(&d, 0, 2, "integer 2147483648 does not fit in 32 bits");
    assert_diag(&d, 0, 2, "write 2147483648L");
    assert_diag(&d, 1, 4, "integer -2147483649 does not fit in 32 bits");
    assert_diag(&d, 2, 5, "integer 0x80000000 does not fit in 32 bits");
    assert_diag(&d, 3, 7, "integer 5000000000 does not fit in 32 bits");
    assert_diag(&d, 4, 8, "does not fit in 64 bits");
    assert_string_equal(d.v[0].file, "t.cfg");
    sy_diags_free(&d);
}

static void test_ignores_the_rest(void **state)
{
    (void)state;
    static const char text[] =
        "# 3000000000 in a comment\n"
        "// 3000000000 in another\n"
        "/* 3000000000\n   across lines 4000000000 */\n"
        "s = \"3000000000 in a string, \\\" 4000000000 after an escape\";\n"
        "name3000000000 = 1;\n"
        "x-4000000000 = 2;\n"
        "@include \"5000000000.cfg\"\n"
        "late = 6000000000;\n"; /* line 9 */
    sy_diags d;
    sy_diags_init(&d);
    assert_int_equal(sy_cfg_check_ints_text(text, "t.cfg", &d), 1);
    assert_diag(&d, 0, 9, "integer 6000000000");
    sy_diags_free(&d);
}

/* Each alone in its file: a file is only scanned when something in it
 * could be out of range (ten digits in a row, or a hex prefix), and that
 * look must not miss the shortest of each. */
static void test_each_alone(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int errors;
    } cases[] = {
        {"b = 2147483648;\n", 1},
        {"d = -2147483649;\n", 1},
        {"f = 0x80000000;\n", 1},
        {"f = 0X1FFFFFFFF;\n", 1},
        {"x = (0x7FFFFFFF, 999999999, -999999999, 2147483647, 0);\n", 0},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sy_diags d;
        sy_diags_init(&d);
        if (sy_cfg_check_ints_text(cases[i].text, "t.cfg", &d) != cases[i].errors)
            fail_msg("\"%s\": wanted %d errors", cases[i].text, cases[i].errors);
        assert_int_equal(d.errors, (size_t)cases[i].errors);
        sy_diags_free(&d);
    }
}

/* Through libconfig: the file itself and what it includes, each named. */
static void test_files_and_includes(void **state)
{
    (void)state;
    char *dir = th_mkdtemp();
    char *inc = th_write(dir, "part.cfg", "inner = {\n  big = 4294967296;\n};\n");
    char *top = th_write(dir, "top.cfg",
                         "small = 1;\n@include \"part.cfg\"\nouter = 0xFFFFFFFF;\n");
    config_t lc;
    config_init(&lc);
    config_set_include_dir(&lc, dir);
    assert_int_equal(config_read_file(&lc, top), CONFIG_TRUE);
    sy_diags d;
    sy_diags_init(&d);
    assert_int_equal(sy_cfg_check_ints(&lc, top, &d), 2);
    int seen_top = 0, seen_inc = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (strcmp(d.v[i].file, top) == 0 && d.v[i].line == 3)
            seen_top++;
        if (strstr(d.v[i].file, "part.cfg") && d.v[i].line == 2 &&
            strstr(d.v[i].msg, "4294967296"))
            seen_inc++;
    }
    assert_int_equal(seen_top, 1);
    assert_int_equal(seen_inc, 1);
    sy_diags_free(&d);
    config_destroy(&lc);
    free(inc);
    free(top);
    th_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_what_wraps),
        cmocka_unit_test(test_ignores_the_rest),
        cmocka_unit_test(test_each_alone),
        cmocka_unit_test(test_files_and_includes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
