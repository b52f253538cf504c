/* When a schedule fires (workflow/cron.h): fields, names and macros, the
 * day-of-month / day-of-week rule, the 29th of February, and changes of
 * the clocks in Europe/Berlin and America/New_York as cronie handles them;
 * and the zones refused.  Times are written in UTC ("2026-03-29T01:00Z")
 * and compared as text, so a failure shows both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/tz.h"
#include "workflow/cron.h"

static int64_t at(const char *iso)
{
    int y, mo, d, h, mi;
    if (sscanf(iso, "%d-%d-%dT%d:%dZ", &y, &mo, &d, &h, &mi) != 5)
        fail_msg("bad time %s", iso);
    return sy_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60;
}

static const char *iso(int64_t t, char *buf)
{
    if (t == INT64_MAX)
        return "never";
    int64_t days = t / 86400, y;
    unsigned m, d;
    sy_civil_from_days(days, &y, &m, &d);
    int64_t s = t - days * 86400;
    snprintf(buf, 64, "%04d-%02u-%02uT%02d:%02dZ", (int)y, m % 13, d % 32, (int)(s / 3600) % 24,
            (int)(s % 3600 / 60) % 60);
    return buf;
}

static sy_tz *zone(const char *name)
{
    char err[512];
    sy_tz *tz = sy_tz_load(name, err, sizeof err);
    if (!tz)
        fail_msg("%s", err);
    return tz;
}

/* The fire times of `expr` in `tz` after `from`, `n` of them, separated
 * by spaces. */
static void expect(const char *tzname, const char *expr, const char *from, const char *want)
{
    sy_tz *tz = zone(tzname);
    sy_cron c;
    char err[512], got[1024] = "", one[64];
    if (sy_cron_parse(expr, &c, err, sizeof err))
        fail_msg("%s", err);
    int n = 1;
    for (const char *p = want; *p; p++)
        n += *p == ' ';
    int64_t t = at(from);
    for (int i = 0; i < n; i++) {
        t = sy_cron_next(&c, tz, t);
        if (i)
            strcat(got, " ");
        strcat(got, iso(t, one));
        if (t == INT64_MAX)
            break;
    }
    sy_tz_free(tz);
    if (strcmp(got, want) != 0)
        fail_msg("%s in %s after %s:\n  got  %s\n  want %s", expr, tzname, from, got, want);
}

static void test_fields(void **state)
{
    (void)state;
    expect("UTC", "*/20 * * * *", "2026-01-01T00:00Z",
           "2026-01-01T00:20Z 2026-01-01T00:40Z 2026-01-01T01:00Z");
    expect("UTC", "5,10-12 3 * * *", "2026-01-01T03:10Z",
           "2026-01-01T03:11Z 2026-01-01T03:12Z 2026-01-02T03:05Z");
    expect("UTC", "0 0-12/6 * * *", "2026-01-01T07:00Z",
           "2026-01-01T12:00Z 2026-01-02T00:00Z");
    /* 2026-01-05 is a Monday. */
    expect("UTC", "0 9 * JAN-feb MON-wed", "2026-01-05T09:00Z",
           "2026-01-06T09:00Z 2026-01-07T09:00Z 2026-01-12T09:00Z");
    expect("UTC", "0 0 * * 7", "2026-01-01T00:00Z", "2026-01-04T00:00Z");
    expect("UTC", "59 23 31 12 *", "2026-06-01T00:00Z", "2026-12-31T23:59Z 2027-12-31T23:59Z");
}

static void test_macros(void **state)
{
    (void)state;
    expect("UTC", "@yearly", "2026-05-01T00:00Z", "2027-01-01T00:00Z");
    expect("UTC", "@annually", "2026-05-01T00:00Z", "2027-01-01T00:00Z");
    expect("UTC", "@monthly", "2026-05-01T00:00Z", "2026-06-01T00:00Z");
    /* 2026-05-03 is a Sunday. */
    expect("UTC", "@weekly", "2026-05-01T00:00Z", "2026-05-03T00:00Z 2026-05-10T00:00Z");
    expect("UTC", "@daily", "2026-05-01T00:00Z", "2026-05-02T00:00Z");
    expect("UTC", "@midnight", "2026-05-01T10:00Z", "2026-05-02T00:00Z");
    expect("UTC", "@hourly", "2026-05-01T10:59Z", "2026-05-01T11:00Z 2026-05-01T12:00Z");
    expect("Europe/Berlin", "@daily", "2026-05-01T00:00Z", "2026-05-01T22:00Z");
    char err[256];
    assert_non_null(sy_cron_parse("@fortnightly", NULL, err, sizeof err));
    assert_non_null(strstr(err, "unknown macro"));
}

/* Both day fields restricted: either matches.  One of them '*': both must. */
static void test_dom_dow_or(void **state)
{
    (void)state;
    /* The 13th, or any Friday: 2026-02-06 and -20 are Fridays, -13 both. */
    expect("UTC", "0 0 13 * 5", "2026-02-01T00:00Z",
           "2026-02-06T00:00Z 2026-02-13T00:00Z 2026-02-20T00:00Z 2026-02-27T00:00Z "
           "2026-03-06T00:00Z 2026-03-13T00:00Z");
    expect("UTC", "0 0 * * 5", "2026-02-10T00:00Z", "2026-02-13T00:00Z 2026-02-20T00:00Z");
    /* "*" + step on the day of month still counts as '*': AND. */
    expect("UTC", "0 0 */2 * 1", "2026-02-01T00:00Z", "2026-02-09T00:00Z 2026-02-23T00:00Z");
}

static void test_feb29(void **state)
{
    (void)state;
    expect("UTC", "0 12 29 2 *", "2025-01-01T00:00Z",
           "2028-02-29T12:00Z 2032-02-29T12:00Z 2036-02-29T12:00Z");
    /* 2100 is not a leap year: eight years between two 29ths. */
    expect("UTC", "0 0 29 2 *", "2096-03-01T00:00Z", "2104-02-29T00:00Z");
    expect("UTC", "0 0 30 2 *", "2026-01-01T00:00Z", "never");
}

/* Berlin springs forward on 2026-03-29 at 01:00Z (02:00 CET -> 03:00
 * CEST) and falls back on 2026-10-25 at 01:00Z (03:00 CEST -> 02:00 CET). */
static void test_berlin_spring(void **state)
{
    (void)state;
    /* 02:30 does not exist that day: once, at the jump (03:00 CEST). */
    expect("Europe/Berlin", "30 2 * * *", "2026-03-28T00:00Z",
           "2026-03-28T01:30Z 2026-03-29T01:00Z 2026-03-30T00:30Z");
    /* Two fixed times in the gap still fire once. */
    expect("Europe/Berlin", "0,30 2 * * *", "2026-03-29T00:00Z",
           "2026-03-29T01:00Z 2026-03-30T00:00Z");
    /* A wildcard job keeps to the clock: nothing between 02:00 and 03:00. */
    expect("Europe/Berlin", "*/30 * * * *", "2026-03-29T00:00Z",
           "2026-03-29T00:30Z 2026-03-29T01:00Z 2026-03-29T01:30Z");
    expect("Europe/Berlin", "0 3 * * *", "2026-03-28T12:00Z", "2026-03-29T01:00Z");
}

static void test_berlin_fall(void **state)
{
    (void)state;
    /* 02:30 happens twice: a fixed job fires at the first only. */
    expect("Europe/Berlin", "30 2 * * *", "2026-10-24T12:00Z",
           "2026-10-25T00:30Z 2026-10-26T01:30Z");
    /* Every 15 minutes fires in both passes. */
    expect("Europe/Berlin", "*/15 * * * *", "2026-10-25T00:30Z",
           "2026-10-25T00:45Z 2026-10-25T01:00Z 2026-10-25T01:15Z");
    expect("Europe/Berlin", "0 * * * *", "2026-10-24T23:30Z",
           "2026-10-25T00:00Z 2026-10-25T01:00Z 2026-10-25T02:00Z");
    /* Started in the second pass, a fixed job waits for the next day. */
    expect("Europe/Berlin", "30 2 * * *", "2026-10-25T01:10Z", "2026-10-26T01:30Z");
}

/* New York: 2026-03-08 07:00Z (02:00 EST -> 03:00 EDT), 2026-11-01
 * 06:00Z (02:00 EDT -> 01:00 EST). */
static void test_new_york(void **state)
{
    (void)state;
    expect("America/New_York", "30 2 * * *", "2026-03-07T12:00Z",
           "2026-03-08T07:00Z 2026-03-09T06:30Z");
    expect("America/New_York", "30 1 * * *", "2026-10-31T12:00Z",
           "2026-11-01T05:30Z 2026-11-02T06:30Z");
    expect("America/New_York", "*/30 1 * * *", "2026-11-01T05:00Z",
           "2026-11-01T05:30Z 2026-11-01T06:00Z 2026-11-01T06:30Z 2026-11-02T06:00Z");
    expect("America/New_York", "0 0 * * *", "2026-06-01T00:00Z", "2026-06-01T04:00Z");
    /* Past the file's last transition the zone's rule goes on. */
    expect("America/New_York", "30 2 * * *", "2099-03-07T12:00Z",
           "2099-03-08T07:00Z 2099-03-09T06:30Z");
}

static void test_table_zone(void **state)
{
    (void)state;
    /* A zone one hour ahead that jumps to two at t=3600*24. */
    int64_t ats[] = {86400};
    int32_t offs[] = {7200};
    sy_tz *tz = sy_tz_from_table("test", 3600, ats, offs, 1);
    assert_int_equal(sy_tz_offset(tz, 0), 3600);
    assert_int_equal(sy_tz_offset(tz, 86400), 7200);
    assert_true(sy_tz_next_transition(tz, 0) == 86400);
    assert_true(sy_tz_next_transition(tz, 86400) == INT64_MAX);
    sy_tz_free(tz);
}

static void test_bad_zones(void **state)
{
    (void)state;
    const char *bad[] = {"Europe/Nowhere", "../etc/passwd", "/etc/localtime", "Europe/Ber lin",
                         "", "Europe"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[512] = "";
        sy_tz *tz = sy_tz_load(bad[i], err, sizeof err);
        if (tz)
            fail_msg("zone \"%s\" was accepted", bad[i]);
        assert_non_null(strstr(err, "zone"));
    }
    char err[512];
    sy_tz *utc = sy_tz_load(NULL, err, sizeof err);
    assert_int_equal(sy_tz_offset(utc, 123456), 0);
    sy_tz_free(utc);
}

static void test_bad_expressions(void **state)
{
    (void)state;
    const char *bad[] = {"* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *",
                         "* * * * 8", "5/2 * * * *", "* * * FOO *", "1-x * * * *", "@"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[512];
        if (!sy_cron_parse(bad[i], NULL, err, sizeof err))
            fail_msg("\"%s\" was accepted", bad[i]);
    }
}

/* SWITCHYARD_FAKE_CLOCK values: START[xRATE][@ANCHOR]. */
static void test_fake_clock_values(void **state)
{
    (void)state;
    int64_t start, anchor;
    double rate;
    assert_true(sy_clock_fake_parse("2026-03-29T00:58:00Z", &start, &rate, &anchor));
    assert_true(start == at("2026-03-29T00:58Z") * 1000 && rate == 1 && anchor == 0);
    assert_true(sy_clock_fake_parse("2026-03-29T00:58:30Zx60@1000", &start, &rate, &anchor));
    assert_true(start == at("2026-03-29T00:58Z") * 1000 + 30000 && rate == 60 &&
                anchor == 1000);
    assert_true(sy_clock_fake_parse("1774745910000x0.5", &start, &rate, &anchor));
    assert_true(start == 1774745910000 && rate == 0.5);
    const char *bad[] = {"", "soon", "2026-13-01T00:00Z", "2026-03-29T00:58Zx", "5x0", "5x-1",
                         "5@", "5@0", "5 ", "2026-03-29T00:58"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (sy_clock_fake_parse(bad[i], &start, &rate, &anchor))
            fail_msg("\"%s\" was accepted", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),      cmocka_unit_test(test_macros),
        cmocka_unit_test(test_dom_dow_or),  cmocka_unit_test(test_feb29),
        cmocka_unit_test(test_berlin_spring), cmocka_unit_test(test_berlin_fall),
        cmocka_unit_test(test_new_york),    cmocka_unit_test(test_table_zone),
        cmocka_unit_test(test_bad_zones),   cmocka_unit_test(test_bad_expressions),
        cmocka_unit_test(test_fake_clock_values),
    };
    return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
