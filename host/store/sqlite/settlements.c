/* What triggers made of named events, in the SQLite store
 * (store/named_events.h, sy_store_event_settlements). */
#include "store/named_driver.h"
#include "store/sqlite/internal.h"

int sy_sqlite_event_settlements(sy_store *s, int64_t from, int64_t to,
                                sy_event_settlement_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    /* trigger_items_item (source, item) finds them without a scan. */
    int rc = sqlite3_prepare_v2(q->db,
                                "SELECT i.item, i.trigger_key, f.run_id, i.reason"
                                " FROM trigger_items i LEFT JOIN trigger_firings f"
                                " ON f.id = i.firing WHERE i.source = 1"
                                " AND i.item BETWEEN ?1 AND ?2 ORDER BY i.item, i.trigger_key",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 1, from);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 2, to);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(st);
        return sy_sqlite_fail(q, rc, "list what triggers made of events");
    }
    int status = SY_OK;
    while (status == SY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_event_settlement e = {
            .event_id = sqlite3_column_int64(st, 0),
            .trigger = col_text(st, 1),
            .run_id = sqlite3_column_int64(st, 2),
            .reason = col_text(st, 3),
        };
        status = cb(arg, &e);
    }
    if (status == SY_OK && rc != SQLITE_DONE)
        status = sy_sqlite_fail(q, rc, "list what triggers made of events");
    sqlite3_finalize(st);
    return status;
}
