/*
 * result.c -- building a sy_result and handing it to the host
 * (switchyard/sdk.h, "Results").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

/* Completes `c` with any outcome.  `output` (JSON object text, output_len
 * bytes, no NUL needed) and `error` (one or more lines) may be NULL. */
void sy_sdk_complete(const sy_host_api *api, sy_completion *c,
                     sy_outcome outcome, const char *output, size_t output_len,
                     const char *error)
{
    sy_result r;
    memset(&r, 0, sizeof r);
    r.size = (uint32_t)sizeof r;
    r.outcome = outcome;
    r.output = output;
    r.output_len = output ? output_len : 0;
    r.error = error;
    api->complete(c, &r);
}

/* Succeeds with `json_object` (NUL-terminated JSON object text; NULL for
 * an empty object). */
void sy_sdk_complete_ok(const sy_host_api *api, sy_completion *c,
                        const char *json_object)
{
    sy_sdk_complete(api, c, SY_OUTCOME_SUCCEEDED, json_object,
                    json_object ? strlen(json_object) : 0, NULL);
}

/* Succeeds with `len` bytes of JSON object text (no NUL needed). */
void sy_sdk_complete_ok_len(const sy_host_api *api, sy_completion *c,
                            const char *json, size_t len)
{
    sy_sdk_complete(api, c, SY_OUTCOME_SUCCEEDED, json, len, NULL);
}

/* Ends `c` with a non-success outcome and a printf-formatted error of any
 * length (a short one is formatted on the stack; a long one is malloc'd
 * and freed before returning). */
void sy_sdk_vcomplete_error(const sy_host_api *api, sy_completion *c,
                            sy_outcome outcome, const char *fmt, va_list ap)
{
    char small[512];
    char *msg = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        snprintf(small, sizeof small, "(unformattable error message)");
    } else if ((size_t)n >= sizeof small) {
        char *big = malloc((size_t)n + 1);
        if (big) { /* else the truncated text is still worth sending */
            vsnprintf(big, (size_t)n + 1, fmt, again);
            msg = big;
        }
    }
    va_end(again);
    sy_sdk_complete(api, c, outcome, NULL, 0, msg);
    if (msg != small)
        free(msg);
}

/* Fails the attempt (SY_OUTCOME_FAILED: retried per the task's policy). */
void sy_sdk_complete_fail(const sy_host_api *api, sy_completion *c,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_vcomplete_error(api, c, SY_OUTCOME_FAILED, fmt, ap);
    va_end(ap);
}

/* Ends the attempt as SY_OUTCOME_TIMED_OUT (the plugin's own limit). */
void sy_sdk_complete_timed_out(const sy_host_api *api, sy_completion *c,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_vcomplete_error(api, c, SY_OUTCOME_TIMED_OUT, fmt, ap);
    va_end(ap);
}

/* Ends the attempt as SY_OUTCOME_CANCELLED: the answer to cancel(). */
void sy_sdk_complete_cancelled(const sy_host_api *api, sy_completion *c,
                               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_vcomplete_error(api, c, SY_OUTCOME_CANCELLED, fmt, ap);
    va_end(ap);
}
