/*
 * inputs.c -- the --params file and the bad settings derived from a
 * plugin's declarations.
 *
 *   instance     = { ... };  settings for create() (a `plugin` key is
 *                            ignored, so an executors block can be pasted)
 *   task         = { ... };  a task's parameters: quick, ordinary work
 *   long_task    = { ... };  a task that runs until cancelled (optional;
 *                            makes the cancel and wake checks bite)
 *   bad_instance = { ... };  settings create() must refuse
 *   bad_task     = { ... };  parameters validate() must refuse
 *   input        = "{...}";  the input context, a JSON object
 *   max_context_bytes = N;   the host's bound on an output (default
 *                            16 MiB), for the output-size check
 */
#include "kit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const skip_plugin[] = {"plugin", NULL};

static const char *const groups[] = {"instance", "task", "long_task",
                                     "bad_instance", "bad_task", NULL};

static bool is_group_key(const char *name)
{
    for (const char *const *g = groups; *g; g++)
        if (strcmp(*g, name) == 0)
            return true;
    return false;
}

static int where_err(const config_setting_t *s, char *err, size_t len,
                     const char *fmt, const char *name)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, name);
    sy_sdk_errf(err, len, "%s:%u: %s",
            config_setting_source_file(s) ? config_setting_source_file(s) : "?",
            config_setting_source_line(s), msg);
    return -1;
}

/* Every top-level key must be known and of its type: a typo in the params
 * file would otherwise test the plugin with defaults, silently. */
static int check_keys(const config_setting_t *root, char *err, size_t len)
{
    int n = config_setting_length(root);
    for (int i = 0; i < n; i++) {
        const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        const char *name = config_setting_name(s);
        if (is_group_key(name)) {
            if (!config_setting_is_group(s))
                return where_err(s, err, len, "'%s' must be a group { ... }",
                                 name);
        } else if (strcmp(name, "max_context_bytes") == 0) {
            int t = config_setting_type(s);
            if ((t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) ||
                config_setting_get_int64(s) < 1)
                return where_err(s, err, len, "'%s' must be a positive "
                                 "integer (bytes)", name);
        } else if (strcmp(name, "input") == 0) {
            if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return where_err(s, err, len, "'%s' must be a string holding "
                                 "a JSON object", name);
        } else {
            return where_err(s, err, len, "unknown key '%s' (known: instance, "
                             "task, long_task, bad_instance, bad_task, "
                             "input, max_context_bytes)",
                             name);
        }
    }
    return 0;
}

static json_t *group_json(const config_setting_t *root, const char *key,
                          bool empty_default)
{
    const config_setting_t *s = config_setting_get_member(root, key);
    if (!s)
        return empty_default ? json_object() : NULL;
    return sy_sdk_json_from_setting(s, skip_plugin);
}

static int read_input(kit_inputs *in, const config_setting_t *root, char *err,
                      size_t len)
{
    const config_setting_t *s = config_setting_get_member(root, "input");
    if (!s)
        return 0;
    const char *text = config_setting_get_string(s);
    json_error_t je;
    json_t *v = json_loads(text, 0, &je);
    bool object = v && json_is_object(v);
    json_decref(v);
    if (!object)
        return where_err(s, err, len, "'%s' must hold a JSON object", "input");
    free(in->input);
    in->input = strdup(text);
    return in->input ? 0 : -1;
}

typedef struct {
    char *err;
    size_t len;
} include_problem;

static void on_include_problem(void *arg, const char *file, int line, const char *msg)
{
    include_problem *p = arg;
    sy_sdk_errf(p->err, p->len, "%s:%d: %s", file, line, msg);
}

static int read_file(kit_inputs *in, const char *path, char *err, size_t len)
{
    include_problem problem = {err, len};
    if (!sy_sdk_config_includes_ok(&in->cfg, path, on_include_problem, &problem))
        return -1;
    if (!config_read_file(&in->cfg, path)) {
        if (config_error_type(&in->cfg) == CONFIG_ERR_FILE_IO)
            sy_sdk_errf(err, len, "%s: cannot read the params file", path);
        else
            sy_sdk_errf(err, len, "%s:%d: %s",
                    config_error_file(&in->cfg) ? config_error_file(&in->cfg)
                                                : path,
                    config_error_line(&in->cfg), config_error_text(&in->cfg));
        return -1;
    }
    const config_setting_t *root = config_root_setting(&in->cfg);
    if (check_keys(root, err, len) != 0 || read_input(in, root, err, len) != 0)
        return -1;
    const config_setting_t *max =
        config_setting_get_member(root, "max_context_bytes");
    if (max)
        in->max_context_bytes = (size_t)config_setting_get_int64(max);
    in->instance_setting = config_setting_get_member(root, "instance");
    in->task_setting = config_setting_get_member(root, "task");
    in->instance = group_json(root, "instance", true);
    in->task = group_json(root, "task", true);
    in->long_task = group_json(root, "long_task", false);
    in->bad_instance = group_json(root, "bad_instance", false);
    in->bad_task = group_json(root, "bad_task", false);
    if (!in->instance || !in->task) {
        sy_sdk_errf(err, len, "out of memory reading %s", path);
        return -1;
    }
    return 0;
}

/* The directory part of `path`, as dirname(1) gives it; malloc'd. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

int kit_inputs_load(kit_inputs *in, const char *path, char *err,
                    size_t err_len)
{
    memset(in, 0, sizeof *in);
    config_init(&in->cfg);
    in->input = strdup("{}");
    in->max_context_bytes = SY_MAX_CONTEXT_BYTES_DEFAULT;
    if (path) {
        in->have_file = true;
        in->path = strdup(path);
        in->base_dir = directory_of(path);
        return in->input && in->path && in->base_dir
                   ? read_file(in, path, err, err_len)
                   : -1;
    }
    char cwd[PATH_MAX];
    in->base_dir = strdup(getcwd(cwd, sizeof cwd) ? cwd : ".");
    in->instance = json_object();
    in->task = json_object();
    if (!in->input || !in->base_dir || !in->instance || !in->task) {
        sy_sdk_errf(err, err_len, "out of memory");
        return -1;
    }
    return 0;
}

void kit_inputs_free(kit_inputs *in)
{
    config_destroy(&in->cfg);
    json_decref(in->instance);
    json_decref(in->task);
    json_decref(in->long_task);
    json_decref(in->bad_instance);
    json_decref(in->bad_task);
    free(in->input);
    free(in->path);
    free(in->base_dir);
    memset(in, 0, sizeof *in);
}

/* ------------------------------------------------------------------------ */
/* Derived bad settings                                                     */
/* ------------------------------------------------------------------------ */

/* A value of the wrong type for a declaration, and its description. */
static json_t *wrong_value(sy_param_type t, const char **desc)
{
    switch (t) {
    case SY_PARAM_STRING:
        *desc = "an integer where a string is declared";
        return json_integer(12345);
    case SY_PARAM_INT:
        *desc = "a string where an integer is declared";
        return json_string("not-an-integer");
    case SY_PARAM_FLOAT:
        *desc = "a string where a number is declared";
        return json_string("not-a-number");
    case SY_PARAM_BOOL:
        *desc = "a string where a boolean is declared";
        return json_string("not-a-boolean");
    case SY_PARAM_DURATION:
        *desc = "a boolean where a duration is declared";
        return json_true();
    case SY_PARAM_ARRAY:
    case SY_PARAM_GROUP:
        *desc = "an integer where a list or group is declared";
        return json_integer(1);
    default:
        return NULL;
    }
}

static int add_set(json_t *sets, const json_t *base, const char *key,
                   json_t *value, const char *what)
{
    json_t *settings = json_deep_copy(base);
    json_t *entry = json_object();
    int rc = -1;
    if (settings && entry && value &&
        json_object_set(settings, key, value) == 0 &&
        json_object_set_new(entry, "what", json_string(what)) == 0 &&
        json_object_set(entry, "settings", settings) == 0 &&
        json_array_append(sets, entry) == 0)
        rc = 0;
    json_decref(settings);
    json_decref(entry);
    json_decref(value);
    return rc;
}

#define KIT_MAX_DERIVED 8

json_t *kit_derive_bad(const json_t *base, const sy_param_spec *const *spec,
                       const char **why)
{
    json_t *sets = json_array();
    if (!sets) {
        *why = "out of memory";
        return NULL;
    }
    if (!spec) {
        /* No declarations: create() judges every key, so it must refuse
         * one it does not know. */
        if (add_set(sets, base, "sy_conformance_unknown_key", json_integer(1),
                    "unknown key 'sy_conformance_unknown_key' (the plugin "
                    "declares no settings, so create() must judge every "
                    "key)") != 0)
            goto oom;
        return sets;
    }
    for (size_t i = 0; spec[i] && json_array_size(sets) < KIT_MAX_DERIVED;
         i++) {
        const sy_param_spec *sp = spec[i];
        const char *desc = NULL;
        if (!SY_HAS_FIELD(sp, sy_param_spec, type) || !sp->name)
            continue;
        json_t *v = wrong_value(sp->type, &desc);
        if (!v)
            continue;
        char what[256];
        snprintf(what, sizeof what, "'%s': %s", sp->name, desc);
        if (add_set(sets, base, sp->name, v, what) != 0)
            goto oom;
    }
    if (json_array_size(sets) == 0) {
        json_decref(sets);
        *why = "the plugin declares no instance settings to give a wrong "
               "type (add bad_instance = { ... } to --params)";
        return NULL;
    }
    return sets;
oom:
    json_decref(sets);
    *why = "out of memory";
    return NULL;
}
