/*
 * store/postgres/runs.c -- definitions and run rows in the PostgreSQL
 * store: storing a definition, creating a run with its task rows (one
 * round trip for all of them), reading and listing runs, a run's state
 * changes inside a batch, and why a fenced write was refused.
 */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/util.h"
#include "store/postgres/internal.h"

/* --- definitions ------------------------------------------------------------- */

int sy_pg_put_definition(sy_store *s, const char *hash, const char *tenant,
                         const char *workflow, const char *definition)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, hash);
    sy_pg_text(&p, 2, tenant);
    sy_pg_text(&p, 3, workflow);
    sy_pg_text(&p, 4, definition);
    sy_pg_int(&p, 5, sy_clock_now_ms());
    return sy_pg_run(sy_pg_handle(s), SY_PG_PUT_DEF, &p, NULL,
                     "store definition");
}

int sy_pg_get_definition(sy_store *s, const char *hash, char **out)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, hash);
    PGresult *r;
    int status = sy_pg_run(sy_pg_handle(s), SY_PG_GET_DEF, &p, &r,
                           "read definition");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return sy_store_fail(s, SY_ENOENT, "no definition stored under hash %s",
                             hash);
    }
    *out = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return *out ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
}

/* --- runs -------------------------------------------------------------------- */

/* Appends `s` to a text[] literal, quoted: "..." with \ and " escaped. */
static char *quote_into(char *o, const char *s)
{
    *o++ = '"';
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            *o++ = '\\';
        *o++ = *s;
    }
    *o++ = '"';
    return o;
}

char *sy_pg_text_array(const char *const *v, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += 2 * strlen(v[i]) + 3;
    char *a = malloc(cap), *o = a;
    if (!a)
        return NULL;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        o = quote_into(o, v[i]);
    }
    *o++ = '}';
    *o = '\0';
    return a;
}

char *sy_pg_int_array(const int64_t *v, size_t stride, size_t n)
{
    char *a = malloc(3 + n * 21), *o = a;
    if (!a)
        return NULL;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        o = sy_pg_decimal(o, v[i * stride]);
    }
    *o++ = '}';
    *o = '\0';
    return a;
}

static int insert_run(sy_store_pg *q, const char *hash, const char *tenant,
                      const char *workflow, const char *context, size_t n,
                      int64_t now, int64_t *run_id)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, hash);
    sy_pg_text(&p, 2, tenant);
    sy_pg_text(&p, 3, workflow);
    sy_pg_text(&p, 4, context);
    sy_pg_int(&p, 5, now);
    sy_pg_int(&p, 6, (int64_t)n);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_INSERT_RUN, &p, &r, "create run");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0)
        status = sy_store_fail(&q->base, SY_ENOENT,
                               "create_run: no definition stored under hash %s",
                               hash);
    else
        *run_id = sy_pg_col_int(r, 0, 0);
    PQclear(r);
    return status;
}

static int insert_tasks(sy_store_pg *q, int64_t run_id, size_t n,
                        const char *const *task_ids, const char *const *ns)
{
    if (n == 0)
        return SY_OK;
    char *ids = sy_pg_text_array(task_ids, n), *nss = sy_pg_text_array(ns, n);
    int status = SY_OK;
    if (!ids || !nss) {
        status = sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    } else {
        sy_pg_params p = {0};
        sy_pg_int(&p, 1, run_id);
        sy_pg_text(&p, 2, ids);
        sy_pg_text(&p, 3, nss);
        status = sy_pg_run(q, SY_PG_INSERT_TASKS, &p, NULL, "create tasks");
    }
    free(ids);
    free(nss);
    return status;
}

int sy_pg_insert_run(sy_store_pg *q, const char *hash, const char *tenant,
                     const char *workflow, const char *context, size_t n_tasks,
                     const char *const *task_ids, const char *const *ns, int64_t now,
                     int64_t *run_id)
{
    int status = insert_run(q, hash, tenant, workflow, context, n_tasks, now, run_id);
    return status == SY_OK ? insert_tasks(q, *run_id, n_tasks, task_ids, ns) : status;
}

/* The priority is written only when there is one: the run's row as
 * inserted holds 0, and the submits without one, nearly all, pay no
 * second statement. */
int sy_pg_insert_new_run(sy_store_pg *q, const sy_store_new_run *r, int64_t now,
                         int64_t *run_id)
{
    int status = sy_pg_insert_run(q, r->hash, r->tenant, r->workflow, r->context, r->n_tasks,
                                  r->task_ids, r->ns, now, run_id);
    if (status != SY_OK || r->priority == 0)
        return status;
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, *run_id);
    sy_pg_int(&p, 2, r->priority);
    return sy_pg_run(q, SY_PG_SET_RUN_PRIORITY, &p, NULL, "set the run's priority");
}

int sy_pg_create_run(sy_store *s, const sy_store_new_run *r, int64_t now, int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE,
                             "create_run: called inside a batch; commit first");
    int64_t id = 0;
    int status = sy_pg_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    status = sy_pg_insert_new_run(q, r, now, &id);
    if (status == SY_OK)
        status = sy_pg_notify(q);
    status = sy_pg_transaction_end(q, false, status);
    if (status == SY_OK && run_id)
        *run_id = id;
    return status;
}

/* The row's strings are borrowed from the result. */
static void row_to_run(const PGresult *r, int i, sy_run_record *o)
{
    o->id = sy_pg_col_int(r, i, 0);
    o->workflow = sy_pg_col(r, i, 1);
    o->tenant = sy_pg_col(r, i, 2);
    o->hash = sy_pg_col(r, i, 3);
    o->state = (sy_run_state)sy_pg_col_int(r, i, 4);
    o->context = sy_pg_col(r, i, 5);
    o->owner = sy_pg_col(r, i, 6);
    o->lease_until = sy_pg_col_int(r, i, 7);
    o->cancel_requested = sy_pg_col_int(r, i, 8) != 0;
    o->created = sy_pg_col_int(r, i, 9);
    o->started = sy_pg_col_int(r, i, 10);
    o->finished = sy_pg_col_int(r, i, 11);
    o->error = sy_pg_col(r, i, 12);
    o->n_tasks = (uint32_t)sy_pg_col_int(r, i, 13);
    o->lease_epoch = sy_pg_col_int(r, i, 14);
    o->no_cache = sy_pg_col_int(r, i, 15) != 0;
    o->priority = (int32_t)sy_pg_col_int(r, i, 16);
}

static bool own_strings(char **v[], size_t n)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (!*v[i])
            continue;
        *v[i] = ok ? strdup(*v[i]) : NULL;
        ok = ok && *v[i];
    }
    return ok;
}

int sy_pg_get_run(sy_store *s, int64_t run_id, sy_run_record *out)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(sy_pg_handle(s), SY_PG_GET_RUN, &p, &r, "read run");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return sy_store_fail(s, SY_ENOENT, "no run %lld", (long long)run_id);
    }
    row_to_run(r, 0, out);
    char **strs[] = {&out->workflow, &out->tenant, &out->hash,
                     &out->context, &out->owner,   &out->error};
    bool ok = own_strings(strs, SY_ARRAY_LEN(strs));
    PQclear(r);
    if (ok)
        return SY_OK;
    sy_run_record_clear(out);
    return sy_store_fail(s, SY_ENOMEM, "out of memory");
}

int sy_pg_list_runs(sy_store *s, size_t limit, sy_store_run_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    int status = sy_pg_list_enter(q, SY_PG_LIST_RUNS_L, "list_runs");
    if (status != SY_OK)
        return status;
    sy_pg_params p = {0};
    if (limit == 0 || limit > INT64_MAX)
        sy_pg_text(&p, 1, NULL);
    else
        sy_pg_int(&p, 1, (int64_t)limit);
    PGresult *r;
    status = sy_pg_run(q, SY_PG_LIST_RUNS, &p, &r, "list runs");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_run_record run;
        row_to_run(r, i, &run);
        if (cb(arg, &run) != 0)
            break;
    }
    if (status == SY_OK)
        PQclear(r);
    sy_pg_list_done(q, SY_PG_LIST_RUNS_L);
    return status;
}

/* The second half of sy_pg_fenced: the run is held by the fence's claim,
 * so a write that changed nothing was refused by the task's attempt
 * token, or found no row. */
static int task_fenced(sy_store_pg *q, int64_t run_id, uint32_t idx,
                       int64_t token, const char *what)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, idx);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_TASK_TOKEN, &p, &r, "look up task");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return sy_store_fail(&q->base, SY_ENOENT, "%s: run %lld has no task %u",
                             what, (long long)run_id, idx);
    }
    int64_t held = sy_pg_col_int(r, 0, 0);
    const char *host = sy_pg_col(r, 0, 1);
    status = held == token
                 ? sy_store_fail(&q->base, SY_ENOENT, "%s: no such row", what)
                 : sy_store_fail(&q->base, SY_STORE_EFENCED,
                                 "%s: task %u of run %lld is at attempt "
                                 "token %lld (started by %s), not %lld: "
                                 "not written", what, idx, (long long)run_id,
                                 (long long)held, host ? host : "no host",
                                 (long long)token);
    PQclear(r);
    return status;
}

int sy_pg_fenced(sy_store_pg *q, int64_t run_id, const sy_store_fence *fence,
                 uint32_t idx, int64_t token, const char *what)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RUN_HOLDER, &p, &r, "look up run");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0 || !fence) {
        bool none = PQntuples(r) == 0;
        PQclear(r);
        return sy_store_fail(&q->base, SY_ENOENT, "%s: no %s", what,
                             none ? "such run" : "such row");
    }
    const char *owner = sy_pg_col(r, 0, 0);
    int64_t epoch = sy_pg_col_int(r, 0, 1);
    status = sy_store_fence_check(&q->base, what, run_id, owner, epoch, fence);
    bool holds = status == SY_OK;
    PQclear(r);
    if (holds && idx != SY_PG_NO_TASK)
        return task_fenced(q, run_id, idx, token, what);
    if (holds)
        return sy_store_fail(&q->base, SY_ENOENT, "%s: no such row", what);
    return status;
}

int sy_pg_delete_finished(sy_store *s, int64_t before, size_t max,
                          size_t *deleted)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE,
                             "delete_finished: called inside a batch");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, before);
    sy_pg_int(&p, 2, (int64_t)max);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_DELETE_FINISHED, &p, &r,
                           "delete finished runs");
    if (status != SY_OK)
        return status;
    *deleted = (size_t)sy_pg_changes(r);
    PQclear(r);
    return SY_OK;
}

int sy_pg_update_run(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                     sy_run_state state, const char *error, int64_t now)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "update_run: no batch is open");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, (int)state);
    sy_pg_text(&p, 3, error);
    sy_pg_int(&p, 4, now);
    sy_pg_text(&p, 5, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&p, 6, fence->epoch);
    else
        sy_pg_text(&p, 6, NULL);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_UPDATE_RUN, &p, &r, "update run");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    if (changed == 0) {
        if (!fence)
            return sy_store_fail(s, SY_ENOENT, "update_run: no run %lld",
                                 (long long)run_id);
        return sy_pg_fenced(q, run_id, fence, SY_PG_NO_TASK, 0, "update_run");
    }
    return SY_OK;
}
