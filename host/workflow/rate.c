/* Rate limits in workflow files (`rate_limits`, on a workflow or a task):
 * reading them, and their form in the canonical definition and the parse
 * cache.  The token buckets themselves are the store's and the engine's
 * (store/rates.h, engine/rates.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "base/util.h"
#include "workflow/internal.h"

static const char *const rate_keys[] = {"key", "rate", "interval", "burst", NULL};
static const char *const json_keys[] = {"key", "rate", "interval_ms", "burst", NULL};

static void *zalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        sy_oom("reading rate limits");
    return p;
}

void sy_flow_rates_free(sy_flow *f)
{
    for (size_t i = 0; i < f->n_rates; i++)
        free(f->rates[i].key);
    free(f->rates);
    f->rates = NULL;
    f->n_rates = 0;
}

void sy_flow_rates_copy(sy_flow *dst, const sy_flow *src)
{
    if (!src->n_rates)
        return;
    dst->rates = zalloc(src->n_rates, sizeof *dst->rates);
    for (size_t i = 0; i < src->n_rates; i++) {
        dst->rates[i] = src->rates[i];
        dst->rates[i].key = sy_xstrdup(src->rates[i].key);
    }
    dst->n_rates = src->n_rates;
}

/* `interval`: a duration of 1 ms to a day, as a string ("1s") or integer
 * milliseconds. */
static int read_interval(const config_setting_t *s, int64_t *ms, const char *where,
                         sy_diags *d)
{
    int type = config_setting_type(s);
    int64_t v = -1;
    char why[256] = "";
    if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64)
        v = config_setting_get_int64(s);
    else if (type == CONFIG_TYPE_STRING &&
             sy_sdk_duration_parse(config_setting_get_string(s), &v, why, sizeof why) != SY_OK)
        v = -1;
    if (v < 1 || v > SY_RATE_INTERVAL_MAX_MS) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'interval' must be a duration from 1ms to 1d, such as \"1s\" or "
                 "\"1m\"%s%s",
                 where, why[0] ? ": " : "", why);
        return 1;
    }
    *ms = v;
    return 0;
}

/* One entry of `rate_limits` into *r; the errors it found. */
static int read_rate(const config_setting_t *e, int k, sy_rate_limit *r, const char *who,
                     sy_diags *d)
{
    char where[200];
    snprintf(where, sizeof where, "%s: rate_limits entry %d", who, k);
    if (!config_setting_is_group(e)) {
        sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e),
                 "%s must be a group, e.g. { key = \"api\"; rate = 10; interval = \"1s\"; }",
                 where);
        return 1;
    }
    int errors = sy_setting_check_keys(e, rate_keys, where, d);
    const char *key = NULL;
    errors += sy_limit_key_read(e, where, "api:{customer}", &key, d);
    const config_setting_t *s;
    long long v = 0;
    if (!(s = config_setting_get_member(e, "rate"))) {
        sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s has no 'rate' (e.g. rate = 10;)", where);
        errors++;
    } else if (sy_flow_read_int(s, 1, SY_LIMIT_MAX, &v, where, "rate", d) == 0) {
        r->rate = (uint32_t)v;
    } else {
        errors++;
    }
    if (!(s = config_setting_get_member(e, "interval"))) {
        sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s has no 'interval' (e.g. interval = "
                 "\"1s\";)", where);
        errors++;
    } else {
        errors += read_interval(s, &r->interval_ms, where, d);
    }
    r->burst = r->rate;
    if ((s = config_setting_get_member(e, "burst"))) {
        if (sy_flow_read_int(s, 1, SY_LIMIT_MAX, &v, where, "burst", d) == 0)
            r->burst = (uint32_t)v;
        else
            errors++;
    }
    if (!errors)
        r->key = sy_xstrdup(key);
    return errors;
}

int sy_flow_rates_read(const config_setting_t *s, sy_flow *f, const char *who, sy_diags *d)
{
    int type = config_setting_type(s), len = config_setting_length(s);
    if ((type != CONFIG_TYPE_LIST && type != CONFIG_TYPE_ARRAY) ||
        (type == CONFIG_TYPE_ARRAY && len > 0)) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'rate_limits' must be a list of groups, e.g. rate_limits = ( { key = "
                 "\"api\"; rate = 10; interval = \"1s\"; } );",
                 who);
        return 1;
    }
    if (len > SY_LIMITS_PER_TASK) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s: 'rate_limits' names %d keys; at most %d",
                 who, len, SY_LIMITS_PER_TASK);
        return 1;
    }
    sy_flow_rates_free(f);
    f->rates = len ? zalloc((size_t)len, sizeof *f->rates) : NULL;
    int errors = 0;
    for (int k = 0; k < len; k++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
        sy_rate_limit r = {0};
        int bad = read_rate(e, k + 1, &r, who, d);
        for (size_t j = 0; !bad && j < f->n_rates; j++)
            if (strcmp(f->rates[j].key, r.key) == 0) {
                char q[300];
                sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s: rate_limits entry %d: key %s "
                         "is already rate limited by entry %zu", who, k + 1,
                         sy_wf_quote(r.key, q, sizeof q), j + 1);
                free(r.key);
                bad = 1;
            }
        errors += bad;
        if (!bad)
            f->rates[f->n_rates++] = r;
    }
    return errors;
}

int sy_flow_rates_json(const sy_flow *f, json_t *o)
{
    if (!f->n_rates)
        return 0;
    json_t *a = json_array();
    if (!a || json_object_set_new(o, "rate_limits", a) != 0)
        return -1;
    for (size_t i = 0; i < f->n_rates; i++) {
        const sy_rate_limit *r = &f->rates[i];
        json_t *e = json_pack("{s:s, s:I, s:I, s:I}", "key", r->key, "rate",
                              (json_int_t)r->rate, "interval_ms", (json_int_t)r->interval_ms,
                              "burst", (json_int_t)r->burst);
        if (!e || json_array_append_new(a, e) != 0)
            return -1;
    }
    return 0;
}

/* Member `name` of o, an integer from lo to hi, into *out. */
static bool int_in(const json_t *o, const char *name, json_int_t lo, json_int_t hi,
                   int64_t *out)
{
    const json_t *v = json_object_get(o, name);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return false;
    *out = json_integer_value(v);
    return true;
}

static bool rate_from_json(const json_t *e, sy_rate_limit *r, char *err, size_t err_len)
{
    const char *key = json_string_value(json_object_get(e, "key"));
    int64_t rate = 0, interval = 0, burst = 0;
    bool known = json_is_object(e);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)e, k, v) {
        const char *const *p = json_keys;
        while (*p && strcmp(*p, k) != 0)
            p++;
        known = known && *p;
    }
    const char *why = !known ? "a rate limit has unknown members"
                      : !key || sy_limit_key_problem(key)
                          ? "a rate limit's key is not a valid template"
                      : !int_in(e, "rate", 1, SY_LIMIT_MAX, &rate)
                          ? "a rate limit's \"rate\" is not an integer from 1 to 1000000"
                      : !int_in(e, "interval_ms", 1, SY_RATE_INTERVAL_MAX_MS, &interval)
                          ? "a rate limit's \"interval_ms\" is not from 1 to 86400000"
                      : !int_in(e, "burst", 1, SY_LIMIT_MAX, &burst)
                          ? "a rate limit's \"burst\" is not an integer from 1 to 1000000"
                          : NULL;
    if (why) {
        snprintf(err, err_len, "%s", why);
        return false;
    }
    *r = (sy_rate_limit){sy_xstrdup(key), (uint32_t)rate, interval, (uint32_t)burst};
    return true;
}

bool sy_flow_rates_from_json(const json_t *a, sy_flow *f, char *err, size_t err_len)
{
    size_t n = json_array_size(a);
    if (!json_is_array(a) || n == 0 || n > SY_LIMITS_PER_TASK) {
        snprintf(err, err_len, "\"rate_limits\" must be an array of 1 to 16 rate limits");
        return false;
    }
    f->rates = zalloc(n, sizeof *f->rates);
    for (size_t i = 0; i < n; i++) {
        sy_rate_limit r = {0};
        if (!rate_from_json(json_array_get(a, i), &r, err, err_len))
            return false;
        for (size_t j = 0; j < f->n_rates; j++)
            if (strcmp(f->rates[j].key, r.key) == 0) {
                snprintf(err, err_len, "a rate limit's key is named twice");
                free(r.key);
                return false;
            }
        f->rates[f->n_rates++] = r;
    }
    return true;
}
