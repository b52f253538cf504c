/*
 * alloc.c -- allocation failures for the real program, by LD_PRELOAD: no
 * test hook in the host.  tests/integration/alloc_faults.sh preloads it
 * into `switchyard` and sweeps N.
 *
 *   SY_FAULT_ALLOC=N          the Nth allocation of the process (malloc,
 *                             calloc, realloc, reallocarray, posix_memalign,
 *                             aligned_alloc, memalign; strdup, fopen and the
 *                             rest of libc allocate through these) returns
 *                             NULL with ENOMEM; once: the next one succeeds,
 *                             the fault has cleared.  0: none fails, the
 *                             allocations are only counted
 *   SY_FAULT_ALLOC_COUNT=PATH on the fault, "alloc N OBJECT+OFFSET" (the
 *                             caller's return address) is appended to PATH;
 *                             at a normal exit, "total N"
 *   SY_FAULT_ALLOC_TRACE=PATH every allocation counted, "N OBJECT+OFFSET"
 *                             (to find which point an N names)
 *   SY_FAULT_ALLOC_SKIP=A,B   allocations made directly by an object whose
 *                             name starts with A or B (libconfig.so) are
 *                             neither counted nor failed
 *   SY_FAULT_ALLOC_EXE=NAME   only in a process whose executable is named
 *                             NAME (default "switchyard"): the commands,
 *                             task runners and plugin workers it starts
 *                             inherit the preload but are not its own paths
 *
 * Counting starts with main (see start()), not at a trigger: the same command on
 * the same files makes the same allocations in the same order (on one
 * thread), so N names one allocation point and a sweep over 1..total
 * reaches every one, those of startup and of loading the configuration
 * included.  A trigger would need a stat() in every malloc and would make
 * N relative to an unknown moment.  A forked child stops counting (its pid
 * differs from the one that armed): the host's forks only exec.
 *
 * ASan and valgrind bring their own malloc, which this cannot interpose:
 * the test runs a build without the sanitizers, bare.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* While dlsym looks up the real functions it may allocate itself: those
 * few bytes come from here and are never freed. */
static _Alignas(max_align_t) unsigned char early[8192];
static atomic_size_t early_used;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);

static atomic_int resolving;
static atomic_int armed = -1; /* -1 unknown, 0 off, 1 on */
static atomic_int started;
static int trace_fd = -1;
static pid_t armed_pid;
static unsigned long long target;
static atomic_ullong seen;

static int from_early(const void *p)
{
    return (const unsigned char *)p >= early && (const unsigned char *)p < early + sizeof early;
}

static void *early_alloc(size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    size_t at = atomic_fetch_add(&early_used, need);
    if (at + need > sizeof early)
        return NULL;
    return early + at;
}

static void resolve(void)
{
    if (real_malloc)
        return;
    atomic_store(&resolving, 1);
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_reallocarray = dlsym(RTLD_NEXT, "reallocarray");
    real_free = dlsym(RTLD_NEXT, "free");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    atomic_store(&resolving, 0);
}

/* Reads the environment without allocating (getenv does not). */
static void arm(void)
{
    if (atomic_load(&armed) >= 0)
        return;
    int on = 0;
    const char *n = getenv("SY_FAULT_ALLOC");
    if (n) {
        const char *want = getenv("SY_FAULT_ALLOC_EXE");
        char exe[4096];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len > 0) {
            exe[len] = '\0';
            const char *base = strrchr(exe, '/');
            base = base ? base + 1 : exe;
            on = strcmp(base, want && *want ? want : "switchyard") == 0;
        }
        target = strtoull(n, NULL, 10);
    }
    armed_pid = (pid_t)syscall(SYS_getpid);
    atomic_store(&armed, on);
}

static void note(const char *line)
{
    const char *f = getenv("SY_FAULT_ALLOC_COUNT");
    if (!f)
        return;
    int fd = open(f, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    (void)!write(fd, line, strlen(line));
    close(fd);
}

static void where(char *line, size_t len, const char *tag, unsigned long long k, void *caller)
{
    Dl_info info;
    if (dladdr(caller, &info) && info.dli_fname) {
        const char *base = strrchr(info.dli_fname, '/');
        snprintf(line, len, "%s%llu %s+0x%lx\n", tag, k, base ? base + 1 : info.dli_fname,
                 (unsigned long)((uintptr_t)caller - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(line, len, "%s%llu %p\n", tag, k, caller);
    }
}

/* The address ranges of the objects SY_FAULT_ALLOC_SKIP names, found
 * once at start (they are linked, so loaded by then): a dladdr() in every
 * allocation would make each run ten times slower. */
static struct {
    uintptr_t lo, hi;
} skip_range[8];
static int n_skip;

static int note_skip(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *list = arg;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    if (!*base || n_skip == (int)(sizeof skip_range / sizeof skip_range[0]))
        return 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len && strncmp(base, p, len) == 0) {
            uintptr_t lo = UINTPTR_MAX, hi = 0;
            for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                if (ph->p_type != PT_LOAD)
                    continue;
                uintptr_t a = info->dlpi_addr + ph->p_vaddr;
                lo = a < lo ? a : lo;
                hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
            }
            skip_range[n_skip].lo = lo;
            skip_range[n_skip++].hi = hi;
            break;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* True when the caller lies in an object SY_FAULT_ALLOC_SKIP names. */
static int skipped(void *caller)
{
    uintptr_t a = (uintptr_t)caller;
    for (int i = 0; i < n_skip; i++)
        if (a >= skip_range[i].lo && a < skip_range[i].hi)
            return 1;
    return 0;
}

/* True when this allocation is the one to fail. */
static int fail_now(void *caller)
{
    if (!atomic_load(&started))
        return 0;
    arm();
    if (atomic_load(&armed) != 1 || (pid_t)syscall(SYS_getpid) != armed_pid)
        return 0;
    if (skipped(caller))
        return 0;
    unsigned long long k = atomic_fetch_add(&seen, 1) + 1;
    if (trace_fd >= 0) {
        char line[512];
        where(line, sizeof line, "", k, caller);
        (void)!write(trace_fd, line, strlen(line));
    }
    if (k != target)
        return 0;
    char line[512];
    where(line, sizeof line, "alloc ", k, caller);
    note(line);
    errno = ENOMEM;
    return 1;
}

/* A preloaded object's initializer runs after those of the libraries the
 * program links (ld.so initializes in reverse load order) and before
 * main: what libcrypto or GnuTLS allocate for themselves at load, before
 * any code of the host runs, is not counted. */
__attribute__((constructor)) static void start(void)
{
    const char *list = getenv("SY_FAULT_ALLOC_SKIP");
    if (list && *list)
        dl_iterate_phdr(note_skip, (void *)list);
    const char *t = getenv("SY_FAULT_ALLOC_TRACE");
    if (t)
        trace_fd = open(t, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    atomic_store(&started, 1);
}

__attribute__((destructor)) static void total(void)
{
    if (atomic_load(&armed) != 1 || (pid_t)syscall(SYS_getpid) != armed_pid)
        return;
    char line[64];
    snprintf(line, sizeof line, "total %llu\n", (unsigned long long)atomic_load(&seen));
    note(line);
}

#define CALLER __builtin_extract_return_addr(__builtin_return_address(0))

void *malloc(size_t n)
{
    if (atomic_load(&resolving))
        return early_alloc(n);
    resolve();
    return fail_now(CALLER) ? NULL : real_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (atomic_load(&resolving)) {
        void *p = k && n > SIZE_MAX / k ? NULL : early_alloc(k * n);
        return p ? memset(p, 0, k * n) : NULL;
    }
    resolve();
    return fail_now(CALLER) ? NULL : real_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    resolve();
    if (from_early(p)) {
        void *q = malloc(n);
        if (q)
            memcpy(q, p, n < sizeof early ? n : sizeof early);
        return q;
    }
    return fail_now(CALLER) ? NULL : real_realloc(p, n);
}

void *reallocarray(void *p, size_t k, size_t n)
{
    resolve();
    if (from_early(p))
        return k && n > SIZE_MAX / k ? NULL : realloc(p, k * n);
    return fail_now(CALLER) ? NULL : real_reallocarray(p, k, n);
}

void free(void *p)
{
    if (!p || from_early(p))
        return;
    resolve();
    real_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    resolve();
    return fail_now(CALLER) ? ENOMEM : real_posix_memalign(out, align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    resolve();
    return fail_now(CALLER) ? NULL : real_aligned_alloc(align, n);
}

void *memalign(size_t align, size_t n)
{
    resolve();
    return fail_now(CALLER) ? NULL : real_memalign(align, n);
}
