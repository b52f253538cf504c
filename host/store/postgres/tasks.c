/*
 * store/postgres/tasks.c -- batches, task rows and the event log in the
 * PostgreSQL store.
 *
 * A batch is one transaction: the scheduler's writes of a loop turn and
 * the dependents a completion made Ready commit together.  Each task-row
 * write is one prepared UPDATE; the first for a run in a batch checks the
 * run's claim and share-locks its row, the others check only the task's
 * attempt token (store.h, "Fencing").
 */
#include <string.h>

#include "store/postgres/internal.h"

/* --- batches ----------------------------------------------------------------- */

int sy_pg_begin(sy_store *s)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "begin: a batch is already open");
    q->held.valid = false;
    q->lost = false;
    sy_pg_holds_clear(q);
    sy_pg_grants_clear(q);
    sy_pg_returns_clear(q);
    sy_pg_keys_clear(&q->read_shared);
    int status = sy_pg_transaction_begin(q, false);
    q->batch = status == SY_OK;
    return status;
}

/* A failed commit leaves nothing open, so the handle is usable again. */
int sy_pg_commit(sy_store *s)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "commit: no batch is open");
    q->held.valid = false;
    int status = q->lost ? sy_store_fail(s, SY_EIO,
                                         "%s: commit: the connection was lost "
                                         "inside the batch; nothing of it was "
                                         "written", q->where)
                         : SY_OK;
    /* A give-back no take carried goes now; takes no start write carried
     * keep a row of their own; grants made for more than was taken keep
     * no more than their extra. */
    if (status == SY_OK)
        status = sy_pg_returns_commit(q);
    if (status == SY_OK)
        status = sy_pg_holds_to_rows(q);
    if (status == SY_OK)
        status = sy_pg_grants_trim(q);
    sy_pg_holds_clear(q);
    sy_pg_grants_clear(q);
    sy_pg_returns_clear(q);
    sy_pg_keys_clear(&q->read_shared);
    q->batch = false;
    q->lost = false;
    status = sy_pg_transaction_end(q, false, status);
    /* What the batch left unwritten is kept once it is committed.  A
     * failed commit may have landed; the host ends then (engine.c), its
     * rows with its leases, which count its grants whole till then. */
    if (status == SY_OK) {
        sy_pg_unwritten_commit(&q->unwritten);
    } else {
        sy_pg_unwritten_rollback(&q->unwritten);
        sy_pg_keys_clear(&q->hints); /* they saw what was not written */
    }
    return status;
}

void sy_pg_rollback(sy_store *s)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return;
    q->batch = false;
    q->lost = false;
    q->held.valid = false;
    sy_pg_holds_clear(q);
    sy_pg_grants_clear(q);
    sy_pg_returns_clear(q);
    sy_pg_keys_clear(&q->read_shared);
    sy_pg_keys_clear(&q->hints);
    sy_pg_unwritten_rollback(&q->unwritten);
    sy_pg_transaction_end(q, false, SY_ESTATE);
}

int sy_pg_update_task(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                      int64_t token, const sy_task_record *t)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "update_task: no batch is open");
    bool held = fence && q->held.valid && q->held.run_id == run_id &&
                q->held.epoch == fence->epoch &&
                strcmp(q->held.owner, fence->owner) == 0;
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, t->idx);
    sy_pg_int(&p, 3, (int)t->state);
    sy_pg_int(&p, 4, t->attempts);
    sy_pg_int(&p, 5, t->failures);
    sy_pg_int(&p, 6, t->recoveries);
    sy_pg_text(&p, 7, t->executor);
    sy_pg_text(&p, 8, t->error);
    sy_pg_text(&p, 9, t->output);
    sy_pg_int(&p, 10, t->ready_at);
    sy_pg_int(&p, 11, t->started);
    sy_pg_int(&p, 12, t->finished);
    sy_pg_text(&p, 13, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&p, 14, fence->epoch);
    else
        sy_pg_text(&p, 14, NULL);
    sy_pg_int(&p, 15, t->fence);
    sy_pg_int(&p, 16, token);
    sy_pg_text(&p, 17, t->waiting_for);
    /* The slots this write's attempt took in the batch, when it starts
     * that attempt (postgres/holds.c). */
    bool oom = false;
    const char *hold =
        q->holds.n ? sy_pg_hold_text(q, run_id, t->idx, -1, t->fence, &oom, NULL) : NULL;
    sy_pg_text(&p, 18, hold);
    if (oom)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    PGresult *r;
    int status = sy_pg_run(q, held ? SY_PG_UPDATE_TASK_HELD : SY_PG_UPDATE_TASK,
                           &p, &r, "update task");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    /* The cause of a write that changed nothing is looked up only then:
     * the common case costs no second statement. */
    if (changed == 0) {
        status = fence ? sy_pg_fenced(q, run_id, fence, t->idx, token,
                                      "update_task")
                       : SY_ENOENT;
        if (status == SY_ENOENT)
            return sy_store_fail(s, SY_ENOENT,
                                 "update_task: run %lld has no task %u",
                                 (long long)run_id, t->idx);
        return status;
    }
    size_t len = fence && !held ? strlen(fence->owner) : 0;
    if (len && len < sizeof q->held.owner) {
        q->held.valid = true;
        q->held.run_id = run_id;
        q->held.epoch = fence->epoch;
        memcpy(q->held.owner, fence->owner, len + 1);
    }
    return SY_OK;
}

/* --- reading task rows ---------------------------------------------------------- */

/* For listings that return nothing: no rows is fine for a run that exists
 * (a run without events), SY_ENOENT for one that does not. */
static int empty_listing(sy_store_pg *q, int64_t run_id)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RUN_EXISTS, &p, &r, "look up run");
    if (status != SY_OK)
        return status;
    bool exists = PQntuples(r) > 0;
    PQclear(r);
    return exists ? SY_OK
                  : sy_store_fail(&q->base, SY_ENOENT, "no run %lld",
                                  (long long)run_id);
}

static void row_to_task(const PGresult *r, int i, sy_task_record *t)
{
    t->idx = (uint32_t)sy_pg_col_int(r, i, 0);
    t->task_id = sy_pg_col(r, i, 1);
    t->ns = sy_pg_col(r, i, 2);
    t->state = (sy_task_state)sy_pg_col_int(r, i, 3);
    t->attempts = (uint32_t)sy_pg_col_int(r, i, 4);
    t->failures = (uint32_t)sy_pg_col_int(r, i, 5);
    t->recoveries = (uint32_t)sy_pg_col_int(r, i, 6);
    t->executor = sy_pg_col(r, i, 7);
    t->error = sy_pg_col(r, i, 8);
    t->output = sy_pg_col(r, i, 9);
    t->ready_at = sy_pg_col_int(r, i, 10);
    t->started = sy_pg_col_int(r, i, 11);
    t->finished = sy_pg_col_int(r, i, 12);
    t->fence = sy_pg_col_int(r, i, 13);
    t->host = sy_pg_col(r, i, 14);
    t->waiting_for = sy_pg_col(r, i, 15);
}

int sy_pg_list_tasks(sy_store *s, int64_t run_id, sy_store_task_cb cb,
                     void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LIST_TASKS, &p, &r, "list tasks");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        sy_task_record t;
        row_to_task(r, i, &t);
        if (cb(arg, &t) != 0)
            break;
    }
    PQclear(r);
    return rows ? SY_OK : empty_listing(q, run_id);
}

/* --- events ------------------------------------------------------------------ */

int sy_pg_add_event(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                    int64_t token, uint32_t idx, uint32_t attempt,
                    const char *kind, const char *detail, int64_t now)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, idx);
    sy_pg_int(&p, 3, attempt);
    sy_pg_text(&p, 4, kind);
    sy_pg_text(&p, 5, detail);
    sy_pg_int(&p, 6, now);
    sy_pg_text(&p, 7, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&p, 8, fence->epoch);
    else
        sy_pg_text(&p, 8, NULL);
    sy_pg_int(&p, 9, token);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_ADD_EVENT, &p, &r, "add event");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    if (changed == 0)
        return sy_pg_fenced(q, run_id, fence, idx, token, "add_event");
    return SY_OK;
}

int sy_pg_list_events(sy_store *s, int64_t run_id, sy_store_event_cb cb,
                      void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LIST_EVENTS, &p, &r, "list events");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++)
        if (cb(arg, (uint32_t)sy_pg_col_int(r, i, 0),
               (uint32_t)sy_pg_col_int(r, i, 1), sy_pg_col(r, i, 2),
               sy_pg_col(r, i, 3), sy_pg_col_int(r, i, 4)) != 0)
            break;
    PQclear(r);
    return rows ? SY_OK : empty_listing(q, run_id);
}
