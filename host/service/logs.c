/* Attempt logs as data: the store's rows with their task's id. */
#include "service/logs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct ids {
    char **id;
    size_t n;
};

static int take_id(void *arg, const sy_task_record *t)
{
    struct ids *ids = arg;
    if (t->idx >= ids->n) {
        char **nv = realloc(ids->id, (t->idx + 1) * sizeof *nv);
        if (!nv)
            return 1;
        for (size_t i = ids->n; i <= t->idx; i++)
            nv[i] = NULL;
        ids->id = nv;
        ids->n = t->idx + 1;
    }
    free(ids->id[t->idx]);
    ids->id[t->idx] = sy_xstrdup(t->task_id);
    return 0;
}

struct collect {
    const struct ids *ids;
    long only;          /* a task's index, or -1 */
    uint32_t attempt;   /* 0: all */
    json_t *logs;
};

static int take_log(void *arg, const sy_log_record *l)
{
    struct collect *c = arg;
    if ((c->only >= 0 && l->idx != (uint32_t)c->only) ||
        (c->attempt && l->attempt != c->attempt))
        return 0;
    const char *task = l->idx < c->ids->n && c->ids->id[l->idx] ? c->ids->id[l->idx] : "?";
    json_array_append_new(c->logs, json_pack("{s:s, s:I, s:s, s:s, s:I, s:I, s:I}", "task",
                                             task, "attempt", (json_int_t)l->attempt,
                                             "stream", l->stream, "text", l->text, "size",
                                             (json_int_t)l->size, "dropped",
                                             (json_int_t)l->dropped, "at", (json_int_t)l->at));
    return 0;
}

int sy_logs_read(sy_store *st, int64_t run_id, int64_t since, const char *task_id,
                 uint32_t attempt, json_t **out, char *err, size_t err_len)
{
    *out = NULL;
    sy_run_record run;
    int rc = sy_store_get_run(st, run_id, &run);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "run %lld: %s", (long long)run_id,
                       rc == SY_ENOENT ? "no such run" : sy_store_errmsg(st)),
               rc;
    struct ids ids = {NULL, 0};
    rc = sy_store_list_tasks(st, run_id, take_id, &ids);
    long only = -1;
    for (size_t i = 0; rc == SY_OK && task_id && i < ids.n; i++)
        if (ids.id[i] && strcmp(ids.id[i], task_id) == 0)
            only = (long)i;
    struct collect c = {&ids, only, attempt, json_array()};
    if (rc != SY_OK) {
        sy_errf(err, err_len, "run %lld: %s", (long long)run_id, sy_store_errmsg(st));
    } else if (task_id && only < 0) {
        sy_errf(err, err_len, "run %lld has no task '%s'", (long long)run_id, task_id);
        rc = SY_ENOENT;
    } else if ((rc = sy_store_list_logs(st, run_id, since, take_log, &c)) != SY_OK) {
        sy_errf(err, err_len, "run %lld: %s", (long long)run_id, sy_store_errmsg(st));
    }
    if (rc == SY_OK)
        *out = json_pack("{s:I, s:s, s:o}", "run_id", (json_int_t)run_id, "status",
                         sy_run_state_name(run.state), "logs", c.logs);
    else
        json_decref(c.logs);
    for (size_t i = 0; i < ids.n; i++)
        free(ids.id[i]);
    free(ids.id);
    sy_run_record_clear(&run);
    return rc;
}

/* Each poll reads what was recorded lately, a minute before the newest
 * log seen: hosts' clocks differ by less, and a log is committed as it is
 * stamped.  A log is written once per attempt and stream, so those name
 * it. */
#define FOLLOW_WINDOW_MS 60000

int sy_logs_next(sy_store *st, int64_t run_id, const char *task_id, uint32_t attempt,
                 sy_logs_cursor *c, json_t **fresh, bool *over, char *err, size_t err_len)
{
    *fresh = NULL;
    *over = false;
    if (!c->seen)
        c->seen = json_object();
    int64_t since = c->newest > FOLLOW_WINDOW_MS ? c->newest - FOLLOW_WINDOW_MS : 0;
    json_t *got = NULL;
    int rc = sy_logs_read(st, run_id, since, task_id, attempt, &got, err, err_len);
    if (rc != SY_OK)
        return rc;
    json_t *out = json_array();
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(got, "logs"), i, l) {
        int64_t at = json_integer_value(json_object_get(l, "at"));
        if (at > c->newest)
            c->newest = at;
        char key[256];
        snprintf(key, sizeof key, "%s/%lld/%s", json_string_value(json_object_get(l, "task")),
                 (long long)json_integer_value(json_object_get(l, "attempt")),
                 json_string_value(json_object_get(l, "stream")));
        if (json_object_get(c->seen, key))
            continue;
        json_object_set_new(c->seen, key, json_true());
        json_array_append(out, l);
    }
    /* Read after the logs: a run seen finished has written them all. */
    int st_ = sy_run_state_parse(json_string_value(json_object_get(got, "status")));
    *over = st_ >= 0 && sy_run_state_terminal((sy_run_state)st_);
    json_decref(got);
    *fresh = out;
    return SY_OK;
}

void sy_logs_cursor_clear(sy_logs_cursor *c)
{
    json_decref(c->seen);
    c->seen = NULL;
    c->newest = 0;
}
