/* A workflow's triggers (workflow/start_trigger.h): names, the canonical
 * definition's form, and matching an event's payload.  Reading them from
 * a workflow file is start_trigger_read.c. */
#include "workflow/start_trigger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

static void *zalloc(size_t n, size_t size)
{
    void *p = sy_xmalloc(n * size);
    memset(p, 0, n * size);
    return p;
}

const char *sy_event_name_problem(const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return "empty";
    if (n > SY_EVENT_NAME_MAX)
        return "longer than 200 bytes";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (i == 0 && !alnum)
            return "must start with a letter or a digit";
        if (!alnum && !strchr("._-:/", c))
            return "may hold only letters, digits and . _ - : /";
    }
    return NULL;
}

const char *sy_event_key_problem(const char *key)
{
    size_t n = strlen(key);
    if (n == 0)
        return "empty";
    if (n > SY_EVENT_KEY_MAX)
        return "longer than 200 bytes";
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
            return "holds a control character";
    return sy_wf_utf8_valid(key) ? NULL : "not UTF-8";
}

void sy_start_trigger_clear(sy_start_trigger *t)
{
    for (size_t j = 0; j < t->n_parts; j++) {
        free(t->parts[j].event);
        free(t->parts[j].run);
        sy_conds_free(t->parts[j].when, t->parts[j].n_when);
    }
    free(t->parts);
    free(t->name);
    memset(t, 0, sizeof *t);
}

void sy_start_triggers_free(sy_start_trigger *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++)
        sy_start_trigger_clear(&t[i]);
    free(t);
}

char *sy_start_trigger_key(const sy_workflow *wf, const sy_start_trigger *t)
{
    return sy_asprintf("%s::%s::%s", wf->tenant, wf->name, t->name);
}

static const char *json_text_of(const json_t *v, char *buf, size_t len)
{
    char *text = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    snprintf(buf, len, "%s", text ? text : "nothing");
    if (strlen(buf) == len - 1 && len > 4)
        memcpy(buf + len - 4, "...", 4);
    free(text);
    return buf;
}

bool sy_trigger_part_matches(const sy_trigger_part *p, const json_t *payload, char *why,
                             size_t why_len)
{
    for (size_t i = 0; i < p->n_when; i++) {
        const sy_cond *c = &p->when[i];
        if (sy_conds_hold(c, 1, payload))
            continue;
        char want[80], got[80];
        const json_t *at = sy_json_path(payload, c->path);
        snprintf(why, why_len, "condition %zu: '%s' %s %s does not hold (it is %s)", i + 1,
                 c->path, sy_cond_op_name(c->op), json_text_of(c->value, want, sizeof want),
                 at ? json_text_of(at, got, sizeof got) : "absent");
        return false;
    }
    return true;
}

/* --- the canonical definition's form ------------------------------------------ */

static json_t *when_json(const sy_cond *c, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:O}", "op", sy_cond_op_name(c[i].op),
                                           "path", c[i].path, "value", c[i].value));
    return a;
}

static json_t *part_json(const sy_trigger_part *p)
{
    json_t *o = json_object();
    if (p->event) {
        json_object_set_new(o, "event", json_string(p->event));
        if (p->n_when)
            json_object_set_new(o, "when", when_json(p->when, p->n_when));
    } else {
        json_object_set_new(o, "run", json_string(p->run));
        json_t *states = json_array();
        for (int s = 0; s < SY_RUN_STATE_COUNT; s++)
            if (p->states & (1u << s))
                json_array_append_new(states, json_string(sy_run_state_name((sy_run_state)s)));
        json_object_set_new(o, "states", states);
    }
    return o;
}

json_t *sy_start_triggers_json(const sy_start_trigger *t, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = t[i].all ? json_object() : part_json(&t[i].parts[0]);
        json_object_set_new(o, "name", json_string(t[i].name));
        if (t[i].all) {
            json_t *parts = json_array();
            for (size_t j = 0; j < t[i].n_parts; j++)
                json_array_append_new(parts, part_json(&t[i].parts[j]));
            json_object_set_new(o, "all", parts);
        }
        if (t[i].debounce_ms) {
            json_object_set_new(o, "debounce_ms", json_integer(t[i].debounce_ms));
            json_object_set_new(o, "payloads", json_string(t[i].all_payloads ? "all" : "last"));
        }
        if (t[i].max_in_flight)
            json_object_set_new(o, "max_in_flight", json_integer(t[i].max_in_flight));
        json_array_append_new(a, o);
    }
    return a;
}

/* `when` in the definition's form ({"op", "path", "value"} each, as
 * definition_read.c reads a task's) into p. */
static bool when_from_json(const json_t *a, sy_trigger_part *p)
{
    if (!json_is_array(a))
        return false;
    size_t n = json_array_size(a);
    p->when = zalloc(n ? n : 1, sizeof *p->when);
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(a, i);
        const char *path = json_string_value(json_object_get(c, "path"));
        int op = sy_cond_op_parse(json_string_value(json_object_get(c, "op")));
        const json_t *value = json_object_get(c, "value");
        if (!path || sy_cond_path_problem(path) || op < 0 || json_object_size(c) != 3 ||
            sy_cond_value_problem((sy_cond_op)op, value))
            return false;
        p->when[p->n_when++] = (sy_cond){sy_xstrdup(path), (sy_cond_op)op,
                                         json_incref((json_t *)value)};
    }
    return true;
}

static bool part_from_json(const json_t *o, sy_trigger_part *p, char *err, size_t err_len)
{
    const char *event = json_string_value(json_object_get(o, "event"));
    const char *run = json_string_value(json_object_get(o, "run"));
    if (!!event == !!run || (event && sy_event_name_problem(event))) {
        sy_errf(err, err_len, "a trigger part needs one of \"event\" and \"run\"");
        return false;
    }
    if (event) {
        p->event = sy_xstrdup(event);
        const json_t *when = json_object_get(o, "when");
        if (when && !when_from_json(when, p)) {
            sy_errf(err, err_len, "trigger on \"%s\": malformed \"when\"", event);
            return false;
        }
        return true;
    }
    p->run = sy_xstrdup(run);
    const json_t *states = json_object_get(o, "states");
    size_t i;
    const json_t *s;
    json_array_foreach(states, i, s) {
        int st = sy_run_state_parse(json_string_value(s));
        if (st < 0 || !sy_run_state_terminal((sy_run_state)st)) {
            sy_errf(err, err_len, "trigger on runs of \"%s\": bad state", run);
            return false;
        }
        p->states |= 1u << st;
    }
    if (!p->states) {
        sy_errf(err, err_len, "trigger on runs of \"%s\": no states", run);
        return false;
    }
    return true;
}

static bool trigger_from_json(const json_t *o, sy_start_trigger *t, char *err, size_t err_len)
{
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!json_is_object(o) || !name || sy_event_name_problem(name)) {
        sy_errf(err, err_len, "a trigger needs a valid \"name\"");
        return false;
    }
    t->name = sy_xstrdup(name);
    const json_t *all = json_object_get(o, "all");
    t->all = all != NULL;
    size_t n = all ? json_array_size(all) : 1;
    if (n < 1 || n > SY_TRIGGER_PARTS_MAX) {
        sy_errf(err, err_len, "trigger \"%s\": bad \"all\"", name);
        return false;
    }
    t->parts = zalloc(n, sizeof *t->parts);
    for (size_t j = 0; j < n; j++, t->n_parts++)
        if (!part_from_json(all ? json_array_get(all, j) : o, &t->parts[j], err, err_len))
            return false;
    json_int_t debounce = json_integer_value(json_object_get(o, "debounce_ms"));
    json_int_t max = json_integer_value(json_object_get(o, "max_in_flight"));
    if (debounce < 0 || max < 0 || max > SY_LIMIT_MAX) {
        sy_errf(err, err_len, "trigger \"%s\": bad debounce or max_in_flight", name);
        return false;
    }
    t->debounce_ms = debounce;
    t->max_in_flight = (uint32_t)max;
    const char *payloads = json_string_value(json_object_get(o, "payloads"));
    t->all_payloads = payloads && strcmp(payloads, "all") == 0;
    return true;
}

int sy_start_triggers_from_json(const json_t *a, sy_start_trigger **out, size_t *n,
                                char *err, size_t err_len)
{
    *out = NULL;
    *n = 0;
    if (!json_is_array(a)) {
        sy_errf(err, err_len, "\"triggers\" must be an array");
        return -1;
    }
    size_t len = json_array_size(a);
    sy_start_trigger *v = zalloc(len ? len : 1, sizeof *v);
    for (size_t i = 0; i < len; i++)
        if (!trigger_from_json(json_array_get(a, i), &v[i], err, err_len)) {
            sy_start_triggers_free(v, i + 1);
            return -1;
        }
    *out = v;
    *n = len;
    return 0;
}
