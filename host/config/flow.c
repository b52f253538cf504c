/* switchyard.cfg's `pools`, `rate_limits` and `tenants` (config/flow.h). */
#include "config/flow.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "base/util.h"

#define SRC_FILE(s) config_setting_source_file(s)
#define SRC_LINE(s) ((int)config_setting_source_line(s))

/* An integer setting in [lo, hi]; an error naming `what` when not. */
static int read_int(const config_setting_t *s, long long lo, long long hi, const char *what,
                    int64_t *out, sy_diags *d)
{
    int t = config_setting_type(s);
    long long v = t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 ? config_setting_get_int64(s)
                                                                 : lo - 1;
    if (v < lo || v > hi) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "%s must be an integer from %lld to %lld", what,
                 lo, hi);
        return 1;
    }
    *out = v;
    return 0;
}

/* As sy_name_valid (config.c) judges instance names: letters, digits,
 * '_' and '-', 1 to 64 of them.  Written here too, so that config.c,
 * which calls this file, is not called back. */
static bool name_valid(const char *name)
{
    size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
    return n == strlen(name) && n >= 1 && n <= 64;
}

static void *grow(void *v, size_t n, size_t size)
{
    void *p = realloc(v, (n + 1) * size);
    if (!p)
        sy_oom("reading flow control");
    return p;
}

int sy_config_pools_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d)
{
    if (!config_setting_is_group(s)) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s),
                 "'pools' must be a group of pool sizes, e.g. pools = { db = 50; };");
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++) {
        const config_setting_t *p = config_setting_get_elem(s, (unsigned)i);
        const char *name = config_setting_name(p);
        char what[120];
        snprintf(what, sizeof what, "pool '%s'", name);
        int64_t size = 0;
        if (!name_valid(name)) {
            sy_error(d, SRC_FILE(p), SRC_LINE(p), "invalid pool name '%s': letters, digits, "
                     "'_' and '-', 1 to 64 characters", name);
            errors++;
            continue;
        }
        if (read_int(p, 1, SY_POOL_SIZE_MAX, what, &size, d)) {
            errors++;
            continue;
        }
        f->pools = grow(f->pools, f->n_pools, sizeof *f->pools);
        f->pools[f->n_pools++] = (sy_pool_config){sy_xstrdup(name), size, SRC_LINE(p)};
    }
    return errors;
}

static int read_tenant(sy_tenant_config *t, const config_setting_t *g, sy_diags *d)
{
    const char *name = config_setting_name(g);
    if (!config_setting_is_group(g)) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g), "tenant '%s' must be a group, e.g. %s = { "
                 "weight = 1; max_running = 10; };", name, name);
        return 1;
    }
    int errors = 0;
    char what[120];
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *k = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(k);
        snprintf(what, sizeof what, "tenant '%s': '%s'", name, key);
        if (strcmp(key, "weight") == 0) {
            errors += read_int(k, 1, SY_TENANT_WEIGHT_MAX, what, &t->weight, d);
        } else if (strcmp(key, "max_running") == 0) {
            errors += read_int(k, 1, SY_TENANT_RUNNING_MAX, what, &t->max_running, d);
        } else {
            sy_error(d, SRC_FILE(k), SRC_LINE(k),
                     "unknown key '%s' in tenant '%s' (known: weight, max_running)", key, name);
            errors++;
        }
    }
    return errors;
}

int sy_config_tenants_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d)
{
    if (!config_setting_is_group(s)) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'tenants' must be a group of tenants, e.g. "
                 "tenants = { a = { weight = 1; max_running = 10; }; };");
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++) {
        const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
        sy_tenant_config t = {.weight = 1, .line = SRC_LINE(g)};
        int bad = read_tenant(&t, g, d);
        errors += bad;
        if (bad)
            continue;
        t.name = sy_xstrdup(config_setting_name(g));
        f->tenants = grow(f->tenants, f->n_tenants, sizeof *f->tenants);
        f->tenants[f->n_tenants++] = t;
    }
    return errors;
}

int sy_config_rate_interval_read(const config_setting_t *s, const char *what, int64_t *ms,
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
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "%s must be a duration from 1ms to 1d, such as "
                 "\"1s\" or \"1m\"%s%s", what, why[0] ? ": " : "", why);
        return 1;
    }
    *ms = v;
    return 0;
}

static int read_rate(sy_rate_config *r, const config_setting_t *g, sy_diags *d)
{
    const char *name = config_setting_name(g);
    if (!name_valid(name)) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g), "invalid rate limit name '%s': letters, digits, "
                 "'_' and '-', 1 to 64 characters", name);
        return 1;
    }
    if (!config_setting_is_group(g)) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g), "rate limit '%s' must be a group, e.g. %s = { "
                 "rate = 10; interval = \"1s\"; burst = 2; };", name, name);
        return 1;
    }
    int errors = 0;
    char what[160];
    bool have_rate = false, have_interval = false;
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *k = config_setting_get_elem(g, (unsigned)i);
        const char *key = config_setting_name(k);
        snprintf(what, sizeof what, "rate limit '%s': '%s'", name, key);
        if (strcmp(key, "rate") == 0) {
            errors += read_int(k, 1, SY_RATE_MAX, what, &r->rate, d);
            have_rate = true;
        } else if (strcmp(key, "interval") == 0) {
            errors += sy_config_rate_interval_read(k, what, &r->interval_ms, d);
            have_interval = true;
        } else if (strcmp(key, "burst") == 0) {
            errors += read_int(k, 1, SY_RATE_MAX, what, &r->burst, d);
        } else {
            sy_error(d, SRC_FILE(k), SRC_LINE(k), "unknown key '%s' in rate limit '%s' (known: "
                     "rate, interval, burst)", key, name);
            errors++;
        }
    }
    if (!have_rate || !have_interval) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g), "rate limit '%s' has no '%s' (e.g. %s = { rate = "
                 "10; interval = \"1s\"; };)", name, have_rate ? "interval" : "rate", name);
        errors++;
    }
    if (!r->burst)
        r->burst = r->rate;
    return errors;
}

int sy_config_rates_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d)
{
    if (!config_setting_is_group(s)) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'rate_limits' must be a group of named rate "
                 "limits, e.g. rate_limits = { crm = { rate = 10; interval = \"1s\"; }; };");
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++) {
        const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
        sy_rate_config r = {.line = SRC_LINE(g)};
        int bad = read_rate(&r, g, d);
        errors += bad;
        if (bad)
            continue;
        r.name = sy_xstrdup(config_setting_name(g));
        f->rates = grow(f->rates, f->n_rates, sizeof *f->rates);
        f->rates[f->n_rates++] = r;
    }
    return errors;
}

const sy_pool_config *sy_config_pool(const sy_flow_config *f, const char *name)
{
    for (size_t i = 0; name && i < f->n_pools; i++)
        if (strcmp(f->pools[i].name, name) == 0)
            return &f->pools[i];
    return NULL;
}

const sy_tenant_config *sy_config_tenant(const sy_flow_config *f, const char *name)
{
    for (size_t i = 0; name && i < f->n_tenants; i++)
        if (strcmp(f->tenants[i].name, name) == 0)
            return &f->tenants[i];
    return NULL;
}

const sy_rate_config *sy_config_rate_in(const sy_rate_config *rates, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(rates[i].name, name) == 0)
            return &rates[i];
    return NULL;
}

const sy_rate_config *sy_config_rate(const sy_flow_config *f, const char *name)
{
    return sy_config_rate_in(f->rates, f->n_rates, name);
}

static const char *pool_at(const sy_flow_config *f, size_t i)
{
    return f->pools[i].name;
}

static const char *rate_at(const sy_flow_config *f, size_t i)
{
    return f->rates[i].name;
}

/* The n names name_at gives, joined. */
static const char *names_of(const sy_flow_config *f, size_t n,
                            const char *(*name_at)(const sy_flow_config *, size_t), char *buf,
                            size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s", i ? ", " : "",
                                name_at(f, i));
    if (!n)
        snprintf(buf, len, "none");
    return buf;
}

const char *sy_config_pool_names(const sy_flow_config *f, char *buf, size_t len)
{
    return names_of(f, f->n_pools, pool_at, buf, len);
}

const char *sy_config_rate_names(const sy_flow_config *f, char *buf, size_t len)
{
    return names_of(f, f->n_rates, rate_at, buf, len);
}

void sy_flow_config_free(sy_flow_config *f)
{
    for (size_t i = 0; i < f->n_pools; i++)
        free(f->pools[i].name);
    for (size_t i = 0; i < f->n_tenants; i++)
        free(f->tenants[i].name);
    for (size_t i = 0; i < f->n_rates; i++)
        free(f->rates[i].name);
    free(f->rates);
    free(f->pools);
    free(f->tenants);
    memset(f, 0, sizeof *f);
}
