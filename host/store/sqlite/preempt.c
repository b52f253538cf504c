/* store/sqlite/preempt.c -- cancel requests on slot holders
 * (store/preempt.h) in the SQLite store: rows of slot_cancels, naming the
 * holder (in a slot row or an attempt's row: slot_holders).  A request
 * counts while its holder still holds the key under a live claim.  Rare:
 * the statements are prepared per call. */
#include "store/sqlite/internal.h"

int sy_sqlite_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                             bool *asked)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "request_slot_cancel: no batch is open");
    /* The batch's takes are holders too: as rows, the request sees them
     * (rare: a full key whose strategy cancels). */
    int status = sy_sqlite_holds_to_rows(q);
    if (status != SY_OK)
        return status;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        q->db,
        "INSERT INTO slot_cancels (key, run_id, idx, elem, token, owner, epoch, taken, why)"
        " SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.owner, s.epoch, s.taken, ?3"
        " FROM slot_holders s WHERE s.key = ?1 AND" SY_SQLITE_SLOT_LIVE("?2")
        " AND NOT EXISTS (SELECT 1 FROM slot_cancels s JOIN slot_holders h ON"
        " h.run_id = s.run_id AND h.idx = s.idx AND h.elem = s.elem AND h.token = s.token"
        " AND h.key = s.key WHERE s.key = ?1 AND" SY_SQLITE_SLOT_LIVE("?2") ")"
        " ORDER BY s.taken, s.run_id, s.idx, s.elem LIMIT 1"
        " ON CONFLICT DO UPDATE SET why = excluded.why",
        -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 1, key);
    keep(&rc, sqlite3_bind_int64(st, 2, now));
    keep(&rc, bind_text(st, 3, why));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "request a cancel");
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
                                "SELECT s.run_id, s.idx, s.elem, s.token, s.key, s.why"
                                " FROM slot_cancels s WHERE s.owner = ?1 AND"
                                SY_SQLITE_SLOT_LIVE("?2") " AND (EXISTS (SELECT 1 FROM"
                                " tasks t WHERE t.run_id = s.run_id AND t.idx = s.idx AND"
                                " s.elem = -1 AND t.state = 2 AND t.fence = s.token AND"
                                " t.hold IS NOT NULL) OR EXISTS (SELECT 1 FROM task_elements t"
                                " WHERE t.run_id = s.run_id AND t.idx = s.idx AND"
                                " t.elem = s.elem AND t.state = 2 AND t.fence = s.token AND"
                                " t.hold IS NOT NULL) OR EXISTS (SELECT 1 FROM slots h WHERE"
                                " h.key = s.key AND h.run_id = s.run_id AND h.idx = s.idx AND"
                                " h.elem = s.elem AND h.token = s.token)) ORDER BY s.taken",
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
