/*
 * spawn_run.c -- sy_spawn_run(): one poll() loop from the start of the
 * child to its reaping (switchyard/spawn.h), and the small helpers of the
 * API.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <switchyard/process.h>

#include "spawn_internal.h"

/* Defaults: no env, no cwd, no input, 16 MiB of stdout, no timeout, 5 s of
 * grace, no cancel descriptor. */
void sy_spawn_opts_init(sy_spawn_opts *o, const char *const *argv)
{
    memset(o, 0, sizeof *o);
    o->argv = argv;
    o->kill_grace_ms = SY_SPAWN_DEFAULT_KILL_GRACE_MS;
    o->cancel_fd = -1;
    o->kill_fd = -1;
}

void sy_spawn_result_free(sy_spawn_result *r)
{
    free(r->out);
    free(r->err);
    free(r->err_head);
    r->out = r->err = r->err_head = NULL;
    r->out_len = r->err_len = r->err_head_len = 0;
}

/* A thread-safe name for a signal ("Segmentation fault"). */
const char *sy_spawn_signal_name(int sig)
{
    const char *s = sigdescr_np(sig);
    return s ? s : "unknown signal";
}

/* "exited with status 3", "killed by signal 9 (Killed)". */
void sy_spawn_describe(const sy_spawn_result *r, char *buf, size_t len)
{
    if (r->exited)
        snprintf(buf, len, "exited with status %d", r->exit_code);
    else if (r->signaled)
        snprintf(buf, len, "killed by signal %d (%s)", r->signal_no,
                 sy_spawn_signal_name(r->signal_no));
    else
        snprintf(buf, len,
                 "ended with an unknown status (was SIGCHLD "
                 "ignored?)");
}

/* Has the leader exited?  Looks without reaping (WNOWAIT): the zombie
 * keeps its pid, and so the group's id, from being reused. */
static void sy_spawn__check_exit(sy_spawn__run *s)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rc;
    do
        rc = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        /* ECHILD: someone else reaped it (SIGCHLD ignored?). */
        s->exited = true;
        s->reaped_elsewhere = true;
        return;
    }
    if (si.si_pid == s->pid)
        s->exited = true;
}

/* How long poll() may sleep, in ms (-1: until something happens). */
static int sy_spawn__wait_ms(const sy_spawn__run *s, int64_t now)
{
    int64_t until = -1;
    if (!s->terminating && s->deadline)
        until = s->deadline - now;
    if (s->terminating && !s->killed)
        until = s->kill_at - now;
    if (s->pidfd < 0 && (until < 0 || until > s->tick_ms))
        until = s->tick_ms;
    if (until < 0 && (s->terminating ? !s->killed : s->deadline != 0))
        until = 0;
    return until > INT_MAX ? INT_MAX : (int)until;
}

static void sy_spawn__check_clock(sy_spawn__run *s, int64_t now)
{
    if (!s->terminating && s->deadline && now >= s->deadline) {
        s->r->timed_out = true;
        sy_spawn__terminate(s);
    }
    if (s->terminating && !s->killed && now >= s->kill_at) {
        sy_spawn__signal_group(s, SIGKILL);
        s->killed = true;
    }
}

static void sy_spawn__add_fd(struct pollfd *p, int *n, int fd, short ev)
{
    if (fd >= 0)
        p[(*n)++] = (struct pollfd){.fd = fd, .events = ev, .revents = 0};
}

/* Runs poll() once and handles what it says. */
static void sy_spawn__step(sy_spawn__run *s)
{
    int64_t now = sy_spawn__now_ms();
    sy_spawn__check_clock(s, now);
    struct pollfd p[6];
    int n = 0;
    sy_spawn__add_fd(p, &n, s->pidfd, POLLIN);
    sy_spawn__add_fd(p, &n, s->out_fd, POLLIN);
    sy_spawn__add_fd(p, &n, s->err_fd, POLLIN);
    sy_spawn__add_fd(p, &n, s->in_fd, POLLOUT);
    if (!s->terminating)
        sy_spawn__add_fd(p, &n, s->cancel_fd, POLLIN);
    if (!s->killed)
        sy_spawn__add_fd(p, &n, s->o->kill_fd, POLLIN);
    int rc = poll(p, (nfds_t)n, sy_spawn__wait_ms(s, now));
    if (rc < 0)
        return; /* EINTR; anything else shows up on the next round */
    for (int i = 0; i < n; i++) {
        if (!p[i].revents)
            continue;
        if (p[i].fd == s->o->kill_fd && !s->killed) {
            sy_spawn__signal_group(s, SIGKILL);
            s->terminating = s->killed = true;
            sy_spawn__close(&s->in_fd);
        } else if (p[i].fd == s->cancel_fd && !s->terminating) {
            s->r->cancelled = true;
            sy_spawn__terminate(s);
        } else if (p[i].fd == s->in_fd) {
            sy_spawn__feed(s);
        } else if (p[i].fd == s->out_fd) {
            sy_spawn__read_out(s);
        } else if (p[i].fd == s->err_fd) {
            sy_spawn__read_err(s);
        }
    }
    if (s->pidfd < 0 || (n > 0 && p[0].fd == s->pidfd && p[0].revents))
        sy_spawn__check_exit(s);
    if (s->pidfd < 0 && s->tick_ms < 10)
        s->tick_ms = s->tick_ms * 2 > 10 ? 10 : s->tick_ms * 2;
}

static void sy_spawn__reap(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    r->status = -1;
    if (s->reaped_elsewhere)
        return;
    int st = 0;
    pid_t w;
    do
        w = waitpid(s->pid, &st, 0);
    while (w < 0 && errno == EINTR);
    if (w != s->pid)
        return;
    r->status = st;
    if (WIFEXITED(st)) {
        r->exited = true;
        r->exit_code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
        r->signaled = true;
        r->signal_no = WTERMSIG(st);
    }
}

/* After the leader's exit: end what it left in its group, take what is
 * still in the pipes, reap. */
static void sy_spawn__finish(sy_spawn__run *s)
{
    if (!s->reaped_elsewhere)
        sy_spawn__signal_group(s, SIGKILL);
    sy_spawn__read_out(s);
    sy_spawn__read_err(s);
    sy_spawn__reap(s);
}

/* A descriptor that becomes readable when `pid` exits, or -1 where the
 * kernel (or valgrind) has no pidfd_open: then the loop ticks.
 * ENOSYS is remembered, so it is asked once per process. */
static int sy_spawn__pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    static atomic_int no_pidfd;
    if (atomic_load(&no_pidfd))
        return -1;
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0 && errno == ENOSYS)
        atomic_store(&no_pidfd, 1);
    return fd;
#else
    (void)pid;
    return -1;
#endif
}

/* Starts the child with its pipes.  Returns 0, or -1 with err. */
static int sy_spawn__launch(sy_spawn__run *s, char *err, size_t err_len)
{
    const sy_spawn_opts *o = s->o;
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    for (int i = 0; i < 3; i++) {
        if (i == 1 && o->discard_stdout)
            continue;
        if (sy_spawn__pipe(pipes[i]) != 0) {
            int e = errno;
            sy_spawn__err(err, err_len, "cannot make a pipe: %s",
                          strerror(e));
            sy_spawn__close_pipes(pipes);
            errno = e;
            return -1;
        }
    }
    /* What fits in the pipe is written now, while we hold its read end:
     * no EPIPE is possible, and a small input needs no poll round. */
    s->in_fd = pipes[0][1];
    sy_spawn__nonblock(s->in_fd);
    sy_spawn__feed(s);
    pipes[0][1] = s->in_fd;
    uint64_t start = 0;
    int rc = sy_spawn__start(o, pipes, &s->pid, &start);
    if (rc) {
        if (rc == ENOENT && !strchr(o->argv[0], '/'))
            sy_spawn__err(err, err_len, "cannot run %s: not found in PATH",
                          o->argv[0]);
        else
            sy_spawn__err(err, err_len, "cannot run %s%s%s: %s", o->argv[0],
                          o->cwd ? " in " : "", o->cwd ? o->cwd : "",
                          strerror(rc));
        sy_spawn__close_pipes(pipes);
        s->in_fd = -1;
        errno = rc;
        return -1;
    }
    s->in_fd = pipes[0][1];
    s->out_fd = pipes[1][0];
    s->err_fd = pipes[2][0];
    sy_spawn__nonblock(s->out_fd);
    sy_spawn__nonblock(s->err_fd);
    s->pidfd = sy_spawn__pidfd(s->pid);
    if (o->on_process) {
        /* The clock's when the start could tell it for sure, else read
         * after the exec (the start returns only then); 0 where /proc
         * cannot say. */
        if (!start && sy_process_start_time(s->pid, &start) != 0)
            start = 0;
        s->r->process_refused = o->on_process(o->on_process_arg, s->pid, start);
        if (s->r->process_refused) {
            /* Nobody could find it after a crash: it must not run. */
            sy_spawn__signal_group(s, SIGKILL);
            s->terminating = s->killed = true;
            sy_spawn__close(&s->in_fd);
        }
    }
    if (o->on_start)
        o->on_start(o->on_start_arg);
    return 0;
}

static void sy_spawn__loop(sy_spawn__run *s)
{
    sy_spawn__feed(s);
    while (!s->exited)
        sy_spawn__step(s);
    sy_spawn__finish(s);
    sy_spawn__close(&s->in_fd);
    sy_spawn__close(&s->out_fd);
    sy_spawn__close(&s->err_fd);
    sy_spawn__close(&s->pidfd);
}

/* SIGPIPE is blocked on the calling thread while it writes to the child;
 * one our writes raised is taken off before unblocking, so it is never
 * delivered (a SIGPIPE pending before we started is left alone). */
typedef struct sy_spawn__pipe_guard {
    sigset_t old;
    bool was_pending;
} sy_spawn__pipe_guard;

static void sy_spawn__guard_pipe(sy_spawn__pipe_guard *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    g->was_pending =
        sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &g->old);
}

static void sy_spawn__unguard_pipe(const sy_spawn__pipe_guard *g)
{
    sigset_t pending, pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (!g->was_pending && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGPIPE)) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static int sy_spawn__init(sy_spawn__run *s, const sy_spawn_opts *o,
                          sy_spawn_result *r, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    s->r = r;
    s->in_fd = s->out_fd = s->err_fd = s->pidfd = -1;
    s->tick_ms = 1;
    s->cancel_fd = o->cancel_fd;
    s->max_out =
        o->max_output_bytes ? o->max_output_bytes : SY_SPAWN_DEFAULT_MAX_OUTPUT;
    if (sy_spawn__grow_out(s))
        return 0;
    sy_spawn_result_free(r);
    sy_spawn__err(err, err_len, "out of memory");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* The entry point                                                          */
/* ------------------------------------------------------------------------ */

/* Runs `o` to its end.  Returns 0 when the child was started and has been
 * reaped, whatever its end (see r: exited/exit_code, signaled/signal_no,
 * timed_out, cancelled, output_too_large); free r with
 * sy_spawn_result_free().  Returns -1 with one line in err when it could
 * not start (no such program, a bad cwd, no memory for a pipe) or ran out
 * of memory capturing output (the child was still terminated and reaped);
 * r then holds nothing to free.  errno then says why it could not start
 * (0 when the child had run). */
int sy_spawn_run(const sy_spawn_opts *o, sy_spawn_result *r, char *err,
                 size_t err_len)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    sy_spawn__run s;
    if (sy_spawn__check_opts(o, err, err_len) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (sy_spawn__init(&s, o, r, err, err_len) != 0) {
        errno = ENOMEM;
        return -1;
    }
    int rc = sy_spawn__launch(&s, err, err_len);
    if (rc == 0) {
        r->pid = s.pid;
        if (o->timeout_ms > 0)
            s.deadline = sy_spawn__now_ms() + o->timeout_ms;
        /* Input that did not fit in the pipe is written while the child
         * runs, and may meet EPIPE. */
        bool guard = s.in_fd >= 0;
        sy_spawn__pipe_guard g;
        if (guard)
            sy_spawn__guard_pipe(&g);
        sy_spawn__loop(&s);
        if (guard)
            sy_spawn__unguard_pipe(&g);
    }
    int why = rc != 0 ? errno : 0;
    if (rc == 0 && (s.oom || !sy_spawn__collect_err(&s))) {
        sy_spawn__err(err, err_len,
                      "out of memory capturing the output of "
                      "%s",
                      o->argv[0]);
        rc = -1;
        why = 0; /* it ran: the caller must not start it again unasked */
    }
    free(s.ring);
    free(s.head);
    if (rc != 0) {
        sy_spawn_result_free(r);
        errno = why;
        return -1;
    }
    r->out[r->out_len] = '\0';
    return 0;
}
