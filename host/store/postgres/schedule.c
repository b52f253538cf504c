/*
 * store/postgres/schedule.c -- the ticks schedules fired, in the
 * PostgreSQL store.  Hosts fire at once here, so the tick's primary key
 * decides between two hosts firing the same tick (the second INSERT waits
 * for the first to commit, then inserts nothing), and a transaction-level
 * advisory lock per workflow makes "no later tick fired" hold between two
 * hosts firing different ticks.
 */
#include "store/postgres/internal.h"

#define TICK_KEEP_MS ((int64_t)90 * 86400 * 1000)

static void key(sy_pg_params *p, const char *tenant, const char *workflow, int64_t tick)
{
    sy_pg_text(p, 1, tenant);
    sy_pg_text(p, 2, workflow);
    sy_pg_int(p, 3, tick);
}

static int claim(sy_store_pg *q, const char *tenant, const char *workflow, int64_t tick,
                 int64_t now, bool *claimed)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, tenant);
    sy_pg_text(&p, 2, workflow);
    int status = sy_pg_run(q, SY_PG_TICK_LOCK, &p, NULL, "lock the schedule");
    if (status != SY_OK)
        return status;
    key(&p, tenant, workflow, tick);
    sy_pg_int(&p, 4, now);
    PGresult *r;
    status = sy_pg_run(q, SY_PG_TICK_CLAIM, &p, &r, "claim tick");
    if (status == SY_OK)
        *claimed = sy_pg_changes(r) > 0;
    PQclear(r);
    return status;
}

int sy_pg_fire_tick(sy_store *s, const char *hash, const char *tenant, const char *workflow,
                    int64_t tick, const char *context, size_t n_tasks,
                    const char *const *task_ids, const char *const *ns, int64_t now,
                    bool *fired, int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "fire_tick: called inside a batch; commit first");
    int status = sy_pg_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    bool claimed = false;
    int64_t id = 0;
    status = claim(q, tenant, workflow, tick, now, &claimed);
    if (status == SY_OK && claimed)
        status = sy_pg_insert_run(q, hash, tenant, workflow, context, n_tasks, task_ids, ns,
                                  now, &id);
    sy_pg_params p = {0};
    if (status == SY_OK && claimed) {
        key(&p, tenant, workflow, tick);
        sy_pg_int(&p, 4, id);
        status = sy_pg_run(q, SY_PG_TICK_RUN, &p, NULL, "record the tick's run");
    }
    if (status == SY_OK && claimed) {
        sy_pg_params old = {0};
        key(&old, tenant, workflow, tick - TICK_KEEP_MS);
        status = sy_pg_run(q, SY_PG_TICK_FORGET, &old, NULL, "forget old ticks");
    }
    /* The fired run is a submitted one: listening hosts wake for it. */
    if (status == SY_OK && claimed)
        status = sy_pg_notify(q);
    status = sy_pg_transaction_end(q, false, status);
    if (status == SY_OK) {
        *fired = claimed;
        *run_id = id;
    }
    return status;
}

int sy_pg_last_tick(sy_store *s, const char *tenant, const char *workflow, int64_t *tick,
                    int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, tenant);
    sy_pg_text(&p, 2, workflow);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LAST_TICK, &p, &r, "read the last tick");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) > 0) {
        *tick = sy_pg_col_int(r, 0, 0);
        *run_id = sy_pg_col_int(r, 0, 1);
    }
    PQclear(r);
    return status;
}
