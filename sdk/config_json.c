/*
 * config_json.c -- libconfig groups as jansson objects, and checked
 * against a plugin's declarations (switchyard/config_json.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <switchyard/config_json.h>
#include <switchyard/sdk.h>

static bool skipped(const char *name, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(name, *skip) == 0)
            return true;
    return false;
}

static json_t *value_from_setting(const config_setting_t *s);

static json_t *aggregate_from_setting(const config_setting_t *s,
                                      const char *const *skip)
{
    bool group = config_setting_is_group(s);
    json_t *out = group ? json_object() : json_array();
    if (!out)
        return NULL;
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *name = config_setting_name(e);
        if (group && skipped(name, skip))
            continue;
        json_t *v = value_from_setting(e);
        int rc = !v      ? -1
                 : group ? json_object_set_new(out, name, v)
                         : json_array_append_new(out, v);
        if (rc != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static json_t *value_from_setting(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return json_integer(config_setting_get_int64(s));
    case CONFIG_TYPE_FLOAT: return json_real(config_setting_get_float(s));
    case CONFIG_TYPE_BOOL: return json_boolean(config_setting_get_bool(s));
    case CONFIG_TYPE_STRING: return json_string(config_setting_get_string(s));
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST:
    case CONFIG_TYPE_GROUP: return aggregate_from_setting(s, NULL);
    default: return json_null();
    }
}

json_t *sy_sdk_json_from_setting(const config_setting_t *group,
                                 const char *const *skip)
{
    if (!group)
        return json_object();
    return aggregate_from_setting(group, skip);
}

const char *sy_sdk_setting_type_name(sy_param_type t)
{
    switch (t) {
    case SY_PARAM_NONE: return "nothing";
    case SY_PARAM_STRING: return "string";
    case SY_PARAM_INT: return "integer";
    case SY_PARAM_FLOAT: return "number";
    case SY_PARAM_BOOL: return "boolean";
    case SY_PARAM_ARRAY: return "list";
    case SY_PARAM_GROUP: return "group";
    case SY_PARAM_DURATION: return "duration";
    }
    return "unknown";
}

static sy_param_type setting_type(const config_setting_t *s)
{
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return SY_PARAM_INT;
    case CONFIG_TYPE_FLOAT: return SY_PARAM_FLOAT;
    case CONFIG_TYPE_BOOL: return SY_PARAM_BOOL;
    case CONFIG_TYPE_STRING: return SY_PARAM_STRING;
    case CONFIG_TYPE_ARRAY:
    case CONFIG_TYPE_LIST: return SY_PARAM_ARRAY;
    case CONFIG_TYPE_GROUP: return SY_PARAM_GROUP;
    default: return SY_PARAM_NONE;
    }
}

/* A declaration is read only as far as the plugin's `size` covers it. */
static bool spec_usable(const sy_param_spec *sp)
{
    return SY_HAS_FIELD(sp, sy_param_spec, type) && sp->name;
}

static const sy_param_spec *find_spec(const sy_param_spec *const *spec,
                                      const char *name)
{
    for (; *spec; spec++)
        if (spec_usable(*spec) && strcmp((*spec)->name, name) == 0)
            return *spec;
    return NULL;
}

static void append_known(char *buf, size_t len,
                         const sy_param_spec *const *spec,
                         const char *const *skip)
{
    size_t off = 0;
    buf[0] = '\0';
    for (; skip && *skip; skip++)
        off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s",
                                off ? ", " : "", *skip);
    for (; *spec; spec++)
        if (spec_usable(*spec))
            off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
                                    "%s%s", off ? ", " : "", (*spec)->name);
}

static const char *article(sy_param_type t)
{
    return t == SY_PARAM_INT ? "an" : "a";
}

static bool type_fits(const config_setting_t *e, const sy_param_spec *sp,
                      char *why, size_t why_len)
{
    sy_param_type got = setting_type(e);
    switch (sp->type) {
    case SY_PARAM_DURATION: {
        if (got == SY_PARAM_INT)
            return config_setting_get_int64(e) >= 0 ||
                   !sy_sdk_errf(why, why_len, "a negative duration");
        if (got != SY_PARAM_STRING)
            break;
        int64_t ms;
        return sy_sdk_duration_parse(config_setting_get_string(e), &ms, why,
                                     why_len) == SY_OK;
    }
    case SY_PARAM_FLOAT:
        if (got == SY_PARAM_INT || got == SY_PARAM_FLOAT)
            return true;
        break;
    default:
        if (got == sp->type)
            return true;
    }
    sy_sdk_errf(why, why_len, "must be %s %s, not %s %s", article(sp->type),
                sy_sdk_setting_type_name(sp->type), article(got),
                sy_sdk_setting_type_name(got));
    return false;
}

/* Whether `t` is UTF-8 as jansson accepts it (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), judged here rather than
 * by asking jansson: its NULL also means out of memory, which is not the
 * file's fault. */
static bool utf8_ok(const char *t)
{
    const unsigned char *p = (const unsigned char *)t;
    while (*p) {
        unsigned c = *p++;
        int more;
        unsigned cp;
        if (c < 0x80)
            continue;
        if (c >= 0xC2 && c <= 0xDF)
            more = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF)
            more = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4)
            more = 3, cp = c & 0x07;
        else
            return false;
        for (int i = 0; i < more; i++, p++) {
            if ((*p & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (*p & 0x3F);
        }
        if ((more == 2 && cp < 0x800) || (more == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
    }
    return true;
}

/* The first value at or under `s` that JSON cannot hold, or NULL, with
 * why: text that is not valid UTF-8, or a number out of range (libconfig
 * reads 1.5e3007 as infinity, which JSON cannot write): exactly the values
 * sy_sdk_json_from_setting could not convert. */
static const config_setting_t *unholdable(const config_setting_t *s,
                                          const char **why)
{
    int type = config_setting_type(s);
    if (type == CONFIG_TYPE_STRING) {
        const char *t = config_setting_get_string(s);
        if (!t || utf8_ok(t))
            return NULL;
        *why = "text that is not valid UTF-8";
        return s;
    }
    if (type == CONFIG_TYPE_FLOAT) {
        if (isfinite(config_setting_get_float(s)))
            return NULL;
        *why = "a number out of range (JSON has no infinity)";
        return s;
    }
    if (!config_setting_is_aggregate(s))
        return NULL;
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *bad =
            unholdable(config_setting_get_elem(s, (unsigned)i), why);
        if (bad)
            return bad;
    }
    return NULL;
}

bool sy_sdk_setting_text_ok(const config_setting_t *s)
{
    const char *why;
    return !s || !unholdable(s, &why);
}

/* Formats one problem and reports it with the file and line of `at`. */
static void problem(sy_sdk_problem_fn report, void *arg,
                    const config_setting_t *at, const char *fmt, ...)
    SY_PRINTF(4, 5);
static void problem(sy_sdk_problem_fn report, void *arg,
                    const config_setting_t *at, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_verrf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report(arg, config_setting_source_file(at),
           (int)config_setting_source_line(at), msg);
}

int sy_sdk_params_check_setting(const config_setting_t *group,
                                const char *const *skip,
                                const sy_param_spec *const *spec,
                                const char *what, sy_sdk_problem_fn report,
                                void *arg)
{
    if (!spec || !group)
        return 0;
    int errors = 0;
    int n = config_setting_length(group);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(e);
        if (!name || skipped(name, skip))
            continue;
        const sy_param_spec *sp = find_spec(spec, name);
        if (!sp) {
            char known[512];
            append_known(known, sizeof known, spec, skip);
            problem(report, arg, e, "%s: unknown key '%s' (known: %s)", what,
                    name, known[0] ? known : "none");
            errors++;
            continue;
        }
        char why[256];
        const char *held = NULL;
        const config_setting_t *bad;
        if (!type_fits(e, sp, why, sizeof why)) {
            problem(report, arg, e, "%s: '%s': %s", what, name, why);
            errors++;
        } else if ((bad = unholdable(e, &held))) {
            /* The host keeps parameters as JSON: say so here, at the line,
             * rather than fail the conversion later without one. */
            problem(report, arg, bad, "%s: '%s': %s", what, name, held);
            errors++;
        }
    }
    for (; *spec; spec++) {
        const sy_param_spec *sp = *spec;
        if (!spec_usable(sp) || !(sp->flags & SY_PARAM_REQUIRED))
            continue;
        if (!config_setting_get_member(group, sp->name)) {
            problem(report, arg, group, "%s: missing required key '%s' (%s)",
                    what, sp->name, sy_sdk_setting_type_name(sp->type));
            errors++;
        }
    }
    return errors;
}
