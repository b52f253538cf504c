/* Reading libconfig settings the same way everywhere in a workflow file:
 * durations, unknown keys, strings.  Shared by the workflow reader
 * (workflow.c, parse_task.c), `retry` (retry.c) and `when` (condition.c). */
#include <stdio.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "workflow/internal.h"

int sy_setting_duration(const config_setting_t *s, int64_t *ms, sy_diags *d)
{
    const char *name = config_setting_name(s);
    char why[256];
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        if (config_setting_get_int64(s) >= 0) {
            *ms = config_setting_get_int64(s);
            return 0;
        }
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'%s' must not be negative (milliseconds)", name);
        return 1;
    case CONFIG_TYPE_STRING:
        if (sy_sdk_duration_parse(config_setting_get_string(s), ms, why, sizeof why) == SY_OK)
            return 0;
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "'%s': %s", name, why);
        return 1;
    default:
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'%s' must be a duration such as \"250ms\", \"5s\", \"1m\" or "
                 "integer milliseconds",
                 name);
        return 1;
    }
}

static bool known(const char *name, const char *const *keys)
{
    for (; *keys; keys++)
        if (strcmp(name, *keys) == 0)
            return true;
    return false;
}

int sy_setting_check_keys(const config_setting_t *g, const char *const *keys,
                          const char *where, sy_diags *d)
{
    int errors = 0;
    for (int i = 0; i < config_setting_length(g); i++) {
        const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        if (known(config_setting_name(s), keys))
            continue;
        char list[512];
        size_t off = 0;
        list[0] = '\0';
        for (const char *const *k = keys; *k; k++)
            off += (size_t)snprintf(list + off, off < sizeof list ? sizeof list - off : 0,
                                    "%s%s", off ? ", " : "", *k);
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "unknown key '%s' in %s (known: %s)",
                 config_setting_name(s), where, list);
        errors++;
    }
    return errors;
}

const char *sy_setting_string(const config_setting_t *g, const char *key,
                              const char *what, sy_diags *d)
{
    const config_setting_t *s = config_setting_get_member(g, key);
    if (!s)
        return NULL;
    const char *v = config_setting_get_string(s);
    if (!v || !sy_wf_utf8_valid(v)) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s must be %s", what,
                 v ? "valid UTF-8 text" : "a string");
        return NULL;
    }
    return v;
}
