#include "config/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/limits.h>
#include <switchyard/sdk.h>

#include "config/integers.h"
#include "config/params.h"
#include "config/size.h"
#include "base/util.h"

#define SRC_FILE(s) config_setting_source_file(s)
#define SRC_LINE(s) ((int)config_setting_source_line(s))

static const char *const top_keys[] = {
    "store", "plugin_dirs", "workflow_dirs", "routes", "executors",
    "strict_plugins", "max_context_bytes", "lease", "max_recoveries", "shutdown_grace",
    "log_limit", "log", "admin", "workflow_cache", "pools", "rate_limits", "tenants",
    "submit_key_window",
    "audit_keep", "events_keep", NULL,
};

bool sy_name_valid(const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p; p++, n++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    return n >= 1 && n <= 64;
}

void sy_config_parse_error(const config_t *lc, const char *path, sy_diags *d)
{
    if (errno == ENOMEM &&
        (config_error_type(lc) == CONFIG_ERR_FILE_IO || !config_error_file(lc)))
        sy_oom("reading %s", path);
    if (config_error_type(lc) == CONFIG_ERR_FILE_IO || !config_error_file(lc))
        sy_error(d, path, 0, "cannot read: %s", strerror(errno ? errno : ENOENT));
    else
        sy_error(d, config_error_file(lc), config_error_line(lc), "%s",
                 config_error_text(lc));
}

static const char *known_list(const char *const *keys, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (; *keys; keys++)
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
                                off ? ", " : "", *keys);
    return buf;
}

static int expect_type(const config_setting_t *s, int type, const char *what,
                       sy_diags *d)
{
    if (config_setting_type(s) == type)
        return 0;
    sy_error(d, SRC_FILE(s), SRC_LINE(s), "'%s' must be %s", config_setting_name(s),
             what);
    return 1;
}

/* A list of path strings, each resolved against the config's directory. */
static int read_dirs(sy_config *cfg, const config_setting_t *s, char ***out,
                     size_t *n, sy_diags *d)
{
    if (!config_setting_is_aggregate(s) || config_setting_is_group(s)) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s),
                 "'%s' must be a list of directory names, e.g. [\"plugins\"]",
                 config_setting_name(s));
        return 1;
    }
    int len = config_setting_length(s);
    *out = sy_xmalloc(sizeof(char *) * (size_t)(len > 0 ? len : 1));
    int errors = 0;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *v = config_setting_get_string(e);
        if (!v || !*v) {
            sy_error(d, SRC_FILE(s), SRC_LINE(e),
                     "'%s' entry %d must be a non-empty string",
                     config_setting_name(s), i + 1);
            errors++;
            continue;
        }
        (*out)[(*n)++] = sy_path_join(cfg->dir, v);
    }
    return errors;
}

static int add_routes_file(sy_config *cfg, const config_setting_t *s,
                           const char *name, sy_diags *d)
{
    if (!name || !*name) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'routes' file name is empty");
        return 1;
    }
    char *path = sy_path_join(cfg->dir, name);
    int errors = sy_routes_add_file(&cfg->routes, path, d);
    free(path);
    return errors;
}

/* `routes` is a file, a list of files (rules concatenated in order), or the
 * routes group itself. */
static int read_routes(sy_config *cfg, const config_setting_t *s, sy_diags *d)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_STRING:
        return add_routes_file(cfg, s, config_setting_get_string(s), d);
    case CONFIG_TYPE_GROUP:
        return sy_routes_add_group(&cfg->routes, s, d);
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST: {
        int errors = 0;
        for (int i = 0; i < config_setting_length(s); i++) {
            const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
            const char *v = config_setting_get_string(e);
            if (!v) {
                sy_error(d, SRC_FILE(s), SRC_LINE(e),
                         "'routes' entry %d must be a file name", i + 1);
                errors++;
                continue;
            }
            errors += add_routes_file(cfg, e, v, d);
        }
        return errors;
    }
    default:
        sy_error(d, SRC_FILE(s), SRC_LINE(s),
                 "'routes' must be a file name, a list of file names, or a group "
                 "{ default = \"...\"; rules = (...); }");
        return 1;
    }
}

static void add_executor(sy_config *cfg, const char *name, const char *plugin,
                         const config_setting_t *s, const char *file, int line)
{
    cfg->executors = realloc(cfg->executors,
                             sizeof(sy_instance_config) * (cfg->n_executors + 1));
    if (!cfg->executors) {
        sy_oom("reading executor '%s'", name);
    }
    cfg->executors[cfg->n_executors++] = (sy_instance_config){
        .name = sy_xstrdup(name), .plugin = sy_xstrdup(plugin), .setting = s, .file = file,
        .line = line};
}

/* A duration setting ("250ms", "5s", or integer milliseconds) of at least
 * `min_ms`; 1 error naming the key when it is not. */
static int read_duration(const config_setting_t *s, int64_t min_ms, const char *min_text,
                         int64_t *out, sy_diags *d)
{
    char why[256] = "must be a duration such as \"30s\"";
    int64_t ms = -1;
    int t = config_setting_type(s);
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        ms = config_setting_get_int64(s);
    else if (t == CONFIG_TYPE_STRING &&
             sy_sdk_duration_parse(config_setting_get_string(s), &ms, why, sizeof why) != SY_OK)
        ms = -1;
    if (ms < min_ms) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'%s' %s (at least %s)", config_setting_name(s),
                 why, min_text);
        return 1;
    }
    *out = ms;
    return 0;
}

/* The host's own keys in an instance group (the rest is the plugin's). */
static int read_instance_host_keys(sy_instance_config *c, const config_setting_t *g,
                                   sy_diags *d)
{
    int errors = 0;
    const config_setting_t *s = config_setting_get_member(g, "call_timeout");
    if (s)
        errors += read_duration(s, 10, "10ms", &c->call_timeout_ms, d);
    if ((s = config_setting_get_member(g, "max_task_time")))
        errors += read_duration(s, 1, "1ms", &c->max_task_ms, d);
    if ((s = config_setting_get_member(g, "isolate_plugin"))) {
        if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
            sy_error(d, SRC_FILE(s), SRC_LINE(s), "'isolate_plugin' must be true or false");
            errors++;
        } else {
            c->isolate = config_setting_get_bool(s);
        }
    }
    return errors;
}

static int read_executor(sy_config *cfg, const config_setting_t *g, sy_diags *d)
{
    const char *name = config_setting_name(g);
    if (!config_setting_is_group(g)) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g),
                 "executor '%s' must be a group, e.g. %s = { plugin = \"thread\"; }",
                 name, name);
        return 1;
    }
    if (!sy_name_valid(name)) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g),
                 "executor name '%s' is invalid: use letters, digits, '_' and '-'",
                 name);
        return 1;
    }
    const config_setting_t *p = config_setting_get_member(g, "plugin");
    if (!p) {
        sy_error(d, SRC_FILE(g), SRC_LINE(g),
                 "executor '%s' has no 'plugin' (e.g. plugin = \"thread\";)", name);
        return 1;
    }
    const char *plugin = config_setting_get_string(p);
    if (!plugin || !sy_name_valid(plugin)) {
        sy_error(d, SRC_FILE(p), SRC_LINE(p),
                 "executor '%s': 'plugin' must be a plugin name such as \"thread\"",
                 name);
        return 1;
    }
    add_executor(cfg, name, plugin, g, SRC_FILE(g), SRC_LINE(g));
    return read_instance_host_keys(&cfg->executors[cfg->n_executors - 1], g, d);
}

static int read_executors(sy_config *cfg, const config_setting_t *s, sy_diags *d)
{
    if (expect_type(s, CONFIG_TYPE_GROUP,
                    "a group of instances, e.g. executors = { default = { plugin = \"thread\"; }; }",
                    d))
        return 1;
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++)
        errors += read_executor(cfg, config_setting_get_elem(s, (unsigned)i), d);
    return errors;
}

/* An integer setting within [lo, hi]; 1 error when it is not. */
static int read_int_range(const config_setting_t *s, long long lo, long long hi, int64_t *out,
                          sy_diags *d)
{
    int t = config_setting_type(s);
    long long v = (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) ? config_setting_get_int64(s)
                                                                   : lo - 1;
    if (v < lo || v > hi) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'%s' must be an integer between %lld and %lld",
                 config_setting_name(s), lo, hi);
        return 1;
    }
    *out = v;
    return 0;
}

/* A size: integer bytes, or a string "N", "NB", "NKiB" or "NMiB". */
static int read_size(const config_setting_t *s, long long hi, int64_t *out, sy_diags *d)
{
    long long v = sy_cfg_size(s, hi);
    if (v < 0) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'%s' must be a size between 0 and %lld "
                 "bytes: an integer, or a string such as \"64KiB\" or \"1MiB\"",
                 config_setting_name(s), hi);
        return 1;
    }
    *out = v;
    return 0;
}

/* `log = { format = "..."; }`: how the host writes its own log. */
static int read_log(sy_config *cfg, const config_setting_t *s, sy_diags *d)
{
    if (expect_type(s, CONFIG_TYPE_GROUP, "a group such as { format = \"json\"; }", d))
        return 1;
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++) {
        const config_setting_t *k = config_setting_get_elem(s, (unsigned)i);
        const char *name = config_setting_name(k);
        if (strcmp(name, "format") != 0) {
            sy_error(d, SRC_FILE(k), SRC_LINE(k), "unknown key 'log.%s' (known: format)", name);
            errors++;
            continue;
        }
        const char *v = config_setting_type(k) == CONFIG_TYPE_STRING
                            ? config_setting_get_string(k) : NULL;
        if (v && strcmp(v, "auto") == 0) {
            cfg->log_format_set = false;
        } else if (v && sy_log_format_parse(v, &cfg->log_format)) {
            cfg->log_format_set = true;
        } else {
            sy_error(d, SRC_FILE(k), SRC_LINE(k), "'log.format' must be \"auto\", \"text\", "
                     "\"journal\" or \"json\"%s%s%s", v ? ", not \"" : "", v ? v : "",
                     v ? "\"" : "");
            errors++;
        }
    }
    return errors;
}

static int read_top(sy_config *cfg, const config_setting_t *s, sy_diags *d)
{
    const char *name = config_setting_name(s);
    if (strcmp(name, "store") == 0) {
        if (expect_type(s, CONFIG_TYPE_STRING,
                        "a string such as \"sqlite:var/switchyard.db\"", d))
            return 1;
        free(cfg->store);
        cfg->store = sy_xstrdup(config_setting_get_string(s));
        cfg->store_line = SRC_LINE(s);
        return 0;
    }
    if (strcmp(name, "plugin_dirs") == 0)
        return read_dirs(cfg, s, &cfg->plugin_dirs, &cfg->n_plugin_dirs, d);
    if (strcmp(name, "workflow_dirs") == 0)
        return read_dirs(cfg, s, &cfg->workflow_dirs, &cfg->n_workflow_dirs, d);
    if (strcmp(name, "workflow_cache") == 0) {
        if (expect_type(s, CONFIG_TYPE_STRING,
                        "a directory name such as \"var/workflow-cache\" (\"\": no cache)", d))
            return 1;
        const char *v = config_setting_get_string(s);
        free(cfg->workflow_cache);
        cfg->workflow_cache = *v ? sy_path_join(cfg->dir, v) : NULL;
        return 0;
    }
    if (strcmp(name, "strict_plugins") == 0) {
        if (expect_type(s, CONFIG_TYPE_BOOL, "true or false", d))
            return 1;
        cfg->strict_plugins = config_setting_get_bool(s);
        return 0;
    }
    if (strcmp(name, "routes") == 0)
        return read_routes(cfg, s, d);
    if (strcmp(name, "max_context_bytes") == 0)
        return read_int_range(s, 1024, 1LL << 31, &cfg->max_context_bytes, d);
    if (strcmp(name, "log_limit") == 0)
        return read_size(s, 16LL << 20, &cfg->log_limit, d);
    if (strcmp(name, "max_recoveries") == 0)
        return read_int_range(s, 0, 1000, &cfg->max_recoveries, d);
    if (strcmp(name, "lease") == 0)
        return read_duration(s, 1000, "1s", &cfg->lease_ms, d);
    if (strcmp(name, "shutdown_grace") == 0)
        return read_duration(s, 1, "1ms", &cfg->shutdown_grace_ms, d);
    if (strcmp(name, "submit_key_window") == 0)
        return read_duration(s, 1, "1ms", &cfg->submit_key_window_ms, d);
    if (strcmp(name, "audit_keep") == 0)
        return read_duration(s, 3600 * 1000, "1h", &cfg->audit_keep_ms, d);
    /* Not under an event key's window: a retried emit would be stored
     * again once the first were deleted. */
    if (strcmp(name, "events_keep") == 0)
        return read_duration(s, 86400 * 1000, "1d", &cfg->events_keep_ms, d);
    if (strcmp(name, "executors") == 0)
        return read_executors(cfg, s, d);
    if (strcmp(name, "log") == 0)
        return read_log(cfg, s, d);
    if (strcmp(name, "admin") == 0)
        return sy_config_admin_read(&cfg->admin, s, cfg->dir, d);
    if (strcmp(name, "pools") == 0)
        return sy_config_pools_read(&cfg->flow, s, d);
    if (strcmp(name, "tenants") == 0)
        return sy_config_tenants_read(&cfg->flow, s, d);
    if (strcmp(name, "rate_limits") == 0)
        return sy_config_rates_read(&cfg->flow, s, d);
    char known[400];
    sy_error(d, SRC_FILE(s), SRC_LINE(s), "unknown key '%s' (known: %s)", name,
             known_list(top_keys, known, sizeof known));
    return 1;
}

static int check_target(const sy_config *cfg, const char *exec, const char *file,
                        int line, const char *what, sy_diags *d)
{
    if (sy_config_instance(cfg, exec))
        return 0;
    char defined[512];
    size_t off = 0;
    defined[0] = '\0';
    for (size_t i = 0; i < cfg->n_executors; i++)
        off += (size_t)snprintf(defined + off, off < sizeof defined ? sizeof defined - off : 0,
                                "%s%s", off ? ", " : "", cfg->executors[i].name);
    sy_error(d, file, line, "%s sends to executor '%s', which is not defined (defined: %s)",
             what, exec, defined[0] ? defined : "none");
    return 1;
}

/* Every rule and the default must name an instance that exists; with no
 * `default` instance defined, one using the thread plugin is implied. */
static int check_routing(sy_config *cfg, sy_diags *d)
{
    const char *def = cfg->routes.default_executor ? cfg->routes.default_executor
                                                   : SY_DEFAULT_INSTANCE;
    if (strcmp(def, SY_DEFAULT_INSTANCE) == 0 &&
        !sy_config_instance(cfg, SY_DEFAULT_INSTANCE))
        add_executor(cfg, SY_DEFAULT_INSTANCE, SY_DEFAULT_PLUGIN, NULL, cfg->path, 0);
    int errors = 0;
    for (size_t i = 0; i < cfg->routes.n; i++) {
        const sy_route_rule *r = &cfg->routes.rules[i];
        char what[300];
        snprintf(what, sizeof what, "rule \"%s\"", r->glob.source);
        /* Every instance of an overflow list, not only the first. */
        for (size_t k = 0; k < r->n_to; k++)
            errors += check_target(cfg, r->to[k], r->file, r->line, what, d);
    }
    for (size_t k = 0; k < cfg->routes.n_default_to; k++)
        errors += check_target(cfg, cfg->routes.default_to[k], cfg->routes.default_file,
                               cfg->routes.default_line, "the default route", d);
    return errors;
}

int sy_config_load(sy_config *cfg, const char *path, sy_diags *d)
{
    memset(cfg, 0, sizeof *cfg);
    config_init(&cfg->lc);
    sy_routes_init(&cfg->routes);
    cfg->path = sy_xstrdup(path);
    cfg->dir = sy_path_dirname(path);
    /* Defaults first, so a value written in the file (0 included) stands. */
    cfg->max_context_bytes = SY_MAX_CONTEXT_BYTES_DEFAULT;
    cfg->lease_ms = 30000;
    cfg->max_recoveries = 5;
    cfg->log_limit = 64 << 10;
    cfg->shutdown_grace_ms = 30000;
    cfg->submit_key_window_ms = SY_SUBMIT_KEY_WINDOW_DEFAULT;
    cfg->audit_keep_ms = SY_AUDIT_KEEP_DEFAULT_MS;
    cfg->events_keep_ms = SY_EVENTS_KEEP_DEFAULT_MS;
    cfg->workflow_cache = sy_path_join(cfg->dir, SY_WORKFLOW_CACHE_DEFAULT);
    config_set_include_dir(&cfg->lc, cfg->dir);
    if (!sy_cfg_includes_ok(&cfg->lc, path, d))
        return 1;
    errno = 0;
    if (!config_read_file(&cfg->lc, path)) {
        sy_config_parse_error(&cfg->lc, path, d);
        return 1;
    }
    sy_cfg_whole(&cfg->lc, path);
    const config_setting_t *root = config_root_setting(&cfg->lc);
    int errors = sy_cfg_check_ints(&cfg->lc, path, d);
    for (int i = 0; i < config_setting_length(root); i++)
        errors += read_top(cfg, config_setting_get_elem(root, (unsigned)i), d);
    if (!cfg->store)
        cfg->store = sy_xstrdup("sqlite:var/switchyard.db");
    if (errors == 0)
        errors += check_routing(cfg, d);
    return errors;
}

const sy_instance_config *sy_config_instance(const sy_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n_executors; i++)
        if (strcmp(cfg->executors[i].name, name) == 0)
            return &cfg->executors[i];
    return NULL;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void sy_config_free(sy_config *cfg)
{
    for (size_t i = 0; i < cfg->n_executors; i++) {
        free(cfg->executors[i].name);
        free(cfg->executors[i].plugin);
    }
    free(cfg->executors);
    free_strv(cfg->plugin_dirs, cfg->n_plugin_dirs);
    free_strv(cfg->workflow_dirs, cfg->n_workflow_dirs);
    sy_routes_free(&cfg->routes);
    sy_config_admin_free(&cfg->admin);
    sy_flow_config_free(&cfg->flow);
    free(cfg->store);
    free(cfg->workflow_cache);
    free(cfg->path);
    free(cfg->dir);
    config_destroy(&cfg->lc);
    memset(cfg, 0, sizeof *cfg);
}
