/*
 * cron.c -- fuzz target: schedule expressions (sy_cron_problem, the check
 * a workflow's `schedule` goes through).
 *
 * Input: the expression.  Properties: a refusal is one line that quotes
 * the schedule; an accepted expression has exactly five fields or is a
 * macro; its next fire time, in a zone that springs forward and falls
 * back every day, comes after the time asked about (or never).
 */
#include "fuzz.h"

#include <string.h>

#include "workflow/cron.h"
#include "workflow/internal.h"

/* A zone one hour ahead that is two hours ahead from 01:00 to 02:00 UTC
 * of each of ten days from 2026-03-29: changes of the clocks everywhere. */
static sy_tz *test_zone(void)
{
    int64_t at[20];
    int32_t off[20];
    for (int i = 0; i < 10; i++) {
        at[2 * i] = 1774746000 + (int64_t)i * 86400;
        off[2 * i] = 7200;
        at[2 * i + 1] = at[2 * i] + 3600;
        off[2 * i + 1] = 3600;
    }
    return sy_tz_from_table("test", 3600, at, off, 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *expr = sy_fuzz_str(data, size);
    char buf[512] = "";
    const char *why = sy_cron_problem(expr, buf, sizeof buf);
    if (why) {
        SY_FUZZ_CHECK(why == buf && buf[0], "refused without a reason");
        SY_FUZZ_CHECK(strncmp(buf, "schedule \"", 10) == 0,
                      "the reason does not name the schedule: %s", buf);
    } else {
        int fields = 0;
        for (const char *p = expr; *p;) {
            p += strspn(p, " \t");
            if (*p)
                fields++;
            p += strcspn(p, " \t");
        }
        SY_FUZZ_CHECK(fields == 5 || (expr[0] == '@' && fields == 1),
                      "accepted with %d fields: \"%s\"", fields, expr);
        sy_cron c;
        SY_FUZZ_CHECK(!sy_cron_parse(expr, &c, buf, sizeof buf), "parse disagrees: %s", buf);
        sy_tz *tz = test_zone();
        int64_t t = 1774742400; /* 2026-03-29T00:00:00Z */
        for (int i = 0; i < 3; i++) {
            int64_t next = sy_cron_next(&c, tz, t);
            SY_FUZZ_CHECK(next > t, "next fire %lld not after %lld: \"%s\"",
                          (long long)next, (long long)t, expr);
            if (next == INT64_MAX)
                break;
            t = next;
        }
        sy_tz_free(tz);
    }
    free(expr);
    return 0;
}
