/* What triggers made of named events, in the PostgreSQL store
 * (store/named_events.h, sy_store_event_settlements). */
#include "store/named_driver.h"
#include "store/postgres/internal.h"

int sy_pg_event_settlements(sy_store *s, int64_t from, int64_t to, sy_event_settlement_cb cb,
                            void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, from);
    sy_pg_int(&p, 2, to);
    PGresult *r;
    /* trigger_items_item (source, item) finds them without a scan. */
    int status = sy_pg_query(q,
                             "SELECT i.item, i.trigger_key, f.run_id, i.reason"
                             " FROM trigger_items i LEFT JOIN trigger_firings f"
                             " ON f.id = i.firing WHERE i.source = 1"
                             " AND i.item BETWEEN $1::bigint AND $2::bigint"
                             " ORDER BY i.item, i.trigger_key",
                             &p, &r, "list what triggers made of events");
    if (status != SY_OK)
        return status;
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_event_settlement e = {
            .event_id = sy_pg_col_int(r, i, 0),
            .trigger = sy_pg_col(r, i, 1),
            .run_id = PQgetisnull(r, i, 2) ? 0 : sy_pg_col_int(r, i, 2),
            .reason = sy_pg_col(r, i, 3),
        };
        status = cb(arg, &e);
    }
    PQclear(r);
    return status;
}
