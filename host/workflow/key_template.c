/* Key templates (a concurrency key's, a rate limit's, a task cache's):
 * whether one is usable, and reading one from a group; and the integer
 * settings of flow control.  Shared by flow.c, rate.c and task_cache.c,
 * which call down to this file only. */
#include <stdio.h>
#include <string.h>

#include "workflow/internal.h"

/* The namespace's parts a template may name, beside context paths. */
static bool ns_part_known(const char *p, size_t n)
{
    static const char *const parts[] = {"tenant", "workflow", "task", NULL};
    for (int i = 0; parts[i]; i++)
        if (strlen(parts[i]) == n && memcmp(parts[i], p, n) == 0)
            return true;
    return false;
}

const char *sy_limit_key_problem(const char *tmpl)
{
    if (!tmpl || !*tmpl)
        return "the key is empty";
    if (strlen(tmpl) > SY_LIMIT_KEY_MAX)
        return "the key is longer than 256 bytes";
    if (!sy_wf_utf8_valid(tmpl))
        return "the key is not valid UTF-8";
    for (const char *p = tmpl; *p; p++) {
        if (*p == '}')
            return "a '}' that no '{' opened";
        if (*p != '{')
            continue;
        const char *end = strpbrk(p + 1, "{}");
        if (!end || *end == '{')
            return "a '{' that is not closed";
        size_t n = (size_t)(end - p - 1);
        if (n == 0)
            return "an empty '{}' (name a path into the run's context, e.g. {customer})";
        if (p[1] == '@' && !ns_part_known(p + 2, n - 1))
            return "an unknown '{@...}' (known: {@tenant}, {@workflow}, {@task})";
        char path[SY_LIMIT_KEY_MAX + 1];
        memcpy(path, p + 1, n);
        path[n] = '\0';
        if (p[1] != '@' && strcmp(path, "$") != 0 && sy_cond_path_problem(path))
            return "a path with an empty segment (\"a..b\", or a leading or trailing '.')";
        p = end;
    }
    return NULL;
}

int sy_limit_key_read(const config_setting_t *g, const char *where, const char *example,
                      const char **out, sy_diags *d)
{
    const config_setting_t *s = config_setting_get_member(g, "key");
    const char *key = s ? config_setting_get_string(s) : NULL;
    const char *why = s && !key ? "it must be a string" : key ? sy_limit_key_problem(key) : NULL;
    if (!s) {
        sy_error(d, SY_SRC_FILE(g), SY_SRC_LINE(g), "%s has no 'key' (e.g. key = \"%s\";)",
                 where, example);
        return 1;
    }
    if (why) {
        char q[300];
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s: key%s%s: %s", where, key ? " " : "",
                 key ? sy_wf_quote(key, q, sizeof q) : "", why);
        return 1;
    }
    *out = key;
    return 0;
}

int sy_flow_read_int(const config_setting_t *s, long long lo, long long hi, long long *out,
                    const char *who, const char *what, sy_diags *d)
{
    int type = config_setting_type(s);
    long long v = type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64
                      ? config_setting_get_int64(s) : lo - 1;
    if (v < lo || v > hi) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), "%s: '%s' must be an integer from %lld to %lld",
                 who, what, lo, hi);
        return 1;
    }
    *out = v;
    return 0;
}
