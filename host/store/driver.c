/*
 * store/driver.c -- what store.c and every implementation share about a
 * handle: the reason for its last failure.  Below both, so neither calls
 * the other for it.
 */
#include "store/driver.h"

#include <stdarg.h>
#include <stdio.h>

int sy_store_fail(sy_store *s, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return status;
}
