/*
 * store/sqlite/audit.c -- the audit trail (store/audit.h) in SQLite.  The
 * statements are prepared per call: changes come at an operator's pace,
 * and the listing's filters are parameters of one statement.
 */
#include "store/sqlite/internal.h"

/* Prepares `sql`; SQLITE_OK or its code. */
static int prepare(sy_store_sqlite *q, const char *sql, sqlite3_stmt **st)
{
    *st = NULL;
    return sqlite3_prepare_v2(q->db, sql, -1, st, NULL);
}

int sy_sqlite_add_audit(sy_store *s, const sy_audit_record *r)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int rc = prepare(q,
                     "INSERT INTO audit (at, who, role, action, target, origin, ok, status,"
                     " detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                     &st);
    if (rc == SQLITE_OK) {
        rc = sqlite3_bind_int64(st, 1, r->at);
        keep(&rc, bind_text(st, 2, r->who));
        keep(&rc, bind_text(st, 3, r->role));
        keep(&rc, bind_text(st, 4, r->action));
        keep(&rc, bind_text(st, 5, r->target));
        keep(&rc, bind_text(st, 6, r->origin));
        keep(&rc, sqlite3_bind_int(st, 7, r->ok));
        keep(&rc, sqlite3_bind_int(st, 8, r->status));
        keep(&rc, bind_text(st, 9, r->detail));
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "add an audit row");
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_list_audit(sy_store *s, const sy_audit_filter *f, sy_store_audit_cb cb,
                         void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int rc = prepare(q,
                     "SELECT id, at, who, role, action, target, origin, ok, status, detail"
                     " FROM audit WHERE (?1 = 0 OR at >= ?1) AND (?2 = 0 OR at < ?2)"
                     " AND (?3 = 0 OR id < ?3) AND (?4 IS NULL OR who = ?4)"
                     " AND (?5 IS NULL OR action = ?5) ORDER BY id DESC LIMIT ?6",
                     &st);
    if (rc == SQLITE_OK) {
        rc = sqlite3_bind_int64(st, 1, f->since);
        keep(&rc, sqlite3_bind_int64(st, 2, f->until));
        keep(&rc, sqlite3_bind_int64(st, 3, f->before));
        keep(&rc, bind_text(st, 4, f->who));
        keep(&rc, bind_text(st, 5, f->action));
        keep(&rc, sqlite3_bind_int64(st, 6, (int64_t)f->limit));
    }
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_audit_record r = {
            .id = sqlite3_column_int64(st, 0),
            .at = sqlite3_column_int64(st, 1),
            .who = (const char *)sqlite3_column_text(st, 2),
            .role = (const char *)sqlite3_column_text(st, 3),
            .action = (const char *)sqlite3_column_text(st, 4),
            .target = (const char *)sqlite3_column_text(st, 5),
            .origin = (const char *)sqlite3_column_text(st, 6),
            .ok = sqlite3_column_int(st, 7) != 0,
            .status = sqlite3_column_int(st, 8),
            .detail = (const char *)sqlite3_column_text(st, 9),
        };
        if (cb(arg, &r) != 0) {
            rc = SQLITE_DONE;
            break;
        }
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "list the audit trail");
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_delete_audit(sy_store *s, int64_t before, size_t *deleted)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int rc = prepare(q, "DELETE FROM audit WHERE at < ?1", &st);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 1, before);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "delete old audit rows");
    if (status == SY_OK)
        *deleted = (size_t)sqlite3_changes(q->db);
    sqlite3_finalize(st);
    return status;
}
