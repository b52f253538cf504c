/*
 * cron.c -- fuzz target: schedule expressions (sy_cron_problem, the check
 * a workflow's `schedule` goes through).
 *
 * Input: the expression.  Properties: a refusal is one line that quotes
 * the schedule; an accepted expression has exactly five fields.
 */
#include "fuzz.h"

#include <string.h>

#include "workflow/internal.h"

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
        SY_FUZZ_CHECK(fields == 5, "accepted with %d fields: \"%s\"", fields,
                      expr);
    }
    free(expr);
    return 0;
}
