/*
 * store/sqlite/schedule.c -- the ticks schedules fired, in the SQLite
 * store.  Firing a tick is one BEGIN IMMEDIATE transaction: the write lock
 * is taken before the check, so of two hosts on one file the second finds
 * the first's row and writes nothing.  A tick a backfill claimed
 * (sqlite/keyed.c) is not fired again, and is not "a later tick".
 */
#include "store/sqlite/internal.h"

/* Ticks are kept this long behind the newest: long enough to say which
 * run fired one, short enough that a schedule's rows stay few. */
#define TICK_KEEP_MS ((int64_t)90 * 86400 * 1000)

/* Runs one statement with (tenant, workflow, a, b) bound as ?1..?4 (b
 * only when the statement has it); *changes the rows it changed. */
static int run4(sy_store_sqlite *q, const char *sql, const char *tenant, const char *workflow,
                int64_t a, int64_t b, int *changes, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = bind_text(st, 1, tenant);
        keep(&rc, bind_text(st, 2, workflow));
        keep(&rc, sqlite3_bind_int64(st, 3, a));
        if (sqlite3_bind_parameter_count(st) >= 4)
            keep(&rc, sqlite3_bind_int64(st, 4, b));
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "%s", what);
    if (changes)
        *changes = sqlite3_changes(q->db);
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_fire_tick(sy_store *s, const char *hash, const char *tenant,
                        const char *workflow, int64_t tick, const char *context,
                        size_t n_tasks, const char *const *task_ids,
                        const char *const *ns, int64_t now, bool *fired, int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "fire_tick: called inside a batch; commit first");
    int status = sy_sqlite_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    int claimed = 0;
    status = run4(q,
                  "INSERT OR IGNORE INTO schedule_ticks (tenant, workflow, tick, fired)"
                  " SELECT ?1, ?2, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM schedule_ticks"
                  " WHERE tenant = ?1 AND workflow = ?2 AND tick >= ?3 AND backfill = 0)",
                  tenant, workflow, tick, now, &claimed, "claim tick");
    int64_t id = 0;
    if (status == SY_OK && claimed)
        status = sy_sqlite_insert_run(q, hash, tenant, workflow, context, n_tasks, task_ids,
                                      ns, now, &id);
    if (status == SY_OK && claimed)
        status = run4(q,
                      "UPDATE schedule_ticks SET run_id = ?4"
                      " WHERE tenant = ?1 AND workflow = ?2 AND tick = ?3",
                      tenant, workflow, tick, id, NULL, "record the tick's run");
    if (status == SY_OK && claimed)
        status = run4(q,
                      "DELETE FROM schedule_ticks"
                      " WHERE tenant = ?1 AND workflow = ?2 AND tick < ?3",
                      tenant, workflow, tick - TICK_KEEP_MS, 0, NULL, "forget old ticks");
    status = sy_sqlite_transaction_end(q, false, status);
    if (status == SY_OK) {
        *fired = claimed > 0;
        *run_id = id;
    }
    return status;
}

int sy_sqlite_last_tick(sy_store *s, const char *tenant, const char *workflow,
                        int64_t *tick, int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db,
                                "SELECT tick, coalesce(run_id, 0) FROM schedule_ticks"
                                " WHERE tenant = ?1 AND workflow = ?2 AND backfill = 0"
                                " ORDER BY tick DESC LIMIT 1",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = bind_text(st, 1, tenant);
        keep(&rc, bind_text(st, 2, workflow));
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = SY_OK;
    if (rc == SQLITE_ROW) {
        *tick = sqlite3_column_int64(st, 0);
        *run_id = sqlite3_column_int64(st, 1);
    } else if (rc != SQLITE_DONE) {
        status = sy_sqlite_fail(q, rc, "read the last tick of %s", workflow);
    }
    sqlite3_finalize(st);
    return status;
}
