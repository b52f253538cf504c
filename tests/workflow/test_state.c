/* Unit tests for host/state.c: the names `status --json` prints, and every
 * pair of states checked against the table written out here by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workflow/state.h"

static void test_task_names(void **state)
{
    (void)state;
    static const char *const want[] = {"NotStarted", "Ready",     "Running",
                                       "Completed",  "Failed",    "Skipped",
                                       "Cancelled",  "Waiting",   "Dropped"};
    for (int s = 0; s < SY_TASK_STATE_COUNT; s++) {
        assert_string_equal(sy_task_state_name((sy_task_state)s), want[s]);
        assert_int_equal(sy_task_state_parse(want[s]), s);
    }
    assert_int_equal(sy_task_state_parse("completed"), -1);
    assert_int_equal(sy_task_state_parse(""), -1);
    assert_int_equal(sy_task_state_parse(NULL), -1);
    assert_string_equal(sy_task_state_name((sy_task_state)99), "Unknown");
}

static void test_run_names(void **state)
{
    (void)state;
    static const char *const want[] = {"Pending", "Running", "Completed", "Failed",
                                       "Cancelled"};
    for (int s = 0; s < SY_RUN_STATE_COUNT; s++) {
        assert_string_equal(sy_run_state_name((sy_run_state)s), want[s]);
        assert_int_equal(sy_run_state_parse(want[s]), s);
    }
    assert_int_equal(sy_run_state_parse("Canceled"), -1);
    assert_int_equal(sy_run_state_parse(NULL), -1);
    assert_string_equal(sy_run_state_name((sy_run_state)-1), "Unknown");
}

static void test_terminal(void **state)
{
    (void)state;
    static const bool task_term[SY_TASK_STATE_COUNT] = {false, false, false, true, true,
                                                        true,  true,  false, true};
    for (int s = 0; s < SY_TASK_STATE_COUNT; s++)
        assert_int_equal(sy_task_state_terminal((sy_task_state)s), task_term[s]);
    /* Offered to dispatch: Ready and Waiting only. */
    for (int s = 0; s < SY_TASK_STATE_COUNT; s++)
        assert_int_equal(sy_task_state_offerable((sy_task_state)s),
                         s == SY_TASK_READY || s == SY_TASK_WAITING);
    static const bool run_term[SY_RUN_STATE_COUNT] = {false, false, true, true, true};
    for (int s = 0; s < SY_RUN_STATE_COUNT; s++)
        assert_int_equal(sy_run_state_terminal((sy_run_state)s), run_term[s]);
}

/* Rows: from; columns: to.  N R U C F S X W D = NotStarted Ready rUnning
 * Completed Failed Skipped Cancelled Waiting Dropped. */
static const char *const task_table[SY_TASK_STATE_COUNT] = {
    /*          NRUCFSXWD */
    /* N */    ".x...x...",
    /* R */    "..x.xx.xx",
    /* U */    ".x.xxxx..",
    /* C */    ".........",
    /* F */    ".........",
    /* S */    ".........",
    /* X */    ".........",
    /* W */    ".xx.xxx.x",
    /* D */    ".........",
};

static void test_task_transitions(void **state)
{
    (void)state;
    int legal = 0;
    for (int from = 0; from < SY_TASK_STATE_COUNT; from++)
        for (int to = 0; to < SY_TASK_STATE_COUNT; to++) {
            bool want = task_table[from][to] == 'x';
            bool got = sy_task_transition_ok((sy_task_state)from, (sy_task_state)to);
            if (got != want)
                fail_msg("%s -> %s: got %d, want %d", sy_task_state_name((sy_task_state)from),
                         sy_task_state_name((sy_task_state)to), got, want);
            legal += got;
        }
    assert_int_equal(legal, 18);
    assert_false(sy_task_transition_ok((sy_task_state)6, SY_TASK_READY));
    assert_false(sy_task_transition_ok((sy_task_state)9, SY_TASK_READY));
    assert_false(sy_task_transition_ok(SY_TASK_NOT_STARTED, (sy_task_state)-1));
}

/* P U C F X = Pending rUnning Completed Failed cancelled. */
static const char *const run_table[SY_RUN_STATE_COUNT] = {
    /*          PUCFX */
    /* P */    ".x..x",
    /* U */    "..xxx",
    /* C */    ".....",
    /* F */    ".....",
    /* X */    ".....",
};

static void test_run_transitions(void **state)
{
    (void)state;
    int legal = 0;
    for (int from = 0; from < SY_RUN_STATE_COUNT; from++)
        for (int to = 0; to < SY_RUN_STATE_COUNT; to++) {
            bool want = run_table[from][to] == 'x';
            bool got = sy_run_transition_ok((sy_run_state)from, (sy_run_state)to);
            if (got != want)
                fail_msg("%s -> %s: got %d, want %d", sy_run_state_name((sy_run_state)from),
                         sy_run_state_name((sy_run_state)to), got, want);
            legal += got;
        }
    assert_int_equal(legal, 5);
    assert_false(sy_run_transition_ok((sy_run_state)5, SY_RUN_RUNNING));
}

/* The bound a Waiting task's reason names: each kind, with and without
 * its counts; anything else names none. */
static void test_waiting_key(void **state)
{
    (void)state;
    static const struct {
        const char *why, *key;
    } cases[] = {
        {"waiting for key:db:acme (2 of 2 held; position 1 of 3 waiting)", "key:db:acme"},
        {"waiting for pool:gpu", "pool:gpu"},
        {"waiting for tenant:a (8 of 8 held)", "tenant:a"},
        {"waiting for rate:@crm:acme (next token in 80 ms)", "rate:@crm:acme"},
        {"waiting for key: (1 of 1 held)", "key:"},
        {"waiting for capacity: executor 'local' is full", NULL},
        {"waiting for keys:db", NULL},
        {"waiting for ", NULL},
        {"Waiting for key:db", NULL},
        {"", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *key = "untouched";
        size_t n = sy_waiting_key(cases[i].why, &key);
        if (!cases[i].key) {
            assert_int_equal(n, 0);
            assert_string_equal(key, "untouched");
            continue;
        }
        assert_int_equal(n, strlen(cases[i].key));
        assert_memory_equal(key, cases[i].key, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_names),
        cmocka_unit_test(test_run_names),
        cmocka_unit_test(test_terminal),
        cmocka_unit_test(test_task_transitions),
        cmocka_unit_test(test_run_transitions),
        cmocka_unit_test(test_waiting_key),
    };
    return cmocka_run_group_tests_name("state", tests, NULL, NULL);
}
