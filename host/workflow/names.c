/* Names in workflows: a workflow's name, a tenant, a task id; and whether
 * text is one jansson will hold.  Below the file readers (workflow.c,
 * parse_task.c, settings.c, condition.c) and the definition reader
 * (definition_read.c), so that they all refuse the same names. */
#include <stdio.h>
#include <string.h>

#include "workflow/internal.h"

static bool segment_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

const char *sy_wf_name_problem(const char *name, bool multi)
{
    if (!name)
        return "must be a string";
    size_t segments = 0;
    for (const char *p = name;;) {
        const char *start = p;
        while (segment_char(*p))
            p++;
        if (p == start || (*p && (!multi || strncmp(p, "::", 2) != 0)))
            return multi ? "use letters, digits, '_', '.' and '-', in segments "
                           "joined by \"::\""
                         : "use letters, digits, '_', '.' and '-'";
        /* The router ignores a longer segment (config/glob.h): refused
         * here, where the file and line are known. */
        if ((size_t)(p - start) > SY_WF_SEGMENT_MAX)
            return "a name (or each part between \"::\") is at most 255 "
                   "characters";
        if (++segments > SY_WF_NAME_SEGMENTS_MAX)
            return "a workflow name has at most 16 parts joined by \"::\"";
        if (!*p)
            return NULL;
        p += 2;
    }
}

bool sy_wf_name_valid(const char *name, bool multi)
{
    return sy_wf_name_problem(name, multi) == NULL;
}

const char *sy_wf_quote(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    const size_t keep = 60; /* characters shown before "..." */
    if (len < 8) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    buf[n++] = '"';
    size_t shown = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, shown++) {
        if (shown == keep || n + 8 >= len) {
            n += (size_t)snprintf(buf + n, len - n, "...");
            break;
        }
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
            n += (size_t)snprintf(buf + n, len - n, "\\x%02x", *p);
        else
            buf[n++] = (char)*p;
    }
    if (n + 2 <= len) {
        buf[n++] = '"';
        buf[n] = '\0';
    } else {
        buf[len - 1] = '\0';
    }
    return buf;
}

bool sy_wf_utf8_valid(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    json_decref(j);
    return j != NULL;
}
