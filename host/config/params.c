/* Declaration checks reported as host diagnostics (config/params.h). */
#include "config/params.h"

#include <string.h>

#include "base/util.h"

#include <switchyard/config_json.h>
#include <switchyard/sdk.h>

/* Each problem the SDK finds becomes one error at its file:line. */
static void report(void *arg, const char *file, int line, const char *msg)
{
    sy_error(arg, file, line, "%s", msg);
}

bool sy_cfg_includes_ok(const config_t *lc, const char *path, sy_diags *d)
{
    return sy_sdk_config_includes_ok(lc, path, report, d);
}

static bool whole(const config_setting_t *s, bool named)
{
    if (named && !config_setting_name(s))
        return false;
    if (config_setting_type(s) == CONFIG_TYPE_STRING)
        return config_setting_get_string(s) != NULL;
    if (!config_setting_is_aggregate(s))
        return true;
    bool group = config_setting_is_group(s);
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++)
        if (!whole(config_setting_get_elem(s, (unsigned)i), group))
            return false;
    return true;
}

void sy_cfg_whole(const config_t *lc, const char *path)
{
    if (!whole(config_root_setting(lc), false))
        sy_oom("reading %s", path);
}

int sy_params_check(const config_setting_t *group, const char *const *skip,
                    const sy_param_spec *const *spec, const char *what,
                    sy_diags *d)
{
    return sy_sdk_params_check_setting(group, skip, spec, what, report, d);
}

static bool spec_usable(const sy_param_spec *sp)
{
    return SY_HAS_FIELD(sp, sy_param_spec, type) && sp->name;
}

/* The type the SDK's check gives a setting that converts to `v`: JSON
 * keeps every distinction it makes (an array and a list both become an
 * array, both "list" to it). */
static bool json_fits(const json_t *v, const sy_param_spec *sp)
{
    switch (sp->type) {
    case SY_PARAM_DURATION: {
        if (json_is_integer(v))
            return json_integer_value(v) >= 0;
        int64_t ms;
        char why[256];
        return json_is_string(v) &&
               sy_sdk_duration_parse(json_string_value(v), &ms, why, sizeof why) == SY_OK;
    }
    case SY_PARAM_FLOAT: return json_is_number(v);
    case SY_PARAM_INT: return json_is_integer(v);
    case SY_PARAM_STRING: return json_is_string(v);
    case SY_PARAM_BOOL: return json_is_boolean(v);
    case SY_PARAM_ARRAY: return json_is_array(v);
    case SY_PARAM_GROUP: return json_is_object(v);
    default: return false;
    }
}

static bool skipped(const char *key, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(*skip, key) == 0)
            return true;
    return false;
}

int sy_params_problems_json(const json_t *params, const char *const *skip,
                            const sy_param_spec *const *spec)
{
    if (!spec)
        return 0;
    int problems = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)params, key, v) {
        if (skipped(key, skip))
            continue;
        const sy_param_spec *const *sp = spec;
        while (*sp && !(spec_usable(*sp) && strcmp((*sp)->name, key) == 0))
            sp++;
        problems += !*sp || !json_fits(v, *sp);
    }
    for (; *spec; spec++)
        if (spec_usable(*spec) && ((*spec)->flags & SY_PARAM_REQUIRED) &&
            !json_object_get(params, (*spec)->name))
            problems++;
    return problems;
}
