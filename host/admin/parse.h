/*
 * admin/parse.h -- query values as the API reads them.  Pure; any thread.
 */
#ifndef SY_ADMIN_PARSE_H
#define SY_ADMIN_PARSE_H

#include <stdbool.h>

/* A whole number in [lo, hi]: an optional '-', digits only, no overflow,
 * nothing after. */
bool sy_admin_parse_int(const char *s, long long lo, long long hi, long long *out);

/* "true", "1" or "" (a bare ?follow) is true; "false" or "0" false;
 * anything else is refused. */
bool sy_admin_parse_bool(const char *s, bool *out);

#endif
