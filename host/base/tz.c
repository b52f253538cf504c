/* Time zones: reading a TZif file and its POSIX rule into a table of
 * offsets; lookups in that table. */
#include "base/tz.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The rule of the file's footer is unrolled this far: schedules look a
 * few years ahead at most. */
#define TZ_LAST_YEAR 2200
#define TZ_MAX_FILE (1 << 20)

int64_t sy_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void sy_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* --- the table ------------------------------------------------------------- */

typedef struct {
    int64_t *at;
    int32_t *off;
    size_t n, cap;
} table;

static void *grow(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        sy_oom("reading a time zone");
    }
    return q;
}

static void add(table *t, int64_t at, int32_t off)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->at = grow(t->at, t->cap * sizeof *t->at);
        t->off = grow(t->off, t->cap * sizeof *t->off);
    }
    t->at[t->n] = at;
    t->off[t->n++] = off;
}

static sy_tz *make(const char *name, int32_t off0, table *t)
{
    sy_tz *tz = sy_xmalloc(sizeof *tz);
    tz->name = sy_xstrdup(name);
    tz->at = t->at;
    tz->off = t->off;
    tz->n = t->n;
    tz->off0 = off0;
    tz->off_min = tz->off_max = off0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->off[i] < tz->off_min)
            tz->off_min = t->off[i];
        if (t->off[i] > tz->off_max)
            tz->off_max = t->off[i];
    }
    return tz;
}

sy_tz *sy_tz_from_table(const char *name, int32_t off0, const int64_t *at,
                        const int32_t *off, size_t n)
{
    table t = {0};
    for (size_t i = 0; i < n; i++)
        add(&t, at[i], off[i]);
    return make(name, off0, &t);
}

void sy_tz_free(sy_tz *tz)
{
    if (!tz)
        return;
    free(tz->name);
    free(tz->at);
    free(tz->off);
    free(tz);
}

/* The index of the last transition at or before t; -1 when none. */
static long find(const sy_tz *tz, int64_t t)
{
    long lo = 0, hi = (long)tz->n - 1, best = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (tz->at[mid] <= t) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

int32_t sy_tz_offset(const sy_tz *tz, int64_t t)
{
    long i = find(tz, t);
    return i < 0 ? tz->off0 : tz->off[i];
}

int64_t sy_tz_next_transition(const sy_tz *tz, int64_t t)
{
    long i = find(tz, t) + 1;
    return (size_t)i < tz->n ? tz->at[i] : INT64_MAX;
}

/* --- the POSIX rule of the footer ("CET-1CEST,M3.5.0,M10.5.0/3") ------------ */

static bool rule_name(const char **p)
{
    const char *s = *p;
    if (*s == '<') {
        const char *e = strchr(s, '>');
        if (!e)
            return false;
        *p = e + 1;
        return true;
    }
    while (isalpha((unsigned char)**p))
        (*p)++;
    return *p - s >= 3;
}

/* [+-]hh[:mm[:ss]] in seconds. */
static bool rule_time(const char **p, long *out)
{
    int sign = 1;
    if (**p == '+' || **p == '-')
        sign = *(*p)++ == '-' ? -1 : 1;
    if (!isdigit((unsigned char)**p))
        return false;
    long v = strtol(*p, (char **)p, 10) * 3600;
    for (long unit = 60; **p == ':' && unit >= 1; unit /= 60) {
        (*p)++;
        if (!isdigit((unsigned char)**p))
            return false;
        v += strtol(*p, (char **)p, 10) * unit;
    }
    *out = sign * v;
    return true;
}

typedef struct {
    unsigned month, week, wday;
    long time; /* local time of day of the change, seconds */
} rule_date;

static bool rule_date_read(const char **p, rule_date *r)
{
    if (*(*p)++ != ',' || *(*p)++ != 'M')
        return false; /* only the Mm.w.d form: every zone in use has it */
    char *e;
    r->month = (unsigned)strtoul(*p, &e, 10);
    if (*e != '.')
        return false;
    r->week = (unsigned)strtoul(e + 1, &e, 10);
    if (*e != '.')
        return false;
    r->wday = (unsigned)strtoul(e + 1, &e, 10);
    *p = e;
    r->time = 7200;
    if (**p == '/') {
        (*p)++;
        if (!rule_time(p, &r->time))
            return false;
    }
    return r->month >= 1 && r->month <= 12 && r->week >= 1 && r->week <= 5 &&
           r->wday <= 6;
}

/* Seconds since the epoch of local midnight on rule date r of year y
 * (taken as UTC: the caller subtracts the offset). */
static int64_t rule_day(const rule_date *r, int64_t y)
{
    int64_t first = sy_days_from_civil(y, r->month, 1);
    unsigned first_wday = (unsigned)(((first % 7) + 11) % 7); /* 1970-01-01: Thursday */
    int64_t day = first + (r->wday + 7 - first_wday) % 7 + 7 * (r->week - 1);
    unsigned nm = r->month == 12 ? 1 : r->month + 1;
    int64_t next_month = sy_days_from_civil(r->month == 12 ? y + 1 : y, nm, 1);
    while (day >= next_month)
        day -= 7;
    return day * 86400;
}

/* Appends the rule's changes after the table's last transition.  False
 * when the rule is not understood (the table is then left as it is). */
static bool unroll_rule(table *t, const char *rule)
{
    const char *p = rule;
    long std, dst;
    if (!rule_name(&p) || !rule_time(&p, &std))
        return false;
    std = -std;
    if (!*p) {
        if (t->n == 0 || t->off[t->n - 1] != std)
            add(t, t->n ? t->at[t->n - 1] + 1 : INT64_MIN / 2, (int32_t)std);
        return true;
    }
    if (!rule_name(&p))
        return false;
    dst = std + 3600;
    if (*p != ',') {
        if (!rule_time(&p, &dst))
            return false;
        dst = -dst;
    }
    rule_date on, off;
    if (!rule_date_read(&p, &on) || !rule_date_read(&p, &off) || *p)
        return false;
    int64_t last = t->n ? t->at[t->n - 1] : INT64_MIN;
    int64_t y0 = 1970;
    if (t->n) {
        unsigned m, d;
        sy_civil_from_days(last / 86400, &y0, &m, &d);
    }
    for (int64_t y = y0; y <= TZ_LAST_YEAR; y++) {
        int64_t a = rule_day(&on, y) + on.time - std;
        int64_t b = rule_day(&off, y) + off.time - dst;
        int64_t first = a < b ? a : b, second = a < b ? b : a;
        int32_t o1 = (int32_t)(a < b ? dst : std), o2 = (int32_t)(a < b ? std : dst);
        if (first > last)
            add(t, first, o1);
        if (second > last)
            add(t, second, o2);
    }
    return true;
}

/* --- the file ---------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

typedef struct {
    uint32_t isut, isstd, leap, time, type, chars;
} counts;

static bool read_counts(const unsigned char *p, size_t len, counts *c)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return false;
    c->isut = be32(p + 20);
    c->isstd = be32(p + 24);
    c->leap = be32(p + 28);
    c->time = be32(p + 32);
    c->type = be32(p + 36);
    c->chars = be32(p + 40);
    return c->type >= 1 && c->type <= 256 && c->time <= 100000 && c->leap <= 10000 &&
           c->chars <= 100000 && c->isut <= 256 && c->isstd <= 256;
}

static size_t block_len(const counts *c, size_t tsize)
{
    return c->time * tsize + c->time + c->type * 6 + c->chars + c->leap * (tsize + 4) +
           c->isstd + c->isut;
}

static const char *parse_tzif(const unsigned char *p, size_t len, table *t, int32_t *off0)
{
    counts c;
    if (!read_counts(p, len, &c))
        return "not a compiled time zone file (TZif)";
    size_t tsize = 4, at = 44;
    if (p[4] >= '2') {
        /* Skip the 32-bit block for the 64-bit one that follows it. */
        at += block_len(&c, 4);
        if (at > len || !read_counts(p + at, len - at, &c))
            return "truncated time zone file";
        at += 44;
        tsize = 8;
    }
    size_t need = block_len(&c, tsize);
    if (at + need > len)
        return "truncated time zone file";
    const unsigned char *times = p + at, *idx = times + c.time * tsize;
    const unsigned char *types = idx + c.time;
    *off0 = (int32_t)be32(types);
    for (uint32_t i = 0; i < c.time; i++) {
        if (idx[i] >= c.type)
            return "a transition names a type the file does not have";
        int64_t when = tsize == 8 ? be64(times + 8 * i) : (int32_t)be32(times + 4 * i);
        if (t->n && when <= t->at[t->n - 1])
            return "transitions out of order";
        add(t, when, (int32_t)be32(types + 6 * idx[i]));
    }
    const char *footer = (const char *)p + at + need;
    size_t flen = len - at - need;
    if (tsize == 8 && flen > 2 && footer[0] == '\n') {
        const char *end = memchr(footer + 1, '\n', flen - 1);
        if (end && end > footer + 1) {
            char *rule = sy_asprintf("%.*s", (int)(end - footer - 1), footer + 1);
            unroll_rule(t, rule); /* not understood: the table's last offset stays */
            free(rule);
        }
    }
    return NULL;
}

static bool name_ok(const char *name)
{
    if (!*name || name[0] == '/' || strstr(name, "..") || strlen(name) > 200)
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("/_-+", *p))
            return false;
    return true;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = sy_xmalloc(TZ_MAX_FILE);
    *len = fread(buf, 1, TZ_MAX_FILE, f);
    fclose(f);
    return buf;
}

sy_tz *sy_tz_load(const char *name, char *err, size_t err_len)
{
    table t = {0};
    if (!name || strcmp(name, "UTC") == 0)
        return make("UTC", 0, &t);
    if (!name_ok(name)) {
        sy_errf(err, err_len, "time zone \"%s\" is not a zone name such as \"Europe/Berlin\"",
                name);
        return NULL;
    }
    const char *dir = getenv("TZDIR");
    char *path = sy_path_join(dir && *dir ? dir : "/usr/share/zoneinfo", name);
    size_t len = 0;
    unsigned char *buf = slurp(path, &len);
    if (!buf) {
        sy_errf(err, err_len, "unknown time zone \"%s\" (%s: %s)", name, path,
                strerror(errno));
        free(path);
        return NULL;
    }
    int32_t off0 = 0;
    const char *why = parse_tzif(buf, len, &t, &off0);
    free(buf);
    if (why) {
        sy_errf(err, err_len, "time zone \"%s\" (%s): %s", name, path, why);
        free(path);
        free(t.at);
        free(t.off);
        return NULL;
    }
    free(path);
    return make(name, off0, &t);
}

void sy_time_format(int64_t sec, int32_t off, char *buf, size_t len)
{
    int64_t local = sec + off, days = local / 86400 - (local % 86400 < 0), y;
    unsigned m, d;
    sy_civil_from_days(days, &y, &m, &d);
    int s = (int)(local - days * 86400);
    if (off == 0) {
        snprintf(buf, len, "%04d-%02u-%02uT%02d:%02d:%02dZ", (int)y, m, d, s / 3600,
                 s / 60 % 60, s % 60);
        return;
    }
    int a = off < 0 ? -off : off;
    snprintf(buf, len, "%04d-%02u-%02uT%02d:%02d:%02d%c%02d:%02d", (int)y, m, d, s / 3600,
             s / 60 % 60, s % 60, off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}
