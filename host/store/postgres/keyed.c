/*
 * store/postgres/keyed.c -- runs recorded under a key (store/keyed.h) in
 * the PostgreSQL store.  The key's primary key decides between hosts: of
 * two transactions inserting one key, the second's INSERT ... ON CONFLICT
 * DO NOTHING waits for the first to commit and inserts nothing, and its
 * next statement (a new snapshot, READ COMMITTED) reads the first's run.
 */
#include "store/postgres/internal.h"

const char *const sy_pg_keyed_sql[SY_PG_AUDIT_FIRST - SY_PG_KEYED_FIRST] = {
    /* Uses older than the window, of this workflow's keys: forgotten, so
     * the table holds one window's keys. */
    [SY_PG_KEY_FORGET - SY_PG_KEYED_FIRST] =
        "DELETE FROM run_keys WHERE tenant = $1 AND workflow = $2 AND created < $3",
    [SY_PG_KEY_CLAIM - SY_PG_KEYED_FIRST] =
        "INSERT INTO run_keys (tenant, workflow, key, run_id, created)"
        " VALUES ($1, $2, $3, 0, $4) ON CONFLICT DO NOTHING",
    [SY_PG_KEY_RUN - SY_PG_KEYED_FIRST] =
        "UPDATE run_keys SET run_id = $4 WHERE tenant = $1 AND workflow = $2 AND key = $3",
    [SY_PG_KEY_READ - SY_PG_KEYED_FIRST] =
        "SELECT run_id FROM run_keys WHERE tenant = $1 AND workflow = $2 AND key = $3",
    /* A live firing of the same tick (SY_PG_TICK_CLAIM) meets this row's
     * primary key: one of the two inserts it. */
    [SY_PG_TICK_BACKFILL - SY_PG_KEYED_FIRST] =
        "INSERT INTO schedule_ticks (tenant, workflow, tick, fired, backfill)"
        " VALUES ($1, $2, $3, $4, 1) ON CONFLICT DO NOTHING",
    [SY_PG_TICK_READ - SY_PG_KEYED_FIRST] =
        "SELECT coalesce(run_id, 0) FROM schedule_ticks"
        " WHERE tenant = $1 AND workflow = $2 AND tick = $3",
    /* Cached results (postgres/cache.c). */
    [SY_PG_CACHE_PUT - SY_PG_KEYED_FIRST] =
        "INSERT INTO task_cache (ns, key, output, run_id, idx, completed)"
        " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (ns, key) DO UPDATE SET"
        " output = EXCLUDED.output, run_id = EXCLUDED.run_id, idx = EXCLUDED.idx,"
        " completed = EXCLUDED.completed",
    [SY_PG_CACHE_GET - SY_PG_KEYED_FIRST] =
        "SELECT output, run_id FROM task_cache WHERE ns = $1 AND key = $2 AND completed >= $3",
};

/* Runs statement `id` with (tenant, workflow) as $1, $2 and `c` (text,
 * or the integer `d` when c is NULL) as $3, then `e` as $4 when `four`;
 * *changed whether it changed a row, *row its first row's first column. */
static int run(sy_store_pg *q, int id, const sy_store_new_run *r, const char *c, int64_t d,
               int64_t e, bool four, bool *changed, int64_t *row, const char *what)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, r->tenant);
    sy_pg_text(&p, 2, r->workflow);
    if (c)
        sy_pg_text(&p, 3, c);
    else
        sy_pg_int(&p, 3, d);
    if (four)
        sy_pg_int(&p, 4, e);
    PGresult *res;
    int status = sy_pg_run(q, id, &p, &res, what);
    if (status == SY_OK && changed)
        *changed = sy_pg_changes(res) > 0;
    if (status == SY_OK && row)
        *row = PQntuples(res) > 0 ? sy_pg_col_int(res, 0, 0) : 0;
    PQclear(res);
    return status;
}

static int insert_run(sy_store_pg *q, const sy_store_new_run *r, int64_t now, int64_t *id)
{
    int status = sy_pg_insert_new_run(q, r, now, id);
    /* A new run is a submitted one: listening hosts wake for it. */
    return status == SY_OK ? sy_pg_notify(q) : status;
}

int sy_pg_create_run_keyed(sy_store *s, const sy_store_new_run *r, const char *key,
                           int64_t window_ms, int64_t now, int64_t *run_id, bool *created)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "create_run_keyed: called inside a batch; commit first");
    int status = sy_pg_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    bool claimed = false;
    int64_t id = 0;
    status = run(q, SY_PG_KEY_FORGET, r, NULL, now - window_ms, 0, false, NULL, NULL,
                 "forget old run keys");
    if (status == SY_OK)
        status = run(q, SY_PG_KEY_CLAIM, r, key, 0, now, true, &claimed, NULL,
                     "claim the run key");
    if (status == SY_OK && claimed)
        status = insert_run(q, r, now, &id);
    if (status == SY_OK && claimed)
        status = run(q, SY_PG_KEY_RUN, r, key, 0, id, true, NULL, NULL, "record the key's run");
    else if (status == SY_OK)
        status = run(q, SY_PG_KEY_READ, r, key, 0, 0, false, NULL, &id, "read the key's run");
    status = sy_pg_transaction_end(q, false, status);
    if (status == SY_OK) {
        *run_id = id;
        *created = claimed;
    }
    return status;
}

int sy_pg_tick_run(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                   bool *claimed, int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, tenant);
    sy_pg_text(&p, 2, workflow);
    sy_pg_int(&p, 3, tick);
    PGresult *res;
    int status = sy_pg_run(q, SY_PG_TICK_READ, &p, &res, "read the tick's run");
    if (status == SY_OK && PQntuples(res) > 0) {
        *claimed = true;
        *run_id = sy_pg_col_int(res, 0, 0);
    }
    PQclear(res);
    return status;
}

int sy_pg_backfill_tick(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                        bool *fired, int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "backfill_tick: called inside a batch; commit first");
    int status = sy_pg_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    bool claimed = false;
    int64_t id = 0;
    status = run(q, SY_PG_TICK_BACKFILL, r, NULL, tick, now, true, &claimed, NULL, "claim tick");
    if (status == SY_OK && claimed)
        status = insert_run(q, r, now, &id);
    if (status == SY_OK && claimed)
        status = run(q, SY_PG_TICK_RUN, r, NULL, tick, id, true, NULL, NULL,
                     "record the tick's run");
    else if (status == SY_OK)
        status = run(q, SY_PG_TICK_READ, r, NULL, tick, 0, false, NULL, &id,
                     "read the tick's run");
    status = sy_pg_transaction_end(q, false, status);
    if (status == SY_OK) {
        *run_id = id;
        *fired = claimed;
    }
    return status;
}
