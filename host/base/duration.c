#include "base/duration.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const struct {
    const char *unit;
    double ms;
} units[] = {
    /* "ms" before "m": the longest unit that matches wins. */
    {"ms", 1.0}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}, {"d", 86400e3},
};

static int parse_unit(const char **p, double *scale)
{
    for (size_t i = 0; i < SY_ARRAY_LEN(units); i++) {
        size_t n = strlen(units[i].unit);
        if (strncmp(*p, units[i].unit, n) == 0 && !isalpha((unsigned char)(*p)[n])) {
            *p += n;
            *scale = units[i].ms;
            return 0;
        }
    }
    return -1;
}

int sy_duration_parse(const char *s, int64_t *ms, char *err, size_t err_len)
{
    if (!s || !*s) {
        sy_errf(err, err_len, "empty duration");
        return -1;
    }
    const char *p = s;
    double total = 0;
    while (*p) {
        if (!isdigit((unsigned char)*p) && *p != '.') {
            sy_errf(err, err_len,
                    "bad duration \"%s\": expected a number such as \"250ms\", \"5s\", \"1m\", \"2h\"",
                    s);
            return -1;
        }
        /* Plain decimal only: strtod alone would take "0x10" or "1e3". */
        size_t span = strspn(p, "0123456789.");
        char *end;
        double v = strtod(p, &end);
        if (end == p || (size_t)(end - p) != span) {
            sy_errf(err, err_len, "bad duration \"%s\"", s);
            return -1;
        }
        p = end;
        double scale;
        if (!*p) {
            sy_errf(err, err_len,
                    "bad duration \"%s\": missing unit (ms, s, m, h or d)", s);
            return -1;
        }
        if (parse_unit(&p, &scale) != 0) {
            sy_errf(err, err_len,
                    "bad duration \"%s\": unknown unit (use ms, s, m, h or d)", s);
            return -1;
        }
        total += v * scale;
        if (total > 9.2e18) {
            sy_errf(err, err_len, "bad duration \"%s\": too large", s);
            return -1;
        }
    }
    *ms = (int64_t)llround(total);
    return 0;
}

char *sy_duration_format(int64_t ms, char *buf, size_t len)
{
    if (ms <= 0) {
        snprintf(buf, len, ms == 0 ? "0s" : "%lldms", (long long)ms);
        return buf;
    }
    static const struct { const char *u; int64_t ms; } parts[] = {
        {"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1}};
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < SY_ARRAY_LEN(parts) && off < len; i++) {
        int64_t q = ms / parts[i].ms;
        if (q == 0)
            continue;
        int n = snprintf(buf + off, len - off, "%lld%s", (long long)q, parts[i].u);
        if (n < 0)
            break;
        off += (size_t)n;
        ms -= q * parts[i].ms;
    }
    return buf;
}
