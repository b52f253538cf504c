/*
 * switchyard/config_json.h -- libconfig settings for sy_params: a group
 * converted into a jansson object (the view switchyard/json_params.h
 * reads), and a group checked against a plugin's declarations.
 *
 * For whoever reads switchyard.cfg-style files for a plugin: the host, and
 * the conformance kit's --params file.  Needs libconfig and jansson: link
 * with $(pkg-config --libs libconfig jansson).  Every function may be
 * called from any thread on settings no thread modifies.
 */
#ifndef SWITCHYARD_CONFIG_JSON_H
#define SWITCHYARD_CONFIG_JSON_H

#include <stdbool.h>

#include <jansson.h>
#include <libconfig.h>

#include <switchyard/executor.h>

/* Converts a libconfig group into a new JSON object (the caller owns the
 * reference), leaving out the keys listed in `skip` (NULL-terminated, may
 * be NULL).  Integers become integers, floats reals, arrays and lists
 * arrays, groups objects; a NULL group gives {}.  NULL when out of
 * memory. */
json_t *sy_sdk_json_from_setting(const config_setting_t *group,
                                 const char *const *skip);

/* True when JSON can hold every value at or under `s` (strings valid
 * UTF-8, numbers finite): when sy_sdk_json_from_setting() returned NULL
 * for such a group, it ran out of memory.  A NULL `s` is fine. */
bool sy_sdk_setting_text_ok(const config_setting_t *s);

/* The name of a type as config files speak of it: "string", "integer",
 * "number", "boolean", "list", "group", "duration", "nothing".  Static. */
const char *sy_sdk_setting_type_name(sy_param_type t);

/* Told of each problem sy_sdk_params_check_setting() finds: the setting's
 * file (may be NULL) and line, and one line saying what is wrong (valid
 * during the call only).  `arg` is the caller's. */
typedef void (*sy_sdk_problem_fn)(void *arg, const char *file, int line,
                                  const char *msg);

/* Checks `group` (minus the keys in `skip`) against a plugin's declared
 * parameters the way the host does before create() or validate() sees
 * them: unknown keys, missing required keys, wrong types, malformed or
 * negative durations, each reported through `report` with its file and
 * line and prefixed by `what` (e.g. "executor 'gpu'").  A NULL `spec`
 * ("no declarations") or group checks nothing.  Returns the number of
 * problems reported. */
int sy_sdk_params_check_setting(const config_setting_t *group,
                                const char *const *skip,
                                const sy_param_spec *const *spec,
                                const char *what, sy_sdk_problem_fn report,
                                void *arg);

/* Before config_read_file(lc, path): false, with one problem reported
 * (the including file, its line, "@include "NAME": a directory is not a
 * regular file"), when a file `path` @includes, at any depth, is there but
 * is not a regular file.  libconfig 1.5 reads such a path as a file and
 * its scanner then exits the process; a file that is not there is left
 * for libconfig to report.  Names resolve as libconfig resolves them,
 * against lc's include directory. */
bool sy_sdk_config_includes_ok(const config_t *lc, const char *path, sy_sdk_problem_fn report,
                               void *arg);

#endif /* SWITCHYARD_CONFIG_JSON_H */
