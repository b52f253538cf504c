/*
 * store/sqlite/processes.c -- the process groups attempts run
 * (sy_store_record_process, sy_store_list_processes) in SQLite.
 */
#include "store/sqlite/internal.h"

int sy_sqlite_record_process(sy_store *s, int64_t run_id,
                             const sy_store_fence *fence, int64_t token,
                             const sy_process_record *p)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_RECORD_PROCESS];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, p->idx));
    keep(&rc, sqlite3_bind_int64(st, 3, p->attempt));
    keep(&rc, sqlite3_bind_int64(st, 4, p->pgid));
    keep(&rc, bind_text(st, 5, fence ? fence->owner : p->host));
    keep(&rc, bind_text(st, 6, p->machine));
    keep(&rc, bind_text(st, 7, p->boot_id));
    keep(&rc, sqlite3_bind_int64(st, 8, (int64_t)p->start_time));
    keep(&rc, sqlite3_bind_int64(st, 9, p->recorded));
    keep(&rc, bind_fence(st, 10, fence));
    keep(&rc, sqlite3_bind_int64(st, 12, token));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "record process group %lld of run %lld",
                                    (long long)p->pgid, (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0)
        return sy_sqlite_fenced(q, run_id, fence, p->idx, token, "record_process");
    return SY_OK;
}

int sy_sqlite_list_processes(sy_store *s, int64_t run_id,
                             int (*cb)(void *arg, const sy_process_record *p),
                             void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_PROCESSES];
    int status = sy_sqlite_not_reentered(q, st, "list_processes");
    if (status != SY_OK)
        return status;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_process_record p = {
            .idx = (uint32_t)sqlite3_column_int64(st, 0),
            .attempt = (uint32_t)sqlite3_column_int64(st, 1),
            .host = col_text(st, 2),
            .machine = col_text(st, 3),
            .boot_id = col_text(st, 4),
            .pgid = sqlite3_column_int64(st, 5),
            .start_time = (uint64_t)sqlite3_column_int64(st, 6),
            .recorded = sqlite3_column_int64(st, 7),
        };
        rc = cb(arg, &p) != 0 ? SQLITE_DONE : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list processes of run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    return SY_OK;
}
