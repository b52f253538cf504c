/*
 * duration.c -- fuzz target: duration strings (sy_sdk_duration_parse, what
 * every timeout, delay and duration parameter goes through) and their
 * formatting (sy_sdk_format_ms).
 *
 * Input: the string.  Properties: a refusal says why and leaves the
 * output alone; an accepted duration is not negative, and formatting it
 * then parsing the text gives the same number of milliseconds.
 */
#include "fuzz.h"

#include <string.h>

#include <switchyard/sdk.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = sy_fuzz_str(data, size);
    char err[512] = "";
    int64_t ms = -42;
    int rc = sy_sdk_duration_parse(text, &ms, err, sizeof err);
    if (rc != SY_OK) {
        SY_FUZZ_CHECK(rc == SY_EINVAL && err[0] && ms == -42,
                      "refusal %d, \"%s\", ms %lld", rc, err, (long long)ms);
    } else {
        SY_FUZZ_CHECK(ms >= 0, "\"%s\" is %lld ms", text, (long long)ms);
        char shown[64];
        sy_sdk_format_ms(ms, shown, sizeof shown);
        int64_t again = -1;
        SY_FUZZ_CHECK(sy_sdk_duration_parse(shown, &again, err, sizeof err) ==
                          SY_OK && again == ms,
                      "\"%s\" is %lld ms, shown \"%s\", read back %lld", text,
                      (long long)ms, shown, (long long)again);
    }
    free(text);
    return 0;
}
