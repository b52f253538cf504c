/* Runs as data: what a run's mapped tasks add to `status` (a summary by
 * default; their elements one by one when asked). */
#include "service/runs.h"

#include <string.h>

#include "base/util.h"
#include "workflow/state.h"

struct maps_ctx {
    json_t *tasks;
    const char *elements_of;
};

/* The mapped task's object in `tasks` (by idx; NULL when not listed). */
static json_t *task_at(json_t *tasks, uint32_t idx) { return sy_runs_task_at(tasks, idx); }

static json_t *string_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static int add_element(void *arg, int64_t elem, const sy_task_record *t)
{
    json_t *o = json_pack("{s:I, s:s, s:I, s:I, s:o, s:o, s:o}", "index", (json_int_t)elem,
                          "status", sy_task_state_name(t->state), "attempts",
                          (json_int_t)t->attempts, "recoveries", (json_int_t)t->recoveries,
                          "executor", string_or_null(t->executor), "error",
                          string_or_null(t->error), "host", string_or_null(t->host));
    json_object_set_new(o, "waiting_for", string_or_null(t->waiting_for));
    json_t *out = t->output ? json_loads(t->output, 0, NULL) : NULL;
    json_object_set_new(o, "output", out ? out : json_null());
    json_array_append_new(arg, o);
    return 0;
}

static int add_map(void *arg, const sy_map_record *m)
{
    struct maps_ctx *c = arg;
    json_t *task = task_at(c->tasks, m->idx);
    if (!task)
        return 0;
    json_t *by_state = json_object();
    for (int s = 0; s < SY_TASK_STATE_COUNT; s++)
        if (m->count[s])
            json_object_set_new(by_state, sy_task_state_name((sy_task_state)s),
                                json_integer(m->count[s]));
    json_object_set_new(task, "map", json_pack("{s:I, s:I, s:o}", "size", (json_int_t)m->size,
                                               "created", (json_int_t)m->created, "elements",
                                               by_state));
    return 0;
}

int sy_runs_add_maps(sy_store *st, int64_t run_id, json_t *tasks, const char *elements_of,
                     char *err, size_t err_len)
{
    struct maps_ctx c = {tasks, elements_of};
    int rc = sy_store_list_maps(st, run_id, add_map, &c);
    size_t i;
    json_t *t;
    json_array_foreach(tasks, i, t) {
        json_t *map = json_object_get(t, "map");
        if (rc != SY_OK || !map || !elements_of)
            continue;
        const char *id = json_string_value(json_object_get(t, "id"));
        if (strcmp(elements_of, "*") != 0 && (!id || strcmp(id, elements_of) != 0))
            continue;
        json_t *elements = json_array();
        json_object_set_new(map, "list", elements);
        rc = sy_store_list_elements(st, run_id,
                                    (uint32_t)json_integer_value(json_object_get(t, "index")),
                                    false, add_element, elements);
    }
    if (rc != SY_OK)
        sy_errf(err, err_len, "%s", sy_store_errmsg(st));
    return rc;
}
