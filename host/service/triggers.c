/* The workflows' triggers as data (service/triggers.h). */
#include "service/triggers.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/named_events.h"
#include "workflow/start_trigger.h"

static int count_event(void *arg, const sy_named_event *ev)
{
    (void)ev;
    (*(json_int_t *)arg)++;
    return 0;
}

static int count_run(void *arg, const sy_finished_run *r)
{
    (void)r;
    (*(json_int_t *)arg)++;
    return 0;
}

static int note_passed(void *arg, sy_item_source source, int64_t id, const char *reason,
                       int64_t at)
{
    json_array_append_new(arg, json_pack("{s:s, s:I, s:s, s:I}", "source",
                                         source == SY_ITEM_EVENT ? "event" : "run", "id",
                                         (json_int_t)id, "reason", reason ? reason : "",
                                         "at", (json_int_t)at));
    return 0;
}

static json_t *nullable(int64_t v)
{
    return v ? json_integer(v) : json_null();
}

/* One trigger's entry; SY_OK or the store's failure. */
static int one(sy_store *st, const sy_workflow *wf, const sy_start_trigger *t, int64_t now,
               json_t *list)
{
    char *key = sy_start_trigger_key(wf, t);
    sy_trigger_record rec;
    int rc = sy_store_trigger_open(st, key, now, &rec);
    json_t *defs = sy_start_triggers_json(t, 1);
    json_t *o = json_incref(json_array_get(defs, 0));
    json_decref(defs);
    json_t *parts = json_array();
    for (size_t i = 0; rc == SY_OK && i < t->n_parts; i++) {
        const sy_trigger_part *p = &t->parts[i];
        json_int_t pending = 0;
        rc = p->event ? sy_store_trigger_events(st, key, p->event, rec.since, 64, count_event,
                                                &pending)
                      : sy_store_trigger_runs(st, key, wf->tenant, p->run, p->states,
                                              rec.since, 64, count_run, &pending);
        json_t *defs_p = json_object_get(o, "all");
        json_t *part = defs_p ? json_deep_copy(json_array_get(defs_p, i)) : json_object();
        if (!defs_p) {
            const char *k;
            json_t *v;
            json_object_foreach(o, k, v) if (!strcmp(k, "event") || !strcmp(k, "when") ||
                                             !strcmp(k, "run") || !strcmp(k, "states"))
                json_object_set(part, k, v);
        }
        json_object_set_new(part, "pending", json_integer(pending));
        json_array_append_new(parts, part);
    }
    json_t *passed = json_array();
    if (rc == SY_OK)
        rc = sy_store_trigger_passed(st, key, SY_TRIGGERS_PASSED_SHOWN, note_passed, passed);
    free(key);
    if (rc != SY_OK) {
        json_decref(o);
        json_decref(parts);
        json_decref(passed);
        return rc;
    }
    json_object_del(o, "event");
    json_object_del(o, "when");
    json_object_del(o, "run");
    json_object_del(o, "states");
    json_object_set_new(o, "all", json_boolean(t->all));
    json_object_set_new(o, "parts", parts);
    json_object_set_new(o, "passed", passed);
    json_object_set_new(o, "tenant", json_string(wf->tenant));
    json_object_set_new(o, "workflow", json_string(wf->name));
    json_object_set_new(o, "since", json_integer(rec.since));
    json_object_set_new(o, "firings", json_integer(rec.firings));
    json_object_set_new(o, "last_fired", nullable(rec.last_fired));
    json_object_set_new(o, "last_run", nullable(rec.last_run));
    json_object_set_new(o, "in_flight", json_integer(rec.in_flight));
    json_array_append_new(list, o);
    return SY_OK;
}

int sy_triggers_list(sy_store *st, sy_workflow *const *wfs, size_t n, int64_t now_ms,
                     json_t **out, char *err, size_t err_len)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < wfs[i]->n_triggers; j++)
            if (one(st, wfs[i], &wfs[i]->triggers[j], now_ms, list) != SY_OK) {
                sy_errf(err, err_len, "%s: trigger %s: %s", wfs[i]->name,
                        wfs[i]->triggers[j].name, sy_store_errmsg(st));
                json_decref(list);
                return SY_EIO;
            }
    *out = list;
    return SY_OK;
}
