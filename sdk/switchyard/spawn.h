/*
 * switchyard/spawn.h -- run one command to its end, header-only.
 *
 * For executor plugins that run programs (the thread plugin's command tasks
 * and isolated functions, the gpu plugin's tasks).  Every function is
 * `static inline`: include it and call sy_spawn_run(); nothing to link.
 * Needs -D_GNU_SOURCE (clone, posix_spawn_file_actions_addchdir_np with
 * glibc 2.29+) and -pthread (pthread_sigmask).
 *
 * What it does, in order:
 *
 *   - Starts the program without a shell and without a fork of a large
 *     threaded host: on Linux with glibc by clone(CLONE_VM | CLONE_VFORK)
 *     on a buffer of the caller's stack (the way posix_spawn works inside,
 *     without its per-call stack mapping; see sy_spawn__clone), elsewhere,
 *     or with -DSY_SPAWN_NO_CLONE, or where clone() is refused, by
 *     posix_spawn().  Either way the child is in a new process group, has
 *     an empty signal mask, every signal at its default action, every
 *     descriptor above 2 closed (with posix_spawn, glibc 2.34+; below that,
 *     descriptors without FD_CLOEXEC leak), the working directory `cwd`
 *     and the caller's environment plus `env`, and inherits the calling
 *     thread's CPU affinity.
 *   - What fits of `input` is written to the stdin pipe before the start
 *     (most inputs fit: no poll round, no SIGPIPE possible).
 *   - One poll() loop feeds the rest of `input` to stdin (then closes
 *     it), captures
 *     stdout up to max_output_bytes, keeps the last SY_SPAWN_STDERR_TAIL
 *     bytes of stderr, and watches the timeout, the cancel descriptor and
 *     the child's exit (a pidfd; where the kernel has none, a tick that
 *     grows from 1 ms to 10 ms).
 *   - Timeout, cancel, or stdout beyond max_output_bytes: SIGTERM to the
 *     whole process group, then SIGKILL to it when the leader has exited or
 *     kill_grace_ms has passed, whichever comes first.
 *   - When the leader exits, whatever it left in its process group is sent
 *     SIGKILL (a task's processes end with it; a program that must outlive
 *     its task leaves the group with setsid()).  The leader is reaped only
 *     after that, so its pid, which names the group, cannot have been
 *     reused by then.  Then it is always reaped: no zombie is left.
 *
 * Threading: sy_spawn_run() blocks the calling thread until the child has
 * been reaped, and needs about 40 KiB of its stack (on Linux the child runs
 * on 32 KiB of it until exec).  Any number of threads may run it at once; its only global
 * state is two flags remembering that the kernel has no pidfd_open and
 * that clone() was refused.  It reads `environ` (do not setenv()
 * concurrently), blocks every signal in the calling thread for the few
 * microseconds of the start, blocks SIGPIPE in it while it feeds input
 * that did not fit in the pipe (so a child that exits without reading its
 * input cannot kill the host), and waits for its own
 * child only (waitid/waitpid on that pid), so it coexists with libuv.  The
 * host must not set SIGCHLD to SIG_IGN (children would vanish unreaped and
 * their exit status with them; sy_spawn_run then reports status -1).
 */
#ifndef SWITCHYARD_SPAWN_H
#define SWITCHYARD_SPAWN_H

#ifndef _GNU_SOURCE
#error "switchyard/spawn.h needs -D_GNU_SOURCE"
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How much of the end of stderr is kept. */
#define SY_SPAWN_STDERR_TAIL (64 * 1024)
/* The stdout limit when max_output_bytes is 0. */
#define SY_SPAWN_DEFAULT_MAX_OUTPUT ((size_t)16 * 1024 * 1024)
/* The grace between SIGTERM and SIGKILL that sy_spawn_opts_init sets. */
#define SY_SPAWN_DEFAULT_KILL_GRACE_MS 5000

/* What to run.  Owned by the caller; read during sy_spawn_run() only. */
typedef struct sy_spawn_opts {
    /* Required.  NULL-terminated; argv[0] is the program: searched in the
     * host's PATH when it has no '/' (as execvp does; a PATH in `env` is
     * not used for the search), else a path (a relative one is relative to
     * cwd). */
    const char *const *argv;
    /* "NAME=value" strings added to the host's environment, each replacing
     * a variable of the same name (a later one wins over an earlier one);
     * a bare "NAME" removes the variable.  NULL-terminated, or NULL for
     * none. */
    const char *const *env;
    /* The child's working directory, or NULL for the host's. */
    const char *cwd;
    /* Fed to stdin, which is then closed; NULL (or input_len 0) for an
     * empty stdin. */
    const char *input;
    size_t input_len;
    /* Stdout beyond this many bytes fails the run (output_too_large) and
     * terminates the group; 0 means SY_SPAWN_DEFAULT_MAX_OUTPUT. */
    size_t max_output_bytes;
    /* True: stdout goes to /dev/null (never too large, out is ""). */
    bool discard_stdout;
    /* Terminate the group after this long; 0 for no limit. */
    int64_t timeout_ms;
    /* Between SIGTERM and SIGKILL; 0 sends SIGKILL at once. */
    int64_t kill_grace_ms;
    /* Readable means "cancel" (an eventfd or a pipe the caller writes to);
     * -1 for none.  Never read: it stays readable, and the caller owns and
     * closes it. */
    int cancel_fd;
    /* Called once, on the calling thread, as soon as the child runs the
     * program (it has exec'd) and before the wait for it begins; never
     * when the start failed.  NULL for none.  For work the caller means to
     * do while the child runs: the thread plugin reports the task it ran
     * before from here, so that the host's thread wakes after this exec
     * rather than beside it. */
    void (*on_start)(void *arg);
    void *on_start_arg;
} sy_spawn_opts;

/* How the run ended.  Filled by sy_spawn_run(); free with
 * sy_spawn_result_free(). */
typedef struct sy_spawn_result {
    pid_t pid;               /* the child (reaped) */
    int status;              /* raw wait status; -1 when unknown */
    bool exited;             /* ended by exit(): exit_code is valid */
    int exit_code;
    bool signaled;           /* ended by a signal: signal_no is valid */
    int signal_no;
    bool timed_out;          /* we terminated it: timeout_ms passed */
    bool cancelled;          /* we terminated it: cancel_fd became readable */
    bool output_too_large;   /* we terminated it: stdout passed the limit */
    char *out;               /* malloc'd stdout, NUL-terminated (never NULL
                                after success; truncated at the limit) */
    size_t out_len;
    char *err;               /* malloc'd last bytes of stderr, NUL-terminated
                                (never NULL after success) */
    size_t err_len;
    size_t err_dropped;      /* stderr bytes before `err`, not kept */
} sy_spawn_result;

/* Defaults: no env, no cwd, no input, 16 MiB of stdout, no timeout, 5 s of
 * grace, no cancel descriptor. */
static inline void sy_spawn_opts_init(sy_spawn_opts *o, const char *const *argv)
{
    memset(o, 0, sizeof *o);
    o->argv = argv;
    o->kill_grace_ms = SY_SPAWN_DEFAULT_KILL_GRACE_MS;
    o->cancel_fd = -1;
}

static inline void sy_spawn_result_free(sy_spawn_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
    r->out_len = r->err_len = 0;
}

/* A thread-safe name for a signal ("Segmentation fault"). */
static inline const char *sy_spawn_signal_name(int sig)
{
    const char *s = sigdescr_np(sig);
    return s ? s : "unknown signal";
}

/* "exited with status 3", "killed by signal 9 (Killed)". */
static inline void sy_spawn_describe(const sy_spawn_result *r, char *buf,
                                     size_t len)
{
    if (r->exited)
        snprintf(buf, len, "exited with status %d", r->exit_code);
    else if (r->signaled)
        snprintf(buf, len, "killed by signal %d (%s)", r->signal_no,
                 sy_spawn_signal_name(r->signal_no));
    else
        snprintf(buf, len, "ended with an unknown status (was SIGCHLD "
                           "ignored?)");
}

/* ------------------------------------------------------------------------ */
/* Internals                                                                */
/* ------------------------------------------------------------------------ */

static inline void sy_spawn__err(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void sy_spawn__err(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static inline int64_t sy_spawn__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sy_spawn__close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* A close-on-exec pipe whose ends are both above 2, so the dup2 actions
 * onto 0, 1 and 2 cannot clobber one another in a host that closed its
 * standard descriptors. */
static inline int sy_spawn__pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (p[i] > 2)
            continue;
        int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
        if (moved < 0) {
            int e = errno;
            close(p[0]);
            close(p[1]);
            errno = e;
            return -1;
        }
        close(p[i]);
        p[i] = moved;
    }
    return 0;
}

static inline size_t sy_spawn__name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* True when `kv` is replaced by an entry of add[from...].  Every spawn
 * asks this of every variable of the host: the name is measured once. */
static inline bool sy_spawn__replaced(const char *kv, const char *const *add,
                                      size_t from)
{
    size_t n = sy_spawn__name_len(kv);
    for (size_t i = from; add && add[i]; i++)
        if (add[i][0] == kv[0] && strncmp(add[i], kv, n) == 0 &&
            (add[i][n] == '=' || add[i][n] == '\0'))
            return true;
    return false;
}

/* The child's environment: environ minus replaced names, plus `add`.  The
 * array is malloc'd; its strings are borrowed. */
static inline char **sy_spawn__envp(const char *const *add)
{
    size_t n = 1;
    for (char **e = environ; e && *e; e++)
        n++;
    for (size_t i = 0; add && add[i]; i++)
        n++;
    char **v = malloc(n * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (!sy_spawn__replaced(*e, add, 0))
            v[k++] = *e;
    for (size_t i = 0; add && add[i]; i++)
        if (strchr(add[i], '=') && !sy_spawn__replaced(add[i], add, i + 1))
            v[k++] = (char *)add[i];
    v[k] = NULL;
    return v;
}

/* The state of one run's loop. */
typedef struct sy_spawn__run {
    const sy_spawn_opts *o;
    sy_spawn_result *r;
    pid_t pid;
    int in_fd, out_fd, err_fd, pidfd, cancel_fd;
    size_t in_off, out_cap, max_out;
    char *ring;              /* SY_SPAWN_STDERR_TAIL bytes */
    size_t ring_start, ring_len;
    int64_t deadline;        /* 0: no timeout */
    int64_t kill_at;         /* when SIGKILL follows SIGTERM */
    int tick_ms;             /* without a pidfd: 1, 2, 4, 8, 10, 10, ... */
    bool terminating, killed, exited, reaped_elsewhere, oom;
} sy_spawn__run;

static inline void sy_spawn__signal_group(sy_spawn__run *s, int sig)
{
    kill(-s->pid, sig);
}

/* SIGTERM now, SIGKILL at kill_at; stdin is no longer fed. */
static inline void sy_spawn__terminate(sy_spawn__run *s)
{
    if (s->terminating)
        return;
    s->terminating = true;
    sy_spawn__close(&s->in_fd);
    int64_t grace = s->o->kill_grace_ms > 0 ? s->o->kill_grace_ms : 0;
    if (grace == 0) {
        sy_spawn__signal_group(s, SIGKILL);
        s->killed = true;
        return;
    }
    sy_spawn__signal_group(s, SIGTERM);
    s->kill_at = sy_spawn__now_ms() + grace;
}

static inline void sy_spawn__feed(sy_spawn__run *s)
{
    const sy_spawn_opts *o = s->o;
    while (s->in_fd >= 0 && s->in_off < o->input_len) {
        size_t chunk = o->input_len - s->in_off;
        if (chunk > 65536)
            chunk = 65536;
        ssize_t n = write(s->in_fd, o->input + s->in_off, chunk);
        if (n > 0) {
            s->in_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        /* EPIPE: the child does not want the rest. */
        sy_spawn__close(&s->in_fd);
    }
    sy_spawn__close(&s->in_fd);
}

/* Grows the stdout buffer toward max_out + 1 (one byte past the limit is
 * how an overflow is seen).  False when out of memory. */
static inline bool sy_spawn__grow_out(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    if (r->out_len + 1 < s->out_cap)
        return true;
    size_t cap = s->out_cap ? s->out_cap * 2 : 4096;
    if (cap > s->max_out + 2)
        cap = s->max_out + 2;
    char *p = realloc(r->out, cap);
    if (!p)
        return false;
    r->out = p;
    s->out_cap = cap;
    return true;
}

static inline void sy_spawn__read_out(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    while (s->out_fd >= 0) {
        if (!sy_spawn__grow_out(s)) {
            s->oom = true;
            sy_spawn__close(&s->out_fd);
            sy_spawn__terminate(s);
            return;
        }
        ssize_t n = read(s->out_fd, r->out + r->out_len,
                         s->out_cap - 1 - r->out_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            sy_spawn__close(&s->out_fd);
            return;
        }
        r->out_len += (size_t)n;
        if (r->out_len > s->max_out) {
            r->out_len = s->max_out;
            r->output_too_large = true;
            /* Closing our end makes a writer get EPIPE at once, even one
             * that ignores SIGTERM. */
            sy_spawn__close(&s->out_fd);
            sy_spawn__terminate(s);
            return;
        }
    }
}

/* Appends to the stderr ring, dropping the oldest bytes when full. */
static inline void sy_spawn__ring_put(sy_spawn__run *s, const char *p,
                                      size_t n)
{
    const size_t cap = SY_SPAWN_STDERR_TAIL;
    /* Most programs write nothing on stderr: the ring is made on demand. */
    if (!s->ring && n > 0 && !(s->ring = malloc(cap))) {
        s->oom = true;
        return;
    }
    while (n > 0) {
        size_t end = (s->ring_start + s->ring_len) % cap;
        size_t chunk = cap - end < n ? cap - end : n;
        memcpy(s->ring + end, p, chunk);
        p += chunk;
        n -= chunk;
        s->ring_len += chunk;
        if (s->ring_len > cap) {
            size_t over = s->ring_len - cap;
            s->ring_start = (s->ring_start + over) % cap;
            s->ring_len = cap;
            s->r->err_dropped += over;
        }
    }
}

static inline void sy_spawn__read_err(sy_spawn__run *s)
{
    char buf[16384];
    while (s->err_fd >= 0) {
        ssize_t n = read(s->err_fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            sy_spawn__close(&s->err_fd);
            return;
        }
        sy_spawn__ring_put(s, buf, (size_t)n);
    }
}

/* Has the leader exited?  Looks without reaping (WNOWAIT): the zombie
 * keeps its pid, and so the group's id, from being reused. */
static inline void sy_spawn__check_exit(sy_spawn__run *s)
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
static inline int sy_spawn__wait_ms(const sy_spawn__run *s, int64_t now)
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

static inline void sy_spawn__check_clock(sy_spawn__run *s, int64_t now)
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

static inline void sy_spawn__add_fd(struct pollfd *p, int *n, int fd,
                                    short ev)
{
    if (fd >= 0)
        p[(*n)++] = (struct pollfd){.fd = fd, .events = ev, .revents = 0};
}

/* Runs poll() once and handles what it says. */
static inline void sy_spawn__step(sy_spawn__run *s)
{
    int64_t now = sy_spawn__now_ms();
    sy_spawn__check_clock(s, now);
    struct pollfd p[5];
    int n = 0;
    sy_spawn__add_fd(p, &n, s->pidfd, POLLIN);
    sy_spawn__add_fd(p, &n, s->out_fd, POLLIN);
    sy_spawn__add_fd(p, &n, s->err_fd, POLLIN);
    sy_spawn__add_fd(p, &n, s->in_fd, POLLOUT);
    if (!s->terminating)
        sy_spawn__add_fd(p, &n, s->cancel_fd, POLLIN);
    int rc = poll(p, (nfds_t)n, sy_spawn__wait_ms(s, now));
    if (rc < 0)
        return; /* EINTR; anything else shows up on the next round */
    for (int i = 0; i < n; i++) {
        if (!p[i].revents)
            continue;
        if (p[i].fd == s->cancel_fd && !s->terminating) {
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

static inline void sy_spawn__reap(sy_spawn__run *s)
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
static inline void sy_spawn__finish(sy_spawn__run *s)
{
    if (!s->reaped_elsewhere)
        sy_spawn__signal_group(s, SIGKILL);
    sy_spawn__read_out(s);
    sy_spawn__read_err(s);
    sy_spawn__reap(s);
}

static inline bool sy_spawn__collect_err(sy_spawn__run *s)
{
    sy_spawn_result *r = s->r;
    r->err = malloc(s->ring_len + 1);
    if (!r->err)
        return false;
    for (size_t i = 0; i < s->ring_len; i++)
        r->err[i] = s->ring[(s->ring_start + i) % SY_SPAWN_STDERR_TAIL];
    r->err[s->ring_len] = '\0';
    r->err_len = s->ring_len;
    return true;
}

/* For the parent's ends of fresh pipes, which have no other status flag
 * to keep. */
static inline void sy_spawn__nonblock(int fd)
{
    if (fd >= 0)
        fcntl(fd, F_SETFL, O_NONBLOCK);
}

/* The file actions: stdin, stdout, stderr, cwd, nothing else inherited. */
static inline int sy_spawn__actions(posix_spawn_file_actions_t *fa,
                                    const sy_spawn_opts *o, int in_rd,
                                    int out_wr, int err_wr)
{
    int rc = posix_spawn_file_actions_adddup2(fa, in_rd, 0);
    if (!rc && o->discard_stdout)
        rc = posix_spawn_file_actions_addopen(fa, 1, "/dev/null", O_WRONLY, 0);
    else if (!rc)
        rc = posix_spawn_file_actions_adddup2(fa, out_wr, 1);
    if (!rc)
        rc = posix_spawn_file_actions_adddup2(fa, err_wr, 2);
    if (!rc && o->cwd)
        rc = posix_spawn_file_actions_addchdir_np(fa, o->cwd);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    if (!rc)
        rc = posix_spawn_file_actions_addclosefrom_np(fa, 3);
#endif
    return rc;
}

/* Every signal back to its default in the child.  glibc's child reads the
 * disposition of each signal it does not have to reset, so asking for all
 * of them costs no more, and is right even for a signal ignored after an
 * earlier spawn. */
static inline int sy_spawn__attrs(posix_spawnattr_t *at)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    int rc = posix_spawnattr_setflags(
        at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                POSIX_SPAWN_SETSIGDEF);
    if (!rc)
        rc = posix_spawnattr_setpgroup(at, 0);
    if (!rc)
        rc = posix_spawnattr_setsigmask(at, &none);
    if (!rc)
        rc = posix_spawnattr_setsigdefault(at, &all);
    return rc;
}

/* 0 when `path` is an executable file, else an errno value. */
static inline int sy_spawn__runnable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    return access(path, X_OK) == 0 ? 0 : errno;
}

/* The file to execute, found the way execvp would (argv[0] with a '/' is a
 * path, relative to cwd; without one it is searched in the host's PATH), so
 * "no such program" is an error here, before anything starts, on every
 * platform (a posix_spawn emulated with fork, as under valgrind, would
 * only see exit status 127).  Returns 0 or an errno value. */
static inline int sy_spawn__resolve(const sy_spawn_opts *o, char *out,
                                    size_t len)
{
    const char *prog = o->argv[0];
    if (strchr(prog, '/')) {
        bool rel = prog[0] != '/' && o->cwd;
        if ((size_t)snprintf(out, len, "%s%s%s", rel ? o->cwd : "",
                             rel ? "/" : "", prog) >= len)
            return ENAMETOOLONG;
        return sy_spawn__runnable(out);
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        if ((size_t)snprintf(out, len, "%.*s%s%s", (int)n, path,
                             n ? "/" : "", prog) < len &&
            sy_spawn__runnable(out) == 0)
            return 0;
        path += n + (path[n] == ':');
    }
    return ENOENT;
}

/* posix_spawn() of `file`: the portable path, and the one taken where the
 * clone() path below is refused.  Returns 0 or an errno value. */
static inline int sy_spawn__posix(const sy_spawn_opts *o, const char *file,
                                  char **envp, int pipes[3][2], pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc)
        return rc;
    rc = posix_spawnattr_init(&at);
    if (!rc) {
        rc = sy_spawn__actions(&fa, o, pipes[0][0], pipes[1][1], pipes[2][1]);
        if (!rc)
            rc = sy_spawn__attrs(&at);
        if (!rc)
            rc = posix_spawn(pid, file, &fa, &at, (char *const *)o->argv,
                             envp);
        posix_spawnattr_destroy(&at);
    }
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

#if defined(__linux__) && defined(__GLIBC__) && !defined(__hppa__) &&         \
    !defined(SY_SPAWN_NO_CLONE)
/*
 * Linux: clone(CLONE_VM | CLONE_VFORK), as glibc's posix_spawn does, minus
 * what that costs per call: posix_spawn maps and unmaps a child stack each
 * time, and the unmap of a threaded process is a TLB shootdown on every
 * other CPU running it; its child also asks for all 64 signal dispositions
 * through the generic sigaction path.  Here the child runs on a buffer of
 * the caller's stack (the caller is suspended until the child has exec'd
 * or exited, so nothing else touches it) and does only what the run needs.
 *
 * The child shares our memory until execve, so it must not run any of our
 * signal handlers: every signal is blocked around clone(), and the child
 * puts every disposition that is not SIG_DFL back to SIG_DFL before it
 * unblocks them (glibc's own SIGCANCEL and SIGSETXID cannot be changed, and
 * are only ever sent to threads of this process, never to the child).
 */
#include <sched.h>

typedef struct sy_spawn__child {
    const char *file;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int in_rd, out_wr, err_wr; /* out_wr < 0: stdout is /dev/null */
    int max_fd;                /* close_range fallback: close up to here */
    volatile int err;          /* set by the child when a step failed */
} sy_spawn__child;

/* Runs in the child, on the caller's memory: no allocation, no locks, no
 * sanitizer bookkeeping (its frame never returns to clean up). */
__attribute__((no_sanitize("address"), unused)) static int
sy_spawn__child_main(void *arg)
{
    sy_spawn__child *c = arg;
    struct sigaction dfl, cur;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP &&
            sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL)
            sigaction(sig, &dfl, NULL);
    int fd = c->out_wr;
    if (setpgid(0, 0) != 0 || dup2(c->in_rd, 0) < 0)
        goto fail;
    if (fd < 0 && (fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
        goto fail;
    if (dup2(fd, 1) < 0 || dup2(c->err_wr, 2) < 0)
        goto fail;
    if (c->cwd && chdir(c->cwd) != 0)
        goto fail;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
        for (int i = 3; i <= c->max_fd; i++)
            close(i);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(c->file, c->argv, c->envp);
fail:
    c->err = errno ? errno : EINVAL;
    _exit(127);
}

/* Whether clone() was refused once (an emulator such as valgrind, a
 * seccomp filter): every later call goes straight to posix_spawn. */
static atomic_int sy_spawn__no_clone __attribute__((unused));

/* 0 (child started), an errno value (it could not start), or -1 (clone is
 * unavailable here: use posix_spawn). */
static inline int sy_spawn__clone(const sy_spawn_opts *o, const char *file,
                                  char **envp, int pipes[3][2], pid_t *pid)
{
    if (atomic_load(&sy_spawn__no_clone))
        return -1;
    sy_spawn__child c = {
        .file = file,
        .argv = (char *const *)o->argv,
        .envp = envp,
        .cwd = o->cwd,
        .in_rd = pipes[0][0],
        .out_wr = o->discard_stdout ? -1 : pipes[1][1],
        .err_wr = pipes[2][1],
        .max_fd = 1024,
        .err = 0,
    };
    /* 32 KiB: the child calls a few libc wrappers and execve. */
    _Alignas(64) char stack[32768];
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t p = clone(sy_spawn__child_main, stack + sizeof stack,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p < 0) {
        if (e == EINVAL || e == ENOSYS || e == EPERM) {
            atomic_store(&sy_spawn__no_clone, 1);
            return -1;
        }
        return e;
    }
    if (c.err) {
        int st;
        while (waitpid(p, &st, 0) < 0 && errno == EINTR)
            ;
        return c.err;
    }
    *pid = p;
    return 0;
}
#else
static inline int sy_spawn__clone(const sy_spawn_opts *o, const char *file,
                                  char **envp, int pipes[3][2], pid_t *pid)
{
    (void)o, (void)file, (void)envp, (void)pipes, (void)pid;
    return -1;
}
#endif

/* Starts the child with pipes[0..2] = stdin, stdout, stderr; on success
 * the child's ends are closed here.  Returns 0 or an errno value. */
static inline int sy_spawn__start(const sy_spawn_opts *o, int pipes[3][2],
                                  pid_t *pid)
{
    char file[PATH_MAX];
    int rc = sy_spawn__resolve(o, file, sizeof file);
    if (rc)
        return rc;
    char **envp = sy_spawn__envp(o->env);
    if (!envp)
        return ENOMEM;
    rc = sy_spawn__clone(o, file, envp, pipes, pid);
    if (rc < 0)
        rc = sy_spawn__posix(o, file, envp, pipes, pid);
    free(envp);
    sy_spawn__close(&pipes[0][0]);
    sy_spawn__close(&pipes[1][1]);
    sy_spawn__close(&pipes[2][1]);
    return rc;
}

static inline void sy_spawn__close_pipes(int pipes[3][2])
{
    for (int i = 0; i < 3; i++) {
        sy_spawn__close(&pipes[i][0]);
        sy_spawn__close(&pipes[i][1]);
    }
}

static inline int sy_spawn__check_opts(const sy_spawn_opts *o, char *err,
                                       size_t err_len)
{
    if (!o || !o->argv || !o->argv[0] || !o->argv[0][0]) {
        sy_spawn__err(err, err_len, "no program to run");
        return -1;
    }
    struct stat st;
    if (o->cwd && stat(o->cwd, &st) != 0) {
        sy_spawn__err(err, err_len, "working directory %s: %s", o->cwd,
                      strerror(errno));
        return -1;
    }
    if (o->cwd && !S_ISDIR(st.st_mode)) {
        sy_spawn__err(err, err_len, "working directory %s: not a directory",
                      o->cwd);
        return -1;
    }
    return 0;
}

/* A descriptor that becomes readable when `pid` exits, or -1 where the
 * kernel (or valgrind) has no pidfd_open: then the loop ticks.
 * ENOSYS is remembered, so it is asked once per file that includes this
 * header. */
static inline int sy_spawn__pidfd(pid_t pid)
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
static inline int sy_spawn__launch(sy_spawn__run *s, char *err, size_t err_len)
{
    const sy_spawn_opts *o = s->o;
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    for (int i = 0; i < 3; i++) {
        if (i == 1 && o->discard_stdout)
            continue;
        if (sy_spawn__pipe(pipes[i]) != 0) {
            sy_spawn__err(err, err_len, "cannot make a pipe: %s",
                          strerror(errno));
            sy_spawn__close_pipes(pipes);
            return -1;
        }
    }
    /* What fits in the pipe is written now, while we hold its read end:
     * no EPIPE is possible, and a small input needs no poll round. */
    s->in_fd = pipes[0][1];
    sy_spawn__nonblock(s->in_fd);
    sy_spawn__feed(s);
    pipes[0][1] = s->in_fd;
    int rc = sy_spawn__start(o, pipes, &s->pid);
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
        return -1;
    }
    s->in_fd = pipes[0][1];
    s->out_fd = pipes[1][0];
    s->err_fd = pipes[2][0];
    sy_spawn__nonblock(s->out_fd);
    sy_spawn__nonblock(s->err_fd);
    s->pidfd = sy_spawn__pidfd(s->pid);
    if (o->on_start)
        o->on_start(o->on_start_arg);
    return 0;
}

static inline void sy_spawn__loop(sy_spawn__run *s)
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

static inline void sy_spawn__guard_pipe(sy_spawn__pipe_guard *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    g->was_pending = sigpending(&pending) == 0 &&
                     sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &g->old);
}

static inline void sy_spawn__unguard_pipe(const sy_spawn__pipe_guard *g)
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

static inline int sy_spawn__init(sy_spawn__run *s, const sy_spawn_opts *o,
                                 sy_spawn_result *r, char *err,
                                 size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->o = o;
    s->r = r;
    s->in_fd = s->out_fd = s->err_fd = s->pidfd = -1;
    s->tick_ms = 1;
    s->cancel_fd = o->cancel_fd;
    s->max_out = o->max_output_bytes ? o->max_output_bytes
                                     : SY_SPAWN_DEFAULT_MAX_OUTPUT;
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
 * r then holds nothing to free. */
static inline int sy_spawn_run(const sy_spawn_opts *o, sy_spawn_result *r,
                               char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    sy_spawn__run s;
    if (sy_spawn__check_opts(o, err, err_len) != 0 ||
        sy_spawn__init(&s, o, r, err, err_len) != 0)
        return -1;
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
    if (rc == 0 && (s.oom || !sy_spawn__collect_err(&s))) {
        sy_spawn__err(err, err_len, "out of memory capturing the output of "
                                    "%s", o->argv[0]);
        rc = -1;
    }
    free(s.ring);
    if (rc != 0) {
        sy_spawn_result_free(r);
        return -1;
    }
    r->out[r->out_len] = '\0';
    return 0;
}

#endif /* SWITCHYARD_SPAWN_H */
