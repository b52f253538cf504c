/* Unit tests for host/trigger.c: the truth table of every rule, written
 * out by hand, over combinations of dependency states; WAIT while any
 * dependency is not terminal; order of dependencies never matters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workflow/trigger.h"

#define N_RULES 7

/* Dependency states as letters: n NotStarted, r Ready, u Running,
 * C Completed, F Failed, S Skipped, X Cancelled, w Waiting, D Dropped. */
static size_t states_of(const char *s, sy_task_state *out)
{
    size_t n = 0;
    for (; *s; s++) {
        const char *letters = "nruCFSXwD";
        const char *p = strchr(letters, *s);
        assert_non_null(p);
        out[n++] = (sy_task_state)(p - letters);
    }
    return n;
}

static char verdict_letter(sy_trig_verdict v)
{
    return v == SY_TRIG_RUN ? 'R' : v == SY_TRIG_SKIP ? 'S' : 'W';
}

/* Verdicts in rule order: all_success all_done all_failed one_success
 * one_failed none_failed always. */
static const struct {
    const char *deps;
    const char *want;
} table[] = {
    {"", "RRRRRRR"},
    {"C", "RRSRSRR"},
    {"F", "SRRSRSR"},
    {"S", "SRSSSRR"},
    {"CC", "RRSRSRR"},
    {"CF", "SRSRRSR"},
    {"CS", "SRSRSRR"},
    {"FF", "SRRSRSR"},
    {"FS", "SRSSRSR"},
    {"SS", "SRSSSRR"},
    {"CCC", "RRSRSRR"},
    {"CCF", "SRSRRSR"},
    {"CCS", "SRSRSRR"},
    {"CFS", "SRSRRSR"},
    {"FFF", "SRRSRSR"},
    {"FFS", "SRSSRSR"},
    {"SSS", "SRSSSRR"},
    {"CSS", "SRSRSRR"},
    /* A dependency stopped with its run counts as failed. */
    {"X", "SRRSRSR"},
    {"CX", "SRSRRSR"},
    {"FX", "SRRSRSR"},
    /* Dropped (a full key's strategy `drop`) counts as Skipped. */
    {"D", "SRSSSRR"},
    {"CD", "SRSRSRR"},
    {"FD", "SRSSRSR"},
    {"SD", "SRSSSRR"},
    {"n", "WWWWWWW"},
    {"w", "WWWWWWW"},
    {"Cw", "WWWWWWW"},
    {"r", "WWWWWWW"},
    {"u", "WWWWWWW"},
    {"Cn", "WWWWWWW"},
    {"FFr", "WWWWWWW"},
    {"uSS", "WWWWWWW"},
    {"CCCCu", "WWWWWWW"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        sy_task_state deps[8];
        size_t n = states_of(table[i].deps, deps);
        for (int rule = 0; rule < N_RULES; rule++) {
            char got = verdict_letter(sy_trigger_eval((sy_trigger)rule, deps, n));
            if (got != table[i].want[rule])
                fail_msg("%s over [%s]: got %c, want %c", sy_trigger_name((sy_trigger)rule),
                         table[i].deps, got, table[i].want[rule]);
        }
    }
}

/* Every combination of three dependencies with any non-terminal one:
 * WAIT, whatever the rule. */
static void test_wait_exhaustive(void **state)
{
    (void)state;
    int waits = 0;
    for (int a = 0; a < SY_TASK_STATE_COUNT; a++)
        for (int b = 0; b < SY_TASK_STATE_COUNT; b++)
            for (int c = 0; c < SY_TASK_STATE_COUNT; c++) {
                sy_task_state deps[3] = {(sy_task_state)a, (sy_task_state)b,
                                         (sy_task_state)c};
                /* Not ended: NotStarted, Ready, Running, Waiting. */
                bool pending = a < 3 || b < 3 || c < 3 || a == SY_TASK_WAITING ||
                               b == SY_TASK_WAITING || c == SY_TASK_WAITING;
                for (int rule = 0; rule < N_RULES; rule++) {
                    sy_trig_verdict v = sy_trigger_eval((sy_trigger)rule, deps, 3);
                    assert_int_equal(v == SY_TRIG_WAIT, pending);
                    waits += v == SY_TRIG_WAIT;
                }
            }
    /* 9 states, 5 of them terminal: 9^3 - 5^3 combinations wait. */
    assert_int_equal(waits, (729 - 125) * N_RULES);
}

/* The verdict depends on how many dependencies ended which way, never on
 * their order. */
static void test_order_free(void **state)
{
    (void)state;
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int a = 3; a < 6; a++)
        for (int b = 3; b < 6; b++)
            for (int c = 3; c < 6; c++) {
                sy_task_state base[3] = {(sy_task_state)a, (sy_task_state)b,
                                         (sy_task_state)c};
                for (int rule = 0; rule < N_RULES; rule++) {
                    sy_trig_verdict first = sy_trigger_eval((sy_trigger)rule, base, 3);
                    assert_int_not_equal(first, SY_TRIG_WAIT);
                    for (int p = 1; p < 6; p++) {
                        sy_task_state d[3] = {base[perms[p][0]], base[perms[p][1]],
                                              base[perms[p][2]]};
                        assert_int_equal(sy_trigger_eval((sy_trigger)rule, d, 3), first);
                    }
                }
            }
}

static void test_no_deps_and_bad_rule(void **state)
{
    (void)state;
    for (int rule = 0; rule < N_RULES; rule++)
        assert_int_equal(sy_trigger_eval((sy_trigger)rule, NULL, 0), SY_TRIG_RUN);
    sy_task_state c = SY_TASK_COMPLETED;
    assert_int_equal(sy_trigger_eval((sy_trigger)42, &c, 1), SY_TRIG_SKIP);
}

static void test_names(void **state)
{
    (void)state;
    static const char *const names[N_RULES] = {"all_success", "all_done", "all_failed",
                                               "one_success", "one_failed",
                                               "none_failed", "always"};
    for (int rule = 0; rule < N_RULES; rule++) {
        assert_string_equal(sy_trigger_name((sy_trigger)rule), names[rule]);
        assert_int_equal(sy_trigger_parse(names[rule]), rule);
    }
    assert_int_equal(sy_trigger_parse("All_Success"), -1);
    assert_int_equal(sy_trigger_parse(""), -1);
    assert_int_equal(sy_trigger_parse(NULL), -1);
    assert_string_equal(sy_trigger_name((sy_trigger)N_RULES), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_wait_exhaustive),
        cmocka_unit_test(test_order_free),
        cmocka_unit_test(test_no_deps_and_bad_rule),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("trigger", tests, NULL, NULL);
}
