/*
 * harness.c -- runs each check in its own forked child.
 *
 * The child loads the plugin through the real loader, runs one check and
 * writes its report into a pipe.  The parent waits with a time limit, so a
 * plugin that crashes or hangs fails that one check ("crashed (signal
 * 11)", "timed out after 15s") and the run goes on.  The parent never
 * loads the plugin itself and is single-threaded when it forks.
 *
 * A child whose check passed has destroyed its instances and exits
 * through exit(), so LeakSanitizer or valgrind see what the plugin leaked;
 * a non-zero exit after a pass fails the check.
 */
#include "kit.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Reports                                                                  */
/* ------------------------------------------------------------------------ */

static kit_verdict vset(kit_report *r, kit_verdict v, const char *fmt,
                        va_list ap)
{
    r->verdict = v;
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    for (char *s = r->msg; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
    return v;
}

kit_verdict kit_pass(kit_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(r, KIT_PASS, fmt, ap);
    va_end(ap);
    return KIT_PASS;
}

kit_verdict kit_fail(kit_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(r, KIT_FAIL, fmt, ap);
    va_end(ap);
    return KIT_FAIL;
}

kit_verdict kit_skip(kit_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(r, KIT_SKIP, fmt, ap);
    va_end(ap);
    return KIT_SKIP;
}

void kit_note(kit_report *r, const char *fmt, ...)
{
    size_t used = strlen(r->detail);
    if (used + 2 >= sizeof r->detail)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail + used, sizeof r->detail - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(r->detail);
    r->detail[used] = '\n';
    r->detail[used + 1] = '\0';
}

/* ------------------------------------------------------------------------ */
/* The child                                                                */
/* ------------------------------------------------------------------------ */

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* The child's end of the report pipe, for kit_report_now(). */
static int report_fd = -1;

_Noreturn void kit_report_now(const kit_report *r)
{
    write_all(report_fd, r, sizeof *r);
    _exit(0);
}

static _Noreturn void child_main(const kit *k, const kit_check *c, int fd)
{
    /* Static, and never unloaded: a leak report then names the plugin's
     * own functions, and the handle itself stays reachable. */
    static kit_ctx x;
    kit_report r;
    memset(&x, 0, sizeof x);
    memset(&r, 0, sizeof r);
    x.k = k;
    report_fd = fd;
    sy_sdk_plugin_open(&x.plugin, k->plugin_path, x.reason, sizeof x.reason);
    x.d = x.plugin.desc;
    if (!x.d && strcmp(c->name, "load") != 0)
        kit_fail(&r, "the plugin does not load: %s", x.reason);
    else
        c->run(&x, &r);
    write_all(fd, &r, sizeof r);
    close(fd);
    /* A failed check may have left the instance mid-flight: tearing it
     * down could hang or crash and would only add noise. */
    if (r.verdict == KIT_FAIL)
        _exit(0);
    exit(0);
}

/* ------------------------------------------------------------------------ */
/* The parent                                                               */
/* ------------------------------------------------------------------------ */

/* The child running now: an interrupted kit takes it (and its process
 * group, with whatever the plugin spawned) down too, since the terminal's
 * Ctrl-C reaches only the kit's own group. */
static volatile sig_atomic_t running_child;

static void on_interrupt(int sig)
{
    pid_t pid = (pid_t)running_child;
    if (pid > 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_interrupts(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Reads the report until it is complete, EOF, or the deadline.  Returns
 * the bytes read; *timed_out is set when the deadline passed first. */
static size_t read_report(int fd, kit_report *r, double deadline,
                          bool *timed_out)
{
    char *p = (char *)r;
    size_t got = 0;
    *timed_out = false;
    while (got < sizeof *r) {
        double left = deadline - kit_now_ms();
        if (left <= 0) {
            *timed_out = true;
            break;
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int n = poll(&pfd, 1, (int)left + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            continue;
        ssize_t rd = read(fd, p + got, sizeof *r - got);
        if (rd < 0 && errno == EINTR)
            continue;
        if (rd <= 0)
            break;
        got += (size_t)rd;
    }
    return got;
}

/* Waits for the child until the deadline; kills its process group then.
 * Returns the wait status; *killed says whether it had to be killed. */
static int reap(pid_t pid, double deadline, bool *killed)
{
    int status = 0;
    *killed = false;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            return status;
        if (w < 0 && errno != EINTR)
            return 0;
        if (kit_now_ms() >= deadline) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            *killed = true;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            return status;
        }
        kit_sleep_ms(2);
    }
}

static void judge(kit_report *r, bool complete, bool timed_out, bool killed,
                  int status, double limit_ms)
{
    if (!complete) {
        memset(r, 0, sizeof *r);
        if (timed_out || killed)
            kit_fail(r, "timed out after %.0fs (a hang in the plugin: a "
                     "blocked submit, cancel or destroy?)", limit_ms / 1000);
        else if (WIFSIGNALED(status))
            kit_fail(r, "crashed (signal %d, %s)", WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
        else
            kit_fail(r, "crashed (exited with status %d before reporting; "
                     "see the report above)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return;
    }
    if (r->verdict == KIT_FAIL)
        return;
    if (killed)
        kit_fail(r, "timed out after the check, in teardown (destroy() or "
                 "unloading the plugin hangs)");
    else if (WIFSIGNALED(status))
        kit_fail(r, "crashed after the check, in teardown (signal %d, %s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        kit_fail(r, "the check passed, but the process then exited with "
                 "status %d: a sanitizer or valgrind found errors (leaks?); "
                 "see its report above",
                 WEXITSTATUS(status));
}

void kit_run_isolated(const kit *k, const kit_check *c, kit_report *r)
{
    int fds[2];
    memset(r, 0, sizeof *r);
    if (pipe2(fds, O_CLOEXEC) != 0) {
        kit_fail(r, "cannot create a pipe: %s", strerror(errno));
        return;
    }
    watch_interrupts();
    /* Buffered output would be written twice, by parent and child. */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        kit_fail(r, "cannot fork: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        close(fds[0]);
        /* Its own process group: a timeout kills what the plugin spawned
         * too. */
        setpgid(0, 0);
        child_main(k, c, fds[1]);
    }
    setpgid(pid, pid);
    running_child = pid;
    close(fds[1]);
    double limit = KIT_CHECK_LIMIT_MS * k->scale;
    double deadline = kit_now_ms() + limit;
    bool timed_out, killed;
    size_t got = read_report(fds[0], r, deadline, &timed_out);
    close(fds[0]);
    int status = reap(pid, timed_out ? kit_now_ms() : deadline, &killed);
    running_child = 0;
    judge(r, got == sizeof *r, timed_out, killed, status, limit);
}
