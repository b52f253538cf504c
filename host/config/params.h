/*
 * params.h -- the host's side of sy_params: settings groups (an executor
 * instance's settings, a task's executor parameters) held as jansson
 * objects, converted from libconfig once at load time, and checked against
 * a plugin's declarations while the libconfig settings still know their
 * lines.
 *
 * A sy_params view is a const json_t object; getters never modify it, so a
 * view may be read from any thread while its owner keeps it alive.
 */
#ifndef SY_PARAMS_H
#define SY_PARAMS_H

#include <jansson.h>
#include <libconfig.h>

#include <switchyard/executor.h>

#include "base/diagnostics.h"

/* The table of host functions handed to every plugin (static storage). */
extern const sy_host_api sy_host_api_table;

/* Converts a libconfig group into a new JSON object (caller owns the
 * reference), leaving out the keys listed in `skip` (NULL-terminated, may
 * be NULL).  Integers become integers, floats reals, arrays and lists
 * arrays, groups objects.  NULL when out of memory. */
json_t *sy_params_from_setting(const config_setting_t *group,
                               const char *const *skip);

static inline const sy_params *sy_params_view(const json_t *obj)
{
    return (const sy_params *)obj;
}

static inline const json_t *sy_params_json(const sy_params *p)
{
    return (const json_t *)p;
}

/* Checks `group` (minus the keys in `skip`) against a plugin's declared
 * parameters: unknown keys, missing required keys, wrong types, malformed
 * durations, each an error at the setting's file:line prefixed by `what`
 * (e.g. "executor 'gpu'").  `spec` NULL means "no declarations": nothing is
 * checked.  Returns the number of errors added. */
int sy_params_check(const config_setting_t *group, const char *const *skip,
                    const sy_param_spec *const *spec, const char *what,
                    sy_diags *d);

/* The name of a type for messages ("string", "integer", ...). */
const char *sy_param_type_name(sy_param_type t);

#endif
