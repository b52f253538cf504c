/* Unit tests for the JSON context: merging (host/context.c), task output
 * parsing, `when` conditions and paths (host/workflow/condition.c), and the retry delay
 * arithmetic (host/retry.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "workflow/context.h"
#include "workflow/workflow.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad test JSON %s: %s", text, e.text);
    return v;
}

/* Whether `v` is the JSON value `text` (numbers compared as jansson does). */
static void assert_json(const json_t *v, const char *text)
{
    json_t *want = parse(text);
    if (!json_equal(v, want)) {
        char *got = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
        char msg[512];
        snprintf(msg, sizeof msg, "got %s, want %s", got ? got : "(null)", text);
        free(got);
        json_decref(want);
        fail_msg("%s", msg);
    }
    json_decref(want);
}

/* --- merge -------------------------------------------------------------------- */

static void merge_text(json_t *dst, const char *src_text)
{
    json_t *src = parse(src_text);
    assert_int_equal(sy_json_merge(dst, src), 0);
    json_decref(src);
}

static void test_merge_recursive(void **state)
{
    (void)state;
    json_t *dst = parse("{\"a\":{\"x\":1,\"y\":{\"p\":1}},\"b\":1}");
    merge_text(dst, "{\"a\":{\"y\":{\"q\":2},\"z\":3},\"c\":4}");
    assert_json(dst, "{\"a\":{\"x\":1,\"y\":{\"p\":1,\"q\":2},\"z\":3},\"b\":1,\"c\":4}");
    json_decref(dst);
}

static void test_merge_replaces(void **state)
{
    (void)state;
    json_t *dst = parse("{\"obj\":{\"k\":1},\"num\":1,\"arr\":[1,2,3],\"s\":\"x\",\"n\":5}");
    merge_text(dst, "{\"obj\":7,\"num\":{\"now\":\"object\"},\"arr\":[9],\"s\":null,"
                    "\"n\":[1]}");
    assert_json(dst, "{\"obj\":7,\"num\":{\"now\":\"object\"},\"arr\":[9],\"s\":null,"
                     "\"n\":[1]}");
    /* Later wins, in order. */
    merge_text(dst, "{\"arr\":[],\"obj\":{\"back\":true}}");
    assert_json(dst, "{\"obj\":{\"back\":true},\"num\":{\"now\":\"object\"},\"arr\":[],"
                     "\"s\":null,\"n\":[1]}");
    json_decref(dst);
}

/* What merge puts into dst is a copy: a later merge into dst, or a change
 * to dst, never reaches the source it came from. */
static void test_merge_no_aliasing(void **state)
{
    (void)state;
    json_t *dst = json_object();
    json_t *first = parse("{\"cfg\":{\"a\":1},\"list\":[1]}");
    assert_int_equal(sy_json_merge(dst, first), 0);
    merge_text(dst, "{\"cfg\":{\"b\":2}}");
    json_array_append_new(json_object_get(dst, "list"), json_integer(2));
    assert_json(first, "{\"cfg\":{\"a\":1},\"list\":[1]}");
    assert_json(dst, "{\"cfg\":{\"a\":1,\"b\":2},\"list\":[1,2]}");
    json_decref(first);
    json_decref(dst);
}

static void test_merge_edges(void **state)
{
    (void)state;
    json_t *dst = parse("{\"a\":{\"b\":1}}");
    json_t *arr = parse("[1]");
    assert_int_equal(sy_json_merge(dst, arr), -1);
    assert_int_equal(sy_json_merge(arr, dst), -1);
    assert_int_equal(sy_json_merge(NULL, dst), -1);
    assert_int_equal(sy_json_merge(dst, NULL), -1);
    assert_int_equal(sy_json_merge(dst, dst), 0);
    assert_json(dst, "{\"a\":{\"b\":1}}");
    merge_text(dst, "{}");
    assert_json(dst, "{\"a\":{\"b\":1}}");
    /* The same object inside both sides merges into itself untouched. */
    json_t *src = json_pack("{s:O}", "a", json_object_get(dst, "a"));
    assert_int_equal(sy_json_merge(dst, src), 0);
    assert_json(dst, "{\"a\":{\"b\":1}}");
    json_decref(src);
    json_decref(arr);
    json_decref(dst);
}

/* Deeper than the parser allows: merging walks its own stack. */
static void test_merge_deep(void **state)
{
    (void)state;
    enum { DEPTH = 3000 };
    json_t *dst = json_object(), *src = json_object();
    json_t *d = dst, *s = src;
    for (int i = 0; i < DEPTH; i++) {
        json_t *dn = json_object(), *sn = json_object();
        json_object_set_new(d, "k", dn);
        json_object_set_new(s, "k", sn);
        d = dn;
        s = sn;
    }
    json_object_set_new(d, "old", json_true());
    json_object_set_new(s, "new", json_true());
    assert_int_equal(sy_json_merge(dst, src), 0);
    const json_t *p = dst;
    for (int i = 0; i < DEPTH; i++)
        p = json_object_get(p, "k");
    assert_true(json_is_true(json_object_get(p, "old")));
    assert_true(json_is_true(json_object_get(p, "new")));
    json_decref(src);
    json_decref(dst);
}

/* --- output ------------------------------------------------------------------------ */

static void expect_output_error(const char *text, size_t len, size_t max,
                                const char *needle1, const char *needle2)
{
    char err[256] = "";
    json_t *v = sy_output_parse(text, len, max, err, sizeof err);
    if (v)
        json_decref(v);
    assert_null(v);
    if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2)))
        fail_msg("error \"%s\" lacks \"%s\" / \"%s\"", err, needle1, needle2 ? needle2 : "");
}

static void test_output_ok(void **state)
{
    (void)state;
    char err[128];
    json_t *v = sy_output_parse(NULL, 0, 100, err, sizeof err);
    assert_json(v, "{}");
    json_decref(v);
    v = sy_output_parse("", 0, 100, err, sizeof err);
    assert_json(v, "{}");
    json_decref(v);
    v = sy_output_parse(" \n\t", 3, 100, err, sizeof err);
    assert_json(v, "{}");
    json_decref(v);
    /* Only `len` bytes count, and no NUL is needed. */
    const char text[] = "{\"rows\":3}garbage";
    v = sy_output_parse(text, 10, 10, err, sizeof err);
    assert_json(v, "{\"rows\":3}");
    json_decref(v);
    /* 0: no limit. */
    v = sy_output_parse(text, 10, 0, err, sizeof err);
    assert_json(v, "{\"rows\":3}");
    json_decref(v);
}

static void test_output_errors(void **state)
{
    (void)state;
    expect_output_error("[1,2]", 5, 100, "output is not a JSON object: got an array", NULL);
    expect_output_error("\"s\"", 3, 100, "output is not a JSON object: got a string", NULL);
    expect_output_error("3.5", 3, 100, "got a number", NULL);
    expect_output_error("true", 4, 100, "got a boolean", NULL);
    expect_output_error("null", 4, 100, "got null", NULL);
    expect_output_error("{\"a\":", 5, 100, "output is not valid JSON: ", "at line 1 column");
    expect_output_error("{\"a\":1} x", 9, 100, "output is not valid JSON", "column");
    expect_output_error("{\"a\":\"\xff\"}", 8, 100, "output is not valid JSON", NULL);
    expect_output_error("{\"a\":1}\0", 8, 100, "output is not valid JSON", NULL);
    expect_output_error("\0", 1, 100, "output is not valid JSON", NULL);
}

static void test_output_size(void **state)
{
    (void)state;
    expect_output_error("{\"a\":1}", 7, 6,
                        "output is 7 bytes, more than max_context_bytes 6 bytes", NULL);
    size_t mib = 1024 * 1024;
    char *big = malloc(17 * mib);
    assert_non_null(big);
    memset(big, ' ', 17 * mib);
    expect_output_error(big, 17 * mib, 16 * mib,
                        "output is 17 MiB, more than max_context_bytes 16 MiB", NULL);
    expect_output_error(big, 16 * mib + 1, 16 * mib,
                        "output is 16.0 MiB (16777217 bytes), more than max_context_bytes 16 MiB",
                        NULL);
    expect_output_error(big, 1536, 1024, "output is 1.5 KiB (1536 bytes)",
                        "max_context_bytes 1 KiB");
    /* Exactly the limit is allowed. */
    memcpy(big, "{}", 2);
    char err[64];
    json_t *v = sy_output_parse(big, 16 * mib, 16 * mib, err, sizeof err);
    assert_json(v, "{}");
    json_decref(v);
    free(big);
}

/* Nesting a hostile plugin could send: refused, never a crash. */
static void test_output_deep(void **state)
{
    (void)state;
    enum { DEPTH = 100000 };
    char *text = malloc(2 * DEPTH + 16);
    assert_non_null(text);
    size_t n = 0;
    text[n++] = '{';
    memcpy(text + n, "\"a\":", 4);
    n += 4;
    for (int i = 0; i < DEPTH; i++)
        text[n++] = '[';
    for (int i = 0; i < DEPTH; i++)
        text[n++] = ']';
    text[n++] = '}';
    expect_output_error(text, n, 0, "output is not valid JSON", "depth");
    free(text);
}

/* --- paths and conditions ------------------------------------------------------------- */

static const char *ctx_text =
    "{\"mode\":\"full\",\"rows\":10,\"ratio\":0.5,\"name\":\"abc\","
    "\"tags\":[\"nightly\",\"x\",3],\"obj\":{\"k\":1,\"n\":null},"
    "\"list\":[{\"id\":7}],\"0\":\"zero\",\"flag\":false}";

static void test_json_path(void **state)
{
    (void)state;
    json_t *ctx = parse(ctx_text);
    assert_ptr_equal(sy_json_path(ctx, "$"), ctx);
    assert_ptr_equal(sy_json_path(ctx, ""), ctx);
    assert_json(sy_json_path(ctx, "$.rows"), "10");
    assert_json(sy_json_path(ctx, "rows"), "10");
    assert_json(sy_json_path(ctx, "list.0.id"), "7");
    assert_json(sy_json_path(ctx, "$.list.0"), "{\"id\":7}");
    assert_json(sy_json_path(ctx, "tags.2"), "3");
    assert_json(sy_json_path(ctx, "obj.n"), "null");
    assert_json(sy_json_path(ctx, "0"), "\"zero\""); /* a key, not an index */
    assert_null(sy_json_path(ctx, "list.1"));
    assert_null(sy_json_path(ctx, "tags.-1"));
    assert_null(sy_json_path(ctx, "tags.x"));
    assert_null(sy_json_path(ctx, "tags.99999999999999999999"));
    assert_null(sy_json_path(ctx, "mode.x"));
    assert_null(sy_json_path(ctx, "obj..k"));
    assert_null(sy_json_path(ctx, "obj.k."));
    assert_null(sy_json_path(ctx, ".obj"));
    assert_null(sy_json_path(ctx, "missing"));
    assert_null(sy_json_path(ctx, "$$"));
    assert_null(sy_json_path(NULL, "a"));
    assert_null(sy_json_path(ctx, NULL));
    json_decref(ctx);
}

/* Evaluates one condition `path op value` on ctx_text. */
static bool holds(const char *path, sy_cond_op op, const char *value)
{
    json_t *ctx = parse(ctx_text);
    sy_cond c = {(char *)path, op, parse(value)};
    bool r = sy_conds_hold(&c, 1, ctx);
    json_decref(c.value);
    json_decref(ctx);
    return r;
}

static void test_cond_exists(void **state)
{
    (void)state;
    assert_true(holds("mode", SY_COND_EXISTS, "true"));
    assert_true(holds("obj.n", SY_COND_EXISTS, "true")); /* present, null */
    assert_false(holds("nope", SY_COND_EXISTS, "true"));
    assert_true(holds("nope", SY_COND_EXISTS, "false"));
    assert_false(holds("mode", SY_COND_EXISTS, "false"));
    assert_true(holds("flag", SY_COND_EXISTS, "true"));
}

static void test_cond_equals(void **state)
{
    (void)state;
    assert_true(holds("mode", SY_COND_EQUALS, "\"full\""));
    assert_false(holds("mode", SY_COND_EQUALS, "\"Full\""));
    assert_true(holds("rows", SY_COND_EQUALS, "10"));
    assert_true(holds("rows", SY_COND_EQUALS, "10.0"));
    assert_false(holds("rows", SY_COND_EQUALS, "\"10\""));
    assert_true(holds("obj", SY_COND_EQUALS, "{\"n\":null,\"k\":1}"));
    assert_true(holds("flag", SY_COND_EQUALS, "false"));
    assert_false(holds("nope", SY_COND_EQUALS, "null"));
    assert_true(holds("nope", SY_COND_NOT_EQUALS, "null")); /* absent equals nothing */
    assert_true(holds("nope", SY_COND_NOT_EQUALS, "1"));
    assert_false(holds("mode", SY_COND_NOT_EQUALS, "\"full\""));
    assert_true(holds("rows", SY_COND_NOT_EQUALS, "\"10\""));
    assert_false(holds("ratio", SY_COND_NOT_EQUALS, "0.5"));
}

static void test_cond_order(void **state)
{
    (void)state;
    assert_true(holds("rows", SY_COND_GREATER_THAN, "5"));
    assert_false(holds("rows", SY_COND_GREATER_THAN, "10"));
    assert_true(holds("rows", SY_COND_GREATER_THAN, "9.5"));
    assert_true(holds("ratio", SY_COND_GREATER_THAN, "0"));
    assert_false(holds("ratio", SY_COND_LESS_THAN, "0.5"));
    assert_true(holds("ratio", SY_COND_LESS_THAN, "1"));
    assert_true(holds("rows", SY_COND_LESS_THAN, "11"));
    assert_true(holds("name", SY_COND_GREATER_THAN, "\"abb\""));
    assert_true(holds("name", SY_COND_LESS_THAN, "\"abcd\""));
    assert_false(holds("name", SY_COND_LESS_THAN, "\"ab\""));
    /* Type mismatches and missing paths never hold. */
    assert_false(holds("name", SY_COND_GREATER_THAN, "1"));
    assert_false(holds("name", SY_COND_LESS_THAN, "1"));
    assert_false(holds("rows", SY_COND_LESS_THAN, "\"z\""));
    assert_false(holds("tags", SY_COND_GREATER_THAN, "0"));
    assert_false(holds("obj.n", SY_COND_LESS_THAN, "1"));
    assert_false(holds("nope", SY_COND_GREATER_THAN, "0"));
    assert_false(holds("nope", SY_COND_LESS_THAN, "0"));
}

static void test_cond_contains(void **state)
{
    (void)state;
    assert_true(holds("name", SY_COND_CONTAINS, "\"bc\""));
    assert_true(holds("name", SY_COND_CONTAINS, "\"\""));
    assert_false(holds("name", SY_COND_CONTAINS, "\"cb\""));
    assert_true(holds("tags", SY_COND_CONTAINS, "\"nightly\""));
    assert_false(holds("tags", SY_COND_CONTAINS, "\"night\""));
    assert_true(holds("tags", SY_COND_CONTAINS, "3"));
    assert_true(holds("tags", SY_COND_CONTAINS, "3.0"));
    assert_true(holds("list", SY_COND_CONTAINS, "{\"id\":7}"));
    assert_true(holds("obj", SY_COND_CONTAINS, "\"k\""));
    assert_false(holds("obj", SY_COND_CONTAINS, "\"z\""));
    assert_false(holds("obj", SY_COND_CONTAINS, "1"));
    assert_false(holds("name", SY_COND_CONTAINS, "1"));
    assert_false(holds("rows", SY_COND_CONTAINS, "1"));
    assert_false(holds("nope", SY_COND_CONTAINS, "\"a\""));
}

static void test_conds_all(void **state)
{
    (void)state;
    json_t *ctx = parse(ctx_text);
    sy_cond c[2] = {{(char *)"mode", SY_COND_EQUALS, json_string("full")},
                    {(char *)"rows", SY_COND_GREATER_THAN, json_integer(100)}};
    assert_true(sy_conds_hold(c, 0, ctx));
    assert_true(sy_conds_hold(c, 1, ctx));
    assert_false(sy_conds_hold(c, 2, ctx));
    json_decref(c[1].value);
    c[1].value = json_integer(1);
    assert_true(sy_conds_hold(c, 2, ctx));
    json_decref(c[0].value);
    json_decref(c[1].value);
    json_decref(ctx);
}

/* --- retry delays ---------------------------------------------------------------------- */

static sy_retry policy(int64_t delay, double backoff, int64_t cap, bool jitter)
{
    return (sy_retry){.attempts = 10, .delay_ms = delay, .backoff = backoff,
                      .max_delay_ms = cap, .jitter = jitter,
                      .retry_on = SY_RETRY_ON_FAILED | SY_RETRY_ON_TIMEOUT};
}

static void test_backoff(void **state)
{
    (void)state;
    sy_retry r = policy(1000, 2.0, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 1, 0.5), 0);
    assert_int_equal(sy_retry_delay_ms(&r, 0, 0.5), 0);
    assert_int_equal(sy_retry_delay_ms(&r, 2, 0.5), 1000);
    assert_int_equal(sy_retry_delay_ms(&r, 3, 0.5), 2000);
    assert_int_equal(sy_retry_delay_ms(&r, 4, 0.5), 4000);
    assert_int_equal(sy_retry_delay_ms(&r, 11, 0.5), 512000);
    r = policy(100, 1.5, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 4, 0), 225);
    r = policy(250, 1.0, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 50, 0), 250);
    r = policy(0, 2.0, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 5, 0), 0);
    assert_int_equal(sy_retry_delay_ms(NULL, 5, 0), 0);
}

static void test_backoff_cap(void **state)
{
    (void)state;
    sy_retry r = policy(1000, 2.0, 5000, false);
    assert_int_equal(sy_retry_delay_ms(&r, 4, 0), 4000);
    assert_int_equal(sy_retry_delay_ms(&r, 5, 0), 5000);
    assert_int_equal(sy_retry_delay_ms(&r, 1000, 0), 5000);
    /* A cap below the first delay caps it too. */
    r = policy(1000, 2.0, 300, false);
    assert_int_equal(sy_retry_delay_ms(&r, 2, 0), 300);
}

static void test_backoff_saturates(void **state)
{
    (void)state;
    sy_retry r = policy(1, 2.0, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 64, 0), INT64_C(1) << 62);
    assert_int_equal(sy_retry_delay_ms(&r, 66, 0), INT64_MAX);
    assert_int_equal(sy_retry_delay_ms(&r, 1000, 0), INT64_MAX);
    assert_int_equal(sy_retry_delay_ms(&r, UINT32_MAX, 0), INT64_MAX);
    r = policy(INT64_MAX, 1000.0, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 3, 0), INT64_MAX);
    r = policy(INT64_MAX / 2, 10.0, 60000, false);
    assert_int_equal(sy_retry_delay_ms(&r, 1000, 0), 60000);
    r = policy(1000, 1e308, 0, false);
    assert_int_equal(sy_retry_delay_ms(&r, 4, 0), INT64_MAX);
}

static void test_jitter(void **state)
{
    (void)state;
    sy_retry r = policy(1000, 2.0, 0, true);
    assert_int_equal(sy_retry_delay_ms(&r, 3, 0.0), 1000);
    assert_int_equal(sy_retry_delay_ms(&r, 3, 0.5), 1500);
    int64_t top = sy_retry_delay_ms(&r, 3, 0.9999999);
    assert_true(top >= 1999 && top <= 2000);
    for (int i = 0; i < 1000; i++) {
        double rnd = i / 1000.0;
        int64_t d = sy_retry_delay_ms(&r, 3, rnd);
        assert_true(d >= 1000 && d <= 2000);
    }
    /* Out-of-range draws are clamped, never trusted. */
    assert_int_equal(sy_retry_delay_ms(&r, 3, -1.0), 1000);
    assert_int_equal(sy_retry_delay_ms(&r, 3, 7.0), 2000);
    assert_int_equal(sy_retry_delay_ms(&r, 3, NAN), 1000);
    /* Jitter applies after the cap, within [cap/2, cap]. */
    r = policy(1000, 2.0, 3000, true);
    assert_int_equal(sy_retry_delay_ms(&r, 10, 0.0), 1500);
    assert_int_equal(sy_retry_delay_ms(&r, 10, 1.0), 3000);
    /* And on a saturated delay without overflow. */
    r = policy(1, 2.0, 0, true);
    assert_int_equal(sy_retry_delay_ms(&r, 200, 0.0), INT64_MAX / 2);
    int64_t hi = sy_retry_delay_ms(&r, 200, 0.999999);
    assert_true(hi > INT64_MAX / 2 && hi <= INT64_MAX);
    assert_int_equal(sy_retry_delay_ms(&r, 200, 1.0), INT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_recursive),
        cmocka_unit_test(test_merge_replaces),
        cmocka_unit_test(test_merge_no_aliasing),
        cmocka_unit_test(test_merge_edges),
        cmocka_unit_test(test_merge_deep),
        cmocka_unit_test(test_output_ok),
        cmocka_unit_test(test_output_errors),
        cmocka_unit_test(test_output_size),
        cmocka_unit_test(test_output_deep),
        cmocka_unit_test(test_json_path),
        cmocka_unit_test(test_cond_exists),
        cmocka_unit_test(test_cond_equals),
        cmocka_unit_test(test_cond_order),
        cmocka_unit_test(test_cond_contains),
        cmocka_unit_test(test_conds_all),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_backoff_cap),
        cmocka_unit_test(test_backoff_saturates),
        cmocka_unit_test(test_jitter),
    };
    return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
