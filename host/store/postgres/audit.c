/*
 * store/postgres/audit.c -- the audit trail (store/audit.h) in
 * PostgreSQL: its statements, and the three operations.  Rows are only
 * added and deleted, so hosts writing at once need nothing beyond the
 * id's sequence.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"

const char *const sy_pg_audit_sql[SY_PG_SLOT_FIRST - SY_PG_AUDIT_FIRST] = {
    [SY_PG_ADD_AUDIT - SY_PG_AUDIT_FIRST] =
        "INSERT INTO audit (at, who, role, action, target, origin, ok, status, detail)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    [SY_PG_LIST_AUDIT - SY_PG_AUDIT_FIRST] =
        "SELECT id, at, who, role, action, target, origin, ok, status, detail FROM audit"
        " WHERE ($1::bigint = 0 OR at >= $1) AND ($2::bigint = 0 OR at < $2)"
        " AND ($3::bigint = 0 OR id < $3) AND ($4::text IS NULL OR who = $4)"
        " AND ($5::text IS NULL OR action = $5) ORDER BY id DESC LIMIT $6",
    [SY_PG_DELETE_AUDIT - SY_PG_AUDIT_FIRST] = "DELETE FROM audit WHERE at < $1",
};

int sy_pg_add_audit(sy_store *s, const sy_audit_record *r)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, r->at);
    sy_pg_text(&p, 2, r->who);
    sy_pg_text(&p, 3, r->role);
    sy_pg_text(&p, 4, r->action);
    sy_pg_text(&p, 5, r->target);
    sy_pg_text(&p, 6, r->origin);
    sy_pg_text(&p, 7, r->ok ? "true" : "false");
    sy_pg_int(&p, 8, r->status);
    sy_pg_text(&p, 9, r->detail);
    return sy_pg_run(q, SY_PG_ADD_AUDIT, &p, NULL, "add an audit row");
}

int sy_pg_list_audit(sy_store *s, const sy_audit_filter *f, sy_store_audit_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, f->since);
    sy_pg_int(&p, 2, f->until);
    sy_pg_int(&p, 3, f->before);
    sy_pg_text(&p, 4, f->who);
    sy_pg_text(&p, 5, f->action);
    sy_pg_int(&p, 6, (int64_t)f->limit);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LIST_AUDIT, &p, &r, "list the audit trail");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        const char *ok = sy_pg_col(r, i, 7);
        sy_audit_record a = {
            .id = sy_pg_col_int(r, i, 0),
            .at = sy_pg_col_int(r, i, 1),
            .who = sy_pg_col(r, i, 2),
            .role = sy_pg_col(r, i, 3),
            .action = sy_pg_col(r, i, 4),
            .target = sy_pg_col(r, i, 5),
            .origin = sy_pg_col(r, i, 6),
            .ok = ok && ok[0] == 't',
            .status = (int)sy_pg_col_int(r, i, 8),
            .detail = sy_pg_col(r, i, 9),
        };
        if (cb(arg, &a) != 0)
            break;
    }
    PQclear(r);
    return SY_OK;
}

int sy_pg_delete_audit(sy_store *s, int64_t before, size_t *deleted)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, before);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_DELETE_AUDIT, &p, &r, "delete old audit rows");
    if (status == SY_OK)
        *deleted = (size_t)sy_pg_changes(r);
    PQclear(r);
    return status;
}
