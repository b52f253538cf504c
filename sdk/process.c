/*
 * process.c -- a process's identity from /proc (switchyard/process.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <switchyard/process.h>

/* Reads at most len - 1 bytes of `path` into buf, NUL-terminated. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

/* The next space-separated field of [*p, end) as an unsigned number. */
static int next_u64(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
        s++;
    }
    *p = s;
    *out = v;
    return 0;
}

/* Skips one field (a number that may be negative). */
static int skip_field(const char **p, const char *end)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end || *s == ' ')
        return -1;
    while (s < end && *s != ' ')
        s++;
    *p = s;
    return 0;
}

int sy_process_parse_stat(const char *text, size_t len, sy_process_stat *out)
{
    if (!text || !out) {
        errno = EINVAL;
        return -1;
    }
    const char *end = text + len;
    const char *open_paren = memchr(text, '(', len);
    const char *close_paren = NULL;
    for (const char *s = end; s > text; s--)
        if (s[-1] == ')') {
            close_paren = s - 1;
            break;
        }
    uint64_t pid, ppid, pgrp, session, start;
    const char *p = text;
    if (!open_paren || !close_paren || close_paren < open_paren ||
        next_u64(&p, open_paren, &pid) != 0)
        goto bad;
    p = close_paren + 1;
    while (p < end && *p == ' ')
        p++;
    if (p >= end)
        goto bad;
    char state = *p++;
    /* Fields 4 (ppid), 5 (pgrp), 6 (session), then 7..21, then 22. */
    if (next_u64(&p, end, &ppid) || next_u64(&p, end, &pgrp) ||
        next_u64(&p, end, &session))
        goto bad;
    for (int field = 7; field < 22; field++)
        if (skip_field(&p, end))
            goto bad;
    if (next_u64(&p, end, &start))
        goto bad;
    *out = (sy_process_stat){(int64_t)pid, state, (int64_t)ppid, (int64_t)pgrp,
                             (int64_t)session, start};
    return 0;
bad:
    errno = EINVAL;
    return -1;
}

int sy_process_stat_read(int64_t pid, sy_process_stat *out)
{
#ifdef __linux__
    char path[64], buf[1024];
    if (pid <= 0) {
        errno = EINVAL;
        return -1;
    }
    snprintf(path, sizeof path, "/proc/%" PRId64 "/stat", pid);
    ssize_t n = read_small(path, buf, sizeof buf);
    if (n < 0)
        return -1;
    return sy_process_parse_stat(buf, (size_t)n, out);
#else
    (void)pid, (void)out;
    errno = ENOSYS;
    return -1;
#endif
}

int sy_process_start_time(int64_t pid, uint64_t *out)
{
    sy_process_stat st;
    if (sy_process_stat_read(pid, &st) != 0)
        return -1;
    *out = st.start_time;
    return 0;
}

/* The first line of a small file, trimmed; -1 when absent or empty. */
static int first_line(const char *path, char *buf, size_t len)
{
    if (read_small(path, buf, len) < 0)
        return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    if (!buf[0]) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

int sy_process_boot_id(char *buf, size_t len)
{
    if (!buf || len < 37) {
        errno = EINVAL;
        return -1;
    }
#ifdef __linux__
    return first_line("/proc/sys/kernel/random/boot_id", buf, len);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int sy_process_machine_id(char *buf, size_t len)
{
    if (!buf || len < 64) {
        errno = EINVAL;
        return -1;
    }
    if (first_line("/etc/machine-id", buf, len) == 0 ||
        first_line("/var/lib/dbus/machine-id", buf, len) == 0)
        return 0;
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        return -1;
    host[sizeof host - 1] = '\0';
    snprintf(buf, len, "host:%s", host);
    return 0;
}
