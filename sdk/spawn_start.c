/*
 * spawn_start.c -- starting the child (switchyard/spawn.h): the program
 * found as execvp would, its environment, its pipes as descriptors 0-2, a
 * new process group, default signals; by clone() on Linux with glibc, else
 * (or where clone() is refused) by posix_spawn().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn_internal.h"

void sy_spawn__err(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

void sy_spawn__close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* A close-on-exec pipe whose ends are both above 2, so the dup2 actions
 * onto 0, 1 and 2 cannot clobber one another in a host that closed its
 * standard descriptors. */
int sy_spawn__pipe(int p[2])
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

static size_t sy_spawn__name_len(const char *kv)
{
    const char *eq = strchr(kv, '=');
    return eq ? (size_t)(eq - kv) : strlen(kv);
}

/* True when `kv` is replaced by an entry of add[from...].  Every spawn
 * asks this of every variable of the host: the name is measured once. */
static bool sy_spawn__replaced(const char *kv, const char *const *add,
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
static char **sy_spawn__envp(const char *const *add)
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

/* For the parent's ends of fresh pipes, which have no other status flag
 * to keep. */
void sy_spawn__nonblock(int fd)
{
    if (fd >= 0)
        fcntl(fd, F_SETFL, O_NONBLOCK);
}

/* The file actions: stdin, stdout, stderr, cwd, nothing else inherited. */
static int sy_spawn__actions(posix_spawn_file_actions_t *fa,
                             const sy_spawn_opts *o, int in_rd, int out_wr,
                             int err_wr)
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
static int sy_spawn__attrs(posix_spawnattr_t *at)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    int rc = posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP |
                                              POSIX_SPAWN_SETSIGMASK |
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
static int sy_spawn__runnable(const char *path)
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
static int sy_spawn__resolve(const sy_spawn_opts *o, char *out, size_t len)
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
        if ((size_t)snprintf(out, len, "%.*s%s%s", (int)n, path, n ? "/" : "",
                             prog) < len &&
            sy_spawn__runnable(out) == 0)
            return 0;
        path += n + (path[n] == ':');
    }
    return ENOENT;
}

/* posix_spawn() of `file`: the portable path, and the one taken where the
 * clone() path below is refused.  Returns 0 or an errno value. */
static int sy_spawn__posix(const sy_spawn_opts *o, const char *file,
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
            rc = posix_spawn(pid, file, &fa, &at, (char *const *)o->argv, envp);
        posix_spawnattr_destroy(&at);
    }
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

#if defined(__linux__) && defined(__GLIBC__) && !defined(__hppa__) &&          \
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
#include <sys/prctl.h>

typedef struct sy_spawn__child {
    const char *file;
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int in_rd, out_wr, err_wr; /* out_wr < 0: stdout is /dev/null */
    int max_fd;                /* close_range fallback: close up to here */
    pid_t parent;              /* the host process, for the death signal */
    volatile int err;          /* set by the child when a step failed */
} sy_spawn__child;

/* Runs in the child, on the caller's memory: no allocation, no locks, no
 * sanitizer bookkeeping (its frame never returns to clean up). */
__attribute__((no_sanitize("address"))) static int
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
    /* The program dies with the host (a SIGKILL of the host included),
     * so that no leader outlives a host that could not record it; what it
     * forks does not inherit this, and the group record covers those.
     * A host already gone by now would never deliver it: stop here. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != c->parent)
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
static atomic_int sy_spawn__no_clone;

bool sy_spawn_uses_clone(void)
{
    return !atomic_load(&sy_spawn__no_clone);
}

/* CLOCK_BOOTTIME in clock ticks, rounded down as /proc/PID/stat shows a
 * start time (the kernel's nsec_to_clock_t); 0 where that arithmetic is
 * not the kernel's (a tick that does not divide a second) or the clock
 * cannot be read. */
static uint64_t sy_spawn__ticks(int64_t margin_ns)
{
    long hz = sysconf(_SC_CLK_TCK); /* glibc: a constant, no system call */
    struct timespec ts;
    if (hz <= 0 || 1000000000L % hz != 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        return 0;
    int64_t ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + margin_ns;
    return ns > 0 ? (uint64_t)ns / (uint64_t)(1000000000L / hz) : 0;
}

/* The margin for a clock read on this CPU against the kernel's read in
 * clone() on another: far above any skew, far below a tick (10 ms). */
#define SY_SPAWN__TICK_MARGIN_NS 100000

/* 0 (child started), an errno value (it could not start), or -1 (clone is
 * unavailable here: use posix_spawn).  *start_time gets the child's start
 * time when the clock says it for sure (the kernel stamps a new process
 * with CLOCK_BOOTTIME inside clone(): read in the same tick just before
 * and just after, that tick is the one /proc/PID/stat shows), else 0, and
 * the caller reads /proc: an open of a new process's directory costs a
 * short command about as much as its pipes. */
static int sy_spawn__clone(const sy_spawn_opts *o, const char *file,
                           char **envp, int pipes[3][2], pid_t *pid,
                           uint64_t *start_time)
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
        .parent = getpid(),
        .err = 0,
    };
    /* 32 KiB: the child calls a few libc wrappers and execve. */
    _Alignas(64) char stack[32768];
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    uint64_t before = sy_spawn__ticks(-SY_SPAWN__TICK_MARGIN_NS);
    pid_t p = clone(sy_spawn__child_main, stack + sizeof stack,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
    int e = errno;
    uint64_t after = sy_spawn__ticks(SY_SPAWN__TICK_MARGIN_NS);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    *start_time = before && before == after ? before : 0;
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
static int sy_spawn__clone(const sy_spawn_opts *o, const char *file,
                           char **envp, int pipes[3][2], pid_t *pid,
                           uint64_t *start_time)
{
    (void)o, (void)file, (void)envp, (void)pipes, (void)pid;
    *start_time = 0;
    return -1;
}

bool sy_spawn_uses_clone(void)
{
    return false;
}
#endif

/* Starts the child with pipes[0..2] = stdin, stdout, stderr; on success
 * the child's ends are closed here.  Returns 0 or an errno value. */
int sy_spawn__start(const sy_spawn_opts *o, int pipes[3][2], pid_t *pid,
                    uint64_t *start_time)
{
    *start_time = 0;
    char file[PATH_MAX];
    int rc = sy_spawn__resolve(o, file, sizeof file);
    if (rc)
        return rc;
    char **envp = sy_spawn__envp(o->env);
    if (!envp)
        return ENOMEM;
    rc = sy_spawn__clone(o, file, envp, pipes, pid, start_time);
    if (rc < 0)
        rc = sy_spawn__posix(o, file, envp, pipes, pid);
    free(envp);
    sy_spawn__close(&pipes[0][0]);
    sy_spawn__close(&pipes[1][1]);
    sy_spawn__close(&pipes[2][1]);
    return rc;
}

void sy_spawn__close_pipes(int pipes[3][2])
{
    for (int i = 0; i < 3; i++) {
        sy_spawn__close(&pipes[i][0]);
        sy_spawn__close(&pipes[i][1]);
    }
}

int sy_spawn__check_opts(const sy_spawn_opts *o, char *err, size_t err_len)
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
