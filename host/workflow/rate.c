/* Rate limits in workflow files (`rate_limits`, on a workflow or a task):
 * reading them, and their form in the canonical definition and the parse
 * cache.  The token buckets themselves are the store's and the engine's
 * (store/rates.h, engine/rates.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "base/util.h"
#include "config/config.h"
#include "workflow/internal.h"

static const char *const rate_keys[] = {"key", "rate", "interval", "burst", "name", NULL};
static const char *const json_keys[] = {"key", "rate", "interval_ms", "burst", "name", NULL};

static void *zalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        sy_oom("reading rate limits");
    return p;
}

static void rate_free(sy_rate_limit *r)
{
    free(r->key);
    free(r->name);
}

void sy_flow_rates_free(sy_flow *f)
{
    for (size_t i = 0; i < f->n_rates; i++)
        rate_free(&f->rates[i]);
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
        dst->rates[i].key = src->rates[i].key ? sy_xstrdup(src->rates[i].key) : NULL;
        dst->rates[i].name = src->rates[i].name ? sy_xstrdup(src->rates[i].name) : NULL;
    }
    dst->n_rates = src->n_rates;
}

/* Whether two rate limits name the same buckets. */
static bool same_buckets(const sy_rate_limit *a, const sy_rate_limit *b)
{
    bool names = a->name && b->name ? strcmp(a->name, b->name) == 0 : !a->name && !b->name;
    bool keys = a->key && b->key ? strcmp(a->key, b->key) == 0 : !a->key && !b->key;
    return names && keys;
}

/* An entry naming a rate limit of switchyard.cfg (`name`): its own
 * `key` only, the rate, interval and burst being the named one's. */
static int read_named(const config_setting_t *e, const config_setting_t *n, const char *where,
                      sy_rate_limit *r, sy_diags *d)
{
    const char *name = config_setting_get_string(n);
    if (!name || !sy_name_valid(name)) {
        sy_error(d, SY_SRC_FILE(n), SY_SRC_LINE(n), "%s: 'name' must name a rate limit of "
                 "switchyard.cfg (letters, digits, '_' and '-'), e.g. name = \"crm\";", where);
        return 1;
    }
    int errors = 0;
    static const char *const own[] = {"rate", "interval", "burst"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        const config_setting_t *s = config_setting_get_member(e, own[i]);
        if (s) {
            sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s: '%s' with 'name': the rate "
                     "limit '%s' of switchyard.cfg says it", where, own[i], name);
            errors++;
        }
    }
    const char *key = NULL;
    if (config_setting_get_member(e, "key"))
        errors += sy_limit_key_read(e, where, "{customer}", &key, d);
    if (!errors) {
        r->name = sy_xstrdup(name);
        r->key = key ? sy_xstrdup(key) : NULL;
    }
    return errors;
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
    r->line = SY_SRC_LINE(e);
    const config_setting_t *s = config_setting_get_member(e, "name");
    if (s)
        return errors + read_named(e, s, where, r, d);
    const char *key = NULL;
    errors += sy_limit_key_read(e, where, "api:{customer}", &key, d);
    long long v = 0;
    if (!(s = config_setting_get_member(e, "rate"))) {
        sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s has no 'rate' (e.g. rate = 10;), nor a "
                 "'name' of switchyard.cfg's rate_limits", where);
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
        char what[240];
        snprintf(what, sizeof what, "%s: 'interval'", where);
        errors += sy_config_rate_interval_read(s, what, &r->interval_ms, d);
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
            if (same_buckets(&f->rates[j], &r)) {
                char q[300], what[400];
                if (r.name)
                    snprintf(what, sizeof what, "rate limit '%s'%s%s", r.name,
                             r.key ? " with key " : "", r.key ? sy_wf_quote(r.key, q, sizeof q) : "");
                else
                    snprintf(what, sizeof what, "key %s", sy_wf_quote(r.key, q, sizeof q));
                sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s: rate_limits entry %d: %s is "
                         "already %s by entry %zu", who, k + 1, what,
                         r.name ? "named" : "rate limited", j + 1);
                rate_free(&r);
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
        json_t *e = r->name ? json_pack("{s:s}", "name", r->name)
                            : json_pack("{s:s, s:I, s:I, s:I}", "key", r->key, "rate",
                                        (json_int_t)r->rate, "interval_ms",
                                        (json_int_t)r->interval_ms, "burst",
                                        (json_int_t)r->burst);
        if (e && r->name && r->key && json_object_set_new(e, "key", json_string(r->key)) != 0) {
            json_decref(e);
            e = NULL;
        }
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
    /* A named one: its name and its key, if any, alone. */
    const char *name = json_string_value(json_object_get(e, "name"));
    bool own = json_object_get(e, "rate") || json_object_get(e, "interval_ms") ||
               json_object_get(e, "burst");
    const char *why = !known ? "a rate limit has unknown members"
                      : json_object_get(e, "name") && !name
                          ? "a rate limit's \"name\" is not a string"
                      : name && !sy_name_valid(name) ? "a rate limit's \"name\" is not a valid name"
                      : name && own ? "a named rate limit has its own rate"
                      : name && json_object_get(e, "key") && (!key || sy_limit_key_problem(key))
                          ? "a rate limit's key is not a valid template"
                      : name ? NULL
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
    if (name)
        *r = (sy_rate_limit){.key = key ? sy_xstrdup(key) : NULL, .name = sy_xstrdup(name)};
    else
        *r = (sy_rate_limit){sy_xstrdup(key), (uint32_t)rate, interval, (uint32_t)burst, NULL, 0};
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
            if (same_buckets(&f->rates[j], &r)) {
                snprintf(err, err_len, "a rate limit's key is named twice");
                rate_free(&r);
                return false;
            }
        f->rates[f->n_rates++] = r;
    }
    return true;
}
