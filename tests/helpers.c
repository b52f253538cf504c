#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diagnostics.h"
#include "base/util.h"

void th_capture_start(th_capture *c)
{
    snprintf(c->path, sizeof c->path, "/tmp/sy_test_log_XXXXXX");
    c->fd = mkstemp(c->path);
    if (c->fd < 0) {
        perror("mkstemp");
        abort();
    }
    fflush(stderr);
    c->saved = dup(STDERR_FILENO);
    if (c->saved < 0 || dup2(c->fd, STDERR_FILENO) < 0) {
        perror("dup");
        abort();
    }
}

char *th_capture_end(th_capture *c)
{
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    char *buf = calloc(1, 16384);
    if (!buf)
        abort();
    ssize_t n = pread(c->fd, buf, 16383, 0);
    buf[n > 0 ? n : 0] = '\0';
    close(c->fd);
    unlink(c->path);
    fputs(buf, stderr);
    return buf;
}

size_t th_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

char *th_mkdtemp(void)
{
    const char *tmp = getenv("TMPDIR");
    char *tmpl = sy_asprintf("%s/sy-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!tmpl || !mkdtemp(tmpl)) {
        perror("mkdtemp");
        abort();
    }
    return tmpl;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void th_rmtree(char *dir)
{
    if (dir)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

char *th_write(const char *dir, const char *name, const char *text)
{
    char *path = sy_path_join(dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
        perror(path);
        abort();
    }
    chmod(path, 0644);
    return path;
}

void th_copy_plugin(const char *dir, const char *name)
{
    const char *src_dir = getenv("SY_TEST_PLUGIN_DIR");
    if (!src_dir) {
        fputs("SY_TEST_PLUGIN_DIR is not set\n", stderr);
        abort();
    }
    char *src = sy_asprintf("%s/%s.so", src_dir, name);
    char *dst = sy_asprintf("%s/%s.so", dir, name);
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0) {
        fprintf(stderr, "copy %s -> %s: %s\n", src, dst, strerror(errno));
        abort();
    }
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            abort();
    close(in);
    close(out);
    chmod(dst, 0755);
    free(src);
    free(dst);
}

bool th_diag_has(const struct sy_diags *d, ...)
{
    for (size_t i = 0; i < d->n; i++) {
        char line[4096];
        sy_diag_format(&d->v[i], line, sizeof line);
        va_list ap;
        va_start(ap, d);
        bool all = true;
        for (const char *needle; (needle = va_arg(ap, const char *));)
            if (!strstr(line, needle))
                all = false;
        va_end(ap);
        if (all)
            return true;
    }
    return false;
}

void th_diag_dump(const struct sy_diags *d)
{
    sy_diags_print(d, stderr);
}
