#include "base/util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

char *sy_vasprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *sy_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = sy_vasprintf(fmt, ap);
    va_end(ap);
    return s;
}

char *sy_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = sy_vasprintf(fmt, ap);
    va_end(ap);
    if (!s)
        sy_oom("formatting \"%.40s\"", fmt);
    return s;
}

char *sy_errf(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || len == 0)
        return buf;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return buf;
}

char *sy_path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sy_xstrdup(".");
    if (slash == path)
        return sy_xstrdup("/");
    size_t n = (size_t)(slash - path);
    char *d = sy_xmalloc(n + 1);
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

char *sy_path_join(const char *base, const char *rel)
{
    if (rel[0] == '/' || !base || !*base || strcmp(base, ".") == 0)
        return sy_xstrdup(rel);
    char *s = sy_asprintf("%s/%s", base, rel);
    if (!s)
        sy_oom("joining the path %s", rel);
    return s;
}

bool sy_parse_digits(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

static void (*release_fn)(void);

void sy_memory_release_hook(void (*fn)(void)) { release_fn = fn; }

void sy_memory_release(void)
{
    if (release_fn)
        release_fn();
}

char *sy_concat(char *buf, size_t len, ...)
{
    va_list ap;
    va_start(ap, len);
    size_t off = 0;
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
        size_t n = strlen(s);
        if (n > len - 1 - off)
            n = len - 1 - off;
        memcpy(buf + off, s, n);
        off += n;
    }
    va_end(ap);
    buf[off] = '\0';
    return buf;
}

char *sy_xconcat(const char *first, ...)
{
    va_list ap;
    size_t total = 0;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        total += strlen(s);
    va_end(ap);
    char *out = sy_xmalloc(total + 1), *p = out;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        size_t n = strlen(s);
        memcpy(p, s, n);
        p += n;
    }
    va_end(ap);
    *p = '\0';
    return out;
}

bool sy_str_ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

static const char *oom_what = "startup";

void sy_oom_context(const char *what)
{
    oom_what = what;
}

/* No allocation on this path: the message is formatted on the stack and
 * written with one write(2), so it is whole even with threads writing. */
_Noreturn void sy_oom(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "switchyard: %s: out of memory ", oom_what);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    size_t room = sizeof line - (size_t)n - 1; /* one byte kept for the newline */
    int m = vsnprintf(line + n, room, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < room ? (size_t)m : room - 1);
    line[len++] = '\n';
    (void)!write(STDERR_FILENO, line, len);
    /* The abort tells a supervisor the process died, not that it chose to
     * exit; a core of a process out of memory would be as large as the
     * memory it could not have, and says nothing the line does not. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    /* The line above is the one said: a crash handler (the call record's)
     * would take the abort for a crash and add a second. */
    signal(SIGABRT, SIG_DFL);
    abort();
}

void *sy_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        sy_oom("(%zu bytes)", n);
    return p;
}

char *sy_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(sy_xmalloc(n), s, n);
}

void *sy_grow(void *v, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need == 0)
        need = 1;
    if (need <= *cap && v)
        return v;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2 / size)
            return NULL;
        c *= 2;
    }
    if (c > SIZE_MAX / size)
        return NULL;
    void *nv = realloc(v, c * size);
    if (!nv)
        return NULL;
    *cap = c;
    return nv;
}
