/* Reading a canonical definition (definition_write.c) back into a
 * workflow, as strictly as a file is read, since a database can be
 * edited: the first problem found is the one reported. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"
#include "workflow/start_trigger.h"

/* The first problem found; later ones are dropped, reading stops soon. */
typedef struct reader {
    char *err;
    size_t len;
    bool bad;
    long long version;  /* the definition's own (1 .. SY_DEFINITION_VERSION) */
    json_t *no_params;  /* the one empty object tasks without params share */
} reader;

static void fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(reader *r, const char *fmt, ...)
{
    if (r->bad)
        return;
    r->bad = true;
    if (!r->err || !r->len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->len, fmt, ap);
    va_end(ap);
}

/* Refuses any key not in `keys`, and any missing one of the first `need`. */
static void only_keys(reader *r, const json_t *o, const char *const *keys,
                      size_t need, const char *where)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0)
            i++;
        if (!keys[i])
            fail(r, "%s: unknown key \"%s\"", where, k);
    }
    for (size_t i = 0; i < need; i++)
        if (!json_object_get(o, keys[i]))
            fail(r, "%s: missing \"%s\"", where, keys[i]);
}

static const char *get_str(reader *r, const json_t *o, const char *key,
                           const char *where)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        return NULL;
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
        fail(r, "%s: \"%s\" must be a string", where, key);
        return NULL;
    }
    return json_string_value(v);
}

/* An integer member within [lo, hi]; `dflt` when missing or bad. */
static long long get_int(reader *r, const json_t *o, const char *key,
                         long long lo, long long hi, const char *where)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        fail(r, "%s: \"%s\" must be an integer from %lld to %lld", where, key, lo, hi);
        return lo;
    }
    return json_integer_value(v);
}

static char *dup_or_null(const char *s)
{
    return s ? sy_xstrdup(s) : NULL;
}

static void read_retry(reader *r, const json_t *o, sy_retry *out, const char *where)
{
    static const char *const keys[] = {"attempts", "delay_ms", "backoff",
                                       "max_delay_ms", "jitter", "retry_on", NULL};
    if (!json_is_object(o)) {
        fail(r, "%s: \"retry\" must be an object", where);
        return;
    }
    only_keys(r, o, keys, 6, where);
    out->attempts = (uint32_t)get_int(r, o, "attempts", 1, SY_RETRY_MAX_ATTEMPTS, where);
    out->delay_ms = get_int(r, o, "delay_ms", 0, INT64_MAX, where);
    out->max_delay_ms = get_int(r, o, "max_delay_ms", 0, INT64_MAX, where);
    const json_t *b = json_object_get(o, "backoff");
    out->backoff = json_number_value(b);
    if (!json_is_number(b) || !isfinite(out->backoff) || out->backoff < 1.0)
        fail(r, "%s: \"backoff\" must be a number >= 1.0", where);
    const json_t *j = json_object_get(o, "jitter");
    if (!json_is_boolean(j))
        fail(r, "%s: \"jitter\" must be true or false", where);
    out->jitter = json_is_true(j);
    const json_t *on = json_object_get(o, "retry_on");
    out->retry_on = 0;
    for (size_t i = 0; json_is_array(on) && i < json_array_size(on); i++) {
        unsigned bit = sy_retry_on_parse(json_string_value(json_array_get(on, i)));
        if (!bit)
            fail(r, "%s: \"retry_on\" entry %zu is not \"failed\" or \"timeout\"", where,
                 i + 1);
        out->retry_on |= bit;
    }
    if (!json_is_array(on))
        fail(r, "%s: \"retry_on\" must be an array", where);
}

static void read_when(reader *r, const json_t *a, sy_task_def *t, const char *where)
{
    static const char *const keys[] = {"path", "op", "value", NULL};
    if (!json_is_array(a)) {
        fail(r, "%s: \"when\" must be an array", where);
        return;
    }
    size_t n = json_array_size(a);
    t->when = sy_xmalloc(sizeof *t->when * (n ? n : 1));
    for (size_t i = 0; i < n && !r->bad; i++) {
        const json_t *c = json_array_get(a, i);
        if (!json_is_object(c)) {
            fail(r, "%s: \"when\" entry %zu must be an object", where, i + 1);
            break;
        }
        only_keys(r, c, keys, 3, where);
        const char *path = get_str(r, c, "path", where);
        int op = sy_cond_op_parse(get_str(r, c, "op", where));
        const json_t *value = json_object_get(c, "value");
        const char *why = !path ? NULL
                          : sy_cond_path_problem(path) ? sy_cond_path_problem(path)
                          : op < 0 ? "unknown operator"
                                   : sy_cond_value_problem((sy_cond_op)op, value);
        if (why || r->bad) {
            fail(r, "%s: \"when\" entry %zu: %s", where, i + 1, why ? why : "malformed");
            break;
        }
        t->when[t->n_when++] = (sy_cond){sy_xstrdup(path), (sy_cond_op)op,
                                         json_incref((json_t *)value)};
    }
}

bool sy_wf_when_from_json(const json_t *a, sy_task_def *t)
{
    reader r = {NULL, 0, false, 0, NULL};
    read_when(&r, a, t, "when");
    return !r.bad;
}

static void read_after(reader *r, const json_t *a, sy_wf_after *out, const char *where)
{
    if (!json_is_array(a)) {
        fail(r, "%s: \"after\" must be an array", where);
        return;
    }
    size_t n = json_array_size(a);
    out->v = sy_xmalloc(sizeof *out->v * (n ? n : 1));
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_array_get(a, i));
        if (!id) {
            fail(r, "%s: \"after\" entry %zu must be a string", where, i + 1);
            return;
        }
        out->v[out->n++] = (sy_wf_ref){id, 0};
    }
}

static void read_map(reader *r, const json_t *m, sy_task_def *t, const char *where)
{
    static const char *const keys[] = {"max", "key", "range", NULL};
    if (!m)
        return;
    if (!json_is_object(m)) {
        fail(r, "%s: \"map\" must be an object", where);
        return;
    }
    only_keys(r, m, keys, 1, where);
    t->max_map = get_int(r, m, "max", 1, SY_MAP_LIMIT, where);
    const char *key = get_str(r, m, "key", where);
    const json_t *range = json_object_get(m, "range");
    if (key) {
        t->map = sy_xstrdup(key);
    } else if (json_array_size(range) == 2 && json_is_integer(json_array_get(range, 0)) &&
               json_is_integer(json_array_get(range, 1))) {
        t->range_from = json_integer_value(json_array_get(range, 0));
        t->range_to = json_integer_value(json_array_get(range, 1));
        if (t->range_from < 0 || t->range_to < t->range_from)
            fail(r, "%s: bad map range", where);
    } else {
        fail(r, "%s: \"map\" needs \"key\" or a \"range\" of two integers", where);
    }
    t->mapped = true;
}

/* Version 1 wrote every member of a task; since 2 a member holding its
 * default is left out (definition_write.c), and read back as that. */
static void read_task(reader *r, sy_workflow *wf, size_t i, const json_t *o,
                      sy_wf_after *after)
{
    static const char *const keys[] = {"id", "after", "trigger", "when", "retry",
                                       "timeout_ms", "params", "map", "priority", "flow",
                                       "cache", NULL};
    char where[64];
    snprintf(where, sizeof where, "task %zu", i + 1);
    if (!json_is_object(o)) {
        fail(r, "%s must be an object", where);
        return;
    }
    only_keys(r, o, keys, r->version == 1 ? 7 : 1, where);
    sy_task_def *t = &wf->tasks[i];
    const char *id = get_str(r, o, "id", where);
    if (!sy_wf_name_valid(id, false))
        fail(r, "%s: invalid id", where);
    t->id = dup_or_null(id);
    int trig = json_object_get(o, "trigger") ? sy_trigger_parse(get_str(r, o, "trigger", where))
                                             : SY_TRIGGER_ALL_SUCCESS;
    if (trig < 0)
        fail(r, "%s: unknown trigger", where);
    t->trigger = trig < 0 ? SY_TRIGGER_ALL_SUCCESS : (sy_trigger)trig;
    if (json_object_get(o, "timeout_ms"))
        t->timeout_ms = get_int(r, o, "timeout_ms", 0, INT64_MAX, where);
    const json_t *params = json_object_get(o, "params");
    if (!params) {
        if (!r->no_params && !(r->no_params = json_object()))
            sy_oom("reading a definition");
        t->params = json_incref(r->no_params);
    } else if (!json_is_object(params)) {
        fail(r, "%s: \"params\" must be an object", where);
    } else {
        t->params = json_incref((json_t *)params);
    }
    if (r->bad)
        return;
    const json_t *retry = json_object_get(o, "retry");
    if (retry)
        read_retry(r, retry, &t->retry, where);
    else
        t->retry = sy_retry_default;
    if (json_object_get(o, "when"))
        read_when(r, json_object_get(o, "when"), t, where);
    if (json_object_get(o, "after"))
        read_after(r, json_object_get(o, "after"), after, where);
    read_map(r, json_object_get(o, "map"), t, where);
    if (json_object_get(o, "priority"))
        t->priority = (int32_t)get_int(r, o, "priority", SY_PRIORITY_MIN, SY_PRIORITY_MAX, where);
    const json_t *flow = json_object_get(o, "flow");
    char why[160];
    if (flow && !r->bad && !(t->flow = sy_flow_from_json(flow, why, sizeof why)))
        fail(r, "%s: %s", where, why);
    const json_t *cache = json_object_get(o, "cache");
    if (cache && !r->bad && !(t->cache = sy_task_cache_from_json(cache, why, sizeof why)))
        fail(r, "%s: %s", where, why);
    if (!r->bad)
        t->ns = sy_asprintf("%s::%s::%s", wf->tenant, wf->name, t->id);
}

/* The zone is checked by name only: the host that fires the schedule
 * loads it from its own files, and says so when it has none. */
static void read_schedule_policy(reader *r, sy_workflow *wf, const json_t *o)
{
    const char *tz = get_str(r, o, "timezone", "definition");
    const char *catchup = get_str(r, o, "catchup", "definition");
    wf->catchup_max = SY_CATCHUP_MAX_DEFAULT;
    if (json_object_get(o, "catchup_max"))
        wf->catchup_max = (uint32_t)get_int(r, o, "catchup_max", 1, SY_CATCHUP_MAX_LIMIT,
                                            "definition");
    if (catchup && sy_catchup_parse(catchup) < 0)
        fail(r, "definition: unknown catchup \"%s\"", catchup);
    else if (catchup)
        wf->catchup = (sy_catchup)sy_catchup_parse(catchup);
    if (tz && (!*tz || tz[0] == '/' || strstr(tz, "..")))
        fail(r, "definition: invalid timezone \"%s\"", tz);
    wf->timezone = dup_or_null(tz);
}

static void read_header(reader *r, sy_workflow *wf, const json_t *o)
{
    static const char *const keys[] = {"version", "name", "tenant", "base_dir", "tasks",
                                       "description", "schedule", "timezone",
                                       "catchup", "catchup_max", "triggers", NULL};
    if (!json_is_object(o)) {
        fail(r, "the definition is not a JSON object");
        return;
    }
    only_keys(r, o, keys, 5, "definition");
    r->version = get_int(r, o, "version", 1, SY_DEFINITION_VERSION, "definition");
    const char *name = get_str(r, o, "name", "definition");
    const char *tenant = get_str(r, o, "tenant", "definition");
    if (!r->bad && !sy_wf_name_valid(name, true))
        fail(r, "definition: invalid workflow name");
    if (!r->bad && !sy_wf_name_valid(tenant, false))
        fail(r, "definition: invalid tenant");
    const char *schedule = get_str(r, o, "schedule", "definition");
    char why[512];
    if (schedule && sy_cron_problem(schedule, why, sizeof why))
        fail(r, "definition: %s", why);
    wf->name = dup_or_null(name);
    wf->tenant = dup_or_null(tenant);
    wf->base_dir = dup_or_null(get_str(r, o, "base_dir", "definition"));
    wf->description = dup_or_null(get_str(r, o, "description", "definition"));
    wf->schedule = dup_or_null(schedule);
    read_schedule_policy(r, wf, o);
    const json_t *triggers = json_object_get(o, "triggers");
    char why_t[256];
    if (triggers && !r->bad &&
        sy_start_triggers_from_json(triggers, &wf->triggers, &wf->n_triggers, why_t,
                                    sizeof why_t) != 0)
        fail(r, "definition: %s", why_t);
}

static void read_tasks(reader *r, sy_workflow *wf, const json_t *a)
{
    if (!json_is_array(a) || json_array_size(a) == 0) {
        fail(r, "definition: \"tasks\" must be a non-empty array");
        return;
    }
    size_t n = json_array_size(a);
    wf->tasks = calloc(n, sizeof *wf->tasks);
    sy_wf_after *after = calloc(n, sizeof *after);
    if (!wf->tasks || !after) {
        free(after);
        fail(r, "out of memory");
        return;
    }
    wf->n_tasks = n;
    for (size_t i = 0; i < n && !r->bad; i++)
        read_task(r, wf, i, json_array_get(a, i), &after[i]);
    if (!r->bad) {
        sy_diags d;
        sy_diags_init(&d);
        if (sy_wf_graph(wf, after, NULL, &d) > 0)
            fail(r, "definition: %s", d.n ? d.v[0].msg : "invalid dependencies");
        sy_diags_free(&d);
    }
    sy_wf_after_free(after, n);
}

sy_workflow *sy_workflow_from_json(const char *definition, char *err, size_t err_len)
{
    reader r = {err, err_len, false, 0, NULL};
    if (err && err_len)
        err[0] = '\0';
    if (!definition) {
        fail(&r, "no definition");
        return NULL;
    }
    json_error_t je;
    json_t *root = json_loads(definition, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        fail(&r, "the definition is not valid JSON: %s at line %d column %d", je.text,
             je.line, je.column);
        return NULL;
    }
    sy_workflow *wf = calloc(1, sizeof *wf);
    if (!wf) {
        json_decref(root);
        fail(&r, "out of memory");
        return NULL;
    }
    read_header(&r, wf, root);
    if (!r.bad)
        read_tasks(&r, wf, json_object_get(root, "tasks"));
    json_decref(root);
    json_decref(r.no_params);
    if (!r.bad && sy_workflow_seal(wf) != 0)
        fail(&r, "out of memory");
    if (r.bad) {
        sy_workflow_free(wf);
        return NULL;
    }
    return wf;
}
