/* switchyard/process.h: a /proc/PID/stat line read right even when the
 * command name holds spaces and parentheses, malformed lines refused, and
 * the live readers (this process's start time, group, boot and machine)
 * agreeing with what /proc says. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <switchyard/process.h>

static int parse(const char *line, sy_process_stat *st)
{
    return sy_process_parse_stat(line, strlen(line), st);
}

/* Fields 1 to 22 of a real line; the name is what a program may choose. */
static void test_parse(void **state)
{
    (void)state;
    sy_process_stat st;
    const char *line = "4242 (sleep) S 1 4240 4240 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 "
                       "987654321 2236416 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 "
                       "0 17 3 0 0 0 0 0\n";
    assert_int_equal(parse(line, &st), 0);
    assert_int_equal(st.pid, 4242);
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 1);
    assert_int_equal(st.pgrp, 4240);
    assert_int_equal(st.session, 4240);
    assert_true(st.start_time == 987654321u);
    /* A name with spaces and ") R 9 9 9": only the last ')' ends it. */
    const char *odd = "77 (a) R 9 9 9 (b) Z 5 76 76 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
                      "12345 0 0\n";
    assert_int_equal(parse(odd, &st), 0);
    assert_int_equal(st.pid, 77);
    assert_int_equal(st.state, 'Z');
    assert_int_equal(st.ppid, 5);
    assert_int_equal(st.pgrp, 76);
    assert_true(st.start_time == 12345u);
}

static void test_parse_refuses(void **state)
{
    (void)state;
    sy_process_stat st;
    const char *bad[] = {
        "",
        "4242 sleep S 1 2 3",                                  /* no name */
        "4242 (sleep) S 1 4240 4240 0 -1 4194560 100 0 0 0",  /* cut short */
        "4242 (sleep) S 1 4240 4240 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 x",
        "x (sleep) S 1 4240 4240 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5",
        "4242 (sleep) S 1 4240 4240 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
        "99999999999999999999999",                             /* overflow */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        assert_int_equal(parse(bad[i], &st), -1);
        assert_int_equal(errno, EINVAL);
    }
    assert_int_equal(sy_process_parse_stat(NULL, 0, &st), -1);
}

/* This process, read live: the same start time twice, its own group, and
 * no process at all for a pid that cannot exist. */
static void test_live(void **state)
{
    (void)state;
    if (access("/proc/self/stat", F_OK) != 0)
        skip();
    sy_process_stat st;
    assert_int_equal(sy_process_stat_read(getpid(), &st), 0);
    assert_int_equal(st.pid, getpid());
    assert_int_equal(st.pgrp, getpgrp());
    assert_int_equal(st.ppid, getppid());
    uint64_t start = 0;
    assert_int_equal(sy_process_start_time(getpid(), &start), 0);
    assert_true(start == st.start_time && start > 0);
    assert_int_equal(sy_process_start_time(0, &start), -1);
    errno = 0;
    assert_int_equal(sy_process_start_time(2147483647, &start), -1);
    assert_int_equal(errno, ENOENT);
    char boot[64], again[64], machine[128];
    assert_int_equal(sy_process_boot_id(boot, sizeof boot), 0);
    assert_int_equal(strlen(boot), 36);
    assert_int_equal(sy_process_boot_id(again, sizeof again), 0);
    assert_string_equal(boot, again);
    assert_int_equal(sy_process_boot_id(boot, 8), -1);
    assert_int_equal(sy_process_machine_id(machine, sizeof machine), 0);
    assert_true(strlen(machine) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refuses),
        cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests_name("process", tests, NULL, NULL);
}
