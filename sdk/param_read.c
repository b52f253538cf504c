/*
 * param_read.c -- reading a setting or task parameter with a default and a
 * range, and a one-line message naming what was wrong (switchyard/sdk.h,
 * "Parameters").  Everything goes through the host's table, so it works
 * against any host and the test host alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

/* Describes the value at `key` for a "got ..." clause: a short quoted
 * string, a number, true/false, or its kind. */
static char *describe(const sy_host_api *api, const sy_params *p,
                      const char *key, char *buf, size_t len)
{
    const char *s;
    int64_t i;
    double f;
    int b;
    switch (api->param_type(p, key)) {
    case SY_PARAM_STRING:
        if (api->param_string(p, key, &s) == SY_OK)
            snprintf(buf, len, "\"%.40s%s\"", s, strlen(s) > 40 ? "..." : "");
        break;
    case SY_PARAM_INT:
        if (api->param_int(p, key, &i) == SY_OK)
            snprintf(buf, len, "%lld", (long long)i);
        break;
    case SY_PARAM_FLOAT:
        if (api->param_float(p, key, &f) == SY_OK)
            snprintf(buf, len, "%g", f);
        break;
    case SY_PARAM_BOOL:
        if (api->param_bool(p, key, &b) == SY_OK)
            snprintf(buf, len, "%s", b ? "true" : "false");
        break;
    default:
        snprintf(buf, len, "%s", sy_sdk_type_name(api->param_type(p, key)));
        break;
    }
    sy_sdk_one_line(buf);
    return buf;
}

/* "an integer", "an integer between 1 and 1024", "an integer of at least
 * 1", ... */
static char *int_range(int64_t min, int64_t max, char *buf, size_t len)
{
    if (min > INT64_MIN && max < INT64_MAX)
        snprintf(buf, len, "an integer between %lld and %lld", (long long)min,
                 (long long)max);
    else if (min > INT64_MIN)
        snprintf(buf, len, "an integer of at least %lld", (long long)min);
    else if (max < INT64_MAX)
        snprintf(buf, len, "an integer of at most %lld", (long long)max);
    else
        snprintf(buf, len, "an integer");
    return buf;
}

/* Reads an integer in [min, max] (INT64_MIN / INT64_MAX for no bound). */
int sy_sdk_param_int(const sy_host_api *api, const sy_params *p,
                     const char *key, int64_t def, int64_t min, int64_t max,
                     int64_t *out, char *err, size_t err_len)
{
    char want[96], got[64];
    int64_t v = 0;
    int rc = api->param_int(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK && v >= min && v <= max) {
        *out = v;
        return SY_OK;
    }
    int_range(min, max, want, sizeof want);
    if (rc == SY_OK)
        snprintf(got, sizeof got, "%lld", (long long)v);
    else
        describe(api, p, key, got, sizeof got);
    sy_sdk_errf(err, err_len, "%s: must be %s, got %s", key, want, got);
    return rc == SY_OK ? SY_ERANGE : SY_ETYPE;
}

/* Reads a number in [min, max]; an integer converts.  Use -HUGE_VAL /
 * HUGE_VAL (or +-DBL_MAX) for no bound. */
int sy_sdk_param_float(const sy_host_api *api, const sy_params *p,
                       const char *key, double def, double min, double max,
                       double *out, char *err, size_t err_len)
{
    char got[64];
    double v = 0;
    int rc = api->param_float(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK && v >= min && v <= max) {
        *out = v;
        return SY_OK;
    }
    if (rc == SY_OK)
        snprintf(got, sizeof got, "%g", v);
    else
        describe(api, p, key, got, sizeof got);
    sy_sdk_errf(err, err_len, "%s: must be a number between %g and %g, got %s",
                key, min, max, got);
    return rc == SY_OK ? SY_ERANGE : SY_ETYPE;
}

/* Reads true or false. */
int sy_sdk_param_bool(const sy_host_api *api, const sy_params *p,
                      const char *key, bool def, bool *out, char *err,
                      size_t err_len)
{
    char got[64];
    int v = 0;
    int rc = api->param_bool(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK) {
        *out = v != 0;
        return SY_OK;
    }
    sy_sdk_errf(err, err_len, "%s: must be true or false, got %s", key,
                describe(api, p, key, got, sizeof got));
    return SY_ETYPE;
}

/* Reads a string; `def` (may be NULL) when absent. */
int sy_sdk_param_string(const sy_host_api *api, const sy_params *p,
                        const char *key, const char *def, const char **out,
                        char *err, size_t err_len)
{
    char got[64];
    const char *v = NULL;
    int rc = api->param_string(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK) {
        *out = v;
        return SY_OK;
    }
    sy_sdk_errf(err, err_len, "%s: must be a string, got %s", key,
                describe(api, p, key, got, sizeof got));
    return SY_ETYPE;
}

/* SY_OK when `key` is present (any type), else SY_EINVAL with
 * "KEY: required, but not set". */
int sy_sdk_param_required(const sy_host_api *api, const sy_params *p,
                          const char *key, char *err, size_t err_len)
{
    if (api->param_type(p, key) != SY_PARAM_NONE)
        return SY_OK;
    sy_sdk_errf(err, err_len, "%s: required, but not set", key);
    return SY_EINVAL;
}

/* Reads a duration ("250ms", "5s", "1m", "2h", "1d", compounds such as
 * "1h30m", or integer milliseconds) in [min_ms, max_ms] as milliseconds. */
int sy_sdk_param_duration_ms(const sy_host_api *api, const sy_params *p,
                             const char *key, int64_t def, int64_t min_ms,
                             int64_t max_ms, int64_t *out, char *err,
                             size_t err_len)
{
    char got[64], lo[48], hi[48];
    int64_t v = 0;
    int rc = api->param_duration_ms(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK && v >= min_ms && v <= max_ms) {
        *out = v;
        return SY_OK;
    }
    if (rc != SY_OK) {
        sy_sdk_errf(err, err_len,
                    "%s: must be a duration such as \"250ms\", "
                    "\"5s\", \"1m\" or \"2h\" (or integer milliseconds), "
                    "got %s",
                    key, describe(api, p, key, got, sizeof got));
        return rc == SY_ETYPE ? SY_ETYPE : SY_EINVAL;
    }
    sy_sdk_format_ms(v, got, sizeof got);
    sy_sdk_format_ms(min_ms, lo, sizeof lo);
    sy_sdk_format_ms(max_ms, hi, sizeof hi);
    if (max_ms == INT64_MAX)
        sy_sdk_errf(err, err_len,
                    "%s: must be a duration of at least %s, "
                    "got %s",
                    key, lo, got);
    else
        sy_sdk_errf(err, err_len,
                    "%s: must be a duration between %s and %s, "
                    "got %s",
                    key, lo, hi, got);
    return SY_ERANGE;
}
