/* Runs: the list, one run, submit, cancel, retry; the service calls the
 * CLI makes. */
#include "admin/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "service/retry.h"
#include "service/runs.h"

/* The HTTP status for a service error. */
static unsigned status_of(int rc)
{
    return rc == SY_ENOENT   ? 404
           : rc == SY_ESTATE ? 409
           : rc == SY_EINVAL ? 409
           : rc == SY_ERANGE ? 413
                             : 500;
}

int sy_api_runs_list(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    long long limit, after;
    if (!sy_admin_query_int(rq, "limit", 1, 1000, 50, &limit, &res) ||
        !sy_admin_query_int(rq, "after", 1, INT64_MAX, 0, &after, &res))
        return res;
    sy_runs_filter f = {.limit = (size_t)limit, .after = after, .state = -1,
                        .workflow = sy_admin_query(rq, "workflow")};
    const char *state = sy_admin_query(rq, "state");
    if (state && (f.state = sy_run_state_parse(state)) < 0)
        return sy_admin_error(rq, 400, "query 'state': '%s' is not a run state (Pending, "
                              "Running, Completed, Failed, Cancelled)", state);
    json_t *runs = NULL;
    char err[512];
    int rc = sy_runs_find(rq->admin->sv->store, &f, &runs, err, sizeof err);
    if (rc != SY_OK)
        return sy_admin_error(rq, 500, "%s", err);
    /* The next page starts after the last run of this one. */
    size_t n = json_array_size(runs);
    json_t *next = n == (size_t)limit
                       ? json_incref(json_object_get(json_array_get(runs, n - 1), "run_id"))
                       : json_null();
    return sy_admin_json(rq, 200, json_pack("{s:o, s:o}", "runs", runs, "next_after", next));
}

struct history {
    json_t *tasks, *list;
};

static int add_event(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                     const char *detail, int64_t at)
{
    struct history *h = arg;
    const char *id = json_string_value(json_object_get(json_array_get(h->tasks, idx), "id"));
    json_array_append_new(h->list, json_pack("{s:s?, s:I, s:s, s:s?, s:I}", "task", id,
                                             "attempt", (json_int_t)attempt, "kind", kind,
                                             "detail", detail, "at", (json_int_t)at));
    return 0;
}

int sy_api_run_get(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    int64_t id;
    if (!sy_admin_cap_id(rq, 0, &id, &res))
        return res;
    sy_store *st = rq->admin->sv->store;
    json_t *run = NULL;
    char err[512];
    int rc = sy_runs_status(st, id, SY_RUNS_DETAIL, &run, err, sizeof err);
    if (rc == SY_OK)
        rc = sy_runs_add_maps(st, id, json_object_get(run, "tasks"),
                              sy_admin_query(rq, "elements"), err, sizeof err);
    if (rc == SY_OK)
        rc = sy_runs_add_waiting(st, &sy_service_setup(rq->admin->sv)->cfg.flow,
                                 sy_clock_now_ms(), id, json_object_get(run, "tasks"), err,
                                 sizeof err);
    if (rc != SY_OK) {
        json_decref(run);
        return sy_admin_error(rq, status_of(rc), "run %lld: %s", (long long)id, err);
    }
    /* Each attempt's story: started, retried, lost with a host, ... */
    struct history h = {json_object_get(run, "tasks"), json_array()};
    json_object_set_new(run, "events", h.list);
    if (sy_store_list_events(st, id, add_event, &h) != SY_OK) {
        json_decref(run);
        return sy_admin_error(rq, 500, "run %lld: %s", (long long)id, sy_store_errmsg(st));
    }
    return sy_admin_json(rq, 200, run);
}

/* A new run (201), or with an Idempotency-Key header already used within
 * submit_key_window the run recorded under it (200, "created": false):
 * a client retrying a request it got no answer to records one run. */
static int submit(sy_admin_req *rq, const char *wf, const json_t *ctx, int32_t priority)
{
    const char *key = sy_admin_header(rq, "Idempotency-Key");
    char err[1024];
    if (key && sy_service_check_key(key, err, sizeof err) != SY_OK)
        return sy_admin_error(rq, 400, "header Idempotency-Key: %s", err);
    char *text = ctx ? json_dumps(ctx, JSON_COMPACT) : NULL;
    int64_t id = 0;
    bool created = true;
    sy_service *sv = rq->admin->sv;
    snprintf(rq->target, sizeof rq->target, "workflow %s", wf);
    int rc = sy_service_submit_keyed(sv, wf, text, key, priority, &id, &created, NULL, err,
                                     sizeof err);
    free(text);
    if (rc != SY_OK)
        return sy_admin_error(rq, status_of(rc), "%s", err);
    snprintf(rq->note, sizeof rq->note, created ? "run %lld" : "run %lld, under its key",
             (long long)id);
    /* null: the run was deleted by retention since. */
    const char *status = created ? "Pending" : NULL;
    sy_run_record r;
    bool have = !created && sy_store_get_run(sv->store, id, &r) == SY_OK;
    if (have)
        status = sy_run_state_name(r.state);
    json_t *reply = json_pack("{s:I, s:s, s:s?, s:b}", "run_id", (json_int_t)id, "workflow", wf,
                              "status", status, "created", created);
    if (have)
        sy_run_record_clear(&r);
    return sy_admin_json(rq, created ? 201 : 200, reply);
}

int sy_api_run_submit(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    json_t *body = sy_admin_body(rq, &res);
    if (!body)
        return res;
    json_t *wf = json_object_get(body, "workflow");
    json_t *ctx = json_object_get(body, "context");
    json_t *priority = json_object_get(body, "priority");
    const char *unknown = NULL;
    const char *key;
    json_t *v;
    json_object_foreach(body, key, v) if (strcmp(key, "workflow") && strcmp(key, "context") &&
                                          strcmp(key, "priority"))
        unknown = key;
    if (unknown) {
        res = sy_admin_error(rq, 400, "body: unknown field '%s' (known: workflow, context, "
                             "priority)", unknown);
    } else if (!json_is_string(wf) || !json_string_length(wf)) {
        res = sy_admin_error(rq, 400, "body: field 'workflow' must be a workflow's name");
    } else if (ctx && !json_is_object(ctx)) {
        res = sy_admin_error(rq, 400, "body: field 'context' must be a JSON object");
    } else if (priority && (!json_is_integer(priority) ||
                            json_integer_value(priority) < SY_PRIORITY_MIN ||
                            json_integer_value(priority) > SY_PRIORITY_MAX)) {
        res = sy_admin_error(rq, 400, "body: field 'priority' must be an integer from %d to %d",
                             SY_PRIORITY_MIN, SY_PRIORITY_MAX);
    } else {
        res = submit(rq, json_string_value(wf), ctx,
                     priority ? (int32_t)json_integer_value(priority) : 0);
    }
    json_decref(body);
    return res;
}

int sy_api_run_cancel(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    int64_t id;
    if (!sy_admin_cap_id(rq, 0, &id, &res))
        return res;
    sy_run_state state;
    char err[512];
    int rc = sy_service_cancel_served(rq->admin->sv, id, &state, err, sizeof err);
    if (rc != SY_OK)
        return sy_admin_error(rq, status_of(rc), "%s", err);
    bool done = state == SY_RUN_CANCELLED;
    snprintf(rq->note, sizeof rq->note, "%s", done ? "Cancelled" : "cancel requested");
    return sy_admin_json(rq, done ? 200 : 202,
                         json_pack("{s:I, s:s, s:b}", "run_id", (json_int_t)id, "status",
                                   sy_run_state_name(state), "requested", !done));
}

int sy_api_run_retry(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    int64_t id;
    if (!sy_admin_cap_id(rq, 0, &id, &res))
        return res;
    json_t *body = sy_admin_body(rq, &res);
    if (!body)
        return res;
    json_t *task = json_object_get(body, "task");
    json_t *dry = json_object_get(body, "dry_run");
    json_t *no_cache = json_object_get(body, "no_cache");
    const char *key;
    json_t *v;
    const char *unknown = NULL;
    json_object_foreach(body, key, v) if (strcmp(key, "task") && strcmp(key, "dry_run") &&
                                          strcmp(key, "no_cache"))
        unknown = key;
    if (unknown) {
        res = sy_admin_error(rq, 400, "body: unknown field '%s' (known: task, dry_run, no_cache)",
                             unknown);
    } else if (task && !json_is_string(task)) {
        res = sy_admin_error(rq, 400, "body: field 'task' must be a task id");
    } else if (dry && !json_is_boolean(dry)) {
        res = sy_admin_error(rq, 400, "body: field 'dry_run' must be true or false");
    } else if (no_cache && !json_is_boolean(no_cache)) {
        res = sy_admin_error(rq, 400, "body: field 'no_cache' must be true or false");
    } else {
        sy_store *st = rq->admin->sv->store;
        json_t *plan = NULL;
        char err[1024];
        int rc = sy_retry_plan(st, id, json_string_value(task), &plan, err, sizeof err);
        if (rc == SY_OK && !json_is_true(dry))
            rc = sy_retry_apply(st, plan, json_is_true(no_cache), sy_clock_now_ms(), err,
                                sizeof err);
        if (rc == SY_OK) {
            /* Reopened Pending: a serving host (this one, most likely)
             * claims it as it claims a submitted run. */
            json_object_set_new(plan, "applied", json_boolean(!json_is_true(dry)));
            snprintf(rq->note, sizeof rq->note, "%s", json_is_true(dry) ? "dry run: nothing "
                     "changed" : "reopened");
            res = sy_admin_json(rq, 200, plan);
        } else {
            json_decref(plan);
            res = sy_admin_error(rq, status_of(rc), "%s", err);
        }
    }
    json_decref(body);
    return res;
}
