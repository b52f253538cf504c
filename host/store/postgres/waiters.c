/*
 * store/postgres/waiters.c -- slot waiters (store/waiters.h) in the
 * PostgreSQL store.  A take reads a key's waiters before it locks the key
 * (postgres/slots.c), so two hosts deciding at the same moment may both
 * read the order of the moment before: the bound itself is never at risk
 * (the take counts under the lock), only which of two near-simultaneous
 * waiters goes first.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"
#include "store/waiters.h"

/* The live condition of waiter row `w` at `now`, as a slot row's. */
#define LIVE(now)                                                             \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = w.run_id AND r.owner = w.owner" \
    " AND r.lease_epoch = w.epoch AND r.lease_until > " now ")"

#define COLUMNS "w.key, w.run_id, w.idx, w.elem, w.tenant, w.priority, w.since, w.n, w.owner"

static int pg_wait(sy_store *s, const sy_store_fence *fence, const sy_slot_waiter *w)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "wait_slot: no batch is open");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, w->task.run_id);
    sy_pg_int(&p, 2, w->task.idx);
    sy_pg_int(&p, 3, w->task.elem);
    sy_pg_text(&p, 4, w->key);
    int status = sy_pg_query(q, "DELETE FROM slot_waiters WHERE run_id = $1 AND idx = $2"
                                " AND elem = $3 AND key <> $4",
                             &p, NULL, "forget a waiter's other keys");
    if (status != SY_OK)
        return status;
    sy_pg_text(&p, 5, w->tenant);
    sy_pg_int(&p, 6, w->priority);
    sy_pg_int(&p, 7, w->since);
    sy_pg_int(&p, 8, w->n);
    sy_pg_text(&p, 9, fence->owner);
    sy_pg_int(&p, 10, fence->epoch);
    return sy_pg_query(q,
                       "INSERT INTO slot_waiters (run_id, idx, elem, key, tenant, priority,"
                       " since, n, owner, epoch) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
                       " $10) ON CONFLICT (key, run_id, idx, elem) DO UPDATE SET"
                       " tenant = excluded.tenant, priority = excluded.priority,"
                       " n = excluded.n, owner = excluded.owner, epoch = excluded.epoch",
                       &p, NULL, "register a waiter");
}

static int pg_unwait(sy_store *s, const sy_slot_holder *t, bool whole_run)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "unwait_slot: no batch is open");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, t->run_id);
    if (whole_run)
        return sy_pg_query(q, "DELETE FROM slot_waiters WHERE run_id = $1", &p, NULL,
                           "forget a run's waiters");
    sy_pg_int(&p, 2, t->idx);
    sy_pg_int(&p, 3, t->elem);
    return sy_pg_query(q, "DELETE FROM slot_waiters WHERE run_id = $1 AND idx = $2"
                          " AND elem = $3", &p, NULL, "forget a waiter");
}

/* Calls cb for each row of r (columns as COLUMNS, then live when
 * `live_col`). */
static void each_row(PGresult *r, bool live_col, sy_slot_waiter_cb cb, void *arg)
{
    for (int i = 0; i < PQntuples(r); i++) {
        const char *live = live_col ? sy_pg_col(r, i, 9) : "t";
        sy_slot_waiter w = {
            .key = sy_pg_col(r, i, 0),
            .task = {sy_pg_col_int(r, i, 1), (uint32_t)sy_pg_col_int(r, i, 2),
                     sy_pg_col_int(r, i, 3), 0},
            .tenant = sy_pg_col(r, i, 4),
            .priority = sy_pg_col_int(r, i, 5),
            .since = sy_pg_col_int(r, i, 6),
            .n = sy_pg_col_int(r, i, 7),
            .owner = sy_pg_col(r, i, 8),
            .live = live && live[0] == 't',
        };
        if (cb(arg, &w) != 0)
            break;
    }
}

static int pg_key_waiters(sy_store *s, const char *const *keys, size_t n, int64_t now,
                          sy_slot_waiter_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    char *array = sy_pg_text_array(keys, n);
    if (!array)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, array);
    sy_pg_int(&p, 2, now);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_SLOT_WAITERS, &p, &r, "list the keys' waiters");
    if (status == SY_OK)
        each_row(r, false, cb, arg);
    PQclear(r);
    free(array);
    return status;
}

static int pg_key_shares(sy_store *s, const char *key, int64_t now,
                         int (*cb)(void *arg, const char *tenant, int64_t held), void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    /* The batch's give-back counts: it goes first. */
    int status = q->batch ? sy_pg_returns_flush(q) : SY_OK;
    if (status != SY_OK)
        return status;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, now);
    PGresult *r;
    status = sy_pg_query(q,
                             "SELECT e.key, sum(e.value::bigint) FROM slot_counts k"
                             " CROSS JOIN jsonb_each_text(k.tenants) e WHERE k.key = $1"
                             " AND k.until > $2::bigint GROUP BY e.key ORDER BY e.key",
                             &p, &r, "count a key's shares");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++)
        if (cb(arg, sy_pg_col(r, i, 0), sy_pg_col_int(r, i, 1)) != 0)
            break;
    PQclear(r);
    return status;
}

static int pg_reap(sy_store *s, int64_t now, size_t *n)
{
    sy_store_pg *q = sy_pg_handle(s);
    *n = 0;
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "reap_waiters: called inside a batch; commit "
                                           "first");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, now);
    PGresult *r;
    int status = sy_pg_query(q, "DELETE FROM slot_waiters w WHERE NOT" LIVE("$1::bigint"),
                             &p, &r, "reap waiters");
    if (status == SY_OK)
        *n = (size_t)sy_pg_changes(r);
    PQclear(r);
    return status;
}

static int pg_list(sy_store *s, int64_t now, sy_slot_waiter_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, now);
    PGresult *r;
    int status = sy_pg_query(q, "SELECT " COLUMNS "," LIVE("$1::bigint")
                                " FROM slot_waiters w"
                                " ORDER BY w.key, w.since, w.run_id, w.idx, w.elem",
                             &p, &r, "list waiters");
    if (status == SY_OK)
        each_row(r, true, cb, arg);
    PQclear(r);
    return status;
}

const struct sy_store_waiter_ops sy_pg_waiter_ops = {
    .wait = pg_wait,
    .unwait = pg_unwait,
    .key_waiters = pg_key_waiters,
    .key_shares = pg_key_shares,
    .reap = pg_reap,
    .list = pg_list,
};
