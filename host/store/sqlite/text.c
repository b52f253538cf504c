/*
 * store/sqlite/text.c -- text built by appending (internal.h): the JSON
 * the store writes itself (a hold, a run's counts), and a run's counts
 * read back.  By hand, not with jansson: these are built on the take's
 * path, a few per task, and need no tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/sqlite/internal.h"

bool sy_sqlite_text_reserve(sy_sqlite_text *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return true;
    char *p = sy_grow(b->p, &b->cap, b->len + more + 1, 1, 64);
    if (!p)
        return false;
    b->p = p;
    return true;
}

bool sy_sqlite_text_grow(sy_sqlite_text *b, const char *s, size_t len)
{
    if (!sy_sqlite_text_reserve(b, len))
        return false;
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
    return true;
}

/* The bytes a JSON string cannot hold as they are, and NUL: one test a
 * byte of a key, which every take writes. */
static const unsigned char special[256] = {
    [0] = 1, [1] = 1, [2] = 1, [3] = 1, [4] = 1, [5] = 1, [6] = 1, [7] = 1,
    [8] = 1, [9] = 1, [10] = 1, [11] = 1, [12] = 1, [13] = 1, [14] = 1, [15] = 1,
    [16] = 1, [17] = 1, [18] = 1, [19] = 1, [20] = 1, [21] = 1, [22] = 1, [23] = 1,
    [24] = 1, [25] = 1, [26] = 1, [27] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1,
    ['"'] = 1, ['\\'] = 1,
};

bool sy_sqlite_text_string(sy_sqlite_text *b, const char *s)
{
    bool ok = sy_sqlite_text_put(b, "\"", 1);
    for (const char *p = s; ok && *p;) {
        const char *run = p;
        while (!special[(unsigned char)*p])
            p++;
        ok = sy_sqlite_text_put(b, run, (size_t)(p - run));
        if (ok && *p) {
            char esc[8];
            unsigned char c = (unsigned char)*p++;
            int n = c == '"' || c == '\\' ? snprintf(esc, sizeof esc, "\\%c", c)
                                          : snprintf(esc, sizeof esc, "\\u%04x", c);
            ok = sy_sqlite_text_put(b, esc, (size_t)n);
        }
    }
    return ok && sy_sqlite_text_put(b, "\"", 1);
}

/* Written by hand: snprintf is most of a small take's cost. */
bool sy_sqlite_text_int(sy_sqlite_text *b, int64_t v)
{
    char buf[24], *p = buf + sizeof buf;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        *--p = '-';
    return sy_sqlite_text_put(b, p, (size_t)(buf + sizeof buf - p));
}

bool sy_sqlite_counts_put(sy_sqlite_text *b, const char *key, int64_t n)
{
    return (b->len <= 1 || sy_sqlite_text_put(b, ",", 1)) && sy_sqlite_text_string(b, key) &&
           sy_sqlite_text_put(b, ":", 1) && sy_sqlite_text_int(b, n);
}

/* By hand: a run's row is read once a batch, and SQLite's json_each
 * cost a statement step per key. */
int sy_sqlite_counts_next(const char **p, sy_sqlite_text *key, int64_t *n)
{
    const char *s = *p;
    if (*s == '{' || *s == ',')
        s++;
    if (*s == '}')
        return 0;
    if (*s++ != '"')
        return -1;
    key->len = 0;
    while (*s != '"') {
        const char *run = s;
        while (*s && *s != '"' && *s != '\\')
            s++;
        if (!*s || !sy_sqlite_text_put(key, run, (size_t)(s - run)))
            return -1;
        if (*s == '\\') {
            char c = s[1];
            if (c == 'u') {
                unsigned v = 0;
                for (int i = 2; i < 6; i++) {
                    char h = s[i];
                    int d = h >= '0' && h <= '9' ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                   : -1;
                    if (d < 0)
                        return -1;
                    v = v * 16 + (unsigned)d;
                }
                /* Written for bytes below 0x20 only (counts.c, SQLite). */
                char b = (char)v;
                if (v >= 0x20 || !sy_sqlite_text_put(key, &b, 1))
                    return -1;
                s += 6;
            } else {
                /* The short escapes SQLite's json_group_object writes (the
                 * migration that made the rows). */
                static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
                const char *e = c ? strchr(from, c) : NULL;
                if (!e || !sy_sqlite_text_put(key, &to[e - from], 1))
                    return -1;
                s += 2;
            }
        }
    }
    s++;
    /* Terminated here: an empty key appended nothing. */
    if (*s++ != ':' || !sy_sqlite_text_put(key, "", 0))
        return -1;
    int64_t v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9' && v < INT64_MAX / 10)
        v = v * 10 + (*s++ - '0');
    if (*s != ',' && *s != '}')
        return -1;
    *n = v;
    *p = s;
    return 1;
}

