/* `when` conditions: reading them from a workflow file, JSON paths, and
 * evaluating them on a task's input context. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/config_json.h>

#include "base/util.h"
#include "workflow/internal.h"

/* Indexed by sy_cond_op; the spelling is both the libconfig key and the
 * "op" of a stored definition. */
static const char *const op_names[] = {
    "exists", "equals", "not_equals", "greater_than", "less_than", "contains",
};

static const char *const when_keys[] = {
    "path", "exists", "equals", "not_equals", "greater_than", "less_than",
    "contains", NULL,
};

const char *sy_cond_op_name(sy_cond_op op)
{
    return (unsigned)op < SY_ARRAY_LEN(op_names) ? op_names[op] : "unknown";
}

int sy_cond_op_parse(const char *name)
{
    for (size_t i = 0; name && i < SY_ARRAY_LEN(op_names); i++)
        if (strcmp(name, op_names[i]) == 0)
            return (int)i;
    return -1;
}

/* --- paths -------------------------------------------------------------------- */

static const char *strip_root(const char *path)
{
    if (strcmp(path, "$") == 0)
        return "";
    if (strncmp(path, "$.", 2) == 0)
        return path + 2;
    return path;
}

const char *sy_cond_path_problem(const char *path)
{
    if (!path || !*path)
        return "the path is empty (use \"$\" for the whole context)";
    if (!sy_wf_utf8_valid(path))
        return "the path is not valid UTF-8";
    const char *p = strip_root(path);
    if (strcmp(path, "$") != 0 && !*p)
        return "nothing follows \"$.\"";
    if (*p && (p[0] == '.' || p[strlen(p) - 1] == '.' || strstr(p, "..")))
        return "the path has an empty segment (\"a..b\", or a leading or trailing '.')";
    return NULL;
}

/* Array index from a segment of decimal digits; -1 when it is not one. */
static long long seg_index(const char *seg, size_t len)
{
    if (len == 0 || len > 18)
        return -1;
    long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (seg[i] < '0' || seg[i] > '9')
            return -1;
        v = v * 10 + (seg[i] - '0');
    }
    return v;
}

const json_t *sy_json_path(const json_t *context, const char *path)
{
    if (!context || !path)
        return NULL;
    const char *p = strip_root(path);
    const json_t *cur = context;
    while (*p && cur) {
        size_t len = strcspn(p, ".");
        if (len == 0)
            return NULL;
        if (json_is_object(cur)) {
            cur = json_object_getn(cur, p, len);
        } else if (json_is_array(cur)) {
            long long i = seg_index(p, len);
            cur = i < 0 ? NULL : json_array_get(cur, (size_t)i);
        } else {
            return NULL;
        }
        p += len;
        if (*p == '.' && !*++p)
            return NULL; /* a trailing '.' names nothing */
    }
    return cur;
}

/* --- evaluation --------------------------------------------------------------- */

/* 1 and 1.0 are equal here, though not to json_equal. */
static bool values_equal(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

/* <0, 0, >0 as a compares with b; false when they are not comparable. */
static bool compare(const json_t *a, const json_t *b, int *out)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        *out = (x > y) - (x < y);
        return true;
    }
    if (json_is_number(a) && json_is_number(b)) {
        double x = json_number_value(a), y = json_number_value(b);
        *out = (x > y) - (x < y);
        return true;
    }
    if (json_is_string(a) && json_is_string(b)) {
        size_t la = json_string_length(a), lb = json_string_length(b);
        int c = memcmp(json_string_value(a), json_string_value(b),
                       la < lb ? la : lb);
        *out = c ? c : (la > lb) - (la < lb);
        return true;
    }
    return false;
}

static bool contains(const json_t *hay, const json_t *needle)
{
    if (json_is_string(hay) && json_is_string(needle))
        return memmem(json_string_value(hay), json_string_length(hay),
                      json_string_value(needle), json_string_length(needle)) != NULL;
    if (json_is_array(hay)) {
        for (size_t i = 0; i < json_array_size(hay); i++)
            if (values_equal(json_array_get(hay, i), needle))
                return true;
        return false;
    }
    if (json_is_object(hay) && json_is_string(needle))
        return json_object_getn(hay, json_string_value(needle),
                                json_string_length(needle)) != NULL;
    return false;
}

/* A missing path fails every operator except `exists = false` and
 * `not_equals` (what is absent equals nothing); a type mismatch fails
 * the ordering operators. */
static bool cond_holds(const sy_cond *c, const json_t *context)
{
    const json_t *v = sy_json_path(context, c->path);
    int cmp;
    switch (c->op) {
    case SY_COND_EXISTS: return (v != NULL) == json_is_true(c->value);
    case SY_COND_EQUALS: return v && values_equal(v, c->value);
    case SY_COND_NOT_EQUALS: return !v || !values_equal(v, c->value);
    case SY_COND_GREATER_THAN: return v && compare(v, c->value, &cmp) && cmp > 0;
    case SY_COND_LESS_THAN: return v && compare(v, c->value, &cmp) && cmp < 0;
    case SY_COND_CONTAINS: return v && contains(v, c->value);
    }
    return false;
}

bool sy_conds_hold(const sy_cond *conds, size_t n, const json_t *context)
{
    for (size_t i = 0; i < n; i++)
        if (!cond_holds(&conds[i], context))
            return false;
    return true;
}

const char *sy_cond_value_problem(sy_cond_op op, const json_t *value)
{
    if (!value)
        return "the condition has no value";
    switch (op) {
    case SY_COND_EXISTS:
        return json_is_boolean(value) ? NULL : "'exists' takes true or false";
    case SY_COND_GREATER_THAN:
    case SY_COND_LESS_THAN:
        return json_is_number(value) || json_is_string(value)
                   ? NULL
                   : "'greater_than' and 'less_than' take a number or a string";
    case SY_COND_EQUALS:
    case SY_COND_NOT_EQUALS:
    case SY_COND_CONTAINS:
        return NULL;
    }
    return "unknown operator";
}

void sy_conds_free(sy_cond *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].path);
        json_decref(c[i].value);
    }
    free(c);
}

/* --- reading from libconfig ----------------------------------------------------- */

/* The one operator key of a condition group, or NULL (reported). */
static const config_setting_t *find_op(const config_setting_t *g, int idx,
                                       sy_diags *d, int *errors)
{
    const config_setting_t *op = NULL;
    for (size_t i = 0; i < SY_ARRAY_LEN(op_names); i++) {
        const config_setting_t *s = config_setting_get_member(g, op_names[i]);
        if (!s)
            continue;
        if (op) {
            sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "when condition %d has both '%s' and '%s': use one operator "
                     "per condition",
                     idx, config_setting_name(op), op_names[i]);
            ++*errors;
            return NULL;
        }
        op = s;
    }
    if (!op) {
        sy_error(d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "when condition %d has no operator (one of: exists, equals, "
                 "not_equals, greater_than, less_than, contains)",
                 idx);
        ++*errors;
    }
    return op;
}

static const char *read_path(const config_setting_t *g, int idx, sy_diags *d,
                             int *errors)
{
    const config_setting_t *s = config_setting_get_member(g, "path");
    if (!s) {
        sy_error(d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "when condition %d has no 'path' (e.g. path = \"mode\";)", idx);
        ++*errors;
        return NULL;
    }
    const char *path = config_setting_get_string(s);
    const char *why = path ? sy_cond_path_problem(path) : "'path' must be a string";
    if (why) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "when condition %d: %s", idx, why);
        ++*errors;
        return NULL;
    }
    return path;
}

/* The operand as JSON: the condition converted without `path` leaves a
 * one-member object holding it. */
static json_t *read_value(const config_setting_t *g, const config_setting_t *op,
                          int idx, sy_diags *d, int *errors)
{
    static const char *const skip[] = {"path", NULL};
    json_t *obj = sy_sdk_json_from_setting(g, skip);
    if (!obj && sy_sdk_setting_text_ok(g))
        sy_oom("reading when condition %d", idx);
    json_t *v = json_incref(json_object_get(obj, config_setting_name(op)));
    json_decref(obj);
    const char *why = v ? sy_cond_value_problem(sy_cond_op_parse(config_setting_name(op)), v)
                        : "the value cannot be held in JSON (text that is not UTF-8?)";
    if (why) {
        sy_error(d, SY_SRC_FILE(op), SY_SRC_LINE(op), "when condition %d: %s", idx, why);
        ++*errors;
        json_decref(v);
        return NULL;
    }
    return v;
}

static int read_cond(const config_setting_t *g, int idx, sy_cond *out, sy_diags *d)
{
    if (!config_setting_is_group(g)) {
        sy_error(d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "when condition %d must be a group, e.g. { path = \"mode\"; "
                 "equals = \"full\"; }",
                 idx);
        return 1;
    }
    int errors = sy_setting_check_keys(g, when_keys, "when condition", d);
    const char *path = read_path(g, idx, d, &errors);
    const config_setting_t *op = find_op(g, idx, d, &errors);
    json_t *value = op ? read_value(g, op, idx, d, &errors) : NULL;
    if (errors || !path || !value) {
        json_decref(value);
        return errors;
    }
    *out = (sy_cond){sy_xstrdup(path), (sy_cond_op)sy_cond_op_parse(config_setting_name(op)),
                     value};
    return 0;
}

int sy_when_read(const config_setting_t *s, sy_cond **out, size_t *n, sy_diags *d)
{
    int type = config_setting_type(s);
    int len = config_setting_length(s);
    if (type != CONFIG_TYPE_LIST && !(type == CONFIG_TYPE_ARRAY && len == 0)) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'when' must be a list of conditions, e.g. when = ( { path = "
                 "\"mode\"; equals = \"full\"; } );");
        return 1;
    }
    if (len == 0)
        return 0;
    sy_cond *v = sy_xmalloc(sizeof *v * (size_t)len);
    size_t k = 0;
    int errors = 0;
    for (int i = 0; i < len; i++) {
        int e = read_cond(config_setting_get_elem(s, (unsigned)i), i + 1, &v[k], d);
        errors += e;
        k += e == 0;
    }
    *out = v;
    *n = k;
    return errors;
}
