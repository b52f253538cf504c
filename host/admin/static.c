/* The dashboard's files (docs/dashboard.md): `/` is its index.html,
 * `/dashboard/NAME` the others, read from admin.dashboard_dir or the
 * installed $(pkgdatadir)/dashboard.  The directory is flat, so a name is
 * one path segment of letters, digits, '.', '-' and '_' that does not
 * start with a dot (no "..", no hidden file), opened relative to the
 * directory without following a symbolic link (none leads out of it). */
#include "admin/api.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SY_DASHBOARD_DIR
#define SY_DASHBOARD_DIR "/usr/local/share/switchyard/dashboard"
#endif

/* The files are small; a bigger one is not a dashboard file. */
#define STATIC_MAX (4u << 20)

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
};

static const char *type_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t e = strlen(types[i].ext);
        if (n > e && strcmp(name + n - e, types[i].ext) == 0)
            return types[i].type;
    }
    return "application/octet-stream";
}

static bool name_ok(const char *name)
{
    if (!name[0] || name[0] == '.')
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
            return false;
    return true;
}

/* Static answers are plain text: a person reads them in a browser. */
static enum MHD_Result text(sy_admin_req *rq, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum MHD_Result text(sy_admin_req *rq, unsigned status, const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    const char *const headers[] = {MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8",
                                   MHD_HTTP_HEADER_CACHE_CONTROL, "no-store", NULL};
    return rq->admin->io->reply(rq, status, line, (size_t)n, headers);
}

/* A file (or 304 for it) with its type and ETag. */
static enum MHD_Result file_reply(sy_admin_req *rq, unsigned status, const char *body,
                                  size_t len, const char *type, const char *etag)
{
    const char *const headers[] = {
        MHD_HTTP_HEADER_CONTENT_TYPE, type,
        /* Kept, but asked about again each time: an upgrade changes the
         * files under the same names, and the ETag makes asking cheap. */
        MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache", MHD_HTTP_HEADER_ETAG, etag,
        "X-Content-Type-Options", "nosniff", "Referrer-Policy", "no-referrer",
        /* Only this listener's own scripts and styles, and no framing. */
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; object-src 'none'; "
        "base-uri 'none'; frame-ancestors 'none'",
        NULL};
    return rq->admin->io->reply(rq, status, body, len, headers);
}

int sy_api_dashboard(sy_admin_req *rq)
{
    const char *dir = rq->admin->cfg->dashboard_dir ? rq->admin->cfg->dashboard_dir
                                                    : SY_DASHBOARD_DIR;
    const char *name = strcmp(rq->path, "/") == 0 ? "index.html" : rq->caps[0];
    if (!name_ok(name))
        return text(rq, 404, "no such dashboard file: %s", rq->path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return text(rq, 404,
                    "the dashboard is not installed: %s: %s (set admin.dashboard_dir; the "
                    "API under /api/v1/ works without it)",
                    dir, strerror(errno));
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    close(dfd);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > STATIC_MAX) {
        if (fd >= 0)
            close(fd);
        return text(rq, 404, "no such dashboard file: %s", rq->path);
    }
    char etag[80];
    snprintf(etag, sizeof etag, "\"%jx-%jx-%lx\"", (uintmax_t)st.st_size,
             (uintmax_t)st.st_mtim.tv_sec, (unsigned long)st.st_mtim.tv_nsec);
    const char *inm = sy_admin_header(rq, MHD_HTTP_HEADER_IF_NONE_MATCH);
    if (inm && strcmp(inm, etag) == 0) {
        close(fd);
        return file_reply(rq, 304, "", 0, type_of(name), etag);
    }
    /* Read here rather than from the descriptor as MHD sends: a file
     * replaced while it is sent would go out half old, half new. */
    size_t len = (size_t)st.st_size, got = 0;
    char *buf = malloc(len + 1);
    while (buf && got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!buf || got != len) {
        free(buf);
        return text(rq, 500, "%s: could not be read", rq->path);
    }
    enum MHD_Result res = file_reply(rq, 200, buf, len, type_of(name), etag);
    free(buf);
    return res;
}
