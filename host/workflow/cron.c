/* `schedule`: checking a five-field cron expression.  The file reader and
 * the definition reader both refuse what this refuses. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

static const struct {
    const char *name;
    int lo, hi;
} cron_fields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

/* A decimal number of at most 4 digits at *p; -1 when there is none. */
static int cron_num(const char **p)
{
    int v = 0, n = 0;
    while (**p >= '0' && **p <= '9') {
        if (++n > 4)
            return INT_MAX;
        v = v * 10 + (*(*p)++ - '0');
    }
    return n ? v : -1;
}

/* Checks one comma-separated item of field f: *, n, a-b, * /n, a-b/n. */
static const char *cron_item(const char *item, int f, char *buf, size_t len)
{
    int lo = cron_fields[f].lo, hi = cron_fields[f].hi;
    const char *p = item;
    bool range = true;
    if (*p == '*') {
        p++;
    } else {
        int a, b;
        a = b = cron_num(&p);
        range = *p == '-';
        if (range) {
            p++;
            b = cron_num(&p);
        }
        if (a < 0 || b < 0)
            return sy_errf(buf, len, "\"%s\" is not a number, a range a-b or '*'", item);
        if (a < lo || a > hi || b < lo || b > hi)
            return sy_errf(buf, len, "\"%s\" is out of range %d-%d", item, lo, hi);
        if (a > b)
            return sy_errf(buf, len, "range \"%s\" runs backwards", item);
    }
    if (*p == '/') {
        if (!range)
            return sy_errf(buf, len, "step in \"%s\" needs '*' or a range a-b before it", item);
        p++;
        int step = cron_num(&p);
        if (step < 1 || step > hi)
            return sy_errf(buf, len, "step in \"%s\" must be from 1 to %d", item, hi);
    }
    if (*p)
        return sy_errf(buf, len, "\"%s\" is not *, n, a-b, */n or a-b/n", item);
    return NULL;
}

static const char *cron_field(char *field, int f, char *buf, size_t len)
{
    char *save = NULL;
    if (field[0] == ',' || field[strlen(field) - 1] == ',' || strstr(field, ",,"))
        return sy_errf(buf, len, "\"%s\" has an empty list item", field);
    for (char *item = strtok_r(field, ",", &save); item;
         item = strtok_r(NULL, ",", &save))
        if (cron_item(item, f, buf, len))
            return buf;
    return NULL;
}

const char *sy_cron_problem(const char *expr, char *buf, size_t len)
{
    char *copy = sy_xstrdup(expr ? expr : "");
    char why[200], *save = NULL;
    int n = 0;
    const char *bad = NULL;
    for (char *field = strtok_r(copy, " \t", &save); field;
         field = strtok_r(NULL, " \t", &save)) {
        if (n == 5) {
            n++; /* one too many is enough to say so */
            break;
        }
        if (!bad && cron_field(field, n, why, sizeof why))
            bad = sy_errf(buf, len, "schedule \"%s\": %s field: %s", expr,
                          cron_fields[n].name, why);
        n++;
    }
    free(copy);
    if (bad)
        return bad;
    if (n != 5)
        return sy_errf(buf, len,
                       "schedule \"%s\" must have 5 fields: minute hour "
                       "day-of-month month day-of-week, e.g. \"*/5 * * * *\"",
                       expr ? expr : "");
    return NULL;
}
