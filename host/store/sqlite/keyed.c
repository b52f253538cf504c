/*
 * store/sqlite/keyed.c -- runs recorded under a key (store/keyed.h) in
 * the SQLite store.  Each call is one BEGIN IMMEDIATE transaction: the
 * write lock is taken before the key is inserted, so of two processes on
 * one file the second finds the first's row.  INSERT OR IGNORE against
 * the key's primary key decides; nothing is read first.
 */
#include "store/sqlite/internal.h"

/* One statement with text ?1..?3 and integers ?4, ?5 (those the
 * statement has); *changes the rows it changed; with `row`, the first
 * column of its row (0 when it has none). */
static int run5(sy_store_sqlite *q, const char *sql, const char *a, const char *b, const char *c,
                int64_t d, int64_t e, int *changes, int64_t *row, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
    int n = rc == SQLITE_OK ? sqlite3_bind_parameter_count(st) : 0;
    if (rc == SQLITE_OK) {
        rc = bind_text(st, 1, a);
        keep(&rc, bind_text(st, 2, b));
        if (n >= 3)
            keep(&rc, c ? bind_text(st, 3, c) : sqlite3_bind_int64(st, 3, d));
        if (n >= 4)
            keep(&rc, sqlite3_bind_int64(st, 4, c ? d : e));
        if (n >= 5)
            keep(&rc, sqlite3_bind_int64(st, 5, e));
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (row)
        *row = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    int status = rc == SQLITE_DONE || rc == SQLITE_ROW ? SY_OK
                                                       : sy_sqlite_fail(q, rc, "%s", what);
    if (changes)
        *changes = sqlite3_changes(q->db);
    sqlite3_finalize(st);
    return status;
}

static int insert_run(sy_store_sqlite *q, const sy_store_new_run *r, int64_t now, int64_t *id)
{
    return sy_sqlite_insert_new_run(q, r, now, id);
}

int sy_sqlite_create_run_keyed(sy_store *s, const sy_store_new_run *r, const char *key,
                               int64_t window_ms, int64_t now, int64_t *run_id, bool *created)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "create_run_keyed: called inside a batch; commit first");
    int status = sy_sqlite_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    /* Uses older than the window, of this workflow's keys: forgotten, so
     * the table holds one window's keys. */
    status = run5(q, "DELETE FROM run_keys WHERE tenant = ?1 AND workflow = ?2 AND created < ?3",
                  r->tenant, r->workflow, NULL, now - window_ms, 0, NULL, NULL,
                  "forget old run keys");
    int claimed = 0;
    if (status == SY_OK)
        status = run5(q, "INSERT OR IGNORE INTO run_keys (tenant, workflow, key, run_id, created)"
                      " VALUES (?1, ?2, ?3, 0, ?4)",
                      r->tenant, r->workflow, key, now, 0, &claimed, NULL, "claim the run key");
    int64_t id = 0;
    if (status == SY_OK && claimed)
        status = insert_run(q, r, now, &id);
    if (status == SY_OK && claimed)
        status = run5(q, "UPDATE run_keys SET run_id = ?4"
                      " WHERE tenant = ?1 AND workflow = ?2 AND key = ?3",
                      r->tenant, r->workflow, key, id, 0, NULL, NULL, "record the key's run");
    else if (status == SY_OK)
        status = run5(q, "SELECT run_id FROM run_keys"
                      " WHERE tenant = ?1 AND workflow = ?2 AND key = ?3",
                      r->tenant, r->workflow, key, 0, 0, NULL, &id, "read the key's run");
    status = sy_sqlite_transaction_end(q, false, status);
    if (status == SY_OK) {
        *run_id = id;
        *created = claimed > 0;
    }
    return status;
}

int sy_sqlite_tick_run(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                       bool *claimed, int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    int64_t row = 0;
    /* -1 for a claimed tick without a run: tells it from no row (0). */
    int status = run5(q, "SELECT coalesce(run_id, -1) FROM schedule_ticks"
                      " WHERE tenant = ?1 AND workflow = ?2 AND tick = ?3",
                      tenant, workflow, NULL, tick, 0, NULL, &row, "read the tick's run");
    if (status == SY_OK) {
        *claimed = row != 0;
        *run_id = row > 0 ? row : 0;
    }
    return status;
}

int sy_sqlite_backfill_tick(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                            bool *fired, int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "backfill_tick: called inside a batch; commit first");
    int status = sy_sqlite_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    int claimed = 0;
    status = run5(q, "INSERT OR IGNORE INTO schedule_ticks (tenant, workflow, tick, fired,"
                  " backfill) VALUES (?1, ?2, ?3, ?4, 1)",
                  r->tenant, r->workflow, NULL, tick, now, &claimed, NULL, "claim tick");
    int64_t id = 0;
    if (status == SY_OK && claimed)
        status = insert_run(q, r, now, &id);
    if (status == SY_OK && claimed)
        status = run5(q, "UPDATE schedule_ticks SET run_id = ?4"
                      " WHERE tenant = ?1 AND workflow = ?2 AND tick = ?3",
                      r->tenant, r->workflow, NULL, tick, id, NULL, NULL,
                      "record the tick's run");
    else if (status == SY_OK)
        status = run5(q, "SELECT coalesce(run_id, 0) FROM schedule_ticks"
                      " WHERE tenant = ?1 AND workflow = ?2 AND tick = ?3",
                      r->tenant, r->workflow, NULL, tick, 0, NULL, &id, "read the tick's run");
    status = sy_sqlite_transaction_end(q, false, status);
    if (status == SY_OK) {
        *run_id = id;
        *fired = claimed > 0;
    }
    return status;
}
