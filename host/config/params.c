/* Declaration checks reported as host diagnostics (config/params.h). */
#include "config/params.h"

#include "base/util.h"

#include <switchyard/config_json.h>

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
