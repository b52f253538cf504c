/* store/postgres/preempt.c -- cancel requests on slot holders
 * (store/preempt.h) in the PostgreSQL store: rows of slot_cancels, naming
 * the holder (in a slot row or an attempt's row: slot_holders).  A
 * request counts while its holder still holds the key under a live
 * claim.  It is written under the key's slot lock when this batch holds
 * it; two hosts asking at once may each mark a holder, which cancels one
 * more than needed and never exceeds the limit.  Rare: the statements
 * are sent unprepared. */
#include "store/postgres/internal.h"

/* The live condition of holder `s` at `now` (store/slots.h). */
#define LIVE(s, now)                                                          \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = " s ".run_id AND r.owner = "  \
    s ".owner AND r.lease_epoch = " s ".epoch AND r.lease_until > " now ")"

/* Holder `s` (a slot_cancels row) still holds its key. */
#define STILL_HELD(s)                                                         \
    " EXISTS (SELECT 1 FROM slot_holders h WHERE h.key = " s ".key AND"        \
    " h.run_id = " s ".run_id AND h.idx = " s ".idx AND h.elem = " s ".elem AND" \
    " h.token = " s ".token)"

int sy_pg_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                              bool *asked)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "request_slot_cancel: no batch is open");
    /* The batch's takes are holders too: as rows, the request sees them
     * (rare: a full key whose strategy cancels). */
    int status = sy_pg_holds_to_rows(q);
    if (status != SY_OK)
        return status;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, now);
    sy_pg_text(&p, 3, why);
    PGresult *r;
    status = sy_pg_query(
        q,
        "INSERT INTO slot_cancels (key, run_id, idx, elem, token, owner, epoch, taken, why)"
        " SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.owner, s.epoch, s.taken, $3"
        " FROM slot_holders s WHERE s.key = $1 AND" LIVE("s", "$2::bigint")
        " AND NOT EXISTS (SELECT 1 FROM slot_cancels c WHERE c.key = $1 AND"
        LIVE("c", "$2::bigint") " AND" STILL_HELD("c") ")"
        " ORDER BY s.taken, s.run_id, s.idx, s.elem LIMIT 1"
        " ON CONFLICT (run_id, idx, elem, token, key) DO UPDATE SET why = excluded.why",
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
                             "SELECT s.run_id, s.idx, s.elem, s.token, s.key, s.why"
                             " FROM slot_cancels s WHERE s.owner = $1 AND"
                             LIVE("s", "$2::bigint") " AND" STILL_HELD("s")
                             " ORDER BY s.taken",
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
