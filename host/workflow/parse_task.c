/* Workflow files: reading the `tasks` list, each task's keys into its
 * sy_task_def.  Every problem is reported with its FILE:LINE and reading
 * goes on, so that one pass finds them all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/config_json.h>

#include "base/util.h"
#include "workflow/internal.h"

const char *const sy_workflow_task_keys[] = {
    "id", "after", "trigger", "when", "retry", "timeout", "description",
    "map", "map_range", "max_map", "priority", "limits", "pool", "pool_slots", "cache", "rate_limits", NULL,
};

/* What a task's parameters leave out: its keys, but `priority`, which an
 * executor with a queue of its own (the gpu plugin's) orders by too, so
 * that the two orders agree. */
static const char *const param_skip[] = {
    "id", "after", "trigger", "when", "retry", "timeout", "description",
    "map", "map_range", "max_map", "limits", "pool", "pool_slots", "cache", "rate_limits", NULL,
};

/* The bits of task_members(), in the order of sy_workflow_task_keys. */
enum { KEY_ID, KEY_AFTER, KEY_TRIGGER, KEY_WHEN, KEY_RETRY, KEY_TIMEOUT, KEY_DESCRIPTION,
       KEY_MAP, KEY_MAP_RANGE, KEY_MAX_MAP, KEY_PRIORITY, KEY_LIMITS, KEY_POOL, KEY_POOL_SLOTS,
       KEY_CACHE, KEY_RATE_LIMITS, KEY_COUNT };
_Static_assert(KEY_COUNT < 32, "a bit each");
#define HAS(seen, key) (((seen) >> (key)) & 1u)

static void read_id(sy_wf_loader *L, sy_task_def *t, const config_setting_t *g, size_t i)
{
    const config_setting_t *s = config_setting_get_member(g, "id");
    if (!s) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "task %zu has no 'id' (e.g. id = \"extract\";)", i + 1);
        return;
    }
    const char *v = config_setting_get_string(s);
    const char *why = sy_wf_name_problem(v, false);
    if (why) {
        char q[300];
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s), "invalid task id%s%s: %s",
                 v ? " " : "", v ? sy_wf_quote(v, q, sizeof q) : "", why);
        return;
    }
    t->id = sy_xstrdup(v);
}

static void read_after(sy_wf_loader *L, const sy_task_def *t, const config_setting_t *s,
                       size_t i)
{
    char who[160];
    sy_wf_task_label(t, i, who, sizeof who);
    sy_wf_after *a = &L->after[i];
    a->line = SY_SRC_LINE(s);
    int type = config_setting_type(s);
    if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: 'after' must be a list of task ids, e.g. after = [\"extract\"]", who);
        return;
    }
    int len = config_setting_length(s);
    a->v = sy_xmalloc(sizeof *a->v * (size_t)(len > 0 ? len : 1));
    for (int k = 0; k < len; k++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
        const char *id = config_setting_get_string(e);
        if (!id) {
            sy_error(L->d, SY_SRC_FILE(e), SY_SRC_LINE(e),
                     "%s: 'after' entry %d must be a task id (a string), e.g. "
                     "after = [\"extract\"]",
                     who, k + 1);
            continue;
        }
        a->v[a->n++] = (sy_wf_ref){id, SY_SRC_LINE(e)};
    }
}

static void read_trigger(sy_wf_loader *L, sy_task_def *t, const config_setting_t *g,
                         const char *who)
{
    const config_setting_t *s = config_setting_get_member(g, "trigger");
    if (!s)
        return;
    const char *v = config_setting_get_string(s);
    int trig = sy_trigger_parse(v);
    if (trig < 0) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "%s: unknown trigger%s%s%s (valid: all_success, all_done, "
                 "all_failed, one_success, one_failed, none_failed, always)",
                 who, v ? " '" : "", v ? v : "", v ? "'" : "");
        return;
    }
    t->trigger = (sy_trigger)trig;
}

static void read_params(sy_wf_loader *L, sy_task_def *t, const config_setting_t *g,
                        const char *who)
{
    t->params = sy_sdk_json_from_setting(g, param_skip);
    if (t->params && json_object_size(t->params) == 0) {
        if (L->no_params) {
            json_decref(t->params);
            t->params = json_incref(L->no_params);
        } else {
            L->no_params = json_incref(t->params);
        }
    }
    if (!t->params && sy_sdk_setting_text_ok(g))
        sy_oom("converting the parameters of %s to JSON", who);
    if (!t->params)
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "%s: its parameters cannot be held in JSON (text that is not "
                 "valid UTF-8)",
                 who);
}

/* A task's members, found in one pass: bit k is sy_workflow_task_keys[k];
 * *others counts the rest (its parameters).  A million tasks that each
 * set an id and an `after` would otherwise be searched for nine keys
 * apiece. */
static unsigned task_members(const config_setting_t *g, int *others)
{
    unsigned seen = 0;
    *others = 0;
    int n = config_setting_length(g);
    for (int i = 0; i < n; i++) {
        const char *name = config_setting_name(config_setting_get_elem(g, (unsigned)i));
        unsigned k = 0;
        while (sy_workflow_task_keys[k] && (!name || strcmp(sy_workflow_task_keys[k], name) != 0))
            k++;
        if (sy_workflow_task_keys[k])
            seen |= 1u << k;
        else
            (*others)++;
    }
    return seen;
}

static void read_task(sy_wf_loader *L, size_t i, const config_setting_t *g)
{
    sy_task_def *t = &L->wf->tasks[i];
    t->line = SY_SRC_LINE(g);
    t->retry = L->retry;
    t->timeout_ms = L->timeout_ms;
    t->trigger = SY_TRIGGER_ALL_SUCCESS;
    t->priority = L->priority;
    L->after[i].line = t->line;
    if (!config_setting_is_group(g)) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "task %zu must be a group, e.g. { id = \"extract\"; command = "
                 "[\"./extract\"]; }",
                 i + 1);
        return;
    }
    L->settings[i] = g;
    int params;
    unsigned seen = task_members(g, &params);
    read_id(L, t, g, i);
    /* The label only for the readers that may need it in a message. */
    char who[160] = "";
    bool map = HAS(seen, KEY_MAP) || HAS(seen, KEY_MAP_RANGE) || HAS(seen, KEY_MAX_MAP);
    bool flow = HAS(seen, KEY_PRIORITY) || HAS(seen, KEY_LIMITS) || HAS(seen, KEY_POOL) ||
                HAS(seen, KEY_RATE_LIMITS) ||
                HAS(seen, KEY_POOL_SLOTS);
    /* `priority` is a parameter too (param_skip). */
    params += HAS(seen, KEY_PRIORITY);
    if (params || map || flow || HAS(seen, KEY_TRIGGER) || HAS(seen, KEY_CACHE))
        sy_wf_task_label(t, i, who, sizeof who);
    const config_setting_t *s;
    if (HAS(seen, KEY_AFTER) && (s = config_setting_get_member(g, "after")))
        read_after(L, t, s, i);
    if (HAS(seen, KEY_TRIGGER))
        read_trigger(L, t, g, who);
    if (HAS(seen, KEY_WHEN) && (s = config_setting_get_member(g, "when")))
        sy_when_read(s, &t->when, &t->n_when, L->d);
    if (HAS(seen, KEY_RETRY) && (s = config_setting_get_member(g, "retry")))
        sy_retry_read(s, &t->retry, L->d);
    if (HAS(seen, KEY_TIMEOUT) && (s = config_setting_get_member(g, "timeout")))
        sy_setting_duration(s, &t->timeout_ms, L->d);
    if (HAS(seen, KEY_DESCRIPTION))
        sy_setting_string(g, "description", "task 'description'", L->d);
    if (map)
        sy_map_read(g, t, L->max_map, who, L->d);
    if (HAS(seen, KEY_CACHE) && (s = config_setting_get_member(g, "cache"))) {
        if (map)
            sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                     "%s: a mapped task cannot have a 'cache' (its elements are not cached)",
                     who);
        else
            sy_task_cache_read(s, &t->cache, who, L->d);
    }
    if (flow)
        sy_flow_read(g, L->flow, &t->priority, &t->flow, who, L->d);
    else if (L->flow)
        t->flow = sy_flow_copy(L->flow);
    /* No parameters: the one empty object the workflow's plain tasks share. */
    if (params)
        read_params(L, t, g, who);
    else if (L->no_params || (L->no_params = json_object()))
        t->params = json_incref(L->no_params);
    else
        sy_oom("reading the tasks of %s", L->wf->file);
    if (L->ns_ok && t->id)
        t->ns = sy_xconcat(L->wf->tenant, "::", L->wf->name, "::", t->id, (char *)NULL);
}

void sy_wf_tasks_read(sy_wf_loader *L, const config_setting_t *g)
{
    const config_setting_t *s = config_setting_get_member(g, "tasks");
    if (!s) {
        sy_error(L->d, SY_SRC_FILE(g), SY_SRC_LINE(g),
                 "workflow has no 'tasks' (e.g. tasks = ( { id = \"a\"; ... } );)");
        return;
    }
    int len = config_setting_length(s), type = config_setting_type(s);
    bool list = type == CONFIG_TYPE_LIST || type == CONFIG_TYPE_ARRAY;
    if (!list || (type == CONFIG_TYPE_ARRAY && len > 0)) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'tasks' must be a list of groups, e.g. tasks = ( { id = \"a\"; ... } );");
        return;
    }
    if (len == 0) {
        sy_error(L->d, SY_SRC_FILE(s), SY_SRC_LINE(s),
                 "'tasks' is empty: a workflow needs at least one task");
        return;
    }
    size_t n = (size_t)len;
    L->wf->tasks = calloc(n, sizeof *L->wf->tasks);
    L->after = calloc(n, sizeof *L->after);
    L->settings = calloc(n, sizeof *L->settings);
    if (!L->wf->tasks || !L->after || !L->settings) {
        sy_oom("reading the tasks of %s", L->wf->file);
    }
    L->wf->n_tasks = n;
    for (size_t i = 0; i < n; i++)
        read_task(L, i, config_setting_get_elem(s, (unsigned)i));
}
