/*
 * duration.c -- durations as operators write them: "250ms", "5s", "1.5m",
 * "2h", "1d" and compounds such as "1h30m" (switchyard/sdk.h,
 * "Durations").  Both sides of the ABI read them: a plugin formats its
 * limits into messages, a host's sy_host_api.param_duration_ms parses.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

char *sy_sdk_format_ms(int64_t ms, char *buf, size_t len)
{
    static const struct { int64_t ms; const char *unit; } units[] = {
        {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"},
        {1, "ms"}};
    size_t used = 0;
    if (!buf || len == 0)
        return buf;
    buf[0] = '\0';
    if (ms <= 0) {
        snprintf(buf, len, ms == 0 ? "0s" : "%lldms", (long long)ms);
        return buf;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        int64_t n = ms / units[i].ms;
        if (n == 0)
            continue;
        ms -= n * units[i].ms;
        int w = snprintf(buf + used, len - used, "%lld%s", (long long)n,
                         units[i].unit);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    return buf;
}

/* Reads the unit at *p into *scale (milliseconds per unit).  "ms" is tried
 * before "m": the longest unit that matches wins. */
static int parse_unit(const char **p, double *scale)
{
    static const struct { const char *unit; double ms; } units[] = {
        {"ms", 1.0}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3},
        {"d", 86400e3}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen(units[i].unit);
        if (strncmp(*p, units[i].unit, n) == 0 &&
            !isalpha((unsigned char)(*p)[n])) {
            *p += n;
            *scale = units[i].ms;
            return 0;
        }
    }
    return -1;
}

/* Larger durations are refused: a little under INT64_MAX milliseconds, so
 * that sums and roundings near the limit cannot overflow. */
#define DURATION_MAX_MS 9200000000000000000ULL

/* One number as written: digits with at most one '.', at least one digit
 * (strtod alone would take "0x10" or "1e3").  The whole part is read
 * exactly as an integer (saturating above DURATION_MAX_MS), the fraction
 * as a double below 1: a double sum of the components lost milliseconds
 * above 2^53, so formatting a duration and reading it back changed it. */
static int parse_number(const char **p, uint64_t *whole, double *frac)
{
    const char *q = *p;
    uint64_t w = 0;
    size_t digits = 0;
    for (; isdigit((unsigned char)*q); q++, digits++)
        w = w > DURATION_MAX_MS ? w : w * 10 + (uint64_t)(*q - '0');
    *frac = 0;
    if (*q == '.') {
        const char *f = q++;
        size_t n = strspn(q, "0123456789");
        digits += n;
        if (n)
            *frac = strtod(f, NULL);
        q += n;
    }
    if (digits == 0 || *q == '.')
        return -1;
    *whole = w;
    *p = q;
    return 0;
}

int sy_sdk_duration_parse(const char *s, int64_t *ms, char *err,
                          size_t err_len)
{
    if (!s || !*s) {
        sy_sdk_errf(err, err_len, "empty duration");
        return SY_EINVAL;
    }
    const char *p = s;
    uint64_t total = 0; /* whole milliseconds, exact */
    double part = 0;    /* the fractions' milliseconds, rounded at the end */
    while (*p) {
        if (!isdigit((unsigned char)*p) && *p != '.') {
            sy_sdk_errf(err, err_len, "bad duration \"%s\": expected a "
                        "number such as \"250ms\", \"5s\", \"1m\", \"2h\"",
                        s);
            return SY_EINVAL;
        }
        uint64_t whole;
        double frac;
        if (parse_number(&p, &whole, &frac) != 0) {
            sy_sdk_errf(err, err_len, "bad duration \"%s\"", s);
            return SY_EINVAL;
        }
        double scale;
        if (!*p) {
            sy_sdk_errf(err, err_len, "bad duration \"%s\": missing unit "
                        "(ms, s, m, h or d)", s);
            return SY_EINVAL;
        }
        if (parse_unit(&p, &scale) != 0) {
            sy_sdk_errf(err, err_len, "bad duration \"%s\": unknown unit "
                        "(use ms, s, m, h or d)", s);
            return SY_EINVAL;
        }
        uint64_t unit = (uint64_t)scale;
        double fms = frac * scale; /* below one unit: exact enough */
        uint64_t fwhole = (uint64_t)fms;
        part += fms - (double)fwhole;
        if (whole > DURATION_MAX_MS / unit ||
            whole * unit > DURATION_MAX_MS - total ||
            fwhole > DURATION_MAX_MS - total - whole * unit) {
            sy_sdk_errf(err, err_len, "bad duration \"%s\": too large", s);
            return SY_EINVAL;
        }
        total += whole * unit + fwhole;
    }
    uint64_t rounded = (uint64_t)llround(part);
    if (rounded > DURATION_MAX_MS - total) {
        sy_sdk_errf(err, err_len, "bad duration \"%s\": too large", s);
        return SY_EINVAL;
    }
    *ms = (int64_t)(total + rounded);
    return SY_OK;
}
