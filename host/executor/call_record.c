/* The plugin call in flight, kept in a mapped page that outlives a crash. */
#include "executor/call_record.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/log.h"

#define RECORD_MAGIC "SYCALLS1"

/* The record's layout, in the file as in memory.  `seq` is a sequence
 * lock: odd while the loop rewrites the call, so a reader on another
 * thread copies again rather than see half of two calls. */
typedef struct record_page {
    char magic[8];
    int32_t pid;
    int32_t in_call;
    char owner[96];
    _Atomic uint64_t seq;
    int64_t started_ns;
    int64_t run_id;
    uint32_t idx, attempt;
    char plugin[64], instance[64], call[16];
    char ns[256];
    char fault[192];
    char fault_plugin[64]; /* the plugin whose code faulted; "" unknown */
    int32_t fault_in_call; /* the fault was on the thread making the call */
    pthread_t caller;      /* the thread of the call in flight */
} record_page;

static record_page memory_page;
static record_page *page;
static char *page_path;
static sy_instance_entry *current_entry; /* written with the page */

/* Plugins' code, for naming the one a fatal signal came from. */
#define MAX_PLUGINS 64
static struct {
    uintptr_t lo, hi;
    char name[64];
} plugins[MAX_PLUGINS];
static atomic_int n_plugins;

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define N_FATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction previous[N_FATAL];
static bool handlers_installed;

static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --- the fatal-signal handler: async-signal-safe from here ------------- */

static size_t put(char *dst, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        dst[at++] = *s++;
    dst[at] = '\0';
    return at;
}

static size_t put_hex(char *dst, size_t at, size_t cap, uintptr_t v)
{
    char tmp[2 + 2 * sizeof v + 1];
    size_t n = sizeof tmp - 1;
    tmp[n] = '\0';
    do {
        tmp[--n] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v && n > 2);
    tmp[--n] = 'x';
    tmp[--n] = '0';
    return put(dst, at, cap, tmp + n);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    default: return "a fatal signal";
    }
}

static size_t put_dec(char *dst, size_t at, size_t cap, uint64_t v)
{
    char tmp[21];
    size_t n = sizeof tmp - 1;
    tmp[n] = '\0';
    do {
        tmp[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n > 0);
    return put(dst, at, cap, tmp + n);
}

/* The crash said at once, as the process's last line on stderr: the
 * fault, and the call in flight from the record.  `p` holds the fault
 * already. */
static void say_fatal(const record_page *p)
{
    char line[1024];
    size_t at = put(line, 0, sizeof line, "switchyard: fatal: ");
    at = put(line, at, sizeof line, p->fault);
    if (p->in_call) {
        at = put(line, at, sizeof line, p->fault_in_call ? ", inside call " :
                 ", on another thread than call ");
        at = put(line, at, sizeof line, p->call);
        at = put(line, at, sizeof line, " of plugin '");
        at = put(line, at, sizeof line, p->plugin);
        at = put(line, at, sizeof line, "', instance '");
        at = put(line, at, sizeof line, p->instance);
        at = put(line, at, sizeof line, "'");
        if (p->ns[0]) {
            at = put(line, at, sizeof line, ", task ");
            at = put(line, at, sizeof line, p->ns);
        }
        if (p->run_id > 0) {
            at = put(line, at, sizeof line, " (run ");
            at = put_dec(line, at, sizeof line, (uint64_t)p->run_id);
            at = put(line, at, sizeof line, ", attempt ");
            at = put_dec(line, at, sizeof line, p->attempt);
            at = put(line, at, sizeof line, ")");
        }
    } else {
        at = put(line, at, sizeof line, ", with no call into a plugin in flight");
    }
    at = put(line, at, sizeof line, "; the process dies with it\n");
    if (line[at - 1] != '\n') /* cut: the line still ends */
        line[at - 1] = '\n';
    ssize_t w = write(STDERR_FILENO, line, at);
    (void)w;
}

static uintptr_t fault_pc(const void *uctx)
{
    const ucontext_t *uc = uctx;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static void on_fatal(int sig, siginfo_t *info, void *uctx)
{
    /* A second fault (another thread, or this handler) only passes the
     * signal on: one line is said. */
    static atomic_flag said = ATOMIC_FLAG_INIT;
    record_page *p = atomic_flag_test_and_set(&said) ? NULL : page;
    uintptr_t pc = uctx ? fault_pc(uctx) : 0;
    if (p) {
        p->fault_in_call = p->in_call && pthread_equal(p->caller, pthread_self());
        size_t at = put(p->fault, 0, sizeof p->fault, signal_name(sig));
        int n = atomic_load_explicit(&n_plugins, memory_order_acquire);
        int hit = -1;
        for (int i = 0; i < n; i++)
            if (pc >= plugins[i].lo && pc < plugins[i].hi)
                hit = i;
        if (hit >= 0) {
            put(p->fault_plugin, 0, sizeof p->fault_plugin, plugins[hit].name);
            at = put(p->fault, at, sizeof p->fault, " in plugin '");
            at = put(p->fault, at, sizeof p->fault, plugins[hit].name);
            at = put(p->fault, at, sizeof p->fault, "' code (+");
            at = put_hex(p->fault, at, sizeof p->fault, pc - plugins[hit].lo);
            put(p->fault, at, sizeof p->fault, ")");
        } else if (pc) {
            at = put(p->fault, at, sizeof p->fault, " at pc ");
            put_hex(p->fault, at, sizeof p->fault, pc);
        }
        say_fatal(p);
    }
    /* Hand the signal to whoever had it before (the default action, or a
     * sanitizer's report).  A fault re-executes and reaches it; a signal
     * that was sent is sent again. */
    for (size_t i = 0; i < N_FATAL; i++)
        if (fatal_signals[i] == sig)
            sigaction(sig, &previous[i], NULL);
    if (sig == SIGABRT || !info || info->si_code <= 0)
        raise(sig);
}

/* --- end of the async-signal-safe part --------------------------------- */

static void install_handlers(void)
{
    if (handlers_installed)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_FATAL; i++)
        sigaction(fatal_signals[i], &sa, &previous[i]);
    handlers_installed = true;
}

static void restore_handlers(void)
{
    if (!handlers_installed)
        return;
    for (size_t i = 0; i < N_FATAL; i++)
        sigaction(fatal_signals[i], &previous[i], NULL);
    handlers_installed = false;
}

void sy_call_record_path(const char *prefix, char *buf, size_t len)
{
    snprintf(buf, len, "%s.%ld", prefix, (long)getpid());
}

static void stamp(record_page *p, const char *owner)
{
    memset(p, 0, sizeof *p);
    memcpy(p->magic, RECORD_MAGIC, sizeof p->magic);
    p->pid = (int32_t)getpid();
    copy_name(p->owner, sizeof p->owner, owner);
}

int sy_call_record_open(const char *path, const char *owner, char *err, size_t err_len)
{
    page = &memory_page;
    stamp(page, owner);
    current_entry = NULL; /* the names are copied again into the new page */
    install_handlers();
    if (!path)
        return 0;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, err_len, "call record %s: %s", path, strerror(errno));
        return -1;
    }
    void *m = MAP_FAILED;
    if (ftruncate(fd, sizeof(record_page)) == 0)
        m = mmap(NULL, sizeof(record_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int saved = errno;
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(err, err_len, "call record %s: %s", path, strerror(saved));
        unlink(path);
        return -1;
    }
    page = m;
    stamp(page, owner);
    current_entry = NULL;
    page_path = strdup(path);
    return 0;
}

void sy_call_record_close(void)
{
    restore_handlers();
    if (page && page != &memory_page)
        munmap(page, sizeof(record_page));
    if (page_path)
        unlink(page_path);
    free(page_path);
    page_path = NULL;
    page = NULL;
}

struct find_object {
    uintptr_t base, lo, hi;
};

static int find_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find_object *f = arg;
    if ((uintptr_t)info->dlpi_addr != f->base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = f->base + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!f->lo || lo < f->lo)
            f->lo = lo;
        if (hi > f->hi)
            f->hi = hi;
    }
    return 1;
}

void sy_call_register_plugin(const char *name, const void *inside)
{
    Dl_info info;
    if (!inside || !dladdr(inside, &info) || !info.dli_fbase)
        return;
    struct find_object f = {.base = (uintptr_t)info.dli_fbase};
    dl_iterate_phdr(find_segments, &f);
    int n = atomic_load(&n_plugins);
    if (!f.hi || n >= MAX_PLUGINS)
        return;
    for (int i = 0; i < n; i++)
        if (plugins[i].lo == f.lo)
            return;
    plugins[n].lo = f.lo;
    plugins[n].hi = f.hi;
    copy_name(plugins[n].name, sizeof plugins[n].name, name);
    atomic_store_explicit(&n_plugins, n + 1, memory_order_release);
}

void sy_call_begin(sy_instance_entry *e, const char *call, const char *ns, int64_t run_id,
                   uint32_t idx, uint32_t attempt)
{
    record_page *p = page;
    if (!p)
        return;
    atomic_fetch_add_explicit(&p->seq, 1, memory_order_acq_rel);
    if (e != current_entry) {
        copy_name(p->plugin, sizeof p->plugin, e ? e->host.plugin : NULL);
        copy_name(p->instance, sizeof p->instance, e ? e->name : NULL);
        current_entry = e;
    }
    copy_name(p->call, sizeof p->call, call);
    copy_name(p->ns, sizeof p->ns, ns);
    p->run_id = run_id;
    p->idx = idx;
    p->attempt = attempt;
    p->started_ns = monotonic_ns();
    p->caller = pthread_self();
    p->in_call = 1;
    atomic_fetch_add_explicit(&p->seq, 1, memory_order_release);
}

void sy_call_end(void)
{
    record_page *p = page;
    if (!p)
        return;
    atomic_fetch_add_explicit(&p->seq, 1, memory_order_acq_rel);
    p->in_call = 0;
    atomic_fetch_add_explicit(&p->seq, 1, memory_order_release);
}

int64_t sy_call_end_ns(void)
{
    record_page *p = page;
    if (!p)
        return -1;
    /* The start was read for the watchdog already: timing the call costs
     * one more reading of the clock. */
    int64_t took = monotonic_ns() - p->started_ns;
    sy_call_end();
    return took;
}

static void snapshot_of(const record_page *p, sy_call_snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->pid = p->pid;
    copy_name(s->owner, sizeof s->owner, p->owner);
    s->in_call = p->in_call != 0;
    s->started_ns = p->started_ns;
    copy_name(s->plugin, sizeof s->plugin, p->plugin);
    copy_name(s->instance, sizeof s->instance, p->instance);
    copy_name(s->call, sizeof s->call, p->call);
    copy_name(s->ns, sizeof s->ns, p->ns);
    s->run_id = p->run_id;
    s->idx = p->idx;
    s->attempt = p->attempt;
    copy_name(s->fault, sizeof s->fault, p->fault);
    copy_name(s->fault_plugin, sizeof s->fault_plugin, p->fault_plugin);
    s->fault_in_call = p->fault_in_call != 0;
}

bool sy_call_current(sy_call_snapshot *out, sy_instance_entry **entry)
{
    record_page *p = page;
    if (!p)
        return false;
    for (;;) {
        uint64_t before = atomic_load_explicit(&p->seq, memory_order_acquire);
        if (before & 1) {
            sched_yield();
            continue;
        }
        snapshot_of(p, out);
        if (entry)
            *entry = current_entry;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&p->seq, memory_order_relaxed) == before) {
            out->seq = before / 2;
            return true;
        }
    }
}

void sy_call_describe(const sy_call_snapshot *s, char *buf, size_t len)
{
    int n = s->owner[0] ? snprintf(buf, len, "the host %s died", s->owner)
                        : snprintf(buf, len, "the host (pid %d) died", (int)s->pid);
    if (n < 0 || (size_t)n >= len)
        return;
    if (s->in_call)
        n += snprintf(buf + n, len - (size_t)n, " inside plugin '%s', instance '%s', call %s%s%s",
                      s->plugin, s->instance, s->call, s->ns[0] ? ", task " : "", s->ns);
    else
        n += snprintf(buf + n, len - (size_t)n, " outside any call into a plugin");
    if (n > 0 && (size_t)n < len && s->fault[0])
        snprintf(buf + n, len - (size_t)n, ": %s", s->fault);
}

static bool process_alive(pid_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool sy_call_record_take_previous(const char *prefix, sy_call_snapshot *out)
{
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s.*", prefix);
    glob_t g;
    bool found = false;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return false;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *path = g.gl_pathv[i];
        char *end = NULL;
        long pid = strtol(strrchr(path, '.') + 1, &end, 10);
        if (!end || *end || pid <= 0 || pid == (long)getpid() || process_alive((pid_t)pid))
            continue;
        record_page p;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t got = fd >= 0 ? read(fd, &p, sizeof p) : -1;
        if (fd >= 0)
            close(fd);
        if (got == (ssize_t)sizeof p && memcmp(p.magic, RECORD_MAGIC, sizeof p.magic) == 0) {
            sy_call_snapshot s;
            snapshot_of(&p, &s);
            char line[1024];
            sy_call_describe(&s, line, sizeof line);
            /* Without a fault the process was killed from outside
             * (SIGKILL, the OOM killer) or exited without closing: said,
             * but nobody is blamed. */
            bool named = s.fault[0] != '\0';
            sy_log(named ? SY_LOG_ERROR : SY_LOG_INFO, "recovery", "%s%s", line,
                   named ? "" : " (no fault recorded: killed from outside)");
            if (named && !found) {
                *out = s;
                found = true;
            }
        }
        unlink(path);
    }
    globfree(&g);
    return found;
}
