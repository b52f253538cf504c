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

int sy_sdk_duration_parse(const char *s, int64_t *ms, char *err,
                          size_t err_len)
{
    if (!s || !*s) {
        sy_sdk_errf(err, err_len, "empty duration");
        return SY_EINVAL;
    }
    const char *p = s;
    double total = 0;
    while (*p) {
        if (!isdigit((unsigned char)*p) && *p != '.') {
            sy_sdk_errf(err, err_len, "bad duration \"%s\": expected a "
                        "number such as \"250ms\", \"5s\", \"1m\", \"2h\"",
                        s);
            return SY_EINVAL;
        }
        /* Plain decimal only: strtod alone would take "0x10" or "1e3". */
        size_t span = strspn(p, "0123456789.");
        char *end;
        double v = strtod(p, &end);
        if (end == p || (size_t)(end - p) != span) {
            sy_sdk_errf(err, err_len, "bad duration \"%s\"", s);
            return SY_EINVAL;
        }
        p = end;
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
        total += v * scale;
        if (total > 9.2e18) {
            sy_sdk_errf(err, err_len, "bad duration \"%s\": too large", s);
            return SY_EINVAL;
        }
    }
    *ms = (int64_t)llround(total);
    return SY_OK;
}
