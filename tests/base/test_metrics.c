/* The instruments and the text format: buckets by their upper bound,
 * cumulative counts ending with +Inf, _sum and _count in the base unit,
 * label values and HELP text escaped as the format says, values spelled
 * as Prometheus reads them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/metrics.h"

/* What the writer wrote, as a string (freed by the caller). */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
} sink;

static void sink_open(sink *s)
{
    s->text = NULL;
    s->len = 0;
    s->f = open_memstream(&s->text, &s->len);
    assert_non_null(s->f);
}

static char *sink_close(sink *s)
{
    assert_int_equal(fclose(s->f), 0);
    return s->text;
}

static const int64_t bounds[] = {10, 100, 1000};

/* An observation goes to the first bucket whose bound it does not pass: a
 * value equal to a bound is in that bound's bucket. */
static void test_buckets(void **state)
{
    (void)state;
    sy_histogram h;
    sy_histogram_init(&h, bounds, 3, 1000.0);
    sy_histogram_observe(&h, 0);
    sy_histogram_observe(&h, 10);
    sy_histogram_observe(&h, 11);
    sy_histogram_observe(&h, 1000);
    sy_histogram_observe(&h, 5000);
    assert_int_equal(h.counts[0], 2);
    assert_int_equal(h.counts[1], 1);
    assert_int_equal(h.counts[2], 1);
    assert_int_equal(h.counts[3], 1); /* above every bound */
    assert_int_equal(h.count, 5);
    assert_int_equal(h.sum, 6021);
    assert_int_equal(sy_histogram_cumulative(&h, 0), 2);
    assert_int_equal(sy_histogram_cumulative(&h, 1), 3);
    assert_int_equal(sy_histogram_cumulative(&h, 2), 4);
    assert_int_equal(sy_histogram_cumulative(&h, 3), 5);
}

/* More bounds than a histogram holds are cut, not written past its
 * array. */
static void test_too_many_bounds(void **state)
{
    (void)state;
    int64_t many[SY_HISTOGRAM_MAX + 5];
    for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
        many[i] = (int64_t)i;
    sy_histogram h;
    sy_histogram_init(&h, many, sizeof many / sizeof many[0], 1.0);
    assert_int_equal(h.n_bounds, SY_HISTOGRAM_MAX);
    sy_histogram_observe(&h, 1000);
    assert_int_equal(h.counts[SY_HISTOGRAM_MAX], 1);
}

/* Cumulative buckets in seconds, then +Inf equal to _count, then _sum in
 * seconds; labels come before le. */
static void test_histogram_text(void **state)
{
    (void)state;
    sy_histogram h;
    sy_histogram_init(&h, bounds, 3, 1000.0); /* ms as seconds */
    sy_histogram_observe(&h, 5);
    sy_histogram_observe(&h, 50);
    sy_histogram_observe(&h, 50);
    sy_histogram_observe(&h, 2000);
    sink s;
    sink_open(&s);
    sy_expo_histogram(s.f, "x_seconds", "a=\"b\"", &h);
    char *text = sink_close(&s);
    assert_string_equal(text, "x_seconds_bucket{a=\"b\",le=\"0.01\"} 1\n"
                              "x_seconds_bucket{a=\"b\",le=\"0.1\"} 3\n"
                              "x_seconds_bucket{a=\"b\",le=\"1\"} 3\n"
                              "x_seconds_bucket{a=\"b\",le=\"+Inf\"} 4\n"
                              "x_seconds_sum{a=\"b\"} 2.105\n"
                              "x_seconds_count{a=\"b\"} 4\n");
    free(text);
}

/* Without labels, no empty braces except around le. */
static void test_histogram_no_labels(void **state)
{
    (void)state;
    sy_histogram h;
    sy_histogram_init(&h, bounds, 1, 1.0);
    sink s;
    sink_open(&s);
    sy_expo_histogram(s.f, "rows", NULL, &h);
    char *text = sink_close(&s);
    assert_string_equal(text, "rows_bucket{le=\"10\"} 0\n"
                              "rows_bucket{le=\"+Inf\"} 0\n"
                              "rows_sum 0\n"
                              "rows_count 0\n");
    free(text);
}

/* Backslash, double quote and newline are escaped in a label value; other
 * bytes (UTF-8 included) pass as they are. */
static void test_label_escaping(void **state)
{
    (void)state;
    char buf[128] = "";
    sy_expo_label(buf, sizeof buf, "executor", "a\\b\"c\nd é");
    sy_expo_label(buf, sizeof buf, "plugin", "p");
    assert_string_equal(buf, "executor=\"a\\\\b\\\"c\\nd é\",plugin=\"p\"");
    sink s;
    sink_open(&s);
    sy_expo_escape(s.f, "x\"y\\z\n");
    char *text = sink_close(&s);
    assert_string_equal(text, "x\\\"y\\\\z\\n");
    free(text);
}

/* A value too long for the buffer is cut between escapes, and the label
 * is still closed: never half an escape, never an open quote. */
static void test_label_cut(void **state)
{
    (void)state;
    char buf[16] = "";
    sy_expo_label(buf, sizeof buf, "k", "\"\"\"\"\"\"\"\"");
    size_t n = strlen(buf);
    assert_true(n < sizeof buf);
    assert_int_equal(buf[n - 1], '"');
    assert_memory_equal(buf, "k=\"", 3);
    /* Between the quotes only whole \" pairs. */
    assert_int_equal((n - 4) % 2, 0);
    for (size_t i = 3; i + 1 < n; i += 2)
        assert_memory_equal(buf + i, "\\\"", 2);
    /* No room even for the key: nothing is added. */
    char tiny[4] = "";
    sy_expo_label(tiny, sizeof tiny, "key", "v");
    assert_string_equal(tiny, "");
}

/* HELP escapes backslash and newline, not quotes; TYPE follows. */
static void test_family(void **state)
{
    (void)state;
    sink s;
    sink_open(&s);
    sy_expo_family(s.f, "m_total", "counter", "a \"b\" c\\d\ne");
    char *text = sink_close(&s);
    assert_string_equal(text, "# HELP m_total a \"b\" c\\\\d\\ne\n# TYPE m_total counter\n");
    free(text);
}

/* Integers exactly (even past 2^32), fractions in the fewest digits that
 * read back, the infinities and NaN as Prometheus spells them. */
static void test_values(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {42, "42"},
        {-3, "-3"},
        {1e12, "1000000000000"},
        {0.1, "0.1"},
        {1e-6, "1e-06"},
        {2.105, "2.105"},
        {1.0 / 3.0, "0.3333333333333333"},
        {INFINITY, "+Inf"},
        {-INFINITY, "-Inf"},
        {NAN, "NaN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sink s;
        sink_open(&s);
        sy_expo_value(s.f, cases[i].v);
        char *text = sink_close(&s);
        assert_string_equal(text, cases[i].want);
        free(text);
    }
}

/* The bucket tables are ascending and within a histogram's size. */
static void test_tables(void **state)
{
    (void)state;
    const struct {
        const int64_t *v;
        size_t n;
    } tables[] = {
        {sy_metrics_latency_ms, sy_metrics_latency_ms_n},
        {sy_metrics_duration_ms, sy_metrics_duration_ms_n},
        {sy_metrics_call_ns, sy_metrics_call_ns_n},
        {sy_metrics_write_ns, sy_metrics_write_ns_n},
        {sy_metrics_rows, sy_metrics_rows_n},
    };
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        assert_true(tables[t].n <= SY_HISTOGRAM_MAX);
        for (size_t i = 1; i < tables[t].n; i++)
            assert_true(tables[t].v[i] > tables[t].v[i - 1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_too_many_bounds),
        cmocka_unit_test(test_histogram_text),
        cmocka_unit_test(test_histogram_no_labels),
        cmocka_unit_test(test_label_escaping),
        cmocka_unit_test(test_label_cut),
        cmocka_unit_test(test_family),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
