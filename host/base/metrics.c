/* Histograms with fixed buckets, and the Prometheus text format. */
#include "base/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* The buckets follow the client libraries' 1-2.5-5 steps, widened at both
 * ends to what a host sees: a dispatch is often under a millisecond, a
 * GPU task may take hours, a submit call a few microseconds. */
const int64_t sy_metrics_latency_ms[] = {1,    2,    5,     10,    25,    50,     100,
                                         250,  500,  1000,  2500,  5000,  10000,  30000,
                                         60000, 300000, 900000, 3600000};
const size_t sy_metrics_latency_ms_n = SY_ARRAY_LEN(sy_metrics_latency_ms);
const int64_t sy_metrics_duration_ms[] = {10,     50,     100,     250,     500,    1000,
                                          2500,   5000,   10000,   30000,   60000,  300000,
                                          900000, 1800000, 3600000, 7200000, 21600000};
const size_t sy_metrics_duration_ms_n = SY_ARRAY_LEN(sy_metrics_duration_ms);
const int64_t sy_metrics_call_ns[] = {1000,    2500,     5000,      10000,     25000,
                                      50000,   100000,   250000,    500000,    1000000,
                                      5000000, 10000000, 100000000, 1000000000};
const size_t sy_metrics_call_ns_n = SY_ARRAY_LEN(sy_metrics_call_ns);
const int64_t sy_metrics_write_ns[] = {100000,    250000,    500000,    1000000,   2500000,
                                       5000000,   10000000,  25000000,  50000000,  100000000,
                                       250000000, 500000000, 1000000000, 2500000000,
                                       10000000000};
const size_t sy_metrics_write_ns_n = SY_ARRAY_LEN(sy_metrics_write_ns);
const int64_t sy_metrics_rows[] = {1,   2,    5,    10,   20,   50,    100,  200,
                                   500, 1000, 2000, 5000, 10000, 20000};
const size_t sy_metrics_rows_n = SY_ARRAY_LEN(sy_metrics_rows);

void sy_histogram_init(sy_histogram *h, const int64_t *bounds, size_t n, double per_base)
{
    memset(h, 0, sizeof *h);
    h->bounds = bounds;
    h->n_bounds = n < SY_HISTOGRAM_MAX ? n : SY_HISTOGRAM_MAX;
    h->per_base = per_base > 0 ? per_base : 1.0;
}

uint64_t sy_histogram_cumulative(const sy_histogram *h, size_t i)
{
    uint64_t c = 0;
    for (size_t k = 0; k <= i && k <= h->n_bounds; k++)
        c += h->counts[k];
    return c;
}

void sy_expo_family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s ", name);
    /* HELP escapes backslash and newline only (a quote is plain text). */
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            fputc(*p, f);
    }
    fprintf(f, "\n# TYPE %s %s\n", name, type);
}

void sy_expo_escape(FILE *f, const char *value)
{
    for (const char *p = value ? value : ""; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '"')
            fputs("\\\"", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            fputc(*p, f);
    }
}

void sy_expo_value(FILE *f, double v)
{
    if (isnan(v))
        fputs("NaN", f);
    else if (isinf(v))
        fputs(v > 0 ? "+Inf" : "-Inf", f);
    else if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) /* 2^53: exact */
        fprintf(f, "%.0f", v);
    else {
        char buf[32];
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, sizeof buf, "%.*g", digits, v);
            if (strtod(buf, NULL) == v)
                break;
        }
        fputs(buf, f);
    }
}

void sy_expo_sample(FILE *f, const char *name, const char *labels, double v)
{
    if (labels && *labels)
        fprintf(f, "%s{%s} ", name, labels);
    else
        fprintf(f, "%s ", name);
    sy_expo_value(f, v);
    fputc('\n', f);
}

void sy_expo_histogram(FILE *f, const char *name, const char *labels, const sy_histogram *h)
{
    const char *sep = labels && *labels ? "," : "";
    uint64_t c = 0;
    for (size_t i = 0; i <= h->n_bounds; i++) {
        c += h->counts[i];
        fprintf(f, "%s_bucket{%s%sle=\"", name, labels ? labels : "", sep);
        if (i < h->n_bounds)
            sy_expo_value(f, (double)h->bounds[i] / h->per_base);
        else
            fputs("+Inf", f);
        fprintf(f, "\"} %llu\n", (unsigned long long)c);
    }
    char suffixed[256];
    snprintf(suffixed, sizeof suffixed, "%s_sum", name);
    sy_expo_sample(f, suffixed, labels, (double)h->sum / h->per_base);
    snprintf(suffixed, sizeof suffixed, "%s_count", name);
    sy_expo_sample(f, suffixed, labels, (double)h->count);
}

char *sy_expo_label(char *buf, size_t len, const char *key, const char *value)
{
    size_t at = strnlen(buf, len);
    /* Room for the closing quote and the NUL is kept back, and an escape
     * is written whole or not at all, so a cut value is still valid text. */
    int n = snprintf(buf + at, len - at, "%s%s=\"", at ? "," : "", key);
    if (n < 0 || (size_t)n + 2 > len - at) {
        buf[at] = '\0';
        return buf;
    }
    at += (size_t)n;
    for (const char *p = value ? value : ""; *p; p++) {
        char esc = *p == '\\' ? '\\' : *p == '"' ? '"' : *p == '\n' ? 'n' : 0;
        size_t need = esc ? 2 : 1;
        if (at + need + 2 > len)
            break;
        if (esc) {
            buf[at++] = '\\';
            buf[at++] = esc;
        } else {
            buf[at++] = *p;
        }
    }
    buf[at++] = '"';
    buf[at] = '\0';
    return buf;
}
