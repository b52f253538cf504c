/* `schedule`: reading a five-field cron expression (or a macro) into the
 * sets of minutes, hours, days and months it fires on.  The file reader
 * and the definition reader both refuse what this refuses. */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "workflow/cron.h"
#include "workflow/internal.h"

static const struct {
    const char *name;
    int lo, hi;
} cron_fields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31},
    {"month", 1, 12},  {"day-of-week", 0, 7},
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                          "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

static const struct {
    const char *macro, *expr;
} cron_macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

/* A decimal number of at most 4 digits at *p, or in the month and
 * day-of-week fields a three-letter name; -1 when there is none. */
static int cron_num(const char **p, int f)
{
    const char *const *names = f == 3 ? month_names : f == 4 ? dow_names : NULL;
    for (int i = 0; names && i < (f == 3 ? 12 : 7); i++)
        if (strncasecmp(*p, names[i], 3) == 0) {
            *p += 3;
            return f == 3 ? i + 1 : i;
        }
    int v = 0, n = 0;
    while (**p >= '0' && **p <= '9') {
        if (++n > 4)
            return INT_MAX;
        v = v * 10 + (*(*p)++ - '0');
    }
    return n ? v : -1;
}

/* Reads one comma-separated item of field f: *, n, a-b, * /n, a-b/n, into
 * *bits. */
static const char *cron_item(const char *item, int f, uint64_t *bits, char *buf,
                             size_t len)
{
    int lo = cron_fields[f].lo, hi = cron_fields[f].hi;
    const char *p = item;
    int a = lo, b = hi;
    bool range = true;
    if (*p == '*') {
        p++;
    } else {
        a = b = cron_num(&p, f);
        range = *p == '-';
        if (range) {
            p++;
            b = cron_num(&p, f);
        }
        if (a < 0 || b < 0)
            return sy_errf(buf, len, "\"%s\" is not a number, a range a-b or '*'", item);
        if (a < lo || a > hi || b < lo || b > hi)
            return sy_errf(buf, len, "\"%s\" is out of range %d-%d", item, lo, hi);
        if (a > b)
            return sy_errf(buf, len, "range \"%s\" runs backwards", item);
    }
    int step = 1;
    if (*p == '/') {
        if (!range)
            return sy_errf(buf, len, "step in \"%s\" needs '*' or a range a-b before it", item);
        p++;
        step = cron_num(&p, -1);
        if (step < 1 || step > hi)
            return sy_errf(buf, len, "step in \"%s\" must be from 1 to %d", item, hi);
    }
    if (*p)
        return sy_errf(buf, len, "\"%s\" is not *, n, a-b, */n or a-b/n", item);
    for (int v = a; v <= b; v += step)
        *bits |= (uint64_t)1 << (f == 4 && v == 7 ? 0 : v);
    return NULL;
}

static const char *cron_field(char *field, int f, uint64_t *bits, char *buf, size_t len)
{
    char *save = NULL;
    if (field[0] == ',' || field[strlen(field) - 1] == ',' || strstr(field, ",,"))
        return sy_errf(buf, len, "\"%s\" has an empty list item", field);
    for (char *item = strtok_r(field, ",", &save); item;
         item = strtok_r(NULL, ",", &save))
        if (cron_item(item, f, bits, buf, len))
            return buf;
    return NULL;
}

static void store_field(sy_cron *c, int f, uint64_t bits, bool star)
{
    switch (f) {
    case 0: c->minute = bits; c->wild |= star; break;
    case 1: c->hour = (uint32_t)bits; c->wild |= star; break;
    case 2: c->dom = (uint32_t)bits; c->dom_star = star; break;
    case 3: c->month = (uint32_t)bits; break;
    default: c->dow = (uint32_t)bits; c->dow_star = star; break;
    }
}

static const char *expand_macro(const char *expr, char *buf, size_t len, bool *bad)
{
    *bad = false;
    if (!expr || expr[0] != '@')
        return expr;
    for (size_t i = 0; i < SY_ARRAY_LEN(cron_macros); i++)
        if (strcmp(expr, cron_macros[i].macro) == 0)
            return cron_macros[i].expr;
    *bad = true;
    sy_errf(buf, len, "schedule \"%s\": unknown macro; use @yearly, @annually, @monthly, "
            "@weekly, @daily, @midnight or @hourly", expr);
    return NULL;
}

const char *sy_cron_parse(const char *expr, sy_cron *out, char *buf, size_t len)
{
    bool bad_macro;
    const char *text = expand_macro(expr, buf, len, &bad_macro);
    if (bad_macro)
        return buf;
    sy_cron c = {0};
    char *copy = sy_xstrdup(text ? text : "");
    char why[200], *save = NULL;
    int n = 0;
    const char *bad = NULL;
    for (char *field = strtok_r(copy, " \t", &save); field;
         field = strtok_r(NULL, " \t", &save)) {
        if (n == 5) {
            n++; /* one too many is enough to say so */
            break;
        }
        uint64_t bits = 0;
        bool star = field[0] == '*';
        if (!bad && cron_field(field, n, &bits, why, sizeof why))
            bad = sy_errf(buf, len, "schedule \"%s\": %s field: %s", expr,
                          cron_fields[n].name, why);
        store_field(&c, n, bits, star);
        n++;
    }
    free(copy);
    if (bad)
        return bad;
    if (n != 5)
        return sy_errf(buf, len,
                       "schedule \"%s\" must have 5 fields: minute hour "
                       "day-of-month month day-of-week, e.g. \"*/5 * * * *\", "
                       "or be a macro such as @daily",
                       expr ? expr : "");
    if (out)
        *out = c;
    return NULL;
}

const char *sy_cron_problem(const char *expr, char *buf, size_t len)
{
    return sy_cron_parse(expr, NULL, buf, len);
}

static const char *const catchup_names[] = {"none", "latest", "all"};

const char *sy_catchup_name(sy_catchup c)
{
    return (unsigned)c < SY_ARRAY_LEN(catchup_names) ? catchup_names[c] : "none";
}

int sy_catchup_parse(const char *name)
{
    for (size_t i = 0; name && i < SY_ARRAY_LEN(catchup_names); i++)
        if (strcmp(name, catchup_names[i]) == 0)
            return (int)i;
    return -1;
}
