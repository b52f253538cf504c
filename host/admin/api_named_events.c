/* POST /api/v1/events: a named event (docs/events.md), what `switchyard
 * emit --host` sends; GET /api/v1/named-events, the latest ones; GET
 * /api/v1/triggers, what `switchyard triggers` prints.  GET /api/v1/events is another thing: the stream of
 * run events (admin/api_events.c). */
#include "admin/api.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "service/named_events.h"
#include "service/triggers.h"
#include "store/named_events.h"

int sy_api_event_emit(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    json_t *body = sy_admin_body(rq, &res);
    if (!body)
        return res;
    json_t *name = json_object_get(body, "name");
    json_t *data = json_object_get(body, "data");
    json_t *key = json_object_get(body, "key");
    const char *unknown = NULL;
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v) if (strcmp(k, "name") && strcmp(k, "data") && strcmp(k, "key"))
        unknown = k;
    if (unknown) {
        res = sy_admin_error(rq, 400, "body: unknown field '%s' (known: name, data, key)",
                             unknown);
    } else if (!json_is_string(name)) {
        res = sy_admin_error(rq, 400, "body: field 'name' must be the event's name");
    } else if (data && !json_is_object(data)) {
        res = sy_admin_error(rq, 400, "body: field 'data' must be a JSON object");
    } else if (key && !json_is_string(key)) {
        res = sy_admin_error(rq, 400, "body: field 'key' must be a string");
    } else {
        char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
        int64_t id = 0;
        bool dup = false;
        char err[512];
        int rc = sy_service_emit(rq->admin->sv, json_string_value(name),
                                 key ? json_string_value(key) : NULL, text, &id, &dup, err,
                                 sizeof err);
        free(text);
        if (rc == SY_OK && !dup)
            sy_admin_events_named_soon(rq->admin);
        if (rc == SY_OK)
            res = sy_admin_json(rq, dup ? 200 : 201,
                                json_pack("{s:I, s:s, s:b}", "event_id", (json_int_t)id,
                                          "name", json_string_value(name), "duplicate", dup));
        else
            res = sy_admin_error(rq, rc == SY_EINVAL ? 400 : rc == SY_ERANGE ? 413 : 500, "%s",
                                 err);
    }
    json_decref(body);
    return res;
}

static int note_event(void *arg, const sy_named_event *ev)
{
    json_t *data = json_loads(ev->data, 0, NULL);
    json_array_append_new(arg, json_pack("{s:I, s:s, s:s?, s:o, s:I, s:[]}", "event_id",
                                         (json_int_t)ev->id, "name", ev->name, "key", ev->key,
                                         "data", data ? data : json_null(), "created",
                                         (json_int_t)ev->created, "triggers"));
    return 0;
}

/* The event of `list` (newest first) with id `id`; NULL when not there. */
static json_t *event_of(json_t *list, int64_t id)
{
    size_t lo = 0, hi = json_array_size(list);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        json_t *ev = json_array_get(list, mid);
        json_int_t at = json_integer_value(json_object_get(ev, "event_id"));
        if (at == id)
            return ev;
        if (at > id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* "triggers": what each trigger that settled the event made of it. */
static int note_settled(void *arg, const sy_event_settlement *s)
{
    json_t *ev = event_of(arg, s->event_id);
    if (!ev)
        return 0; /* another name's, between two of this listing */
    json_t *o = json_pack("{s:s, s:o, s:s?}", "trigger", s->trigger, "run",
                          s->run_id ? json_integer(s->run_id) : json_null(), "reason", s->reason);
    if (o && !s->reason)
        json_object_set_new(o, "reason", json_null());
    json_array_append_new(json_object_get(ev, "triggers"), o);
    return 0;
}

int sy_api_named_events(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    long long limit;
    if (!sy_admin_query_int(rq, "limit", 1, 1000, 50, &limit, &res))
        return res;
    json_t *list = json_array();
    sy_store *st = rq->admin->sv->store;
    if (sy_store_list_named_events(st, sy_admin_query(rq, "name"), (size_t)limit, note_event,
                                   list) != SY_OK) {
        json_decref(list);
        return sy_admin_error(rq, 500, "%s", sy_store_errmsg(st));
    }
    size_t n = json_array_size(list);
    if (n && sy_store_event_settlements(
                 st, json_integer_value(json_object_get(json_array_get(list, n - 1), "event_id")),
                 json_integer_value(json_object_get(json_array_get(list, 0), "event_id")),
                 note_settled, list) != SY_OK) {
        json_decref(list);
        return sy_admin_error(rq, 500, "%s", sy_store_errmsg(st));
    }
    return sy_admin_json(rq, 200, json_pack("{s:o}", "events", list));
}

int sy_api_triggers(sy_admin_req *rq)
{
    const sy_setup *s = sy_service_setup(rq->admin->sv);
    json_t *list = NULL;
    char err[512];
    if (sy_triggers_list(rq->admin->sv->store, s->wfs, s->n_wfs, sy_clock_now_ms(), &list, err,
                         sizeof err) != SY_OK)
        return sy_admin_error(rq, 500, "%s", err);
    return sy_admin_json(rq, 200, json_pack("{s:o}", "triggers", list));
}
