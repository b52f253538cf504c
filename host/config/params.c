/* Declaration checks reported as host diagnostics (config/params.h). */
#include "config/params.h"

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

int sy_params_check(const config_setting_t *group, const char *const *skip,
                    const sy_param_spec *const *spec, const char *what,
                    sy_diags *d)
{
    return sy_sdk_params_check_setting(group, skip, spec, what, report, d);
}
