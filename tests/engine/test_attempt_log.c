/* What the host keeps of an attempt's stream (engine/attempt_log.h): all
 * of it within log_limit, else its head and tail around a marker that
 * counts what was dropped (what the plugin dropped included), as UTF-8
 * text without NUL bytes whatever the attempt wrote. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/attempt_log.h"

static void test_within_the_limit(void **state)
{
    (void)state;
    sy_attempt_log l;
    sy_attempt_log_keep(&l, "hello\n", 6, 0, 0, 64);
    assert_string_equal(l.text, "hello\n");
    assert_int_equal(l.size, 6);
    assert_int_equal(l.dropped, 0);
    sy_attempt_log_clear(&l);
    assert_null(l.text);
    sy_attempt_log_keep(&l, NULL, 0, 0, 0, 64);
    assert_null(l.text);
    sy_attempt_log_keep(&l, "x", 0, 0, 0, 64);
    assert_null(l.text); /* nothing written: nothing kept */
}

static void test_head_and_tail(void **state)
{
    (void)state;
    sy_attempt_log l;
    sy_attempt_log_keep(&l, "0123456789abcdefghij", 20, 0, 0, 10);
    assert_string_equal(l.text, "01234\n[... 10 bytes dropped ...]\nfghij");
    assert_int_equal(l.size, 20);
    assert_int_equal(l.dropped, 10);
    sy_attempt_log_clear(&l);
    /* The plugin left 5 bytes out after its 10 first: one marker counts
     * them with the host's, where they were. */
    sy_attempt_log_keep(&l, "0123456789abcdefghij", 20, 5, 10, 64);
    assert_string_equal(l.text, "0123456789\n[... 5 bytes dropped ...]\nabcdefghij");
    assert_int_equal(l.size, 25);
    assert_int_equal(l.dropped, 5);
    sy_attempt_log_clear(&l);
    sy_attempt_log_keep(&l, "0123456789abcdefghij", 20, 5, 10, 10);
    assert_string_equal(l.text, "01234\n[... 15 bytes dropped ...]\nfghij");
    assert_int_equal(l.dropped, 15);
    sy_attempt_log_clear(&l);
    /* A short head of the plugin's is kept whole, the tail takes the rest. */
    sy_attempt_log_keep(&l, "01abcdefghij", 12, 7, 2, 8);
    assert_string_equal(l.text, "01\n[... 11 bytes dropped ...]\nefghij");
    assert_int_equal(l.dropped, 11);
    sy_attempt_log_clear(&l);
    /* Only the plugin's tail: the marker opens the text. */
    sy_attempt_log_keep(&l, "tail\n", 5, 100, 0, 64);
    assert_string_equal(l.text, "[... 100 bytes dropped ...]\ntail\n");
    assert_int_equal(l.size, 105);
    assert_int_equal(l.dropped, 100);
    sy_attempt_log_clear(&l);
}

static void test_cleaned_to_utf8(void **state)
{
    (void)state;
    sy_attempt_log l;
    sy_attempt_log_keep(&l, "a\xff" "b\0c \xc3\xa9 \xed\xa0\x80", 12, 0, 0, 64);
    assert_string_equal(l.text, "a?b?c \xc3\xa9 ???");
    assert_int_equal(l.size, 12);
    sy_attempt_log_clear(&l);
    /* A character cut at the head's end is not half kept. */
    sy_attempt_log_keep(&l, "ab\xc3\xa9" "cdefgh", 10, 0, 0, 6);
    assert_string_equal(l.text, "ab?\n[... 4 bytes dropped ...]\nfgh");
    sy_attempt_log_clear(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_within_the_limit),
        cmocka_unit_test(test_head_and_tail),
        cmocka_unit_test(test_cleaned_to_utf8),
    };
    return cmocka_run_group_tests_name("attempt_log", tests, NULL, NULL);
}
