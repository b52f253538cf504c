/* store/postgres/preempt.c -- cancel requests on slot rows
 * (store/preempt.h) in the PostgreSQL store.  The request is written
 * under the key's slot lock when this batch holds it (it was just taken
 * in sy_pg_take_slots); two hosts asking at once may each mark a holder,
 * which cancels one more than needed and never exceeds the limit.  Rare:
 * the statements are sent unprepared. */
#include "store/postgres/internal.h"

/* The live condition of slot row `s` at `now` (store/slots.h). */
#define LIVE(now)                                                             \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner" \
    " AND r.lease_epoch = s.epoch AND r.lease_until > " now ")"

int sy_pg_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                         bool *asked)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "request_slot_cancel: no batch is open");
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, now);
    sy_pg_text(&p, 3, why);
    PGresult *r;
    int status = sy_pg_query(
        q,
        "UPDATE slots SET cancel_why = $3 WHERE (key, run_id, idx, elem, token) = (SELECT"
        " s.key, s.run_id, s.idx, s.elem, s.token FROM slots s WHERE s.key = $1 AND"
        LIVE("$2::bigint") " ORDER BY s.taken, s.run_id, s.idx, s.elem LIMIT 1) AND NOT"
        " EXISTS (SELECT 1 FROM slots s WHERE s.key = $1 AND s.cancel_why IS NOT NULL AND"
        LIVE("$2::bigint") ")",
        &p, &r, "request a cancel");
    *asked = status == SY_OK && sy_pg_changes(r) == 1;
    PQclear(r);
    return status;
}

int sy_pg_list_cancel_requests(sy_store *s, const char *owner, int64_t now,
                               int (*cb)(void *arg, const sy_cancel_request *r), void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, owner);
    sy_pg_int(&p, 2, now);
    PGresult *r;
    int status = sy_pg_query(q,
                             "SELECT s.run_id, s.idx, s.elem, s.token, s.key, s.cancel_why"
                             " FROM slots s WHERE s.owner = $1 AND s.cancel_why IS NOT NULL"
                             " AND" LIVE("$2::bigint") " ORDER BY s.taken",
                             &p, &r, "list cancel requests");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_cancel_request rec = {
            .holder = {sy_pg_col_int(r, i, 0), (uint32_t)sy_pg_col_int(r, i, 1),
                       sy_pg_col_int(r, i, 2), sy_pg_col_int(r, i, 3)},
            .key = sy_pg_col(r, i, 4),
            .why = sy_pg_col(r, i, 5),
        };
        if (cb(arg, &rec) != 0)
            break;
    }
    PQclear(r);
    return status;
}
