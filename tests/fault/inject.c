/*
 * inject.c -- faults for the real program, by LD_PRELOAD: no test hook in
 * the host.  tests/integration/faults.sh preloads it into `switchyard`.
 *
 *   SY_FAULT_FILE=TEXT     writes, syncs and truncations of an open file
 *                          whose path contains TEXT fail
 *   SY_FAULT_ERRNO=N       with this errno (default ENOSPC: a full disk)
 *   SY_FAULT_SPAWN=1       clone(), fork() and posix_spawn() fail with
 *                          EAGAIN (the process table is full)
 *   SY_FAULT_WHILE=PATH    only while PATH exists (the test makes and
 *                          removes it: the fault comes and clears);
 *                          always when unset
 *
 * Each failure is counted in the file SY_FAULT_COUNT names, if set, one
 * line per injected fault, so a test knows the fault was hit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static int active(void)
{
    const char *w = getenv("SY_FAULT_WHILE");
    if (!w)
        return 1;
    struct stat st;
    return stat(w, &st) == 0;
}

static void count(const char *what)
{
    const char *f = getenv("SY_FAULT_COUNT");
    if (!f)
        return;
    int (*real_open)(const char *, int, ...) = next("open");
    ssize_t (*real_write)(int, const void *, size_t) = next("write");
    int fd = real_open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    char line[64];
    int n = snprintf(line, sizeof line, "%s\n", what);
    if (n > 0)
        (void)real_write(fd, line, (size_t)n);
    close(fd);
}

/* True when fd is a file whose path holds SY_FAULT_FILE and the fault is
 * on now. */
static int file_fault(int fd)
{
    const char *text = getenv("SY_FAULT_FILE");
    if (!text || !*text || !active())
        return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t (*real_readlink)(const char *, char *, size_t) = next("readlink");
    ssize_t n = real_readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    if (!strstr(path, text))
        return 0;
    const char *e = getenv("SY_FAULT_ERRNO");
    errno = e ? atoi(e) : ENOSPC;
    count("file");
    return 1;
}

static int spawn_fault(void)
{
    const char *s = getenv("SY_FAULT_SPAWN");
    if (!s || strcmp(s, "1") != 0 || !active())
        return 0;
    count("spawn");
    return 1;
}

ssize_t write(int fd, const void *buf, size_t len)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = next("write");
    return file_fault(fd) ? -1 : real(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (!real)
        real = next("pwrite");
    return file_fault(fd) ? -1 : real(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
    static ssize_t (*real)(int, const void *, size_t, off64_t);
    if (!real)
        real = next("pwrite64");
    return file_fault(fd) ? -1 : real(fd, buf, len, off);
}

int fsync(int fd)
{
    static int (*real)(int);
    if (!real)
        real = next("fsync");
    return file_fault(fd) ? -1 : real(fd);
}

int fdatasync(int fd)
{
    static int (*real)(int);
    if (!real)
        real = next("fdatasync");
    return file_fault(fd) ? -1 : real(fd);
}

int ftruncate(int fd, off_t len)
{
    static int (*real)(int, off_t);
    if (!real)
        real = next("ftruncate");
    return file_fault(fd) ? -1 : real(fd, len);
}

int ftruncate64(int fd, off64_t len)
{
    static int (*real)(int, off64_t);
    if (!real)
        real = next("ftruncate64");
    return file_fault(fd) ? -1 : real(fd, len);
}

pid_t fork(void)
{
    static pid_t (*real)(void);
    if (!real)
        real = next("fork");
    if (spawn_fault()) {
        errno = EAGAIN;
        return -1;
    }
    return real();
}

int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    static int (*real)(int (*)(void *), void *, int, void *, ...);
    if (!real)
        real = next("clone");
    va_list ap;
    va_start(ap, arg);
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    if (spawn_fault()) {
        errno = EAGAIN;
        return -1;
    }
    return real(fn, stack, flags, arg, ptid, tls, ctid);
}

int posix_spawn(pid_t *pid, const char *path,
                const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *at, char *const argv[],
                char *const envp[])
{
    static int (*real)(pid_t *, const char *,
                       const posix_spawn_file_actions_t *,
                       const posix_spawnattr_t *, char *const[],
                       char *const[]);
    if (!real)
        real = next("posix_spawn");
    if (spawn_fault())
        return EAGAIN;
    return real(pid, path, fa, at, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file,
                 const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *at, char *const argv[],
                 char *const envp[])
{
    static int (*real)(pid_t *, const char *,
                       const posix_spawn_file_actions_t *,
                       const posix_spawnattr_t *, char *const[],
                       char *const[]);
    if (!real)
        real = next("posix_spawnp");
    if (spawn_fault())
        return EAGAIN;
    return real(pid, file, fa, at, argv, envp);
}
