/* Query values. */
#include "admin/parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool sy_admin_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    if (!s || !*s)
        return false;
    const char *d = s[0] == '-' ? s + 1 : s;
    if (*d < '0' || *d > '9')
        return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool sy_admin_parse_bool(const char *s, bool *out)
{
    if (!s)
        return false;
    if (!*s || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        *out = true;
    else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        *out = false;
    else
        return false;
    return true;
}
