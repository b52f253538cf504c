/* Dynamic fan-out: a task's `map`, `map_range` and `max_map` keys, read
 * from a workflow file, and the size and items of a map at run time. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

int sy_map_max_read(const config_setting_t *s, int64_t *max, const char *who, sy_diags *d)
{
    int type = config_setting_type(s);
    long long v = type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64
                      ? config_setting_get_int64(s)
                      : -1;
    if (v < 1 || v > SY_MAP_LIMIT) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'max_map' must be an integer from 1 to %d (the most elements a map "
                 "may have)",
                 who, SY_MAP_LIMIT);
        return 1;
    }
    *max = v;
    return 0;
}

static bool int_setting(const config_setting_t *s, int64_t *v)
{
    int type = config_setting_type(s);
    if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
        return false;
    *v = config_setting_get_int64(s);
    return true;
}

/* `map_range = [from, to]` (to excluded) or `map_range = N` for [0, N). */
static int read_range(const config_setting_t *s, sy_task_def *t, const char *who, sy_diags *d)
{
    int64_t from = 0, to = 0;
    bool ok;
    if (config_setting_is_aggregate(s))
        ok = config_setting_length(s) == 2 &&
             int_setting(config_setting_get_elem(s, 0), &from) &&
             int_setting(config_setting_get_elem(s, 1), &to);
    else
        ok = int_setting(s, &to);
    if (!ok || from < 0 || to < from) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'map_range' must be [FROM, TO] with 0 <= FROM <= TO (TO excluded), "
                 "or a count, e.g. map_range = [0, 1000];",
                 who);
        return 1;
    }
    t->range_from = from;
    t->range_to = to;
    return 0;
}

int sy_map_read(const config_setting_t *g, sy_task_def *t, int64_t wf_max, const char *who,
                sy_diags *d)
{
    const config_setting_t *map = config_setting_get_member(g, "map");
    const config_setting_t *range = config_setting_get_member(g, "map_range");
    const config_setting_t *max = config_setting_get_member(g, "max_map");
    int errors = 0;
    if (map && range) {
        sy_error(d, SY_SRC_FILE(range), SY_SRC_LINE(range),
                 "%s: 'map' and 'map_range' exclude each other: a task maps over a list "
                 "or a range",
                 who);
        return 1;
    }
    t->max_map = wf_max;
    if (max && !map && !range) {
        sy_error(d, SY_SRC_FILE(max), SY_SRC_LINE(max),
                 "%s: 'max_map' without 'map' or 'map_range'", who);
        errors++;
    } else if (max) {
        errors += sy_map_max_read(max, &t->max_map, who, d);
    }
    if (map) {
        const char *path = config_setting_get_string(map);
        const char *why = path ? sy_cond_path_problem(path) : "it must be a string";
        if (why) {
            sy_error(d, SY_SRC_FILE(map), SY_SRC_LINE(map),
                     "%s: 'map' must name an array in the input context, e.g. map = "
                     "\"files\"; (%s)",
                     who, why);
            return errors + 1;
        }
        t->map = sy_xstrdup(path[0] == '$' && path[1] == '.' ? path + 2 : path);
        t->mapped = true;
    }
    if (range) {
        if (read_range(range, t, who, d))
            return errors + 1;
        t->mapped = true;
        if (t->range_to - t->range_from > t->max_map) {
            sy_error(d, SY_SRC_FILE(range), SY_SRC_LINE(range),
                     "%s: 'map_range' has %" PRId64 " elements, more than max_map %" PRId64
                     " (raise max_map on the task or the workflow)",
                     who, t->range_to - t->range_from, t->max_map);
            errors++;
        }
    }
    if (!t->mapped)
        t->max_map = 0;
    return errors;
}

bool sy_map_size(const sy_task_def *d, const json_t *ctx, const json_t **list, int64_t *n,
                 char *err, size_t err_len)
{
    *list = NULL;
    if (!d->map) {
        *n = d->range_to - d->range_from;
    } else {
        const json_t *v = ctx ? sy_json_path(ctx, d->map) : NULL;
        if (!json_is_array(v)) {
            snprintf(err, err_len, "task '%s' maps over '%s', which is %s in its input context",
                     d->id, d->map, v ? "not an array" : "absent");
            return false;
        }
        *list = v;
        *n = (int64_t)json_array_size(v);
    }
    if (*n > d->max_map) {
        snprintf(err, err_len,
                 "task '%s' maps over %" PRId64 " elements, more than max_map %" PRId64
                 " (raise max_map on the task or the workflow)",
                 d->id, *n, d->max_map);
        return false;
    }
    return true;
}

json_t *sy_map_item(const sy_task_def *d, const json_t *list, int64_t k)
{
    if (list)
        return json_incref(json_array_get(list, (size_t)k));
    return json_integer(d->range_from + k);
}
