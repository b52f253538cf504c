/* Flow control in workflow files: `priority`, `limits`, `pool` and
 * `pool_slots`, on a workflow (the default of its tasks) or a task; the
 * key templates; the form they take in the canonical definition and the
 * parse cache.  What they do at dispatch is the engine's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

static void *zalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        sy_oom("reading flow control");
    return p;
}

static const char *const strategy_names[] = {"queue", "cancel_newest", "cancel_in_progress",
                                             "drop", NULL};
static const char *const limit_keys[] = {"key", "limit", "strategy", NULL};

const char *sy_limit_strategy_name(sy_limit_strategy s)
{
    return (unsigned)s < 4 ? strategy_names[s] : "?";
}

int sy_limit_strategy_parse(const char *name)
{
    for (int i = 0; name && strategy_names[i]; i++)
        if (strcmp(strategy_names[i], name) == 0)
            return i;
    return -1;
}

void sy_flow_free(sy_flow *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n_limits; i++)
        free(f->limits[i].key);
    free(f->limits);
    free(f->pool);
    sy_flow_rates_free(f);
    free(f);
}

sy_flow *sy_flow_copy(const sy_flow *f)
{
    if (!f)
        return NULL;
    sy_flow *c = zalloc(1, sizeof *c);
    c->pool = f->pool ? sy_xstrdup(f->pool) : NULL;
    c->pool_slots = f->pool_slots;
    c->pool_line = f->pool_line;
    if (f->n_limits) {
        c->limits = zalloc(f->n_limits, sizeof *c->limits);
        for (size_t i = 0; i < f->n_limits; i++) {
            c->limits[i] = f->limits[i];
            c->limits[i].key = sy_xstrdup(f->limits[i].key);
        }
        c->n_limits = f->n_limits;
    }
    sy_flow_rates_copy(c, f);
    return c;
}

/* One entry of `limits` into *l; the errors it found. */
static int read_limit(const config_setting_t *e, int k, sy_limit *l, const char *who,
                      sy_diags *d)
{
    char where[200];
    snprintf(where, sizeof where, "%s: limits entry %d", who, k);
    if (!config_setting_is_group(e)) {
        sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e),
                 "%s must be a group, e.g. { key = \"db:{customer}\"; limit = 2; }", where);
        return 1;
    }
    int errors = sy_setting_check_keys(e, limit_keys, where, d);
    const char *key = NULL;
    errors += sy_limit_key_read(e, where, "db:{customer}", &key, d);
    const config_setting_t *s;
    long long v = 0;
    if (!(s = config_setting_get_member(e, "limit"))) {
        sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s has no 'limit' (e.g. limit = 2;)",
                 where);
        errors++;
    } else if (sy_flow_read_int(s, 1, SY_LIMIT_MAX, &v, where, "limit", d) == 0) {
        l->limit = (uint32_t)v;
    } else {
        errors++;
    }
    if ((s = config_setting_get_member(e, "strategy"))) {
        const char *name = config_setting_get_string(s);
        int st = sy_limit_strategy_parse(name);
        if (st < 0) {
            char q[300];
            sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "%s: unknown strategy%s%s (valid: queue, cancel_newest, "
                     "cancel_in_progress, drop)",
                     where, name ? " " : "", name ? sy_wf_quote(name, q, sizeof q) : "");
            errors++;
        } else {
            l->strategy = (sy_limit_strategy)st;
        }
    }
    if (!errors)
        l->key = sy_xstrdup(key);
    return errors;
}

/* `limits` into f (replacing what f had); each key once. */
static int read_limits(const config_setting_t *s, sy_flow *f, const char *who, sy_diags *d)
{
    int type = config_setting_type(s), len = config_setting_length(s);
    if ((type != CONFIG_TYPE_LIST && type != CONFIG_TYPE_ARRAY) ||
        (type == CONFIG_TYPE_ARRAY && len > 0)) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'limits' must be a list of groups, e.g. limits = ( { key = "
                 "\"db:{customer}\"; limit = 2; } );",
                 who);
        return 1;
    }
    if (len > SY_LIMITS_PER_TASK) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s: 'limits' names %d keys; at most %d",
                 who, len, SY_LIMITS_PER_TASK);
        return 1;
    }
    for (size_t i = 0; i < f->n_limits; i++)
        free(f->limits[i].key);
    free(f->limits);
    f->limits = len ? zalloc((size_t)len, sizeof *f->limits) : NULL;
    f->n_limits = 0;
    int errors = 0;
    for (int k = 0; k < len; k++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
        sy_limit l = {0};
        int bad = read_limit(e, k + 1, &l, who, d);
        for (size_t j = 0; !bad && j < f->n_limits; j++)
            if (strcmp(f->limits[j].key, l.key) == 0) {
                char q[300];
                sy_error(d, SY_SRC_FILE(e), SY_SRC_LINE(e), "%s: limits entry %d: key %s "
                         "is already limited by entry %zu", who, k + 1,
                         sy_wf_quote(l.key, q, sizeof q), j + 1);
                free(l.key);
                bad = 1;
            }
        errors += bad;
        if (!bad)
            f->limits[f->n_limits++] = l;
    }
    return errors;
}

static int read_pool(const config_setting_t *g, sy_flow *f, const char *who, sy_diags *d)
{
    int errors = 0;
    const config_setting_t *s = config_setting_get_member(g, "pool");
    if (s) {
        const char *name = config_setting_get_string(s);
        if (!name || !sy_wf_name_valid(name, false) || strlen(name) > 64) {
            sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "%s: 'pool' must name a pool of switchyard.cfg (letters, digits, '_', "
                     "'-'), e.g. pool = \"db\";",
                     who);
            errors++;
        } else {
            free(f->pool);
            f->pool = sy_xstrdup(name);
            f->pool_line = SY_SRC_LINE(s);
            f->pool_slots = 1;
        }
    }
    if ((s = config_setting_get_member(g, "pool_slots"))) {
        long long v = 0;
        if (sy_flow_read_int(s, 1, SY_LIMIT_MAX, &v, who, "pool_slots", d)) {
            errors++;
        } else if (!f->pool && !errors) {
            sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "%s: 'pool_slots' needs a 'pool' (e.g. pool = \"db\"; pool_slots = 2;)",
                     who);
            errors++;
        } else {
            f->pool_slots = (uint32_t)v;
        }
    }
    return errors;
}

int sy_flow_read(const config_setting_t *g, const sy_flow *base, int32_t *priority,
                 sy_flow **out, const char *who, sy_diags *d)
{
    int errors = 0;
    const config_setting_t *s = config_setting_get_member(g, "priority");
    long long p = 0;
    if (s && sy_flow_read_int(s, SY_PRIORITY_MIN, SY_PRIORITY_MAX, &p, who, "priority", d) == 0)
        *priority = (int32_t)p;
    else if (s)
        errors++;
    bool limits = config_setting_get_member(g, "limits") != NULL;
    bool pool = config_setting_get_member(g, "pool") || config_setting_get_member(g, "pool_slots");
    const config_setting_t *rates = config_setting_get_member(g, "rate_limits");
    if (!limits && !pool && !rates) {
        *out = sy_flow_copy(base);
        return errors;
    }
    sy_flow *f = base ? sy_flow_copy(base) : zalloc(1, sizeof *f);
    if (limits)
        errors += read_limits(config_setting_get_member(g, "limits"), f, who, d);
    if (pool)
        errors += read_pool(g, f, who, d);
    if (rates)
        errors += sy_flow_rates_read(rates, f, who, d);
    /* `limits = ();` over a workflow's limits, and no pool: nothing left. */
    if (!f->n_limits && !f->pool && !f->n_rates) {
        sy_flow_free(f);
        f = NULL;
    }
    *out = f;
    return errors;
}

json_t *sy_flow_json(const sy_flow *f)
{
    json_t *o = json_object();
    bool bad = !o;
    if (!bad && f->n_limits) {
        json_t *a = json_array();
        bad = !a || json_object_set_new(o, "limits", a) != 0;
        for (size_t i = 0; !bad && i < f->n_limits; i++) {
            const sy_limit *l = &f->limits[i];
            json_t *e = json_pack("{s:s, s:I, s:s}", "key", l->key, "limit",
                                  (json_int_t)l->limit, "strategy",
                                  sy_limit_strategy_name(l->strategy));
            bad = !e || json_array_append_new(a, e) != 0;
        }
    }
    if (!bad && f->pool)
        bad = json_object_set_new(o, "pool", json_string(f->pool)) != 0 ||
              json_object_set_new(o, "pool_slots", json_integer(f->pool_slots)) != 0;
    if (!bad)
        bad = sy_flow_rates_json(f, o) != 0;
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static bool only(const json_t *o, const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        const char *const *p = keys;
        while (*p && strcmp(*p, k) != 0)
            p++;
        if (!*p)
            return false;
    }
    return true;
}

static bool limit_from_json(const json_t *e, sy_limit *l, char *err, size_t err_len)
{
    const char *key = json_string_value(json_object_get(e, "key"));
    const json_t *lim = json_object_get(e, "limit");
    int st = sy_limit_strategy_parse(json_string_value(json_object_get(e, "strategy")));
    const char *why = !json_is_object(e) || !only(e, limit_keys) ? "a limit has unknown members"
                      : !key || sy_limit_key_problem(key) ? "a limit's key is not a valid template"
                      : !json_is_integer(lim) || json_integer_value(lim) < 1 ||
                              json_integer_value(lim) > SY_LIMIT_MAX
                          ? "a limit's \"limit\" is not an integer from 1 to 1000000"
                      : st < 0 ? "a limit's strategy is unknown" : NULL;
    if (why) {
        snprintf(err, err_len, "%s", why);
        return false;
    }
    l->key = sy_xstrdup(key);
    l->limit = (uint32_t)json_integer_value(lim);
    l->strategy = (sy_limit_strategy)st;
    return true;
}

sy_flow *sy_flow_from_json(const json_t *o, char *err, size_t err_len)
{
    static const char *const keys[] = {"limits", "pool", "pool_slots", "rate_limits", NULL};
    const json_t *limits = json_object_get(o, "limits");
    const json_t *pool = json_object_get(o, "pool");
    const json_t *slots = json_object_get(o, "pool_slots");
    const json_t *rates = json_object_get(o, "rate_limits");
    const char *why =
        !json_is_object(o) || !only(o, keys) ? "\"flow\" must be an object of limits and a pool"
        : limits && (!json_is_array(limits) || json_array_size(limits) == 0 ||
                     json_array_size(limits) > SY_LIMITS_PER_TASK)
            ? "\"limits\" must be an array of 1 to 16 limits"
        : !limits && !pool && !rates ? "\"flow\" names no limit, no pool and no rate limit"
        : (pool != NULL) != (slots != NULL) ? "\"pool\" and \"pool_slots\" go together"
        : pool && (!json_string_value(pool) || !sy_wf_name_valid(json_string_value(pool), false))
            ? "\"pool\" is not a pool name"
        : slots && (!json_is_integer(slots) || json_integer_value(slots) < 1 ||
                    json_integer_value(slots) > SY_LIMIT_MAX)
            ? "\"pool_slots\" is not an integer from 1 to 1000000"
            : NULL;
    if (why) {
        snprintf(err, err_len, "%s", why);
        return NULL;
    }
    sy_flow *f = zalloc(1, sizeof *f);
    if (pool) {
        f->pool = sy_xstrdup(json_string_value(pool));
        f->pool_slots = (uint32_t)json_integer_value(slots);
    }
    size_t n = json_array_size(limits);
    if (n)
        f->limits = zalloc(n, sizeof *f->limits);
    for (size_t i = 0; i < n; i++) {
        sy_limit l = {0};
        if (!limit_from_json(json_array_get(limits, i), &l, err, err_len)) {
            sy_flow_free(f);
            return NULL;
        }
        for (size_t j = 0; j < f->n_limits; j++)
            if (strcmp(f->limits[j].key, l.key) == 0) {
                snprintf(err, err_len, "a limit's key is named twice");
                free(l.key);
                sy_flow_free(f);
                return NULL;
            }
        f->limits[f->n_limits++] = l;
    }
    if (rates && !sy_flow_rates_from_json(rates, f, err, err_len)) {
        sy_flow_free(f);
        return NULL;
    }
    return f;
}

/* What {name} (the text between the braces, n bytes) stands for: *v the
 * text, a JSON text to free in *owned when it was written here. */
static bool fill(const char *name, size_t n, const json_t *ctx, const sy_workflow *wf,
                 const sy_task_def *t, const char **v, char **owned, char *err,
                 size_t err_len, const char *tmpl)
{
    char path[SY_LIMIT_KEY_MAX + 1];
    memcpy(path, name, n);
    path[n] = '\0';
    *owned = NULL;
    if (path[0] == '@') {
        *v = strcmp(path, "@tenant") == 0 ? wf->tenant
             : strcmp(path, "@workflow") == 0 ? wf->name : t->id;
        return true;
    }
    const json_t *j = sy_json_path(ctx, path);
    const char *why = !j ? "is not in the run's context"
                      : json_is_null(j) ? "is null in the run's context"
                      : json_is_object(j) || json_is_array(j)
                          ? "is an object or an array, not a string, number or boolean"
                          : NULL;
    if (why) {
        snprintf(err, err_len, "task '%s': key \"%s\": '%s' %s", t->id, tmpl, path, why);
        return false;
    }
    if (json_is_string(j)) {
        *v = json_string_value(j);
        return true;
    }
    *owned = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!*owned)
        sy_oom("making a limit's key");
    *v = *owned;
    return true;
}

char *sy_limit_key_render(const char *tmpl, const json_t *ctx, const sy_workflow *wf,
                          const sy_task_def *t, char *err, size_t err_len)
{
    char out[SY_LIMIT_RENDERED_MAX + 1];
    size_t len = 0;
    for (const char *p = tmpl; *p;) {
        const char *v = p;
        size_t n = 1;
        char *owned = NULL;
        const char *end = NULL;
        if (*p == '{' && (end = strchr(p + 1, '}'))) {
            if (!fill(p + 1, (size_t)(end - p - 1), ctx, wf, t, &v, &owned, err, err_len, tmpl))
                return NULL;
            n = strlen(v);
        }
        if (len + n > SY_LIMIT_RENDERED_MAX) {
            free(owned);
            snprintf(err, err_len, "task '%s': key \"%s\" comes to more than %d bytes", t->id,
                     tmpl, SY_LIMIT_RENDERED_MAX);
            return NULL;
        }
        memcpy(out + len, v, n);
        len += n;
        free(owned);
        p = end ? end + 1 : p + 1;
    }
    out[len] = '\0';
    return sy_xstrdup(out);
}
