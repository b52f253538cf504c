/* store/sqlite/preempt.c -- cancel requests on slot rows (store/preempt.h)
 * in the SQLite store.  Rare: the statements are prepared per call. */
#include "store/sqlite/internal.h"

int sy_sqlite_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                             bool *asked)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "request_slot_cancel: no batch is open");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        q->db,
        "UPDATE slots SET cancel_why = ?3 WHERE (key, run_id, idx, elem,"
        " token) = (SELECT s.key, s.run_id, s.idx, s.elem, s.token FROM slots s WHERE"
        " s.key = ?1 AND" SY_SQLITE_SLOT_LIVE("?2") " ORDER BY s.taken, s.run_id, s.idx,"
        " s.elem LIMIT 1) AND NOT EXISTS (SELECT 1 FROM slots s WHERE s.key = ?1 AND"
        " s.cancel_why IS NOT NULL AND" SY_SQLITE_SLOT_LIVE("?2") ")",
        -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 1, key);
    keep(&rc, sqlite3_bind_int64(st, 2, now));
    keep(&rc, bind_text(st, 3, why));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "request a cancel");
    *asked = status == SY_OK && sqlite3_changes(q->db) == 1;
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_list_cancel_requests(sy_store *s, const char *owner, int64_t now,
                                   int (*cb)(void *arg, const sy_cancel_request *r),
                                   void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db,
                                "SELECT s.run_id, s.idx, s.elem, s.token, s.key, s.cancel_why"
                                " FROM slots s WHERE s.owner = ?1 AND s.cancel_why IS NOT NULL"
                                " AND" SY_SQLITE_SLOT_LIVE("?2") " ORDER BY s.taken",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 1, owner);
    keep(&rc, sqlite3_bind_int64(st, 2, now));
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        sy_cancel_request r = {
            .holder = {sqlite3_column_int64(st, 0), (uint32_t)sqlite3_column_int64(st, 1),
                       sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)},
            .key = col_text(st, 4),
            .why = col_text(st, 5),
        };
        if (cb(arg, &r) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "list cancel requests");
    sqlite3_finalize(st);
    return status;
}
