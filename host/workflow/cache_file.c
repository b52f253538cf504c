/* The parse cache on disk: one entry per workflow file, in the host's
 * cache directory, named after the file's absolute path and valid only for
 * the exact bytes it was made from (their SHA-256 is inside the entry).
 *
 * Writers never share a file: each writes its own temporary one and
 * renames it over the entry, which readers see whole or not at all, so
 * two hosts that load the same file at once both end with a complete
 * entry.  A file that changes while it is read is not cached: its stat
 * before and after must agree.  Every failure here is a miss: the cache
 * only ever saves work. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/util.h"
#include "workflow/internal.h"

static void hex(const unsigned char *md, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[md[i] >> 4];
        out[2 * i + 1] = digits[md[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Reads the file through the hash in pieces (never the whole of it in
 * memory) and looks for @include, whose files the key would not cover. */
static bool hash_file(int fd, unsigned char key[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    enum { PIECE = 1 << 20, KEEP = 8 };
    char *buf = malloc(PIECE + KEEP);
    bool ok = ctx && buf && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    size_t kept = 0;
    while (ok) {
        ssize_t got = read(fd, buf + kept, PIECE);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            ok = got == 0;
            break;
        }
        ok = EVP_DigestUpdate(ctx, buf + kept, (size_t)got) == 1 &&
             !memmem(buf, kept + (size_t)got, "@include", 8);
        size_t end = kept + (size_t)got;
        kept = end < KEEP ? end : KEEP;
        memmove(buf, buf + end - kept, kept);
    }
    unsigned int len = 0;
    ok = ok && EVP_DigestFinal_ex(ctx, key, &len) == 1 && len == 32;
    EVP_MD_CTX_free(ctx);
    free(buf);
    return ok;
}

bool sy_wf_cache_probe(const char *cache_dir, const char *path, const char *base_dir,
                       sy_wf_source *src)
{
    memset(src, 0, sizeof *src);
    if (!cache_dir || !*cache_dir)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = fstat(fd, &src->st) == 0 && S_ISREG(src->st.st_mode) &&
              src->st.st_size >= SY_WF_CACHE_MIN_BYTES && hash_file(fd, src->key);
    close(fd);
    if (!ok)
        return false;
    const char *base = strrchr(path, '/');
    char *abs = sy_xconcat(base_dir, "/", base ? base + 1 : path, (char *)NULL);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    ok = EVP_Digest(abs, strlen(abs), md, &len, EVP_sha256(), NULL) == 1 && len == 32;
    free(abs);
    if (!ok)
        return false;
    char name[65];
    hex(md, 32, name);
    src->dir = sy_xstrdup(cache_dir);
    src->slot = sy_xconcat(cache_dir, "/", name, ".wfc", (char *)NULL);
    return true;
}

void sy_wf_source_free(sy_wf_source *src)
{
    free(src->slot);
    free(src->dir);
    memset(src, 0, sizeof *src);
}

static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < SIZE_MAX / 2 && (buf = malloc((size_t)st.st_size))) {
        size_t at = 0, n = (size_t)st.st_size;
        while (at < n) {
            ssize_t got = read(fd, buf + at, n - at);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            at += (size_t)got;
        }
        if (at != n) {
            free(buf);
            buf = NULL;
        }
        *len = n;
    }
    close(fd);
    return buf;
}

sy_workflow *sy_wf_cache_get(const sy_wf_source *src, const char *base_dir, int *name_line)
{
    size_t len = 0;
    char *buf = read_all(src->slot, &len);
    sy_workflow *wf = buf ? sy_wf_cache_decode(buf, len, src->key, base_dir, name_line) : NULL;
    free(buf);
    return wf;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t put = write(fd, p, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        p += put;
        n -= (size_t)put;
    }
    return true;
}

/* The directory and the one above it (var/ of var/workflow-cache). */
static void make_dir(const char *dir)
{
    if (mkdir(dir, 0755) == 0 || errno != ENOENT)
        return;
    char *up = sy_path_dirname(dir);
    mkdir(up, 0755);
    free(up);
    mkdir(dir, 0755);
}

void sy_wf_cache_put(const sy_wf_source *src, const char *path, const sy_workflow *wf,
                     int name_line)
{
    char *buf = NULL;
    size_t len = 0;
    if (sy_wf_cache_encode(wf, src->key, name_line, &buf, &len) != 0)
        return;
    make_dir(src->dir);
    char *tmp = sy_xconcat(src->dir, "/.new-XXXXXX", (char *)NULL);
    int fd = mkstemp(tmp);
    struct stat now;
    /* Readable as the workflow file usually is: a `check` run by another
     * user than the host's leaves an entry the host can still read. */
    bool ok = fd >= 0 && fchmod(fd, 0644) == 0 && write_all(fd, buf, len);
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    /* The bytes hashed must be the bytes libconfig read: a file edited in
     * between is left for the next load. */
    ok = ok && stat(path, &now) == 0 && same_file(&now, &src->st) &&
         rename(tmp, src->slot) == 0;
    if (fd >= 0 && !ok)
        unlink(tmp);
    free(tmp);
    free(buf);
}
