/*
 * store/sqlite/tasks.c -- batches, task rows and the event log in the
 * SQLite store.
 *
 * The scheduler writes every changed task row of a loop turn in one batch:
 * sy_sqlite_update_task is the hot path (hundreds of thousands of calls a
 * second in the benchmark), one bind of each column of a prepared UPDATE,
 * a step and a reset, and nothing allocated.
 */
#include <string.h>

#include "store/sqlite/internal.h"

/* --- batches ------------------------------------------------------------------- */

int sy_sqlite_begin(sy_store *s)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "begin: a batch is already open");
    sy_sqlite_holds_clear(q);
    sy_sqlite_counts_begin(q);
    return sy_sqlite_transaction_begin(q, false);
}

/* A failed commit rolls the batch back, so the handle is usable again. */
int sy_sqlite_commit(sy_store *s)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "commit: no batch is open");
    /* Takes no start write carried are slot rows, and the runs' counts
     * the batch changed are written, in the same commit. */
    int status = sy_sqlite_holds_flush(q);
    if (status == SY_OK)
        status = sy_sqlite_counts_flush(q);
    else
        sy_sqlite_counts_clear(q);
    status = sy_sqlite_transaction_end(q, false, status);
    /* A commit that failed undid the batch: its changes are in no row. */
    if (status != SY_OK)
        sy_sqlite_counts_clear(q);
    return status;
}

void sy_sqlite_rollback(sy_store *s)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sy_sqlite_holds_clear(q);
    sy_sqlite_counts_clear(q);
    if (in_tx(q))
        sy_sqlite_transaction_end(q, false, SY_ESTATE);
}

int sy_sqlite_update_task(sy_store *s, int64_t run_id,
                          const sy_store_fence *fence, int64_t token,
                          const sy_task_record *t)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "update_task: no batch is open");
    /* The batch's first write for a run checks its fence; the batch keeps
     * the write lock, so the later ones for the same run and claim (most
     * of a busy batch) take the statement without the run's check.  The
     * task's attempt token is checked on every write: it is on the row
     * being written, so it costs no lookup. */
    bool held = fence && q->held.valid && q->held.run_id == run_id &&
                q->held.epoch == fence->epoch &&
                strcmp(q->held.owner, fence->owner) == 0;
    sqlite3_stmt *st = q->st[held ? SY_SQL_UPDATE_TASK_HELD : SY_SQL_UPDATE_TASK];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, t->idx));
    keep(&rc, sqlite3_bind_int(st, 3, (int)t->state));
    keep(&rc, sqlite3_bind_int64(st, 4, t->attempts));
    keep(&rc, sqlite3_bind_int64(st, 5, t->failures));
    keep(&rc, sqlite3_bind_int64(st, 6, t->recoveries));
    keep(&rc, bind_text(st, 7, t->executor));
    keep(&rc, bind_text(st, 8, t->error));
    keep(&rc, bind_text(st, 9, t->output));
    keep(&rc, sqlite3_bind_int64(st, 10, t->ready_at));
    keep(&rc, sqlite3_bind_int64(st, 11, t->started));
    keep(&rc, sqlite3_bind_int64(st, 12, t->finished));
    if (held)
        keep(&rc, bind_text(st, 13, fence->owner));
    else
        keep(&rc, bind_fence(st, 13, fence));
    keep(&rc, sqlite3_bind_int64(st, 15, t->fence));
    keep(&rc, sqlite3_bind_int64(st, 16, token));
    keep(&rc, bind_text(st, 17, t->waiting_for));
    sy_sqlite_hold *hold = NULL;
    const char *hold_text = NULL;
    if (q->holds.n > 0) {
        int status = sy_sqlite_hold_for(q, run_id, t->idx, -1, t->fence, &hold, &hold_text);
        if (status != SY_OK) {
            sqlite3_reset(st);
            return status;
        }
    }
    keep(&rc, hold_text ? sqlite3_bind_text(st, 18, hold_text, (int)hold->len, SQLITE_STATIC)
                        : sqlite3_bind_null(st, 18));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "update task %u of run %lld",
                                    t->idx, (long long)run_id);
    sqlite3_reset(st);
    /* The cause of a write that changed nothing is looked up only then:
     * the common case costs no second statement. */
    if (sqlite3_changes(q->db) == 0) {
        int status = fence ? sy_sqlite_fenced(q, run_id, fence, t->idx, token,
                                              "update_task")
                           : SY_ENOENT;
        if (status == SY_ENOENT)
            return sy_store_fail(s, SY_ENOENT,
                                 "update_task: run %lld has no task %u",
                                 (long long)run_id, t->idx);
        return status;
    }
    if (hold)
        hold->written = true;
    size_t len = fence && !held ? strlen(fence->owner) : 0;
    if (len && len < sizeof q->held.owner) {
        q->held.valid = true;
        q->held.run_id = run_id;
        q->held.epoch = fence->epoch;
        memcpy(q->held.owner, fence->owner, len + 1);
    }
    return SY_OK;
}


/* --- reading task rows ------------------------------------------------------- */

static int run_exists(sy_store_sqlite *q, int64_t run_id, bool *exists)
{
    sqlite3_stmt *st = q->st[SY_SQL_RUN_EXISTS];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "look up run %lld",
                                    (long long)run_id);
    *exists = rc == SQLITE_ROW;
    sqlite3_reset(st);
    return SY_OK;
}

/* For listings that return nothing: no rows is fine for a run that exists
 * (a run without events), SY_ENOENT for one that does not. */
static int empty_listing(sy_store_sqlite *q, int64_t run_id)
{
    bool exists = false;
    int status = run_exists(q, run_id, &exists);
    if (status == SY_OK && !exists)
        return sy_store_fail(&q->base, SY_ENOENT, "no run %lld",
                             (long long)run_id);
    return status;
}

static void row_to_task(sqlite3_stmt *st, sy_task_record *t)
{
    t->idx = (uint32_t)sqlite3_column_int64(st, 0);
    t->task_id = col_text(st, 1);
    t->ns = col_text(st, 2);
    t->state = (sy_task_state)sqlite3_column_int(st, 3);
    t->attempts = (uint32_t)sqlite3_column_int64(st, 4);
    t->failures = (uint32_t)sqlite3_column_int64(st, 5);
    t->recoveries = (uint32_t)sqlite3_column_int64(st, 6);
    t->executor = col_text(st, 7);
    t->error = col_text(st, 8);
    t->output = col_text(st, 9);
    t->ready_at = sqlite3_column_int64(st, 10);
    t->started = sqlite3_column_int64(st, 11);
    t->finished = sqlite3_column_int64(st, 12);
    t->fence = sqlite3_column_int64(st, 13);
    t->host = col_text(st, 14);
    t->waiting_for = col_text(st, 15);
}

int sy_sqlite_list_tasks(sy_store *s, int64_t run_id, sy_store_task_cb cb,
                         void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_TASKS];
    int status = sy_sqlite_not_reentered(q, st, "list_tasks");
    if (status != SY_OK)
        return status;
    size_t rows = 0;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_task_record t;
        row_to_task(st, &t);
        rows++;
        rc = cb(arg, &t) != 0 ? SQLITE_DONE : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list tasks of run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    return rows ? SY_OK : empty_listing(q, run_id);
}

/* --- events ------------------------------------------------------------------ */

int sy_sqlite_add_event(sy_store *s, int64_t run_id,
                        const sy_store_fence *fence, int64_t token,
                        uint32_t idx, uint32_t attempt, const char *kind,
                        const char *detail, int64_t now)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_ADD_EVENT];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, idx));
    keep(&rc, sqlite3_bind_int64(st, 3, attempt));
    keep(&rc, bind_text(st, 4, kind));
    keep(&rc, bind_text(st, 5, detail));
    keep(&rc, sqlite3_bind_int64(st, 6, now));
    keep(&rc, bind_fence(st, 7, fence));
    keep(&rc, sqlite3_bind_int64(st, 9, token));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
        sqlite3_reset(st);
        return sy_store_fail(s, SY_ENOENT, "add_event: no run %lld",
                             (long long)run_id);
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "add event to run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0)
        return sy_sqlite_fenced(q, run_id, fence, idx, token, "add_event");
    return SY_OK;
}

int sy_sqlite_list_events(sy_store *s, int64_t run_id, sy_store_event_cb cb,
                          void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_EVENTS];
    int status = sy_sqlite_not_reentered(q, st, "list_events");
    if (status != SY_OK)
        return status;
    size_t rows = 0;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rows++;
        rc = cb(arg, (uint32_t)sqlite3_column_int64(st, 0),
                (uint32_t)sqlite3_column_int64(st, 1), col_text(st, 2),
                col_text(st, 3), sqlite3_column_int64(st, 4)) != 0
                 ? SQLITE_DONE
                 : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list events of run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    return rows ? SY_OK : empty_listing(q, run_id);
}
