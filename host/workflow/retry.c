/* Retry policies: reading a `retry` group, and the delay before a retry. */
#include <math.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

const sy_retry sy_retry_default = {
    .attempts = 1,
    .delay_ms = 1000,
    .backoff = 2.0,
    .max_delay_ms = 0,
    .jitter = false,
    .retry_on = SY_RETRY_ON_FAILED | SY_RETRY_ON_TIMEOUT,
};

static const char *const retry_keys[] = {
    "attempts", "delay", "backoff", "max_delay", "jitter", "retry_on", NULL,
};

unsigned sy_retry_on_parse(const char *word)
{
    if (word && strcmp(word, "failed") == 0)
        return SY_RETRY_ON_FAILED;
    if (word && strcmp(word, "timeout") == 0)
        return SY_RETRY_ON_TIMEOUT;
    return 0;
}

const char *sy_retry_on_name(unsigned bit)
{
    switch (bit) {
    case SY_RETRY_ON_FAILED: return "failed";
    case SY_RETRY_ON_TIMEOUT: return "timeout";
    default: return "unknown";
    }
}

static int read_attempts(const config_setting_t *s, sy_retry *r, sy_diags *d)
{
    int type = config_setting_type(s);
    long long v = config_setting_get_int64(s);
    if ((type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64) || v < 1 ||
        v > (long long)SY_RETRY_MAX_ATTEMPTS) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "retry 'attempts' must be an integer from 1 to %u (the total "
                 "number of tries, the first included)",
                 SY_RETRY_MAX_ATTEMPTS);
        return 1;
    }
    r->attempts = (uint32_t)v;
    return 0;
}

static int read_backoff(const config_setting_t *s, sy_retry *r, sy_diags *d)
{
    double v;
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_FLOAT: v = config_setting_get_float(s); break;
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: v = (double)config_setting_get_int64(s); break;
    default: v = NAN; break;
    }
    if (!isfinite(v) || v < 1.0) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "retry 'backoff' must be a number >= 1.0 (the factor between "
                 "one delay and the next), e.g. backoff = 2.0");
        return 1;
    }
    r->backoff = v;
    return 0;
}

static int read_jitter(const config_setting_t *s, sy_retry *r, sy_diags *d)
{
    if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "retry 'jitter' must be true or false");
        return 1;
    }
    r->jitter = config_setting_get_bool(s);
    return 0;
}

static int read_retry_on(const config_setting_t *s, sy_retry *r, sy_diags *d)
{
    int type = config_setting_type(s);
    if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "retry 'retry_on' must be a list of words, e.g. retry_on = "
                 "[\"failed\", \"timeout\"]");
        return 1;
    }
    unsigned mask = 0;
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *w = config_setting_get_string(e);
        unsigned bit = sy_retry_on_parse(w);
        if (!bit) {
            sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e),
                     "retry 'retry_on': unknown word%s%s%s (valid: failed, timeout)",
                     w ? " '" : "", w ? w : "", w ? "'" : "");
            errors++;
        }
        mask |= bit;
    }
    if (!errors)
        r->retry_on = mask;
    return errors;
}

int sy_retry_read(const config_setting_t *g, sy_retry *r, sy_diags *d)
{
    if (!config_setting_is_group(g)) {
        sy_error(d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "'retry' must be a group, e.g. retry = { attempts = 3; delay = \"1s\"; }");
        return 1;
    }
    int errors = sy_setting_check_keys(g, retry_keys, "retry", d);
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        const char *k = config_setting_name(s);
        if (strcmp(k, "attempts") == 0)
            errors += read_attempts(s, r, d);
        else if (strcmp(k, "delay") == 0)
            errors += sy_setting_duration(s, &r->delay_ms, d);
        else if (strcmp(k, "max_delay") == 0)
            errors += sy_setting_duration(s, &r->max_delay_ms, d);
        else if (strcmp(k, "backoff") == 0)
            errors += read_backoff(s, r, d);
        else if (strcmp(k, "jitter") == 0)
            errors += read_jitter(s, r, d);
        else if (strcmp(k, "retry_on") == 0)
            errors += read_retry_on(s, r, d);
    }
    return errors;
}

/* 2^63 as a double: every double at or above it overflows int64_t. */
#define INT64_LIMIT 9223372036854775808.0

int64_t sy_retry_delay_ms(const sy_retry *r, uint32_t next_attempt, double rnd)
{
    if (!r || next_attempt < 2 || r->delay_ms <= 0)
        return 0;
    double backoff = r->backoff >= 1.0 ? r->backoff : 1.0; /* also NaN */
    /* pow() saturates to +inf instead of overflowing; inf compares high. */
    double d = (double)r->delay_ms * pow(backoff, (double)(next_attempt - 2));
    int64_t ms = d >= INT64_LIMIT ? INT64_MAX : (int64_t)d;
    if (r->max_delay_ms > 0 && ms > r->max_delay_ms)
        ms = r->max_delay_ms;
    if (!r->jitter)
        return ms;
    if (!(rnd >= 0.0)) /* also NaN */
        rnd = 0.0;
    if (rnd > 1.0)
        rnd = 1.0;
    int64_t half = ms / 2, span = ms - half;
    double off = rnd * (double)span;
    int64_t add = off >= (double)span ? span : (int64_t)off;
    return half + add;
}
