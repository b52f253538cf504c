/*
 * config_include.c -- every file a libconfig file @includes is a regular
 * file, checked before libconfig reads it (switchyard/config_json.h).
 *
 * Written by hand because libconfig 1.5 (Debian 12) has no hook on its
 * includes: it opens the path named, prefixed with the include directory,
 * and when that is a directory (`@include ""`, `@include "."`) its flex
 * scanner fails to read it and calls exit(2) ("input in flex scanner
 * failed"), taking the host with it.  Found by the config fuzz target.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <switchyard/config_json.h>

/* libconfig's own bound on nested includes. */
#define MAX_DEPTH 10

static int hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The quoted name after `@include` on `line`, decoded with libconfig's
 * string escapes, into out; false when the line is no include. */
static bool include_name(const char *line, size_t n, char *out, size_t len)
{
    const char *p = line, *end = line + n;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(end - p) < 8 || memcmp(p, "@include", 8) != 0)
        return false;
    p += 8;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p != '"')
        return false;
    p++;
    size_t o = 0;
    /* A NUL ends the name where libconfig's scanner would take it to end. */
    while (p < end && *p != '"' && *p != '\0' && o + 1 < len) {
        int c = (unsigned char)*p++;
        if (c == '\\' && p < end) {
            int e = (unsigned char)*p++;
            if (e == 'n') c = '\n';
            else if (e == 'r') c = '\r';
            else if (e == 't') c = '\t';
            else if (e == 'f') c = '\f';
            else if (e == 'x' && end - p >= 2 && hex(p[0]) >= 0 && hex(p[1]) >= 0) {
                c = hex(p[0]) * 16 + hex(p[1]);
                p += 2;
            } else c = e;
            if (c == '\0')
                break;
        }
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return true;
}

static bool check(const char *path, const char *dir, int depth, sy_sdk_problem_fn report,
                  void *arg)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return true; /* libconfig says it cannot read it */
    char *line = NULL, name[4096], full[8192], msg[8400];
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;
    bool ok = true;
    while (ok && (n = getline(&line, &cap, f)) != -1) {
        lineno++;
        if (!include_name(line, (size_t)n, name, sizeof name))
            continue;
        if (dir)
            snprintf(full, sizeof full, "%s/%s", dir, name);
        else
            snprintf(full, sizeof full, "%s", name);
        struct stat st;
        if (stat(full, &st) != 0)
            continue; /* libconfig reports a file it cannot open */
        if (!S_ISREG(st.st_mode)) {
            snprintf(msg, sizeof msg, "@include \"%s\": %s is not a regular file", name,
                     S_ISDIR(st.st_mode) ? "a directory" : "the path");
            report(arg, path, lineno, msg);
            ok = false;
        } else if (depth + 1 < MAX_DEPTH) {
            ok = check(full, dir, depth + 1, report, arg);
        }
    }
    free(line);
    fclose(f);
    return ok;
}

bool sy_sdk_config_includes_ok(const config_t *lc, const char *path, sy_sdk_problem_fn report,
                               void *arg)
{
    const char *dir = config_get_include_dir(lc);
    return check(path, dir && *dir ? dir : NULL, 0, report, arg);
}
