/*
 * file_check.c -- sshd's StrictModes, applied to plugins
 * (switchyard/loader.h).
 *
 * A plugin runs with the host's rights.  Anyone who can replace the file,
 * or rename anything in a directory above it, can make the host run their
 * code, so the file and every ancestor must be owned by root or the host's
 * user and be writable by nobody else.  Checking the real path (symlinks
 * resolved) matters: a safe-looking link into an unsafe directory is
 * unsafe.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <switchyard/loader.h>
#include <switchyard/sdk.h>

static bool owner_ok(const struct stat *st)
{
    return st->st_uid == 0 || st->st_uid == geteuid();
}

static bool mode_ok(const struct stat *st)
{
    if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
        return true;
    /* In a root-owned sticky directory (/tmp) others may add entries but
     * cannot rename or delete ours, so it cannot be used to swap files. */
    return S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && st->st_uid == 0;
}

static bool shell_safe(const char *s)
{
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789/._-+,:@%", *s))
            return false;
    return true;
}

/* The path as a shell word, so the suggested command can be pasted even
 * when the path holds spaces or quotes.  malloc'd; NULL out of memory. */
static char *shell_quote(const char *s)
{
    if (shell_safe(s))
        return strdup(s);
    size_t quotes = 0;
    for (const char *q = s; *q; q++)
        quotes += *q == '\'';
    char *out = malloc(strlen(s) + quotes * 3 + 3);
    if (!out)
        return NULL;
    char *w = out;
    *w++ = '\'';
    for (; *s; s++) {
        if (*s == '\'') {
            memcpy(w, "'\\''", 4);
            w += 4;
        } else {
            *w++ = *s;
        }
    }
    *w++ = '\'';
    *w = '\0';
    return out;
}

/* The effective user as chown(1) takes it: its name when it has one. */
static void euid_name(char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char tmp[1024];
    uid_t uid = geteuid();
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &found) == 0 && found &&
        found->pw_name && *found->pw_name)
        snprintf(buf, len, "%s", found->pw_name);
    else
        snprintf(buf, len, "%u", (unsigned)uid);
}

static int refuse_owner(const char *path, const struct stat *st, char *err,
                        size_t err_len)
{
    char user[256];
    euid_name(user, sizeof user);
    char *q = shell_quote(path);
    sy_sdk_errf(err, err_len,
            "%s is owned by uid %u, not root or the host's user %u "
            "(run: chown %s %s)",
            path, (unsigned)st->st_uid, (unsigned)geteuid(), user,
            q ? q : path);
    free(q);
    return SY_EINVAL;
}

static int refuse_mode(const char *path, const struct stat *st, char *err,
                       size_t err_len)
{
    bool g = st->st_mode & S_IWGRP, o = st->st_mode & S_IWOTH;
    const char *who = g && o ? "group and others" : g ? "group" : "others";
    char *q = shell_quote(path);
    sy_sdk_errf(err, err_len, "%s is writable by %s (run: chmod go-w %s)", path,
            who, q ? q : path);
    free(q);
    return SY_EINVAL;
}

static int check_one(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        sy_sdk_errf(err, err_len, "cannot check %s: %s", path, strerror(errno));
        return SY_EINVAL;
    }
    if (!owner_ok(&st))
        return refuse_owner(path, &st, err, err_len);
    if (!mode_ok(&st))
        return refuse_mode(path, &st, err, err_len);
    return SY_OK;
}

/* Cuts the last component off an absolute, normalised path in place. */
static void to_parent(char *path)
{
    char *slash = strrchr(path, '/');
    if (slash == path)
        path[1] = '\0';
    else if (slash)
        *slash = '\0';
}

int sy_sdk_path_check_secure(const char *path, char *err, size_t err_len)
{
    if (!path || !*path) {
        sy_sdk_errf(err, err_len, "no path given");
        return SY_EINVAL;
    }
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        sy_sdk_errf(err, err_len, "cannot resolve %s: %s", path,
                    strerror(errno));
        return SY_EINVAL;
    }
    for (;;) {
        if (check_one(real, err, err_len) != 0)
            return SY_EINVAL;
        if (strcmp(real, "/") == 0)
            return SY_OK;
        to_parent(real);
    }
}
