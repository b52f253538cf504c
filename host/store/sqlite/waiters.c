/*
 * store/sqlite/waiters.c -- slot waiters (store/waiters.h) in the SQLite
 * store.  Writes run inside the batch, which holds the file's write lock,
 * so a key's waiters as read by a take are every host's.
 */
#include "store/sqlite/internal.h"
#include "store/waiters.h"

/* Runs one write prepared from `sql` with the task's three columns as
 * ?1..?3 (and, when `key`, the key as ?4). */
static int task_write(sy_store_sqlite *q, const char *sql, const sy_slot_holder *t,
                      const char *key, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    keep(&rc, sqlite3_bind_int64(st, 1, t->run_id));
    if (t->idx != UINT32_MAX) {
        keep(&rc, sqlite3_bind_int64(st, 2, t->idx));
        keep(&rc, sqlite3_bind_int64(st, 3, t->elem));
    }
    if (key)
        keep(&rc, bind_text(st, 4, key));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "%s", what);
    sqlite3_finalize(st);
    return status;
}

static int sqlite_wait(sy_store *s, const sy_store_fence *fence, const sy_slot_waiter *w)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "wait_slot: no batch is open");
    int status = task_write(q, "DELETE FROM slot_waiters WHERE run_id = ?1 AND idx = ?2"
                               " AND elem = ?3 AND key <> ?4",
                            &w->task, w->key, "forget a waiter's other keys");
    if (status != SY_OK)
        return status;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v3(
        q->db,
        "INSERT INTO slot_waiters (key, run_id, idx, elem, tenant, priority, since, n,"
        " owner, epoch) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
        " ON CONFLICT DO UPDATE SET tenant = excluded.tenant, priority = excluded.priority,"
        " n = excluded.n, owner = excluded.owner, epoch = excluded.epoch",
        -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    keep(&rc, bind_text(st, 1, w->key));
    keep(&rc, sqlite3_bind_int64(st, 2, w->task.run_id));
    keep(&rc, sqlite3_bind_int64(st, 3, w->task.idx));
    keep(&rc, sqlite3_bind_int64(st, 4, w->task.elem));
    keep(&rc, bind_text(st, 5, w->tenant));
    keep(&rc, sqlite3_bind_int64(st, 6, w->priority));
    keep(&rc, sqlite3_bind_int64(st, 7, w->since));
    keep(&rc, sqlite3_bind_int64(st, 8, w->n));
    keep(&rc, bind_text(st, 9, fence->owner));
    keep(&rc, sqlite3_bind_int64(st, 10, fence->epoch));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "register a waiter of '%s'",
                                                        w->key);
    sqlite3_finalize(st);
    return status;
}

static int sqlite_unwait(sy_store *s, const sy_slot_holder *t, bool whole_run)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "unwait_slot: no batch is open");
    sy_slot_holder one = *t;
    if (whole_run)
        one.idx = UINT32_MAX;
    return task_write(q,
                      whole_run ? "DELETE FROM slot_waiters WHERE run_id = ?1"
                                : "DELETE FROM slot_waiters WHERE run_id = ?1 AND idx = ?2"
                                  " AND elem = ?3",
                      &one, NULL, "forget a waiter");
}

/* One listed row of `st`, columns as SY_SQL_KEY_WAITERS's (a ninth:
 * live, when `live_col`). */
static sy_slot_waiter row_of(sqlite3_stmt *st, bool live_col)
{
    return (sy_slot_waiter){
        .key = col_text(st, 0),
        .task = {sqlite3_column_int64(st, 1), (uint32_t)sqlite3_column_int64(st, 2),
                 sqlite3_column_int64(st, 3), 0},
        .tenant = col_text(st, 4),
        .priority = sqlite3_column_int64(st, 5),
        .since = sqlite3_column_int64(st, 6),
        .n = sqlite3_column_int64(st, 7),
        .owner = col_text(st, 8),
        .live = live_col ? sqlite3_column_int(st, 9) != 0 : true,
    };
}

static int sqlite_key_waiters(sy_store *s, const char *const *keys, size_t n, int64_t now,
                              sy_slot_waiter_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_ANY_WAITERS];
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "look for waiters");
    bool any = sqlite3_column_int(st, 0) != 0;
    sqlite3_reset(st);
    if (!any)
        return SY_OK;
    st = q->st[SY_SQL_KEY_WAITERS];
    bool stop = false;
    for (size_t i = 0; i < n && !stop; i++) {
        rc = bind_text(st, 1, keys[i]);
        keep(&rc, sqlite3_bind_int64(st, 2, now));
        while (rc == SQLITE_OK || rc == SQLITE_ROW) {
            rc = sqlite3_step(st);
            if (rc != SQLITE_ROW)
                break;
            sy_slot_waiter w = row_of(st, false);
            if (cb(arg, &w) != 0) {
                stop = true;
                rc = SQLITE_DONE;
                break;
            }
        }
        if (rc != SQLITE_DONE)
            return sy_sqlite_fail_reset(q, st, rc, "list the waiters of '%s'", keys[i]);
        sqlite3_reset(st);
    }
    return SY_OK;
}

static int sqlite_key_shares(sy_store *s, const char *key, int64_t now,
                             int (*cb)(void *arg, const char *tenant, int64_t held),
                             void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    /* The batch's give-backs and takes so far, written first: the shares
     * are read in SQL. */
    int status = in_tx(q) ? sy_sqlite_counts_write(q) : SY_OK;
    if (status != SY_OK)
        return status;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v3(q->db,
                                "SELECT r.tenant, SUM(j.value) FROM slot_counts c JOIN runs r"
                                " ON r.id = c.run_id AND r.owner = c.owner AND"
                                " r.lease_epoch = c.epoch AND r.lease_until > ?2,"
                                " json_each(c.counts) j WHERE j.key = ?1 GROUP BY r.tenant"
                                " ORDER BY r.tenant",
                                -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    keep(&rc, bind_text(st, 1, key));
    keep(&rc, sqlite3_bind_int64(st, 2, now));
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        if (cb(arg, col_text(st, 0), sqlite3_column_int64(st, 1)) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    status = rc == SQLITE_DONE ? SY_OK
                               : sy_sqlite_fail(q, rc, "count the shares of '%s'", key);
    sqlite3_finalize(st);
    return status;
}

static int sqlite_reap(sy_store *s, int64_t now, size_t *n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    *n = 0;
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "reap_waiters: called inside a batch; commit "
                                           "first");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "DELETE FROM slot_waiters AS w WHERE NOT"
                                SY_SQLITE_WAITER_LIVE("?1"), -1, &st, NULL);
    keep(&rc, sqlite3_bind_int64(st, 1, now));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "reap waiters");
    if (status == SY_OK)
        *n = (size_t)sqlite3_changes(q->db);
    sqlite3_finalize(st);
    return status;
}

static int sqlite_list(sy_store *s, int64_t now, sy_slot_waiter_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db,
                                "SELECT w.key, w.run_id, w.idx, w.elem, w.tenant, w.priority,"
                                " w.since, w.n, w.owner," SY_SQLITE_WAITER_LIVE("?1")
                                " FROM slot_waiters w"
                                " ORDER BY w.key, w.since, w.run_id, w.idx, w.elem",
                                -1, &st, NULL);
    keep(&rc, sqlite3_bind_int64(st, 1, now));
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        sy_slot_waiter w = row_of(st, true);
        if (cb(arg, &w) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "list waiters");
    sqlite3_finalize(st);
    return status;
}

const struct sy_store_waiter_ops sy_sqlite_waiter_ops = {
    .wait = sqlite_wait,
    .unwait = sqlite_unwait,
    .key_waiters = sqlite_key_waiters,
    .key_shares = sqlite_key_shares,
    .reap = sqlite_reap,
    .list = sqlite_list,
};
