/*
 * store/sqlite/text.c -- text built by appending (internal.h): the JSON
 * the store writes itself (a hold, a run's counts).  By hand, not with
 * jansson: these are built on the take's path, a few per task, and need
 * no tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/internal.h"

bool sy_sqlite_text_reserve(sy_sqlite_text *b, size_t more)
{
    if (b->len + more + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (b->len + more + 1 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return false;
        b->p = p;
        b->cap = cap;
    }
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

bool sy_sqlite_text_string(sy_sqlite_text *b, const char *s)
{
    bool ok = sy_sqlite_text_put(b, "\"", 1);
    for (const char *p = s; ok && *p;) {
        const char *run = p;
        while (*p && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
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
