/*
 * params.h -- settings groups (an executor instance's settings, a task's
 * executor parameters) checked against a plugin's declarations while the
 * libconfig settings still know their lines.
 *
 * The check itself, the conversion into the jansson objects the host keeps
 * (sy_sdk_json_from_setting) and the views plugins read through
 * (sy_sdk_params_view) are the SDK's, switchyard/config_json.h and
 * switchyard/json_params.h: the conformance kit judges a --params file by
 * the very same rules.  This adapter reports into the host's diagnostics.
 */
#ifndef SY_PARAMS_H
#define SY_PARAMS_H

#include <stdbool.h>

#include <jansson.h>
#include <libconfig.h>

#include <switchyard/executor.h>

#include "base/diagnostics.h"

/* Checks `group` (minus the keys in `skip`) against a plugin's declared
 * parameters: unknown keys, missing required keys, wrong types, malformed
 * durations, each an error at the setting's file:line prefixed by `what`
 * (e.g. "executor 'gpu'").  `spec` NULL means "no declarations": nothing is
 * checked.  Returns the number of errors added. */
int sy_params_check(const config_setting_t *group, const char *const *skip,
                    const sy_param_spec *const *spec, const char *what,
                    sy_diags *d);

/* The same check on parameters already converted to JSON (a task read
 * from the parse cache): how many problems sy_params_check would report,
 * without reporting them, for want of their lines.  Keys in `skip` (NULL
 * for none) are not judged: a task's `priority` is kept among its
 * parameters but is the host's key. */
int sy_params_problems_json(const json_t *params, const char *const *skip,
                            const sy_param_spec *const *spec);

/* Before config_read_file(lc, path): false, with an error at the
 * including file's line, when a file it @includes is there but is not a
 * regular file (libconfig 1.5 would exit the process reading it; SDK:
 * sy_sdk_config_includes_ok). */
bool sy_cfg_includes_ok(const config_t *lc, const char *path, sy_diags *d);

/* After config_read_file(lc, path): libconfig 1.5 keeps a setting whose
 * name or text it could not copy (a failed strdup) as NULL, which would
 * read as a missing key or a wrong type further on.  Any such setting
 * ends the process with the out-of-memory line (sy_oom) naming `path`. */
void sy_cfg_whole(const config_t *lc, const char *path);

#endif
