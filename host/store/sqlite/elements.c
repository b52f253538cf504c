/*
 * store/sqlite/elements.c -- mapped tasks in the SQLite store: a map's
 * size, its element rows (made by their first write), and listing both.
 */
#include <string.h>

#include "store/sqlite/internal.h"

int sy_sqlite_put_map(sy_store *s, int64_t run_id, const sy_store_fence *fence, uint32_t idx,
                      int64_t size)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "put_map: no batch is open");
    sqlite3_stmt *st = q->st[SY_SQL_PUT_MAP];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, idx));
    keep(&rc, sqlite3_bind_int64(st, 3, size));
    keep(&rc, bind_fence(st, 4, fence));
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "record the map of task %u", idx);
    int status = sy_sqlite_step_done(q, st, "record a map");
    if (status != SY_OK)
        return status;
    /* Nothing inserted: there already (fine) or not this claim's run. */
    if (sqlite3_changes(q->db) == 0 && fence) {
        status = sy_sqlite_fenced(q, run_id, fence, SY_SQLITE_NO_TASK, 0, "put_map");
        return status == SY_ENOENT ? SY_OK : status;
    }
    return SY_OK;
}

static int bind_element(sqlite3_stmt *st, int64_t run_id, const sy_store_fence *fence,
                        int64_t token, int64_t elem, const sy_task_record *t,
                        const char *hold, size_t hold_len)
{
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, t->idx));
    keep(&rc, sqlite3_bind_int64(st, 3, elem));
    keep(&rc, sqlite3_bind_int(st, 4, (int)t->state));
    keep(&rc, sqlite3_bind_int64(st, 5, t->attempts));
    keep(&rc, sqlite3_bind_int64(st, 6, t->failures));
    keep(&rc, sqlite3_bind_int64(st, 7, t->recoveries));
    keep(&rc, bind_text(st, 8, t->executor));
    keep(&rc, bind_text(st, 9, t->error));
    keep(&rc, bind_text(st, 10, t->output));
    keep(&rc, sqlite3_bind_int64(st, 11, t->ready_at));
    keep(&rc, sqlite3_bind_int64(st, 12, t->started));
    keep(&rc, sqlite3_bind_int64(st, 13, t->finished));
    keep(&rc, bind_fence(st, 14, fence));
    keep(&rc, sqlite3_bind_int64(st, 16, t->fence));
    /* The insert names no ?17 (it has no token to check): binding one it
     * does not use is harmless. */
    keep(&rc, sqlite3_bind_int64(st, 17, token));
    keep(&rc, bind_text(st, 18, t->waiting_for));
    keep(&rc, hold ? sqlite3_bind_text(st, 19, hold, (int)hold_len, SQLITE_STATIC)
                   : sqlite3_bind_null(st, 19));
    return rc;
}

int sy_sqlite_update_element(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                             int64_t token, int64_t elem, const sy_task_record *t)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "update_element: no batch is open");
    sy_sqlite_hold *hold = NULL;
    const char *hold_text = NULL;
    if (q->holds.n > 0) {
        int status = sy_sqlite_hold_for(q, run_id, t->idx, elem, t->fence, &hold, &hold_text);
        if (status != SY_OK)
            return status;
    }
    /* Most writes are to rows already there; a first write (token 0)
     * finds none and inserts it. */
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = q->st[i ? SY_SQL_INSERT_ELEMENT : SY_SQL_UPDATE_ELEMENT];
        int rc = bind_element(st, run_id, fence, token, elem, t, hold_text,
                              hold ? hold->len : 0);
        if (rc != SQLITE_OK)
            return sy_sqlite_fail_reset(q, st, rc, "bind element %u[%lld]", t->idx,
                                        (long long)elem);
        int status = sy_sqlite_step_done(q, st, "write an element");
        if (status != SY_OK)
            return status;
        if (sqlite3_changes(q->db) > 0) {
            if (hold)
                hold->written = true;
            return SY_OK;
        }
        if (token != 0)
            break;
    }
    if (fence) {
        int status =
            sy_sqlite_fenced(q, run_id, fence, SY_SQLITE_NO_TASK, 0, "update_element");
        if (status != SY_ENOENT)
            return status;
        return sy_store_fail(s, SY_STORE_EFENCED,
                             "update_element: run %lld task %u[%lld] no longer holds attempt "
                             "token %lld",
                             (long long)run_id, t->idx, (long long)elem, (long long)token);
    }
    return sy_store_fail(s, SY_ENOENT, "update_element: run %lld has no map at task %u "
                         "with element %lld", (long long)run_id, t->idx, (long long)elem);
}

static void flush_map(sy_map_record *m, bool *have, sy_store_map_cb cb, void *arg, int *stop)
{
    if (*have && !*stop)
        *stop = cb(arg, m);
    *have = false;
}

int sy_sqlite_list_maps(sy_store *s, int64_t run_id, sy_store_map_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_MAPS];
    int status = sy_sqlite_not_reentered(q, st, "list_maps");
    if (status != SY_OK)
        return status;
    sy_map_record m;
    bool have = false;
    int stop = 0;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    while (!stop && rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t idx = (uint32_t)sqlite3_column_int64(st, 0);
        if (have && m.idx != idx)
            flush_map(&m, &have, cb, arg, &stop);
        if (!have) {
            memset(&m, 0, sizeof m);
            m.idx = idx;
            m.size = sqlite3_column_int64(st, 1);
            have = true;
        }
        int64_t n = sqlite3_column_int64(st, 3);
        int state = sqlite3_column_int(st, 2);
        if (sqlite3_column_type(st, 2) != SQLITE_NULL && state >= 0 &&
            state < SY_TASK_STATE_COUNT) {
            m.count[state] += n;
            m.created += n;
        }
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE && rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "list maps of run %lld", (long long)run_id);
    sqlite3_reset(st);
    flush_map(&m, &have, cb, arg, &stop);
    return SY_OK;
}

int sy_sqlite_list_elements(sy_store *s, int64_t run_id, uint32_t idx, bool open_only,
                            sy_store_element_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_ELEMENTS];
    int status = sy_sqlite_not_reentered(q, st, "list_elements");
    if (status != SY_OK)
        return status;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, idx));
    keep(&rc, sqlite3_bind_int(st, 3, open_only));
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_task_record t = {
            .idx = idx,
            .state = (sy_task_state)sqlite3_column_int(st, 1),
            .attempts = (uint32_t)sqlite3_column_int64(st, 2),
            .failures = (uint32_t)sqlite3_column_int64(st, 3),
            .recoveries = (uint32_t)sqlite3_column_int64(st, 4),
            .executor = col_text(st, 5),
            .error = col_text(st, 6),
            .output = col_text(st, 7),
            .ready_at = sqlite3_column_int64(st, 8),
            .started = sqlite3_column_int64(st, 9),
            .finished = sqlite3_column_int64(st, 10),
            .fence = sqlite3_column_int64(st, 11),
            .host = col_text(st, 12),
            .waiting_for = col_text(st, 13),
        };
        rc = cb(arg, sqlite3_column_int64(st, 0), &t) != 0 ? SQLITE_DONE : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list elements of run %lld",
                                    (long long)run_id);
    sqlite3_reset(st);
    return SY_OK;
}
