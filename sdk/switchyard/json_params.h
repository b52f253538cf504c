/*
 * switchyard/json_params.h -- sy_params over jansson: the parameter
 * getters of sy_host_api implemented for a JSON object.
 *
 * For both sides of the ABI: a host holds settings and task parameters as
 * jansson objects and lends these getters in its table; a unit test or the
 * test host (switchyard/testhost.h) hands a plugin parameters written as
 * JSON.  Needs jansson: link with $(pkg-config --libs jansson).
 *
 * A sy_params view is the `const json_t *` object itself, so a view costs
 * nothing and lives exactly as long as the caller keeps the object (its
 * reference).  The getters never modify the object, so a view may be read
 * from any thread while its owner keeps it alive.  Strings and sub-views
 * they return point into the object and live as long as it does.
 *
 * Types: a JSON string is SY_PARAM_STRING, an integer SY_PARAM_INT, a
 * real SY_PARAM_FLOAT, true/false SY_PARAM_BOOL, an array SY_PARAM_ARRAY,
 * an object SY_PARAM_GROUP; null is SY_PARAM_NONE.  A duration is a
 * string such as "250ms" or a non-negative integer of milliseconds.
 */
#ifndef SWITCHYARD_JSON_PARAMS_H
#define SWITCHYARD_JSON_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <switchyard/executor.h>

/* The view of `object` (a JSON object, or NULL for an empty view). */
const sy_params *sy_sdk_params_view(const json_t *object);

/* The object behind a view made by sy_sdk_params_view(). */
const json_t *sy_sdk_params_json(const sy_params *p);

/* The getters, each with the contract of its sy_host_api field (SY_ENOENT
 * when absent, SY_ETYPE for another type, SY_EINVAL for a NULL out). */
sy_param_type sy_sdk_json_param_type(const sy_params *p, const char *key);
int sy_sdk_json_param_string(const sy_params *p, const char *key,
                             const char **out);
int sy_sdk_json_param_int(const sy_params *p, const char *key, int64_t *out);
int sy_sdk_json_param_float(const sy_params *p, const char *key, double *out);
int sy_sdk_json_param_bool(const sy_params *p, const char *key, int *out);
int sy_sdk_json_param_duration_ms(const sy_params *p, const char *key,
                                  int64_t *out);
int sy_sdk_json_param_array_len(const sy_params *p, const char *key,
                                size_t *out);
int sy_sdk_json_param_array_string(const sy_params *p, const char *key,
                                   size_t index, const char **out);
int sy_sdk_json_param_array_int(const sy_params *p, const char *key,
                                size_t index, int64_t *out);
int sy_sdk_json_param_group(const sy_params *p, const char *key,
                            const sy_params **out);
size_t sy_sdk_json_param_count(const sy_params *p);
const char *sy_sdk_json_param_name(const sy_params *p, size_t index);
/* Compact JSON text, malloc'd (free with sy_sdk_json_free_string). */
char *sy_sdk_json_param_json(const sy_params *p);
void sy_sdk_json_free_string(char *s);

/* The designated initializers of every parameter field of a sy_host_api,
 * for a host's static table:
 *
 *     static const sy_host_api table = {
 *         .size = sizeof(sy_host_api), ...,
 *         .complete = my_complete, .log = my_log, .wake = my_wake,
 *         SY_SDK_JSON_PARAMS_INIT
 *     };
 */
#define SY_SDK_JSON_PARAMS_INIT                                               \
    .param_type = sy_sdk_json_param_type,                                     \
    .param_string = sy_sdk_json_param_string,                                 \
    .param_int = sy_sdk_json_param_int,                                       \
    .param_float = sy_sdk_json_param_float,                                   \
    .param_bool = sy_sdk_json_param_bool,                                     \
    .param_duration_ms = sy_sdk_json_param_duration_ms,                       \
    .param_array_len = sy_sdk_json_param_array_len,                           \
    .param_array_string = sy_sdk_json_param_array_string,                     \
    .param_array_int = sy_sdk_json_param_array_int,                           \
    .param_group = sy_sdk_json_param_group,                                   \
    .param_count = sy_sdk_json_param_count,                                   \
    .param_name = sy_sdk_json_param_name,                                     \
    .param_json = sy_sdk_json_param_json,                                     \
    .free_string = sy_sdk_json_free_string

#endif /* SWITCHYARD_JSON_PARAMS_H */
