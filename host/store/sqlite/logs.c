/*
 * store/sqlite/logs.c -- attempt logs, and reopening a finished run so
 * that `switchyard retry` can run what failed in it again.
 */
#include "store/sqlite/internal.h"

int sy_sqlite_add_log(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                      int64_t token, const sy_log_record *log)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_ADD_LOG];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, log->idx));
    keep(&rc, sqlite3_bind_int64(st, 3, log->attempt));
    keep(&rc, bind_text(st, 4, log->stream));
    keep(&rc, bind_text(st, 5, log->text));
    keep(&rc, sqlite3_bind_int64(st, 6, log->size));
    keep(&rc, sqlite3_bind_int64(st, 7, log->dropped));
    keep(&rc, sqlite3_bind_int64(st, 8, log->at));
    keep(&rc, bind_fence(st, 9, fence));
    keep(&rc, sqlite3_bind_int64(st, 11, token));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "add a log to run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0)
        return sy_sqlite_fenced(q, run_id, fence, log->idx, token, "add_log");
    return SY_OK;
}

static int run_state(sy_store_sqlite *q, int64_t run_id, int *state)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "SELECT state FROM runs WHERE id = ?1",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = SY_OK;
    if (rc == SQLITE_ROW)
        *state = sqlite3_column_int(st, 0);
    else if (rc == SQLITE_DONE)
        status = sy_store_fail(&q->base, SY_ENOENT, "no run %lld",
                               (long long)run_id);
    else
        status = sy_sqlite_fail(q, rc, "look up run %lld", (long long)run_id);
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_list_logs(sy_store *s, int64_t run_id, int64_t since,
                        sy_store_log_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    int state = 0;
    int status = run_state(q, run_id, &state);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_LOGS];
    if (status == SY_OK)
        status = sy_sqlite_not_reentered(q, st, "list_logs");
    if (status != SY_OK)
        return status;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, since));
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_log_record log = {
            .idx = (uint32_t)sqlite3_column_int64(st, 0),
            .attempt = (uint32_t)sqlite3_column_int64(st, 1),
            .stream = col_text(st, 2),
            .text = col_text(st, 3),
            .size = sqlite3_column_int64(st, 4),
            .dropped = sqlite3_column_int64(st, 5),
            .at = sqlite3_column_int64(st, 6),
        };
        rc = cb(arg, &log) != 0 ? SQLITE_DONE : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list logs of run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    return SY_OK;
}

static int reopen_in_tx(sy_store_sqlite *q, int64_t run_id,
                        const uint32_t *idx, size_t n, bool no_cache)
{
    int state = 0;
    int status = run_state(q, run_id, &state);
    if (status != SY_OK)
        return status;
    sqlite3_stmt *st = q->st[SY_SQL_REOPEN_RUN];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int(st, 2, no_cache));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "reopen run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0)
        return sy_store_fail(&q->base, SY_ESTATE,
                             "run %lld is %s, not finished", (long long)run_id,
                             sy_run_state_name((sy_run_state)state));
    st = q->st[SY_SQL_REOPEN_TASK];
    for (size_t i = 0; i < n; i++) {
        rc = sqlite3_bind_int64(st, 1, run_id);
        keep(&rc, sqlite3_bind_int64(st, 2, idx[i]));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            return sy_sqlite_fail_reset(q, st, rc, "reopen task %u of run %lld",
                                        idx[i], (long long)run_id);
        sqlite3_reset(st);
        if (sqlite3_changes(q->db) == 0)
            return sy_store_fail(&q->base, SY_EINVAL,
                                 "reopen_run: run %lld has no task %u",
                                 (long long)run_id, idx[i]);
        for (int k = SY_SQL_REOPEN_MAP; k <= SY_SQL_REOPEN_ELEMENTS; k++) {
            sqlite3_stmt *del = q->st[k];
            rc = sqlite3_bind_int64(del, 1, run_id);
            keep(&rc, sqlite3_bind_int64(del, 2, idx[i]));
            if (rc == SQLITE_OK)
                rc = sqlite3_step(del);
            if (rc != SQLITE_DONE)
                return sy_sqlite_fail_reset(q, del, rc, "reopen the map of task %u of "
                                            "run %lld", idx[i], (long long)run_id);
            sqlite3_reset(del);
        }
    }
    return SY_OK;
}

int sy_sqlite_reopen_run(sy_store *s, int64_t run_id, const uint32_t *idx,
                         size_t n, bool no_cache, int64_t now)
{
    (void)now;
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "reopen_run: inside a batch");
    int status = sy_sqlite_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    return sy_sqlite_transaction_end(q, false, reopen_in_tx(q, run_id, idx, n, no_cache));
}
