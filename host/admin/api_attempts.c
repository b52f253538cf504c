/* GET /api/v1/runs/ID/attempts: each attempt of a run's tasks with when
 * it started and ended and how, for the dashboard's Gantt.
 *
 * The store keeps each task's latest dispatch (tasks.started, finished)
 * and, in the run's events, how every earlier attempt ended (failed,
 * timed_out, deferred, abandoned, interrupted) and its note.  An earlier
 * attempt's start is not stored: it is given as the end of the task's
 * previous attempt (or the run's creation), with "start_known": false.
 * An attempt completed from the cache (engine/cache.h) is marked
 * "cached": true, with the cache's note as its detail. */
#include "admin/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "store/store.h"
#include "workflow/state.h"

struct collect {
    json_t *tasks;    /* per task index: {"id", "state", "attempts", ...} */
    json_t *attempts; /* the answer's list */
    json_t *notes;    /* "TASK/ATTEMPT" -> the attempt's note */
    json_t *cached;   /* "TASK/ATTEMPT" -> how the cache completed it */
};

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static int add_task(void *arg, const sy_task_record *t)
{
    struct collect *c = arg;
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "id", t->task_id, "state",
                          sy_task_state_name(t->state), "attempts", (json_int_t)t->attempts,
                          "started", (json_int_t)t->started, "finished",
                          (json_int_t)t->finished, "executor", str_or_null(t->executor),
                          "error", str_or_null(t->error));
    while (json_array_size(c->tasks) <= t->idx)
        json_array_append_new(c->tasks, json_null());
    json_array_set_new(c->tasks, t->idx, o);
    return 0;
}

/* The outcome an event ends an attempt with, or NULL for one that does
 * not end it (note, retry, stale). */
static const char *ending(const char *kind)
{
    static const char *const kinds[][2] = {
        {"failed", "Failed"},           {"timed_out", "TimedOut"},
        {"deferred", "Deferred"},       {"abandoned", "Abandoned"},
        {"interrupted", "Interrupted"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kind, kinds[i][0]) == 0)
            return kinds[i][1];
    return NULL;
}

static int add_event(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                     const char *detail, int64_t at)
{
    struct collect *c = arg;
    json_t *task = json_array_get(c->tasks, idx);
    const char *id = json_string_value(json_object_get(task, "id"));
    if (!id)
        return 0;
    /* An element of a mapped task: "[17] rest". */
    long long element = -1;
    if (detail && detail[0] == '[') {
        char *end = NULL;
        element = strtoll(detail + 1, &end, 10);
        if (end && end[0] == ']' && end[1] == ' ')
            detail = end + 2;
        else
            element = -1;
    }
    bool cached = strcmp(kind, "cached") == 0;
    if (strcmp(kind, "note") == 0 || cached) {
        /* Told before or after the attempt's end: set on its bar later. */
        char key[300];
        snprintf(key, sizeof key, "%s/%u", id, attempt);
        json_object_set_new(cached ? c->cached : c->notes, key, str_or_null(detail));
        return 0;
    }
    const char *outcome = ending(kind);
    if (!outcome)
        return 0;
    json_t *bar = json_pack("{s:s, s:I, s:n, s:I, s:s, s:o, s:n, s:n, s:b}", "task", id,
                            "attempt", (json_int_t)attempt, "start", "end", (json_int_t)at,
                            "outcome", outcome, "detail", str_or_null(detail), "note",
                            "executor", "start_known", 0);
    if (element >= 0)
        json_object_set_new(bar, "element", json_integer(element));
    json_array_append_new(c->attempts, bar);
    return 0;
}

/* The task's current attempt from its row; a failure event of that
 * attempt is the same attempt, merged into it. */
static void add_current(struct collect *c, json_t *task)
{
    const char *state = json_string_value(json_object_get(task, "state"));
    json_int_t started = json_integer_value(json_object_get(task, "started"));
    json_int_t finished = json_integer_value(json_object_get(task, "finished"));
    json_int_t n = json_integer_value(json_object_get(task, "attempts"));
    const char *id = json_string_value(json_object_get(task, "id"));
    bool shown = strcmp(state, "Running") == 0 || strcmp(state, "Completed") == 0 ||
                 strcmp(state, "Failed") == 0 || strcmp(state, "Cancelled") == 0;
    if (!shown || started <= 0 || n <= 0)
        return;
    json_t *detail = NULL, *a;
    size_t i;
    json_array_foreach(c->attempts, i, a) {
        const char *o = json_string_value(json_object_get(a, "outcome"));
        if (strcmp(json_string_value(json_object_get(a, "task")), id) == 0 &&
            json_integer_value(json_object_get(a, "attempt")) == n &&
            !json_object_get(a, "element") && (!strcmp(o, "Failed") || !strcmp(o, "TimedOut")) &&
            json_integer_value(json_object_get(a, "end")) >= started) {
            detail = json_incref(json_object_get(a, "detail"));
            /* o dies with the bar; state points at a constant instead. */
            state = strcmp(o, "Failed") == 0 ? "Failed" : "TimedOut";
            json_array_remove(c->attempts, i);
            break;
        }
    }
    /* A running or completed task's error is an earlier attempt's. */
    json_t *err = strcmp(state, "Running") && strcmp(state, "Completed")
                      ? json_object_get(task, "error")
                      : NULL;
    json_array_append_new(
        c->attempts,
        json_pack("{s:s, s:I, s:I, s:o, s:s, s:o, s:o, s:O, s:b}", "task", id, "attempt", n,
                  "start", started, "end", finished > 0 ? json_integer(finished) : json_null(),
                  "outcome", state, "detail",
                  detail ? detail : (json_is_string(err) ? json_incref(err) : json_null()),
                  "note", json_null(), "executor",
                  json_object_get(task, "executor"), "start_known", 1));
}

static int by_end(const void *x, const void *y)
{
    const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
    json_int_t ea = json_is_integer(json_object_get(a, "end"))
                        ? json_integer_value(json_object_get(a, "end"))
                        : INT64_MAX;
    json_int_t eb = json_is_integer(json_object_get(b, "end"))
                        ? json_integer_value(json_object_get(b, "end"))
                        : INT64_MAX;
    return ea < eb ? -1 : ea > eb;
}

/* json_equal() is false for two NULLs: two bars of an unmapped task. */
static bool same_element(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

/* An unknown start: the end of the task's (element's) bar before it. */
static void fill_starts(json_t *list, json_int_t created)
{
    size_t n = json_array_size(list);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(list, i)); /* outlive the clear below */
    qsort(v, n, sizeof *v, by_end);
    for (size_t i = 0; i < n; i++) {
        if (json_is_true(json_object_get(v[i], "start_known")))
            continue;
        json_int_t start = created;
        const char *id = json_string_value(json_object_get(v[i], "task"));
        json_t *el = json_object_get(v[i], "element");
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_object_get(v[j], "task")), id) == 0 &&
                same_element(json_object_get(v[j], "element"), el) &&
                json_is_integer(json_object_get(v[j], "end")))
                start = json_integer_value(json_object_get(v[j], "end"));
        json_int_t end = json_integer_value(json_object_get(v[i], "end"));
        json_object_set_new(v[i], "start", json_integer(start < end ? start : end));
    }
    json_array_clear(list);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, v[i]);
    free(v);
}

int sy_api_run_attempts(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    int64_t id;
    if (!sy_admin_cap_id(rq, 0, &id, &res))
        return res;
    sy_store *st = rq->admin->sv->store;
    sy_run_record r;
    int rc = sy_store_get_run(st, id, &r);
    if (rc != SY_OK)
        return rc == SY_ENOENT
                   ? sy_admin_error(rq, 404, "run %lld: no such run", (long long)id)
                   : sy_admin_error(rq, 500, "run %lld: %s", (long long)id, sy_store_errmsg(st));
    struct collect c = {json_array(), json_array(), json_object(), json_object()};
    if (sy_store_list_tasks(st, id, add_task, &c) != SY_OK ||
        sy_store_list_events(st, id, add_event, &c) != SY_OK) {
        json_decref(c.tasks);
        json_decref(c.attempts);
        json_decref(c.notes);
        json_decref(c.cached);
        sy_run_record_clear(&r);
        return sy_admin_error(rq, 500, "run %lld: %s", (long long)id, sy_store_errmsg(st));
    }
    size_t i;
    json_t *t;
    json_array_foreach(c.tasks, i, t) if (json_is_object(t)) add_current(&c, t);
    json_array_foreach(c.attempts, i, t) {
        char key[300];
        snprintf(key, sizeof key, "%s/%lld", json_string_value(json_object_get(t, "task")),
                 (long long)json_integer_value(json_object_get(t, "attempt")));
        json_t *note = json_object_get(c.notes, key);
        if (note)
            json_object_set(t, "note", note);
        /* Only the bar of the task's current, Completed attempt: a retry
         * since ran it again. */
        json_t *how = json_object_get(c.cached, key);
        bool cached = how && !json_object_get(t, "element") &&
                      strcmp(json_string_value(json_object_get(t, "outcome")), "Completed") == 0;
        json_object_set_new(t, "cached", json_boolean(cached));
        if (cached && json_is_null(json_object_get(t, "detail")))
            json_object_set(t, "detail", how);
    }
    fill_starts(c.attempts, r.created);
    json_t *out = json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:o}", "run_id", (json_int_t)id,
                            "status", sy_run_state_name(r.state), "created",
                            (json_int_t)r.created, "started", (json_int_t)r.started,
                            "finished", (json_int_t)r.finished, "now",
                            (json_int_t)sy_clock_now_ms(), "attempts", c.attempts);
    json_decref(c.tasks);
    json_decref(c.notes);
    json_decref(c.cached);
    sy_run_record_clear(&r);
    return sy_admin_json(rq, 200, out);
}
