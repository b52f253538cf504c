/*
 * json_params.c -- the parameter getters of sy_host_api over a jansson
 * object (switchyard/json_params.h).
 */
#include <stdlib.h>

#include <switchyard/json_params.h>
#include <switchyard/sdk.h>

const sy_params *sy_sdk_params_view(const json_t *object)
{
    return (const sy_params *)object;
}

const json_t *sy_sdk_params_json(const sy_params *p)
{
    return (const json_t *)p;
}

static const json_t *member(const sy_params *p, const char *key)
{
    const json_t *o = sy_sdk_params_json(p);
    return (o && key && json_is_object(o)) ? json_object_get(o, key) : NULL;
}

static sy_param_type type_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING: return SY_PARAM_STRING;
    case JSON_INTEGER: return SY_PARAM_INT;
    case JSON_REAL: return SY_PARAM_FLOAT;
    case JSON_TRUE:
    case JSON_FALSE: return SY_PARAM_BOOL;
    case JSON_ARRAY: return SY_PARAM_ARRAY;
    case JSON_OBJECT: return SY_PARAM_GROUP;
    default: return SY_PARAM_NONE;
    }
}

sy_param_type sy_sdk_json_param_type(const sy_params *p, const char *key)
{
    const json_t *v = member(p, key);
    return v ? type_of(v) : SY_PARAM_NONE;
}

static int read_string(const json_t *v, const char **out)
{
    if (!v)
        return SY_ENOENT;
    if (!json_is_string(v))
        return SY_ETYPE;
    *out = json_string_value(v);
    return SY_OK;
}

static int read_int(const json_t *v, int64_t *out)
{
    if (!v)
        return SY_ENOENT;
    if (!json_is_integer(v))
        return SY_ETYPE;
    *out = (int64_t)json_integer_value(v);
    return SY_OK;
}

int sy_sdk_json_param_string(const sy_params *p, const char *key,
                             const char **out)
{
    return out ? read_string(member(p, key), out) : SY_EINVAL;
}

int sy_sdk_json_param_int(const sy_params *p, const char *key, int64_t *out)
{
    return out ? read_int(member(p, key), out) : SY_EINVAL;
}

int sy_sdk_json_param_float(const sy_params *p, const char *key, double *out)
{
    const json_t *v = member(p, key);
    if (!out)
        return SY_EINVAL;
    if (!v)
        return SY_ENOENT;
    if (!json_is_number(v))
        return SY_ETYPE;
    *out = json_number_value(v);
    return SY_OK;
}

int sy_sdk_json_param_bool(const sy_params *p, const char *key, int *out)
{
    const json_t *v = member(p, key);
    if (!out)
        return SY_EINVAL;
    if (!v)
        return SY_ENOENT;
    if (!json_is_boolean(v))
        return SY_ETYPE;
    *out = json_is_true(v);
    return SY_OK;
}

int sy_sdk_json_param_duration_ms(const sy_params *p, const char *key,
                                  int64_t *out)
{
    const json_t *v = member(p, key);
    if (!out)
        return SY_EINVAL;
    if (!v)
        return SY_ENOENT;
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0)
            return SY_EINVAL;
        *out = (int64_t)json_integer_value(v);
        return SY_OK;
    }
    if (!json_is_string(v))
        return SY_ETYPE;
    return sy_sdk_duration_parse(json_string_value(v), out, NULL, 0);
}

static int array_member(const sy_params *p, const char *key, const json_t **arr)
{
    const json_t *v = member(p, key);
    if (!v)
        return SY_ENOENT;
    if (!json_is_array(v))
        return SY_ETYPE;
    *arr = v;
    return SY_OK;
}

int sy_sdk_json_param_array_len(const sy_params *p, const char *key,
                                size_t *out)
{
    const json_t *a;
    int rc = out ? array_member(p, key, &a) : SY_EINVAL;
    if (rc == SY_OK)
        *out = json_array_size(a);
    return rc;
}

static int array_elem(const sy_params *p, const char *key, size_t i,
                      const json_t **e)
{
    const json_t *a;
    int rc = array_member(p, key, &a);
    if (rc != SY_OK)
        return rc;
    if (i >= json_array_size(a))
        return SY_ERANGE;
    *e = json_array_get(a, i);
    return SY_OK;
}

int sy_sdk_json_param_array_string(const sy_params *p, const char *key,
                                   size_t i, const char **out)
{
    const json_t *e;
    int rc = out ? array_elem(p, key, i, &e) : SY_EINVAL;
    return rc == SY_OK ? read_string(e, out) : rc;
}

int sy_sdk_json_param_array_int(const sy_params *p, const char *key, size_t i,
                                int64_t *out)
{
    const json_t *e;
    int rc = out ? array_elem(p, key, i, &e) : SY_EINVAL;
    return rc == SY_OK ? read_int(e, out) : rc;
}

int sy_sdk_json_param_group(const sy_params *p, const char *key,
                            const sy_params **out)
{
    const json_t *v = member(p, key);
    if (!out)
        return SY_EINVAL;
    if (!v)
        return SY_ENOENT;
    if (!json_is_object(v))
        return SY_ETYPE;
    *out = sy_sdk_params_view(v);
    return SY_OK;
}

size_t sy_sdk_json_param_count(const sy_params *p)
{
    const json_t *o = sy_sdk_params_json(p);
    return json_is_object(o) ? json_object_size(o) : 0;
}

const char *sy_sdk_json_param_name(const sy_params *p, size_t index)
{
    const json_t *o = sy_sdk_params_json(p);
    const char *key;
    const json_t *v;
    size_t i = 0;
    if (!json_is_object(o))
        return NULL;
    /* jansson keeps insertion order, which is file order. */
    json_object_foreach((json_t *)o, key, v)
    {
        if (i++ == index)
            return key;
    }
    return NULL;
}

char *sy_sdk_json_param_json(const sy_params *p)
{
    const json_t *o = sy_sdk_params_json(p);
    return o ? json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

void sy_sdk_json_free_string(char *s)
{
    free(s);
}
