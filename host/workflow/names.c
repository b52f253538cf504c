/* Names in workflows: a workflow's name, a tenant, a task id; and whether
 * text is one jansson will hold.  Below the file readers (workflow.c,
 * parse_task.c, settings.c, condition.c) and the definition reader
 * (definition_read.c), so that they all refuse the same names. */
#include <string.h>

#include "workflow/internal.h"

static bool segment_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

bool sy_wf_name_valid(const char *name, bool multi)
{
    if (!name)
        return false;
    for (const char *p = name;;) {
        const char *start = p;
        while (segment_char(*p))
            p++;
        if (p == start)
            return false;
        if (!*p)
            return true;
        if (!multi || strncmp(p, "::", 2) != 0)
            return false;
        p += 2;
    }
}

bool sy_wf_utf8_valid(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    json_decref(j);
    return j != NULL;
}
