/*
 * base/metrics.h -- in-process instruments and the Prometheus text format.
 *
 * A histogram counts observations into fixed buckets chosen when it is
 * made: an observation is a few integer comparisons and three additions,
 * no lock and no allocation, so the engine can make several per task on
 * its loop.  Values are integers in the instrument's own unit (ns, ms,
 * rows), turned into the exported base unit (seconds) when they are
 * written.  Counters and gauges are plain integers in their
 * owner's struct: they need no type of their own.
 *
 * The writers emit the text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): a
 * family's HELP and TYPE lines once, then its samples; label values
 * escaped (backslash, double quote, newline).
 *
 * Threads: an instrument belongs to one thread (the engine's loop); the
 * writers keep no state.
 */
#ifndef SY_METRICS_H
#define SY_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The most finite buckets a histogram has; +Inf is one more. */
#define SY_HISTOGRAM_MAX 20

typedef struct sy_histogram {
    const int64_t *bounds; /* upper bounds (inclusive), ascending, in the
                              instrument's unit; borrowed (static tables) */
    size_t n_bounds;       /* at most SY_HISTOGRAM_MAX */
    double per_base;       /* units in one exported base unit (1e9 for
                              ns as seconds): exported = value / per_base,
                              a division by an exact power of ten, so 1000
                              ns is written 1e-06, not 1.0000000000000002e-06 */
    uint64_t counts[SY_HISTOGRAM_MAX + 1]; /* per bucket, not cumulative;
                                              the last is above every bound */
    uint64_t count;
    int64_t sum;           /* in the unit */
} sy_histogram;

/* Bucket tables, in the unit their name says. */
extern const int64_t sy_metrics_latency_ms[];   /* 1 ms .. 1 h */
extern const size_t sy_metrics_latency_ms_n;
extern const int64_t sy_metrics_duration_ms[];  /* 10 ms .. 6 h */
extern const size_t sy_metrics_duration_ms_n;
extern const int64_t sy_metrics_call_ns[];      /* 1 us .. 1 s */
extern const size_t sy_metrics_call_ns_n;
extern const int64_t sy_metrics_write_ns[];     /* 100 us .. 10 s */
extern const size_t sy_metrics_write_ns_n;
extern const int64_t sy_metrics_rows[];         /* 1 .. 20,000 */
extern const size_t sy_metrics_rows_n;

/* Empties h and gives it `bounds` (n of them, at most SY_HISTOGRAM_MAX:
 * more are ignored) and `per_base`. */
void sy_histogram_init(sy_histogram *h, const int64_t *bounds, size_t n, double per_base);

/* Counts v (in the unit) into its bucket: the first bound >= v. */
static inline void sy_histogram_observe(sy_histogram *h, int64_t v)
{
    size_t i = 0;
    while (i < h->n_bounds && v > h->bounds[i])
        i++;
    h->counts[i]++;
    h->count++;
    h->sum += v;
}

/* Observations <= bound i (i == n_bounds: all of them). */
uint64_t sy_histogram_cumulative(const sy_histogram *h, size_t i);

/* --- the text format ------------------------------------------------------ */

/* `# HELP name help` (help escaped: backslash and newline) and
 * `# TYPE name type`. */
void sy_expo_family(FILE *f, const char *name, const char *type, const char *help);

/* A label value as the format wants it between its quotes. */
void sy_expo_escape(FILE *f, const char *value);

/* A sample value: integers exactly, others in the fewest digits that read
 * back as the same double; +Inf, -Inf and NaN as the format spells them. */
void sy_expo_value(FILE *f, double v);

/* One sample: `name{labels} value`.  `labels` is the text between the
 * braces, already escaped (NULL or "": no braces). */
void sy_expo_sample(FILE *f, const char *name, const char *labels, double v);

/* A histogram's samples (`name_bucket{labels,le="..."}` for each bound
 * and +Inf, cumulative, then `name_sum` and `name_count`); the family
 * line is the caller's. */
void sy_expo_histogram(FILE *f, const char *name, const char *labels, const sy_histogram *h);

/* Writes `key="value"` (escaped) into buf, after a comma when buf is not
 * empty; truncates at len.  Returns buf, for building label sets. */
char *sy_expo_label(char *buf, size_t len, const char *key, const char *value);

#endif
