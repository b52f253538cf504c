/* The call record: what it holds during a call, what a dead process's
 * record tells the next start (and that a live one's is left alone), the
 * watchdog that reports a call stuck past its instance's bound, and the
 * time a call took. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "executor/call_record.h"
#include "executor/watchdog.h"
#include "../helpers.h"

static const sy_executor desc = {.size = sizeof desc, .name = "probe"};

/* An address never mapped, which the compiler cannot see through. */
static volatile uintptr_t nowhere = 16;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A pid that belonged to a process which has exited. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

static void test_record_holds_the_call(void **state)
{
    (void)state;
    char *dir = th_mkdtemp();
    char prefix[512], path[600], err[256];
    snprintf(prefix, sizeof prefix, "%s/store.db.calls", dir);
    sy_call_record_path(prefix, path, sizeof path);
    assert_int_equal(sy_call_record_open(path, "box:1", err, sizeof err), 0);
    assert_int_equal(access(path, F_OK), 0);

    sy_instance_entry e;
    sy_instance_init(&e, "probe-1", &desc, NULL);
    sy_call_snapshot s;
    sy_instance_entry *who = NULL;
    sy_call_begin(&e, "submit", "t::w::a", 7, 3, 2);
    assert_true(sy_call_current(&s, &who));
    assert_ptr_equal(who, &e);
    assert_true(s.in_call);
    assert_string_equal(s.plugin, "probe");
    assert_string_equal(s.instance, "probe-1");
    assert_string_equal(s.call, "submit");
    assert_string_equal(s.ns, "t::w::a");
    assert_int_equal(s.run_id, 7);
    assert_int_equal(s.idx, 3);
    assert_int_equal(s.attempt, 2);
    assert_string_equal(s.owner, "box:1");
    uint64_t seq = s.seq;

    /* What a process that died in this call leaves behind, as another
     * process's file: the next start names it and removes it. */
    char dead[600], live[600];
    snprintf(dead, sizeof dead, "%s.%ld", prefix, (long)dead_pid());
    snprintf(live, sizeof live, "%s.%ld", prefix, (long)getppid());
    copy_file(path, dead);
    copy_file(path, live);
    sy_call_end();
    assert_true(sy_call_current(&s, NULL));
    assert_false(s.in_call);
    assert_true(s.seq > seq);

    /* A process that died without a fault (SIGKILL) is nobody's fault:
     * its record is consumed, and nothing is handed out. */
    sy_call_snapshot prev;
    assert_false(sy_call_record_take_previous(prefix, &prev));
    assert_int_equal(access(dead, F_OK), -1);     /* consumed */
    assert_int_equal(access(live, F_OK), 0);      /* a live host's: left */
    assert_int_equal(access(path, F_OK), 0);      /* this process's: left */
    sy_call_record_close();

    /* A process that faults inside a call: the handler writes the fault
     * into its record before the signal takes it down. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The default action behind the record's handler, not the test
         * framework's, which would catch the fault and go on. */
        signal(SIGSEGV, SIG_DFL);
        char mine[600];
        sy_call_record_path(prefix, mine, sizeof mine);
        if (sy_call_record_open(mine, "box:2", err, sizeof err) != 0)
            _exit(3);
        sy_call_begin(&e, "submit", "t::w::a", 7, 3, 2);
        *(volatile int *)(uintptr_t)nowhere = 1;
        _exit(4);
    }
    int status = 0;
    waitpid(child, &status, 0);
    assert_false(WIFEXITED(status) && (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 4));
    assert_true(sy_call_record_take_previous(prefix, &prev));
    assert_true(prev.in_call);
    assert_true(prev.fault_in_call);
    assert_string_equal(prev.ns, "t::w::a");
    assert_int_equal(strncmp(prev.fault, "SIGSEGV", 7), 0);
    char line[1024];
    sy_call_describe(&prev, line, sizeof line);
    const char *want = "the host box:2 died inside plugin 'probe', instance 'probe-1', "
                       "call submit, task t::w::a: SIGSEGV";
    assert_int_equal(strncmp(line, want, strlen(want)), 0);
    assert_false(sy_call_record_take_previous(prefix, &prev));

    assert_int_equal(access(path, F_OK), -1); /* a clean exit leaves nothing */
    unlink(live);
    sy_instance_destroy(&e);
    th_rmtree(dir);
}

/* A call stuck past its bound is reported while it is stuck, once, and
 * the instance leaves dispatch; a call within its bound is not. */
static void test_watchdog(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(sy_call_record_open(NULL, "box:2", err, sizeof err), 0);
    assert_int_equal(sy_watchdog_start(err, sizeof err), 0);
    sy_instance_entry e;
    sy_instance_init(&e, "slow", &desc, NULL);
    e.call_timeout_ms = 100;
    uint64_t before = sy_watchdog_stuck_count();

    sy_call_begin(&e, "cancel", "t::w::b", 1, 0, 1);
    sleep_ms(20);
    sy_call_end();
    sleep_ms(250);
    assert_int_equal(sy_watchdog_stuck_count(), before);
    assert_false(atomic_load(&e.unhealthy));

    sy_call_begin(&e, "submit", "t::w::c", 1, 1, 1);
    sleep_ms(450);
    assert_int_equal(sy_watchdog_stuck_count(), before + 1); /* reported once */
    assert_true(atomic_load(&e.unhealthy));
    sy_call_end();

    sy_watchdog_stop();
    sy_call_record_close();
    sy_instance_destroy(&e);
}

/* sy_call_end_ns ends the call and says how long it took (the metrics'
 * submit time); with no record open there is nothing to time. */
static void test_call_time(void **state)
{
    (void)state;
    sy_instance_entry e;
    sy_instance_init(&e, "timed", &desc, NULL);
    sy_call_begin(&e, "submit", "t::w::a", 1, 0, 1);
    assert_int_equal(sy_call_end_ns(), -1);
    char err[256];
    assert_int_equal(sy_call_record_open(NULL, "box:3", err, sizeof err), 0);
    sy_call_begin(&e, "submit", "t::w::a", 1, 0, 1);
    sleep_ms(30);
    int64_t took = sy_call_end_ns();
    assert_true(took >= 30 * 1000000LL);
    assert_true(took < 10 * 1000000000LL);
    sy_call_snapshot s;
    assert_true(sy_call_current(&s, NULL));
    assert_false(s.in_call);
    sy_call_record_close();
    sy_instance_destroy(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_holds_the_call),
        cmocka_unit_test(test_watchdog),
        cmocka_unit_test(test_call_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
