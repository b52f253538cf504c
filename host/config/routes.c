#include "config/routes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/integers.h"
#include "config/params.h"
#include "base/util.h"

/* libconfig knows no file for a configuration read from a string; a name
 * keeps "FILE:LINE" in diagnostics and spares readers of rule->file a
 * NULL. */
#define SY_ROUTE_NO_FILE "<config>"
#define SY_ROUTE_PATH_MAX 4096

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void sy_routes_init(sy_routes *r)
{
    if (r)
        memset(r, 0, sizeof *r);
}

void sy_routes_free(sy_routes *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        sy_glob_free(&r->rules[i].glob);
        strv_free(r->rules[i].to, r->rules[i].n_to);
        free(r->rules[i].file);
    }
    free(r->rules);
    strv_free(r->default_to, r->n_default_to);
    free(r->default_file);
    memset(r, 0, sizeof *r);
}

/* The path of `file` as libconfig named it.  libconfig records an
 * `@include` as written but opens it relative to the include directory, so
 * the name alone may not lead back to the file. */
static void display_path(const char *include_dir, const char *top,
                         const char *file, char *buf, size_t len)
{
    if (!file)
        file = SY_ROUTE_NO_FILE;
    else if (include_dir && *include_dir && strcmp(include_dir, ".") != 0 &&
             file[0] != '/' && top && strcmp(file, top) != 0) {
        snprintf(buf, len, "%s/%s", include_dir, file);
        return;
    }
    snprintf(buf, len, "%s", file);
}

static void setting_path(const config_setting_t *s, char *buf, size_t len)
{
    const config_t *cfg = s->config;
    const char *top = cfg && cfg->root ? config_setting_source_file(cfg->root)
                                       : NULL;
    display_path(cfg ? config_get_include_dir(cfg) : NULL, top,
                 config_setting_source_file(s), buf, len);
}

static char *setting_path_dup(const config_setting_t *s)
{
    char buf[SY_ROUTE_PATH_MAX];
    setting_path(s, buf, sizeof buf);
    return strdup(buf);
}

static int src_line(const config_setting_t *s)
{
    return (int)config_setting_source_line(s);
}

/* An error placed at setting `s`. */
static void report(sy_diags *d, const config_setting_t *s, const char *fmt,
                   ...) __attribute__((format(printf, 3, 4)));

static void report(sy_diags *d, const config_setting_t *s, const char *fmt,
                   ...)
{
    char file[SY_ROUTE_PATH_MAX];
    setting_path(s, file, sizeof file);
    va_list ap;
    va_start(ap, fmt);
    sy_diag_vadd(d, SY_DIAG_ERROR, file, src_line(s), fmt, ap);
    va_end(ap);
}

static const char *type_name(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_GROUP:
        return "a group";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        return "an integer";
    case CONFIG_TYPE_FLOAT:
        return "a float";
    case CONFIG_TYPE_STRING:
        return "a string";
    case CONFIG_TYPE_BOOL:
        return "a boolean";
    case CONFIG_TYPE_ARRAY:
        return "an array";
    case CONFIG_TYPE_LIST:
        return "a list";
    default:
        return "nothing";
    }
}

/* The value of a string setting that must name something, or NULL after
 * reporting why not. */
static const char *name_value(const config_setting_t *s, const char *key,
                              sy_diags *d)
{
    if (config_setting_type(s) != CONFIG_TYPE_STRING) {
        report(d, s, "'%s' must be a string, not %s: an instance's name, or a list of "
                 "names",
                 key, type_name(s));
        return NULL;
    }
    const char *v = config_setting_get_string(s);
    if (!v || !*v) {
        report(d, s, "'%s' is empty: it must name an executor", key);
        return NULL;
    }
    return v;
}

/* The instances a `default`, `executor` or `to` setting names: one name,
 * or a list of them tried in order.  Returns false after reporting why the
 * value is no such thing (*to is then NULL). */
static bool read_targets(const config_setting_t *s, const char *key, char ***to,
                         size_t *n, sy_diags *d)
{
    *to = NULL;
    *n = 0;
    bool list = config_setting_is_list(s) || config_setting_is_array(s);
    int len = list ? config_setting_length(s) : 1;
    if (list && len == 0) {
        report(d, s, "'%s' is an empty list: it must name at least one executor", key);
        return false;
    }
    char **v = calloc((size_t)len, sizeof *v);
    if (!v) {
        report(d, s, "out of memory");
        return false;
    }
    bool ok = true;
    for (int i = 0; i < len && ok; i++) {
        const config_setting_t *e = list ? config_setting_get_elem(s, (unsigned)i) : s;
        const char *name = name_value(e, key, d);
        for (int j = 0; name && j < i; j++)
            if (strcmp(v[j], name) == 0) {
                report(d, e, "'%s' names executor '%s' twice", key, name);
                name = NULL;
            }
        ok = name != NULL;
        /* Said, as the other shortages here are: unsaid, the rule was
         * dropped and its tasks went to the default route. */
        if (ok && !(v[i] = strdup(name))) {
            report(d, e, "out of memory");
            ok = false;
        }
    }
    if (!ok) {
        strv_free(v, (size_t)len);
        return false;
    }
    *to = v;
    *n = (size_t)len;
    return true;
}

static void set_default(sy_routes *r, const config_setting_t *s, sy_diags *d)
{
    char **to;
    size_t n;
    if (!read_targets(s, "default", &to, &n, d))
        return;
    if (r->default_executor) {
        report(d, s, "'default' given twice: first at %s:%d", r->default_file,
                 r->default_line);
        strv_free(to, n);
        return;
    }
    char *file = setting_path_dup(s);
    if (!file) {
        strv_free(to, n);
        report(d, s, "out of memory");
        return;
    }
    r->default_to = to;
    r->n_default_to = n;
    r->default_executor = to[0];
    r->default_file = file;
    r->default_line = src_line(s);
}

/* Takes ownership of rule's contents whatever happens. */
static void append_rule(sy_routes *r, sy_route_rule *rule,
                        const config_setting_t *where, sy_diags *d)
{
    sy_route_rule *v = NULL;
    if (rule->to && rule->file)
        v = realloc(r->rules, (r->n + 1) * sizeof *v);
    if (!v) {
        sy_glob_free(&rule->glob);
        strv_free(rule->to, rule->n_to);
        free(rule->file);
        report(d, where, "out of memory");
        return;
    }
    r->rules = v;
    r->rules[r->n++] = *rule;
}

/* The members of one rule group: each known key checked, the unknown ones
 * reported.  Returns false when any member was wrong. */
static bool read_rule_members(const config_setting_t *g,
                              const config_setting_t **match,
                              const config_setting_t **executor, sy_diags *d)
{
    bool ok = true;
    int n = config_setting_length(g);
    for (int i = 0; i < n; i++) {
        const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(m);
        if (name && strcmp(name, "match") == 0) {
            *match = m;
            if (config_setting_type(m) != CONFIG_TYPE_STRING) {
                report(d, m, "'match' must be a string, not %s", type_name(m));
                ok = false;
            }
        } else if (name && (strcmp(name, "executor") == 0 || strcmp(name, "to") == 0)) {
            if (*executor) {
                report(d, m, "'%s' and '%s' in one rule: they are the same thing; give one",
                       config_setting_name(*executor), name);
                ok = false;
            }
            *executor = m;
        } else {
            report(d, m, "unknown key '%s' in rule (known: match, executor, to)",
                     name ? name : "?");
            ok = false;
        }
    }
    return ok;
}

static bool compile_match(sy_glob *glob, const config_setting_t *match,
                          sy_diags *d)
{
    const char *pattern = config_setting_get_string(match);
    char err[256];
    if (sy_glob_compile(glob, pattern, err, sizeof err) == 0)
        return true;
    report(d, match, "invalid pattern \"%s\": %s",
             pattern ? pattern : "", err);
    return false;
}

static void add_rule(sy_routes *r, const config_setting_t *g, unsigned index,
                     sy_diags *d)
{
    if (!config_setting_is_group(g)) {
        report(d, g, "rule %u is %s, not a group { match = \"...\"; executor = "
                 "\"...\"; }", index, type_name(g));
        return;
    }
    const config_setting_t *match = NULL, *executor = NULL;
    bool ok = read_rule_members(g, &match, &executor, d);
    if (!match)
        report(d, g, "rule without 'match'");
    if (!executor)
        report(d, g, "rule without 'executor' (or 'to'): the instance, or the list of "
                     "instances, it sends to");
    sy_route_rule rule = {.line = src_line(g)};
    /* The pattern and the targets are checked even in a rule already
     * known to be bad, so one pass shows every problem. */
    bool compiled = match && config_setting_type(match) == CONFIG_TYPE_STRING
                    && compile_match(&rule.glob, match, d);
    bool targets = executor && read_targets(executor, config_setting_name(executor), &rule.to,
                                            &rule.n_to, d);
    if (!compiled || !ok || !targets) {
        sy_glob_free(&rule.glob);
        strv_free(rule.to, rule.n_to);
        return;
    }
    rule.executor = rule.to[0];
    rule.file = setting_path_dup(g);
    append_rule(r, &rule, g, d);
}

static void add_rules(sy_routes *r, const config_setting_t *s, sy_diags *d)
{
    if (!config_setting_is_list(s) && !config_setting_is_array(s)) {
        report(d, s, "'rules' must be a list ( { match = \"...\"; executor = "
                 "\"...\"; }, ... ), not %s", type_name(s));
        return;
    }
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++)
        add_rule(r, config_setting_get_elem(s, (unsigned)i), (unsigned)i + 1,
                 d);
}

static void add_group(sy_routes *r, const config_setting_t *routes,
                      sy_diags *d)
{
    if (!r || !routes) {
        sy_error(d, NULL, 0, "no routing table or no 'routes' group given");
        return;
    }
    if (!config_setting_is_group(routes)) {
        report(d, routes, "'routes' must be a group { default = \"...\"; rules = "
                 "(...); }, not %s", type_name(routes));
        return;
    }
    int n = config_setting_length(routes);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(routes,
                                                            (unsigned)i);
        const char *name = config_setting_name(s);
        if (name && strcmp(name, "default") == 0)
            set_default(r, s, d);
        else if (name && strcmp(name, "rules") == 0)
            add_rules(r, s, d);
        else
            report(d, s, "unknown key '%s' in routes (known: default, rules)",
                     name ? name : "?");
    }
}

int sy_routes_add_group(sy_routes *r, const config_setting_t *routes,
                        sy_diags *d)
{
    /* A caller without a list still gets the count. */
    sy_diags scratch;
    sy_diags_init(&scratch);
    sy_diags *out = d ? d : &scratch;
    size_t before = out->errors;
    add_group(r, routes, out);
    int n = (int)(out->errors - before);
    sy_diags_free(&scratch);
    return n;
}

static const char *io_reason(const config_t *cfg, const char *path,
                             int saved_errno)
{
    struct stat st;
    if (saved_errno)
        return strerror(saved_errno);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return strerror(EISDIR);
    const char *text = config_error_text(cfg);
    return text ? text : "I/O error";
}

static void report_read_error(const config_t *cfg, const char *path,
                              int saved_errno, sy_diags *d)
{
    const char *file = config_error_file(cfg);
    const char *text = config_error_text(cfg);
    if (!file && saved_errno == ENOMEM)
        sy_oom("reading %s", path);
    if (!file) {
        sy_error(d, path, 0, "cannot read routing file: %s",
                 io_reason(cfg, path, saved_errno));
        return;
    }
    char shown[SY_ROUTE_PATH_MAX];
    display_path(config_get_include_dir(cfg), path, file, shown,
                 sizeof shown);
    sy_error(d, shown, config_error_line(cfg), "%s",
             text ? text : "cannot parse");
}

/* The top level of a routing file holds `routes` and nothing else. */
static void add_root(sy_routes *r, const config_setting_t *root,
                     const char *path, sy_diags *d)
{
    const config_setting_t *routes = NULL;
    int n = config_setting_length(root);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        const char *name = config_setting_name(s);
        if (name && strcmp(name, "routes") == 0)
            routes = s;
        else
            report(d, s, "unknown top-level key '%s' in a routing file (only "
                     "'routes' is allowed)", name ? name : "?");
    }
    if (routes)
        add_group(r, routes, d);
    else
        sy_error(d, path, 0, "no 'routes' group in the routing file");
}

static void add_file(sy_routes *r, const char *path, sy_diags *d)
{
    if (!path || !*path) {
        sy_error(d, NULL, 0, "no routing file given");
        return;
    }
    config_t cfg;
    config_init(&cfg);
    /* `@include` is relative to the including file, like every path in a
     * configuration file. */
    char *dir = sy_path_dirname(path);
    config_set_include_dir(&cfg, dir);
    free(dir);
    errno = 0;
    if (!sy_cfg_includes_ok(&cfg, path, d)) {
        /* reported */
    } else if (config_read_file(&cfg, path) != CONFIG_TRUE) {
        report_read_error(&cfg, path, errno, d);
    } else {
        sy_cfg_whole(&cfg, path);
        sy_cfg_check_ints(&cfg, path, d);
        add_root(r, config_root_setting(&cfg), path, d);
    }
    config_destroy(&cfg);
}

int sy_routes_add_file(sy_routes *r, const char *path, sy_diags *d)
{
    sy_diags scratch;
    sy_diags_init(&scratch);
    sy_diags *out = d ? d : &scratch;
    size_t before = out->errors;
    add_file(r, path, out);
    int n = (int)(out->errors - before);
    sy_diags_free(&scratch);
    return n;
}

const sy_route_rule *sy_routes_resolve(const sy_routes *r, const char *ns,
                                       const char **executor, size_t *tried)
{
    size_t i = 0;
    const sy_route_rule *win = NULL;
    for (; r && i < r->n && !win; i++)
        if (sy_glob_match(&r->rules[i].glob, ns))
            win = &r->rules[i];
    if (tried)
        *tried = i;
    if (executor)
        *executor = win                             ? win->executor
                    : r && r->default_executor ? r->default_executor
                                               : SY_DEFAULT_INSTANCE;
    return win;
}

const char *const *sy_routes_targets(const sy_routes *r, const sy_route_rule *win,
                                     size_t *n)
{
    static const char *const implicit[] = {SY_DEFAULT_INSTANCE};
    if (win) {
        *n = win->n_to;
        return (const char *const *)win->to;
    }
    if (r && r->default_to) {
        *n = r->n_default_to;
        return (const char *const *)r->default_to;
    }
    *n = 1;
    return implicit;
}

void sy_routes_check_shadowing(const sy_routes *r, sy_diags *d)
{
    for (size_t j = 0; r && d && j < r->n; j++) {
        const sy_route_rule *late = &r->rules[j];
        for (size_t i = 0; i < j; i++) {
            const sy_route_rule *early = &r->rules[i];
            if (!sy_glob_subsumes(&early->glob, &late->glob))
                continue;
            sy_warn(d, late->file, late->line,
                    "rule \"%s\" can never match: every namespace it matches "
                    "is taken by the earlier rule \"%s\" at %s:%d",
                    late->glob.source, early->glob.source, early->file,
                    early->line);
            break;
        }
    }
}
