/*
 * store/sqlite/runs.c -- definitions and run rows in the SQLite store:
 * storing a definition, creating a run with its task rows, reading and
 * listing runs, and a run's state changes inside a batch.
 */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/util.h"
#include "store/sqlite/internal.h"

/* --- definitions --------------------------------------------------------------- */

int sy_sqlite_put_definition(sy_store *s, const char *hash, const char *tenant,
                             const char *workflow, const char *definition)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_PUT_DEF];
    int rc = bind_text(st, 1, hash);
    keep(&rc, bind_text(st, 2, tenant));
    keep(&rc, bind_text(st, 3, workflow));
    keep(&rc, bind_text(st, 4, definition));
    keep(&rc, sqlite3_bind_int64(st, 5, sy_clock_now_ms()));
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "store definition %s", hash);
    return sy_sqlite_step_done(q, st, "store definition");
}

int sy_sqlite_get_definition(sy_store *s, const char *hash, char **out)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_GET_DEF];
    int rc = bind_text(st, 1, hash);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(s, SY_ENOENT, "no definition stored under hash %s",
                             hash);
    }
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "read definition %s", hash);
    *out = strdup(col_text(st, 0));
    sqlite3_reset(st);
    return *out ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
}

/* --- runs ------------------------------------------------------------------------ */

static int insert_run(sy_store_sqlite *q, const char *hash, const char *tenant,
                      const char *workflow, const char *context, size_t n,
                      int64_t now, int64_t *run_id)
{
    sqlite3_stmt *st = q->st[SY_SQL_INSERT_RUN];
    int rc = bind_text(st, 1, hash);
    keep(&rc, bind_text(st, 2, tenant));
    keep(&rc, bind_text(st, 3, workflow));
    keep(&rc, bind_text(st, 4, context));
    keep(&rc, sqlite3_bind_int64(st, 5, now));
    keep(&rc, sqlite3_bind_int64(st, 6, (int64_t)n));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
        sqlite3_reset(st);
        return sy_store_fail(&q->base, SY_ENOENT,
                             "create_run: no definition stored under hash %s",
                             hash);
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "create run of %s", workflow);
    sqlite3_reset(st);
    *run_id = sqlite3_last_insert_rowid(q->db);
    return SY_OK;
}

/* Binds task i's row as row `r` of st (four parameters a row). */
static int bind_task(sqlite3_stmt *st, int r, int64_t run_id, size_t i,
                     const char *const *task_ids, const char *const *ns)
{
    int rc = sqlite3_bind_int64(st, 4 * r + 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 4 * r + 2, (int64_t)i));
    keep(&rc, bind_text(st, 4 * r + 3, task_ids[i]));
    keep(&rc, bind_text(st, 4 * r + 4, ns[i]));
    return rc;
}

/* SY_SQL_TASK_ROWS rows a statement while that many are left, then one. */
static int insert_tasks(sy_store_sqlite *q, int64_t run_id, size_t n,
                        const char *const *task_ids, const char *const *ns)
{
    size_t i = 0;
    while (i < n) {
        bool many = n - i >= SY_SQL_TASK_ROWS;
        sqlite3_stmt *st = q->st[many ? SY_SQL_INSERT_TASKS : SY_SQL_INSERT_TASK];
        size_t rows = many ? SY_SQL_TASK_ROWS : 1;
        int rc = SQLITE_OK;
        for (size_t r = 0; r < rows && rc == SQLITE_OK; r++)
            rc = bind_task(st, (int)r, run_id, i + r, task_ids, ns);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            return sy_sqlite_fail_reset(q, st, rc,
                                        "create tasks %zu to %zu (%s...) of run %lld",
                                        i + 1, i + rows, task_ids[i], (long long)run_id);
        sqlite3_reset(st);
        i += rows;
    }
    return SY_OK;
}

int sy_sqlite_insert_run(sy_store_sqlite *q, const char *hash, const char *tenant,
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
int sy_sqlite_insert_new_run(sy_store_sqlite *q, const sy_store_new_run *r, int64_t now,
                             int64_t *run_id)
{
    int status = sy_sqlite_insert_run(q, r->hash, r->tenant, r->workflow, r->context, r->n_tasks,
                                      r->task_ids, r->ns, now, run_id);
    if (status != SY_OK || r->priority == 0)
        return status;
    sqlite3_stmt *st = q->st[SY_SQL_SET_RUN_PRIORITY];
    int rc = sqlite3_bind_int64(st, 1, *run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, r->priority));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "set the priority of run %lld",
                                    (long long)*run_id);
    sqlite3_reset(st);
    return SY_OK;
}

/* Whether a definition is stored under `hash`: SY_OK, SY_ENOENT (with the
 * message insert_run gives when the foreign key refuses), or the error. */
static int has_definition(sy_store_sqlite *q, const char *hash)
{
    sqlite3_stmt *st = q->st[SY_SQL_HAS_DEF];
    int rc = bind_text(st, 1, hash);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "read definition %s", hash);
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return sy_store_fail(&q->base, SY_ENOENT,
                             "create_run: no definition stored under hash %s", hash);
    return SY_OK;
}

/* Foreign keys are off for this one transaction (the pragma does nothing
 * inside one): each task row references the run row inserted just before
 * it, and checking that a million times was 0.2 s of the 1.6 s a million
 * rows take.  The one reference that can fail, the run's definition, is
 * checked here instead. */
int sy_sqlite_create_run(sy_store *s, const sy_store_new_run *r, int64_t now,
                         int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE,
                             "create_run: called inside a batch; commit first");
    int64_t id = 0;
    int status = sy_sqlite_exec(q, "PRAGMA foreign_keys = OFF", "foreign keys off");
    if (status != SY_OK)
        return status;
    status = sy_sqlite_transaction_begin(q, false);
    if (status == SY_OK) {
        status = has_definition(q, r->hash);
        if (status == SY_OK)
            status = sy_sqlite_insert_new_run(q, r, now, &id);
        status = sy_sqlite_transaction_end(q, false, status);
    }
    if (status == SY_OK && run_id)
        *run_id = id;
    /* Failing (out of memory) the run still stands, with its id. */
    int on = sy_sqlite_exec(q, "PRAGMA foreign_keys = ON", "foreign keys on");
    return status == SY_OK ? on : status;
}

/* The row's strings are borrowed from the statement. */
static void row_to_run(sqlite3_stmt *st, sy_run_record *r)
{
    r->id = sqlite3_column_int64(st, 0);
    r->workflow = col_text(st, 1);
    r->tenant = col_text(st, 2);
    r->hash = col_text(st, 3);
    r->state = (sy_run_state)sqlite3_column_int(st, 4);
    r->context = col_text(st, 5);
    r->owner = col_text(st, 6);
    r->lease_until = sqlite3_column_int64(st, 7);
    r->cancel_requested = sqlite3_column_int(st, 8) != 0;
    r->created = sqlite3_column_int64(st, 9);
    r->started = sqlite3_column_int64(st, 10);
    r->finished = sqlite3_column_int64(st, 11);
    r->error = col_text(st, 12);
    r->n_tasks = (uint32_t)sqlite3_column_int64(st, 13);
    r->lease_epoch = sqlite3_column_int64(st, 14);
    r->no_cache = sqlite3_column_int(st, 15) != 0;
    r->priority = (int32_t)sqlite3_column_int64(st, 16);
}

/* Replaces each borrowed string by an owned copy; false when out of
 * memory (the copies made so far stay owned, the rest become NULL). */
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

int sy_sqlite_get_run(sy_store *s, int64_t run_id, sy_run_record *out)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_GET_RUN];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(s, SY_ENOENT, "no run %lld", (long long)run_id);
    }
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "read run %lld",
                                    (long long)run_id);
    row_to_run(st, out);
    char **strs[] = {&out->workflow, &out->tenant, &out->hash,
                     &out->context, &out->owner,   &out->error};
    bool ok = own_strings(strs, SY_ARRAY_LEN(strs));
    sqlite3_reset(st);
    if (ok)
        return SY_OK;
    sy_run_record_clear(out);
    return sy_store_fail(s, SY_ENOMEM, "out of memory");
}

int sy_sqlite_list_runs(sy_store *s, size_t limit, sy_store_run_cb cb,
                        void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_RUNS];
    int status = sy_sqlite_not_reentered(q, st, "list_runs");
    if (status != SY_OK)
        return status;
    int64_t lim = limit == 0 || limit > INT64_MAX ? -1 : (int64_t)limit;
    int rc = sqlite3_bind_int64(st, 1, lim);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_run_record r;
        row_to_run(st, &r);
        if (cb(arg, &r) != 0)
            rc = SQLITE_DONE;
        else
            rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list runs");
    sqlite3_reset(st);
    return SY_OK;
}

/* The second half of sy_sqlite_fenced: the run is held by the fence's
 * claim, so a write that changed nothing was refused by the task's
 * attempt token, or found no row. */
static int task_fenced(sy_store_sqlite *q, int64_t run_id, uint32_t idx,
                       int64_t token, const char *what)
{
    sqlite3_stmt *st = q->st[SY_SQL_TASK_TOKEN];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, idx));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(&q->base, SY_ENOENT, "%s: run %lld has no task %u",
                             what, (long long)run_id, idx);
    }
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "look up task %u of run %lld",
                                    idx, (long long)run_id);
    int64_t held = sqlite3_column_int64(st, 0);
    const char *host = col_text(st, 1);
    int status = held == token
                     ? sy_store_fail(&q->base, SY_ENOENT, "%s: no such row", what)
                     : sy_store_fail(&q->base, SY_STORE_EFENCED,
                                     "%s: task %u of run %lld is at attempt "
                                     "token %lld (started by %s), not %lld: "
                                     "not written", what, idx,
                                     (long long)run_id, (long long)held,
                                     host ? host : "no host",
                                     (long long)token);
    sqlite3_reset(st);
    return status;
}

int sy_sqlite_fenced(sy_store_sqlite *q, int64_t run_id,
                     const sy_store_fence *fence, uint32_t idx, int64_t token,
                     const char *what)
{
    sqlite3_stmt *st = q->st[SY_SQL_RUN_HOLDER];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE || (rc == SQLITE_ROW && !fence)) {
        sqlite3_reset(st);
        return sy_store_fail(&q->base, SY_ENOENT, "%s: no %s",
                             what, rc == SQLITE_DONE ? "such run" : "such row");
    }
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "look up run %lld",
                                    (long long)run_id);
    const char *owner = col_text(st, 0);
    int64_t epoch = sqlite3_column_int64(st, 1);
    int status = sy_store_fence_check(&q->base, what, run_id, owner, epoch, fence);
    bool holds = status == SY_OK;
    sqlite3_reset(st);
    if (holds && idx != SY_SQLITE_NO_TASK)
        return task_fenced(q, run_id, idx, token, what);
    if (holds)
        return sy_store_fail(&q->base, SY_ENOENT, "%s: no such row", what);
    return status;
}

int sy_sqlite_delete_finished(sy_store *s, int64_t before, size_t max,
                              size_t *deleted)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE,
                             "delete_finished: called inside a batch");
    sqlite3_stmt *st = q->st[SY_SQL_DELETE_FINISHED];
    int rc = sqlite3_bind_int64(st, 1, before);
    keep(&rc, sqlite3_bind_int64(st, 2, (int64_t)max));
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "delete finished runs");
    int status = sy_sqlite_step_done(q, st, "delete finished runs");
    if (status == SY_OK)
        *deleted = (size_t)sqlite3_changes(q->db);
    return status;
}

int sy_sqlite_update_run(sy_store *s, int64_t run_id,
                         const sy_store_fence *fence, sy_run_state state,
                         const char *error, int64_t now)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "update_run: no batch is open");
    sqlite3_stmt *st = q->st[SY_SQL_UPDATE_RUN];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int(st, 2, (int)state));
    keep(&rc, bind_text(st, 3, error));
    keep(&rc, sqlite3_bind_int64(st, 4, now));
    keep(&rc, bind_fence(st, 5, fence));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "update run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0) {
        if (!fence)
            return sy_store_fail(s, SY_ENOENT, "update_run: no run %lld",
                                 (long long)run_id);
        return sy_sqlite_fenced(q, run_id, fence, SY_SQLITE_NO_TASK, 0,
                                "update_run");
    }
    return SY_OK;
}
