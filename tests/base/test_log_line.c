/* The log's three forms: the human line, the journal's "<N>" lines, JSON
 * lines that always parse, whatever the message holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/log_line.h"

/* 2021-02-03T04:05:06.789Z */
#define WHEN 1612325106789LL

static void test_text(void **state)
{
    (void)state;
    char buf[512];
    size_t n = sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_TEXT, WHEN, SY_LOG_WARN, "serve",
                           NULL, "hello");
    assert_string_equal(buf, "2021-02-03T04:05:06.789Z warn  serve: hello\n");
    assert_int_equal(n, strlen(buf));
    sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_TEXT, WHEN, SY_LOG_INFO, NULL, NULL, "x");
    assert_string_equal(buf, "2021-02-03T04:05:06.789Z info  x\n");
}

static void test_journal(void **state)
{
    (void)state;
    char buf[512];
    static const struct { sy_log_level level; const char *want; } cases[] = {
        {SY_LOG_ERROR, "<3>engine: m\n"},
        {SY_LOG_WARN, "<4>engine: m\n"},
        {SY_LOG_INFO, "<6>engine: m\n"},
        {SY_LOG_DEBUG, "<7>engine: m\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_JOURNAL, WHEN, cases[i].level, "engine", NULL,
                    "m");
        assert_string_equal(buf, cases[i].want);
    }
    /* No timestamp (the journal adds its own); every line prefixed. */
    sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_JOURNAL, WHEN, SY_LOG_ERROR, "reload", NULL,
                "first\nsecond\n");
    assert_string_equal(buf, "<3>reload: first\n<3>reload: second\n");
}

static json_t *parse(const char *line)
{
    size_t n = strlen(line);
    assert_true(n > 0 && line[n - 1] == '\n');
    assert_null(memchr(line, '\n', n - 1)); /* one line */
    json_error_t e;
    json_t *v = json_loads(line, JSON_REJECT_DUPLICATES, &e);
    if (!v)
        fail_msg("not JSON (%s): %s", e.text, line);
    return v;
}

static void test_json_fields(void **state)
{
    (void)state;
    char buf[1024];
    sy_log_fields f = {.instance = "gpu-a", .run = 42, .task = "public::wf::t", .attempt = 3};
    sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_JSON, WHEN, SY_LOG_ERROR, "gpu-a", &f,
                "said \"no\"\n\tand\x01 left \\");
    json_t *v = parse(buf);
    assert_string_equal(json_string_value(json_object_get(v, "time")),
                        "2021-02-03T04:05:06.789Z");
    assert_string_equal(json_string_value(json_object_get(v, "level")), "error");
    assert_string_equal(json_string_value(json_object_get(v, "source")), "gpu-a");
    assert_string_equal(json_string_value(json_object_get(v, "message")),
                        "said \"no\"\n\tand\x01 left \\");
    assert_string_equal(json_string_value(json_object_get(v, "instance")), "gpu-a");
    assert_int_equal(json_integer_value(json_object_get(v, "run")), 42);
    assert_string_equal(json_string_value(json_object_get(v, "task")), "public::wf::t");
    assert_int_equal(json_integer_value(json_object_get(v, "attempt")), 3);
    json_decref(v);
    /* Fields not known are left out, not written empty. */
    sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_JSON, WHEN, SY_LOG_INFO, NULL, NULL, "plain");
    v = parse(buf);
    assert_int_equal(json_object_size(v), 3);
    assert_null(json_object_get(v, "source"));
    json_decref(v);
}

static void test_json_bad_utf8(void **state)
{
    (void)state;
    char buf[512];
    /* A stray continuation byte, a truncated sequence, an overlong '/', a
     * surrogate; then valid two-, three- and four-byte characters. */
    sy_log_line(buf, sizeof buf, SY_LOG_FORMAT_JSON, WHEN, SY_LOG_INFO, "p", NULL,
                "a\x80 b\xE2\x82 c\xC0\xAF d\xED\xA0\x80 \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    json_t *v = parse(buf);
    const char *m = json_string_value(json_object_get(v, "message"));
    assert_non_null(m);
    assert_non_null(strstr(m, "a\xEF\xBF\xBD b"));
    assert_non_null(strstr(m, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));
    json_decref(v);
}

/* A message longer than the buffer is cut, and each form still ends its
 * line; JSON still parses, with its fields after the message. */
static void test_cut(void **state)
{
    (void)state;
    char msg[4000];
    memset(msg, '"', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    char buf[1024];
    sy_log_fields f = {.run = 7, .attempt = 1};
    for (int fmt = SY_LOG_FORMAT_TEXT; fmt <= SY_LOG_FORMAT_JSON; fmt++) {
        size_t n = sy_log_line(buf, sizeof buf, (sy_log_format)fmt, WHEN, SY_LOG_INFO, "w", &f,
                               msg);
        assert_true(n < sizeof buf);
        assert_int_equal(n, strlen(buf));
        assert_int_equal(buf[n - 1], '\n');
    }
    json_t *v = parse(buf);
    assert_int_equal(json_integer_value(json_object_get(v, "run")), 7);
    assert_true(strlen(json_string_value(json_object_get(v, "message"))) > 100);
    json_decref(v);
}

static void test_journal_stream(void **state)
{
    (void)state;
    assert_true(sy_log_journal_stream_is("8:12345", 8, 12345));
    assert_false(sy_log_journal_stream_is("8:12345", 8, 12346));
    assert_false(sy_log_journal_stream_is("9:12345", 8, 12345));
    assert_false(sy_log_journal_stream_is(NULL, 8, 12345));
    assert_false(sy_log_journal_stream_is("", 0, 0));
    assert_false(sy_log_journal_stream_is("8:", 8, 0));
    assert_false(sy_log_journal_stream_is("8:12345x", 8, 12345));
    assert_false(sy_log_journal_stream_is(":12345", 0, 12345));
}

static void test_format_words(void **state)
{
    (void)state;
    sy_log_format f = SY_LOG_FORMAT_TEXT;
    assert_true(sy_log_format_parse("json", &f));
    assert_int_equal(f, SY_LOG_FORMAT_JSON);
    assert_true(sy_log_format_parse("journal", &f));
    assert_int_equal(f, SY_LOG_FORMAT_JOURNAL);
    assert_true(sy_log_format_parse("text", &f));
    assert_int_equal(f, SY_LOG_FORMAT_TEXT);
    assert_false(sy_log_format_parse("JSON", &f));
    assert_false(sy_log_format_parse("auto", &f));
    assert_false(sy_log_format_parse(NULL, &f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_journal),
        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_json_bad_utf8),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_journal_stream),
        cmocka_unit_test(test_format_words),
    };
    return cmocka_run_group_tests_name("log_line", tests, NULL, NULL);
}
