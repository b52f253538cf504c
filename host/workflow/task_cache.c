/* A task's `cache` in workflow files: its key template and lifetime; the
 * form they take in the canonical definition and the parse cache.
 * Looking the key up at dispatch is the engine's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

static const char *const cache_keys[] = {"key", "lifetime", NULL};

void sy_task_cache_free(sy_task_cache *c)
{
    if (!c)
        return;
    free(c->key);
    free(c);
}

int sy_task_cache_read(const config_setting_t *s, sy_task_cache **out, const char *who,
                       sy_diags *d)
{
    char where[200];
    snprintf(where, sizeof where, "%s: cache", who);
    if (!config_setting_is_group(s)) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s must be a group, e.g. cache = { key = \"{file}\"; lifetime = \"1h\"; }",
                 where);
        return 1;
    }
    int errors = sy_setting_check_keys(s, cache_keys, where, d);
    const char *key = NULL;
    errors += sy_limit_key_read(s, where, "{file}", &key, d);
    int64_t lifetime = 0;
    const config_setting_t *l = config_setting_get_member(s, "lifetime");
    if (!l) {
        sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s has no 'lifetime' (e.g. lifetime = \"1h\";)", where);
        errors++;
    } else if (sy_setting_duration(l, &lifetime, d) != 0) {
        errors++;
    } else if (lifetime <= 0) {
        sy_error(d, SY_SRC_FILE(l), SY_SRC_LINE(l), "%s: 'lifetime' must be more than 0",
                 where);
        errors++;
    }
    if (errors)
        return errors;
    sy_task_cache *c = calloc(1, sizeof *c);
    if (!c)
        sy_oom("reading a task's cache");
    c->key = sy_xstrdup(key);
    c->lifetime_ms = lifetime;
    *out = c;
    return 0;
}

json_t *sy_task_cache_json(const sy_task_cache *c)
{
    return json_pack("{s:s, s:I}", "key", c->key, "lifetime_ms", (json_int_t)c->lifetime_ms);
}

sy_task_cache *sy_task_cache_from_json(const json_t *o, char *err, size_t err_len)
{
    const char *key = json_string_value(json_object_get(o, "key"));
    const json_t *l = json_object_get(o, "lifetime_ms");
    const char *why = !json_is_object(o) || json_object_size(o) != 2 ? "must be an object "
                                                                       "with key and lifetime_ms"
                      : !key                                       ? "has no key"
                      : sy_limit_key_problem(key)                   ? sy_limit_key_problem(key)
                      : !json_is_integer(l) || json_integer_value(l) <= 0
                          ? "lifetime_ms must be an integer above 0"
                          : NULL;
    if (why) {
        snprintf(err, err_len, "\"cache\" %s", why);
        return NULL;
    }
    sy_task_cache *c = calloc(1, sizeof *c);
    if (!c)
        sy_oom("reading a task's cache");
    c->key = sy_xstrdup(key);
    c->lifetime_ms = json_integer_value(l);
    return c;
}
