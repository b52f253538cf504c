/*
 * store/driver.c -- what store.c and every implementation share about a
 * handle: the reason for its last failure.  Below both, so neither calls
 * the other for it.
 */
#include "store/driver.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sy_store_fail(sy_store *s, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return status;
}

int sy_store_fence_check(sy_store *s, const char *what, int64_t run_id, const char *owner,
                         int64_t epoch, const sy_store_fence *fence)
{
    if (owner && strcmp(owner, fence->owner) == 0 && epoch == fence->epoch)
        return SY_OK;
    return sy_store_fail(s, SY_STORE_EFENCED,
                         "%s: run %lld is held by %s (claim %lld), not by %s (claim %lld): "
                         "not written",
                         what, (long long)run_id, owner ? owner : "no host", (long long)epoch,
                         fence->owner, (long long)fence->epoch);
}
