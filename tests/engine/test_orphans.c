/* Killing a dead host's leftover process group (engine/orphans.h): only
 * processes of the recorded group that started at or after the recorded
 * leader; a leader gone with members left still has its members killed;
 * a pid now held by a process with another start time is never touched. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <switchyard/process.h>

#include "engine/orphans.h"

/* A child leading its own group, sleeping; with `member`, it forks one
 * more sleeper into the group first and writes the member's pid to the
 * returned pipe's write end. */
static pid_t leader(bool member, pid_t *member_pid)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        pid_t m = 0;
        if (member) {
            m = fork();
            if (m == 0) {
                close(p[0]);
                close(p[1]);
                for (;;)
                    pause();
            }
        }
        if (write(p[1], &m, sizeof m) != (ssize_t)sizeof m)
            _exit(1);
        for (;;)
            pause();
    }
    setpgid(pid, pid); /* whichever of the two runs first */
    close(p[1]);
    pid_t m = 0;
    assert_int_equal(read(p[0], &m, sizeof m), (ssize_t)sizeof m);
    close(p[0]);
    if (member_pid)
        *member_pid = m;
    return pid;
}

/* Gone, or a zombie: it runs no more. */
static bool gone(pid_t pid)
{
    sy_process_stat st;
    return sy_process_stat_read(pid, &st) != 0 || st.state == 'Z' || st.state == 'X';
}

static uint64_t start_of(pid_t pid)
{
    uint64_t t = 0;
    assert_int_equal(sy_process_start_time(pid, &t), 0);
    return t;
}

static void reap(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
}

/* The recorded group, its leader verified: leader and member killed. */
static void test_kills_recorded_group(void **state)
{
    (void)state;
    pid_t m;
    pid_t g = leader(true, &m);
    size_t killed = 0;
    assert_int_equal(sy_orphans_kill_group(g, start_of(g), 2000, &killed), 0);
    assert_true(killed >= 1);
    reap(g);
    assert_true(gone(g));
    assert_true(gone(m));
}

/* Another start time than the recorded one: the pid is a stranger's now,
 * and neither it nor its group is touched. */
static void test_spares_reused_pid(void **state)
{
    (void)state;
    pid_t m;
    pid_t g = leader(true, &m);
    size_t killed = 5;
    uint64_t t = start_of(g);
    assert_int_equal(sy_orphans_kill_group(g, t - 1, 200, &killed), 0);
    assert_int_equal(killed, 0);
    assert_int_equal(sy_orphans_kill_group(g, t + 1, 200, &killed), 0);
    assert_int_equal(killed, 0);
    /* An unknown start time kills nothing either. */
    assert_int_equal(sy_orphans_kill_group(g, 0, 200, &killed), 0);
    assert_false(gone(g));
    assert_false(gone(m));
    kill(-g, SIGKILL);
    reap(g);
}

/* The leader exited (and was reaped); a member it forked lives on in the
 * group: it is killed, as the group is still the recorded one. */
static void test_member_without_leader(void **state)
{
    (void)state;
    pid_t m;
    pid_t g = leader(true, &m);
    uint64_t t = start_of(g);
    kill(g, SIGKILL);
    reap(g);
    assert_false(gone(m));
    size_t killed = 0;
    assert_int_equal(sy_orphans_kill_group(g, t, 2000, &killed), 0);
    assert_int_equal(killed, 1);
    assert_true(gone(m));
}

int main(void)
{
    if (access("/proc/self/stat", F_OK) != 0) {
        puts("1..0 # SKIP no /proc");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kills_recorded_group),
        cmocka_unit_test(test_spares_reused_pid),
        cmocka_unit_test(test_member_without_leader),
    };
    return cmocka_run_group_tests_name("orphans", tests, NULL, NULL);
}
