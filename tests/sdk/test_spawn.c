/* switchyard/spawn.h on its own: what the child gets (descriptors, signals,
 * process group), what comes back (stdout, the stderr tail, the input fed
 * through a pipe that cannot hold it), and the errors before anything runs.
 * Built twice: once as plugins use it (the clone() path on Linux), once
 * with SY_SPAWN_NO_CLONE (posix_spawn), so both paths are held to the same
 * assertions. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <switchyard/process.h>
#include <switchyard/spawn.h>

/* Under valgrind (SY_WRAP set by make check-valgrind) a clone(CLONE_VM) is
 * emulated with fork: a child that fails before exec can only say so with
 * exit status 127. */
static bool emulated(void)
{
    const char *w = getenv("SY_WRAP");
    return w && *w;
}

static int run_argv(sy_spawn_opts *o, sy_spawn_result *r, char *err,
                    size_t len)
{
    err[0] = '\0';
    return sy_spawn_run(o, r, err, len);
}

/* Runs `sh -c script` with `input`; asserts it started. */
static void sh_run(const char *script, const char *input, size_t input_len,
                   sy_spawn_result *r)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.input = input;
    o.input_len = input_len;
    char err[512];
    int rc = run_argv(&o, r, err, sizeof err);
    if (rc != 0)
        fail_msg("sh -c %s did not start: %s", script, err);
}

static void test_stdout_and_exit(void **state)
{
    (void)state;
    sy_spawn_result r;
    sh_run("echo out; echo err >&2; exit 3", NULL, 0, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_string_equal(r.out, "out\n");
    assert_string_equal(r.err, "err\n");
    assert_int_equal(r.err_dropped, 0);
    sy_spawn_result_free(&r);
    /* Nothing on either stream: both are empty strings, never NULL. */
    sh_run("exit 0", NULL, 0, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_non_null(r.out);
    assert_non_null(r.err);
    assert_int_equal(r.out_len, 0);
    assert_int_equal(r.err_len, 0);
    sy_spawn_result_free(&r);
}

/* 1 MiB does not fit in a pipe: what fits is written before the start,
 * the rest while the child runs. */
static void test_input_larger_than_pipe(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *big = malloc(n);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 26);
    sy_spawn_result r;
    sh_run("cat", big, n, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out_len, n);
    assert_memory_equal(r.out, big, n);
    sy_spawn_result_free(&r);
    /* A child that reads none of it: EPIPE for us, no SIGPIPE. */
    sh_run("exit 0", big, n, &r);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    sy_spawn_result_free(&r);
    free(big);
    sigset_t pending;
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGPIPE));
}

static void test_stderr_tail(void **state)
{
    (void)state;
    sy_spawn_result r;
    /* 100,000 lines of "line N": far more than the 64 KiB kept. */
    sh_run("i=0; while [ $i -lt 100000 ]; do echo line $i; i=$((i+1)); "
           "done >&2",
           NULL, 0, &r);
    assert_true(r.exited);
    assert_int_equal(r.err_len, SY_SPAWN_STDERR_TAIL);
    assert_true(r.err_dropped > 0);
    const char *last = "line 99999\n";
    assert_string_equal(r.err + r.err_len - strlen(last), last);
    /* The start of what was dropped is kept besides. */
    assert_int_equal(r.err_head_len, SY_SPAWN_STDERR_HEAD);
    assert_memory_equal(r.err_head, "line 0\nline 1\nline 2\n", 21);
    assert_int_equal(strlen(r.err_head), SY_SPAWN_STDERR_HEAD);
    sy_spawn_result_free(&r);
    /* A tail that holds it all: no head. */
    sh_run("echo short >&2", NULL, 0, &r);
    assert_null(r.err_head);
    assert_int_equal(r.err_head_len, 0);
    sy_spawn_result_free(&r);
    /* Just over the tail: the head is only what the tail lost. */
    sh_run("head -c 65546 /dev/zero | tr '\\0' x >&2", NULL, 0, &r);
    assert_int_equal(r.err_dropped, 10);
    assert_int_equal(r.err_head_len, 10);
    assert_string_equal(r.err_head, "xxxxxxxxxx");
    sy_spawn_result_free(&r);
}

static void test_discard_stdout(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/sh", "-c", "echo discarded; echo kept >&2",
                          NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.discard_stdout = true;
    sy_spawn_result r;
    char err[256];
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(r.out_len, 0);
    assert_string_equal(r.out, "");
    assert_string_equal(r.err, "kept\n");
    sy_spawn_result_free(&r);
}

/* stdout_as_log: the head is kept, the rest counted, the command runs to
 * its end (no output_too_large, no kill). */
static void test_stdout_as_log(void **state)
{
    (void)state;
    const char *argv[] = {"/bin/sh", "-c",
                          "head -c 100000 /dev/zero | tr '\\0' y; exit 4", NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.stdout_as_log = true;
    o.max_output_bytes = 1000;
    sy_spawn_result r;
    char err[256];
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 4);
    assert_false(r.output_too_large);
    assert_int_equal(r.out_len, 1000);
    assert_int_equal(r.out_dropped, 99000);
    assert_int_equal(r.out[0], 'y');
    assert_int_equal(r.out[999], 'y');
    sy_spawn_result_free(&r);
}

/* env: a later entry replaces an earlier one and the host's, a bare name
 * removes the variable, and a name that only starts like another is a
 * different variable. */
static void test_environment(void **state)
{
    (void)state;
    setenv("SY_SPAWN_A", "inherited", 1);
    setenv("SY_SPAWN_AB", "kept", 1);
    setenv("SY_SPAWN_GONE", "x", 1);
    const char *argv[] = {"/bin/sh", "-c", "env | grep '^SY_SPAWN_' | sort",
                          NULL};
    const char *env[] = {"SY_SPAWN_A=first", "SY_SPAWN_A=second",
                         "SY_SPAWN_GONE", "SY_SPAWN_NEW=1", NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    o.env = env;
    sy_spawn_result r;
    char err[256];
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_string_equal(r.out, "SY_SPAWN_A=second\nSY_SPAWN_AB=kept\n"
                               "SY_SPAWN_NEW=1\n");
    sy_spawn_result_free(&r);
    unsetenv("SY_SPAWN_A");
    unsetenv("SY_SPAWN_AB");
    unsetenv("SY_SPAWN_GONE");
}

/* The child leads a new process group, with no signal blocked or ignored
 * and no handler, whatever the calling thread has. */
static void on_usr2(int sig) { (void)sig; }

static void test_signals_and_group(void **state)
{
    (void)state;
    struct sigaction ign, handler, old_usr1, old_usr2, old_hup;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    memset(&handler, 0, sizeof handler);
    handler.sa_handler = on_usr2;
    sigaction(SIGUSR1, &ign, &old_usr1);
    sigaction(SIGHUP, &ign, &old_hup);
    sigaction(SIGUSR2, &handler, &old_usr2);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old_mask);

    sy_spawn_result r;
    sh_run("while read -r k v; do case $k in SigBlk:|SigIgn:|SigCgt:) "
           "printf '%s%s ' $k $v;; esac; done < /proc/$$/status; "
           "read -r a b c d pgrp rest < /proc/$$/stat; "
           "printf 'pgrp=%s pid=%s' $pgrp $$",
           NULL, 0, &r);
    assert_true(r.exited);
    char want[128];
    snprintf(want, sizeof want, "pgrp=%d pid=%d", (int)r.pid, (int)r.pid);
    assert_non_null(strstr(r.out, want));
    assert_non_null(strstr(r.out, "SigBlk:0000000000000000"));
    /* The shell itself may catch or ignore some signals after its start;
     * SIGUSR1 and SIGHUP, ignored here, must not be ignored there. */
    const char *ign_field = strstr(r.out, "SigIgn:");
    assert_non_null(ign_field);
    unsigned long long mask = strtoull(ign_field + 7, NULL, 16);
    assert_false(mask & (1ULL << (SIGUSR1 - 1)));
    assert_false(mask & (1ULL << (SIGHUP - 1)));
    sy_spawn_result_free(&r);

    /* SIGUSR1 and SIGUSR2 do what they do by default: end the process. */
    sh_run("kill -USR1 $$; echo survived", NULL, 0, &r);
    assert_true(r.signaled);
    assert_int_equal(r.signal_no, SIGUSR1);
    assert_string_equal(r.out, "");
    sy_spawn_result_free(&r);
    sh_run("kill -USR2 $$; echo survived", NULL, 0, &r);
    assert_true(r.signaled);
    assert_int_equal(r.signal_no, SIGUSR2);
    sy_spawn_result_free(&r);

    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGUSR1, &old_usr1, NULL);
    sigaction(SIGUSR2, &old_usr2, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
}

/* A descriptor the host opened without FD_CLOEXEC does not reach the
 * child. */
static void test_no_leaked_descriptor(void **state)
{
    (void)state;
    int fd = open("/dev/null", O_RDONLY);
    assert_true(fd > 2);
    char script[128];
    snprintf(script, sizeof script,
             "if [ -e /proc/$$/fd/%d ]; then echo leaked; else echo closed; "
             "fi",
             fd);
    sy_spawn_result r;
    sh_run(script, NULL, 0, &r);
    assert_string_equal(r.out, "closed\n");
    sy_spawn_result_free(&r);
    close(fd);
}

static void test_errors_before_start(void **state)
{
    (void)state;
    char err[512];
    sy_spawn_result r;
    const char *missing[] = {"no-such-program-anywhere", NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, missing);
    assert_int_equal(run_argv(&o, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot run no-such-program-anywhere: not "
                                "found in PATH"));
    const char *dir[] = {"/tmp", NULL};
    sy_spawn_opts_init(&o, dir);
    assert_int_equal(run_argv(&o, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot run /tmp"));
    const char *sh[] = {"/bin/sh", "-c", "pwd", NULL};
    sy_spawn_opts_init(&o, sh);
    o.cwd = "/nonexistent/dir";
    assert_int_equal(run_argv(&o, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "working directory /nonexistent/dir"));
    /* cwd applies, and a relative program is found from it. */
    o.cwd = "/";
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_string_equal(r.out, "/\n");
    sy_spawn_result_free(&r);
    const char *rel[] = {"bin/sh", "-c", "pwd", NULL};
    sy_spawn_opts_init(&o, rel);
    o.cwd = "/";
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_string_equal(r.out, "/\n");
    sy_spawn_result_free(&r);
}

/* An executable file that is not a program: execve itself fails, after
 * every check; the child must say why. */
static void test_exec_failure(void **state)
{
    (void)state;
    char path[] = "/tmp/sy-spawn-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char junk[] = "\x01\x02 this is not a program\n";
    assert_int_equal(write(fd, junk, sizeof junk - 1), (ssize_t)sizeof junk - 1);
    close(fd);
    assert_int_equal(chmod(path, 0755), 0);
    const char *argv[] = {path, NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    sy_spawn_result r;
    char err[512];
    int rc = run_argv(&o, &r, err, sizeof err);
    unlink(path);
    if (emulated()) {
        /* fork emulation: the failure is only an exit status. */
        if (rc == 0) {
            assert_true(r.exited);
            assert_int_equal(r.exit_code, 127);
            sy_spawn_result_free(&r);
        }
        return;
    }
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "cannot run"));
    assert_non_null(strstr(err, strerror(ENOEXEC)));
}

/* What on_start saw: how often it ran, on which thread, and what program
 * the child was running by then. */
typedef struct started {
    int calls;
    pthread_t thread;
    char exe[PATH_MAX];
} started;

static void on_started(void *arg)
{
    started *s = arg;
    s->calls++;
    s->thread = pthread_self();
    /* The calling thread's only child is the one just started. */
    char path[64], pid[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%ld/children",
             (long)syscall(SYS_gettid));
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fscanf(f, "%31s", pid) == 1) {
        snprintf(path, sizeof path, "/proc/%s/exe", pid);
        ssize_t n = readlink(path, s->exe, sizeof s->exe - 1);
        s->exe[n > 0 ? n : 0] = '\0';
    }
    fclose(f);
}

/* on_start runs once, on the caller's thread, once the child runs the
 * program (not before its exec), and never when the start failed. */
static void test_on_start(void **state)
{
    (void)state;
    const char *argv[] = {"sleep", "0.2", NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    started s = {0};
    o.on_start = on_started;
    o.on_start_arg = &s;
    sy_spawn_result r;
    char err[512];
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    sy_spawn_result_free(&r);
    assert_int_equal(s.calls, 1);
    assert_true(pthread_equal(s.thread, pthread_self()));
    /* Under valgrind the start is a fork whose exec may still be ahead. */
    if (!emulated() && access("/proc/self/task", F_OK) == 0) {
        const char *base = strrchr(s.exe, '/');
        assert_non_null(base);
        assert_string_equal(base + 1, "sleep");
    }
    const char *missing[] = {"no-such-program-anywhere", NULL};
    sy_spawn_opts_init(&o, missing);
    o.on_start = on_started;
    o.on_start_arg = &s;
    assert_int_equal(run_argv(&o, &r, err, sizeof err), -1);
    const char *sh[] = {"/bin/sh", "-c", "true", NULL};
    sy_spawn_opts_init(&o, sh);
    o.on_start = on_started;
    o.on_start_arg = &s;
    o.cwd = "/nonexistent/dir";
    assert_int_equal(run_argv(&o, &r, err, sizeof err), -1);
    assert_int_equal(s.calls, 1);
}

/* What on_process saw, and what it answers. */
typedef struct reported {
    int calls, answer;
    pid_t pgid, group_of_leader;
    uint64_t start, start_read;
} reported;

static int on_reported(void *arg, pid_t pgid, uint64_t start_time)
{
    reported *p = arg;
    p->calls++;
    p->pgid = pgid;
    p->start = start_time;
    p->group_of_leader = getpgid(pgid);
    if (sy_process_start_time(pgid, &p->start_read) != 0)
        p->start_read = 0;
    return p->answer;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* on_process gets the child's group (its own pid) and its start time, once;
 * a non-zero answer kills the whole group at once (a member the leader
 * forked too), and comes back in process_refused. */
static void test_on_process(void **state)
{
    (void)state;
    const char *argv[] = {"sleep", "0.1", NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, argv);
    reported p = {0};
    o.on_process = on_reported;
    o.on_process_arg = &p;
    sy_spawn_result r;
    char err[512];
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(r.exited);
    assert_int_equal(r.process_refused, 0);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.pgid, r.pid);
    assert_int_equal(p.group_of_leader, r.pid);
    if (access("/proc/self/stat", F_OK) == 0) {
        assert_true(p.start > 0);
        assert_true(p.start == p.start_read);
    }
    sy_spawn_result_free(&r);

    const char *tree[] = {"/bin/sh", "-c", "sleep 5 & wait; echo survived", NULL};
    sy_spawn_opts_init(&o, tree);
    p = (reported){.answer = -9};
    o.on_process = on_reported;
    o.on_process_arg = &p;
    o.kill_grace_ms = 5000;
    int64_t t0 = now_ms();
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(now_ms() - t0 < 3000);
    assert_int_equal(r.process_refused, -9);
    assert_true(r.signaled);
    assert_int_equal(r.signal_no, SIGKILL);
    assert_null(strstr(r.out, "survived"));
    assert_int_equal(p.calls, 1);
    sy_spawn_result_free(&r);
}

/* The start time handed to on_process is the one /proc/PID/stat shows,
 * every time: on the clone() path it comes from the clock read around the
 * clone (the tick the kernel stamped), so a few hundred starts cross tick
 * boundaries (10 ms) many times. */
static void test_start_time_exact(void **state)
{
    (void)state;
    if (access("/proc/self/stat", F_OK) != 0)
        skip();
    const char *argv[] = {"/bin/true", NULL};
    /* Where clone() is refused (valgrind) the time comes from /proc
     * itself: one start says enough. */
    for (int i = 0; i < (i == 1 && !sy_spawn_uses_clone() ? 1 : 300); i++) {
        sy_spawn_opts o;
        sy_spawn_opts_init(&o, argv);
        reported p = {0};
        o.on_process = on_reported;
        o.on_process_arg = &p;
        sy_spawn_result r;
        char err[512];
        assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
        assert_int_equal(p.calls, 1);
        assert_true(p.start > 0);
        if (p.start != p.start_read)
            fail_msg("start %d: on_process got %llu, /proc says %llu", i,
                     (unsigned long long)p.start, (unsigned long long)p.start_read);
        sy_spawn_result_free(&r);
    }
}

/* An answer that comes after the start: on_process asks and returns 0,
 * and the "host" refuses later by writing kill_fd (here from on_start).
 * The whole group dies at once, SIGKILL, not after the 5 s grace; the
 * result is neither cancelled nor refused (the caller knows why). */
static void kill_later(void *arg)
{
    uint64_t one = 1;
    assert_int_equal(write(*(int *)arg, &one, sizeof one), (ssize_t)sizeof one);
}

static void test_kill_fd(void **state)
{
    (void)state;
    int kfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    assert_true(kfd >= 0);
    const char *tree[] = {"/bin/sh", "-c", "sleep 5 & wait; echo survived", NULL};
    sy_spawn_opts o;
    sy_spawn_opts_init(&o, tree);
    assert_int_equal(o.kill_fd, -1);
    reported p = {0};
    o.on_process = on_reported;
    o.on_process_arg = &p;
    o.on_start = kill_later;
    o.on_start_arg = &kfd;
    o.kill_fd = kfd;
    o.kill_grace_ms = 5000;
    sy_spawn_result r;
    char err[512];
    int64_t t0 = now_ms();
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(now_ms() - t0 < 3000);
    assert_true(r.signaled);
    assert_int_equal(r.signal_no, SIGKILL);
    assert_false(r.cancelled);
    assert_int_equal(r.process_refused, 0);
    assert_null(strstr(r.out, "survived"));
    sy_spawn_result_free(&r);

    /* Never written: the run is the program's own. */
    close(kfd);
    kfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    assert_true(kfd >= 0);
    const char *quick[] = {"/bin/sh", "-c", "echo done", NULL};
    sy_spawn_opts_init(&o, quick);
    o.kill_fd = kfd;
    assert_int_equal(run_argv(&o, &r, err, sizeof err), 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.out, "done\n");
    sy_spawn_result_free(&r);
    close(kfd);
}

#if !defined(SY_SPAWN_NO_CLONE) && defined(__linux__)
static int send_pid(void *arg, pid_t pgid, uint64_t start_time)
{
    (void)start_time;
    int fd = *(int *)arg;
    return write(fd, &pgid, sizeof pgid) == (ssize_t)sizeof pgid ? 0 : -1;
}

/* On the clone() path the program dies with its host: a host killed with
 * SIGKILL (a forked stand-in here) takes its command with it. */
static void test_dies_with_host(void **state)
{
    (void)state;
    /* Valgrind refuses clone(): the posix_spawn path sets no death signal. */
    if (!sy_spawn_uses_clone() || emulated())
        return;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t host = fork();
    assert_true(host >= 0);
    if (host == 0) {
        close(p[0]);
        const char *argv[] = {"sleep", "30", NULL};
        sy_spawn_opts o;
        sy_spawn_opts_init(&o, argv);
        o.on_process = send_pid;
        o.on_process_arg = &p[1];
        sy_spawn_result r;
        sy_spawn_run(&o, &r, NULL, 0);
        _exit(0);
    }
    close(p[1]);
    pid_t child = 0;
    assert_int_equal(read(p[0], &child, sizeof child), (ssize_t)sizeof child);
    close(p[0]);
    assert_int_equal(kill(child, 0), 0);
    kill(host, SIGKILL);
    waitpid(host, NULL, 0);
    /* Reparented and reaped elsewhere, or a zombie for a moment. */
    bool gone = false;
    for (int i = 0; i < 200 && !gone; i++) {
        sy_process_stat st;
        gone = sy_process_stat_read(child, &st) != 0 || st.state == 'Z';
        if (!gone)
            usleep(10000);
    }
    assert_true(gone);
}
#endif

/* Many runs from several threads at once: each gets its own output. */
#define RUNNERS 4
#define RUNS 50

static void *runner(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < RUNS; i++) {
        char script[64], want[64];
        snprintf(script, sizeof script, "echo %ld-%d", id, i);
        snprintf(want, sizeof want, "%ld-%d\n", id, i);
        const char *argv[] = {"/bin/sh", "-c", script, NULL};
        sy_spawn_opts o;
        sy_spawn_opts_init(&o, argv);
        sy_spawn_result r;
        char err[256];
        if (sy_spawn_run(&o, &r, err, sizeof err) != 0)
            return (void *)1;
        bool ok = r.exited && r.exit_code == 0 && strcmp(r.out, want) == 0;
        sy_spawn_result_free(&r);
        if (!ok)
            return (void *)1;
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    (void)state;
    pthread_t t[RUNNERS];
    for (long i = 0; i < RUNNERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, runner, (void *)i), 0);
    for (int i = 0; i < RUNNERS; i++) {
        void *res = NULL;
        pthread_join(t[i], &res);
        assert_null(res);
    }
}

#if !defined(SY_SPAWN_NO_CLONE) && defined(__linux__)
/* The build without SY_SPAWN_NO_CLONE really uses clone(), and does not
 * quietly fall back to posix_spawn (valgrind runs it as a fork). */
static void test_path_taken(void **state)
{
    (void)state;
    assert_true(sy_spawn_uses_clone());
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdout_and_exit),
        cmocka_unit_test(test_input_larger_than_pipe),
        cmocka_unit_test(test_stderr_tail),
        cmocka_unit_test(test_discard_stdout),
        cmocka_unit_test(test_stdout_as_log),
        cmocka_unit_test(test_environment),
        cmocka_unit_test(test_signals_and_group),
        cmocka_unit_test(test_no_leaked_descriptor),
        cmocka_unit_test(test_errors_before_start),
        cmocka_unit_test(test_exec_failure),
        cmocka_unit_test(test_on_start),
        cmocka_unit_test(test_kill_fd),
        cmocka_unit_test(test_start_time_exact),
        cmocka_unit_test(test_on_process),
        cmocka_unit_test(test_concurrent),
#if !defined(SY_SPAWN_NO_CLONE) && defined(__linux__)
        cmocka_unit_test(test_dies_with_host),
        cmocka_unit_test(test_path_taken),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
