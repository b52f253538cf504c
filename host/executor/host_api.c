/* The host function table lent to plugins (sy_host_api in executor.h). */
#include "executor/host_api.h"

#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "base/log.h"
#include "config/params.h"

void sy_completion_init(sy_completion *c, const char *who,
                        void (*on_complete)(sy_completion *, const sy_result *),
                        void *data)
{
    c->on_complete = on_complete;
    c->data = data;
    c->who = who;
    atomic_init(&c->completed, 0);
}

static void api_complete(sy_completion *c, const sy_result *r)
{
    if (!c) {
        sy_log(SY_LOG_ERROR, NULL, "plugin bug: complete() with a NULL completion");
        return;
    }
    if (atomic_exchange(&c->completed, 1)) {
        sy_log(SY_LOG_ERROR, c->who,
               "plugin bug: complete() called twice for one submit; ignored");
        return;
    }
    sy_result failed = {sizeof failed, SY_OUTCOME_FAILED, NULL, 0,
                        "plugin bug: complete() with a NULL or unsized result"};
    if (!r || !SY_HAS_FIELD(r, sy_result, error))
        r = &failed;
    c->on_complete(c, r);
}

static void api_log(sy_host *h, sy_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_vlog(level, h ? h->name : NULL, fmt, ap);
    va_end(ap);
}

static void api_wake(sy_host *h)
{
    if (h && h->on_wake)
        h->on_wake(h);
}

static const json_t *member(const sy_params *p, const char *key)
{
    const json_t *o = sy_params_json(p);
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

static sy_param_type api_param_type(const sy_params *p, const char *key)
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

static int api_param_string(const sy_params *p, const char *key, const char **out)
{
    return out ? read_string(member(p, key), out) : SY_EINVAL;
}

static int api_param_int(const sy_params *p, const char *key, int64_t *out)
{
    return out ? read_int(member(p, key), out) : SY_EINVAL;
}

static int api_param_float(const sy_params *p, const char *key, double *out)
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

static int api_param_bool(const sy_params *p, const char *key, int *out)
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

static int api_param_duration_ms(const sy_params *p, const char *key, int64_t *out)
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
    return sy_duration_parse(json_string_value(v), out, NULL, 0) == 0 ? SY_OK
                                                                       : SY_EINVAL;
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

static int api_param_array_len(const sy_params *p, const char *key, size_t *out)
{
    const json_t *a;
    int rc = out ? array_member(p, key, &a) : SY_EINVAL;
    if (rc == SY_OK)
        *out = json_array_size(a);
    return rc;
}

static int array_elem(const sy_params *p, const char *key, size_t i, const json_t **e)
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

static int api_param_array_string(const sy_params *p, const char *key, size_t i,
                                  const char **out)
{
    const json_t *e;
    int rc = out ? array_elem(p, key, i, &e) : SY_EINVAL;
    return rc == SY_OK ? read_string(e, out) : rc;
}

static int api_param_array_int(const sy_params *p, const char *key, size_t i,
                               int64_t *out)
{
    const json_t *e;
    int rc = out ? array_elem(p, key, i, &e) : SY_EINVAL;
    return rc == SY_OK ? read_int(e, out) : rc;
}

static int api_param_group(const sy_params *p, const char *key, const sy_params **out)
{
    const json_t *v = member(p, key);
    if (!out)
        return SY_EINVAL;
    if (!v)
        return SY_ENOENT;
    if (!json_is_object(v))
        return SY_ETYPE;
    *out = sy_params_view(v);
    return SY_OK;
}

static size_t api_param_count(const sy_params *p)
{
    const json_t *o = sy_params_json(p);
    return json_is_object(o) ? json_object_size(o) : 0;
}

static const char *api_param_name(const sy_params *p, size_t index)
{
    const json_t *o = sy_params_json(p);
    const char *key;
    const json_t *v;
    size_t i = 0;
    if (!json_is_object(o))
        return NULL;
    /* jansson keeps insertion order, which is file order. */
    json_object_foreach((json_t *)o, key, v) {
        if (i++ == index)
            return key;
    }
    return NULL;
}

static char *api_param_json(const sy_params *p)
{
    const json_t *o = sy_params_json(p);
    return o ? json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

static void api_free_string(char *s) { free(s); }

const sy_host_api sy_host_api_table = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .complete = api_complete,
    .log = api_log,
    .wake = api_wake,
    .param_type = api_param_type,
    .param_string = api_param_string,
    .param_int = api_param_int,
    .param_float = api_param_float,
    .param_bool = api_param_bool,
    .param_duration_ms = api_param_duration_ms,
    .param_array_len = api_param_array_len,
    .param_array_string = api_param_array_string,
    .param_array_int = api_param_array_int,
    .param_group = api_param_group,
    .param_count = api_param_count,
    .param_name = api_param_name,
    .param_json = api_param_json,
    .free_string = api_free_string,
};
