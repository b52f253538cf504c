/*
 * store/sqlite/rates.c -- rate limits' token buckets (store/rates.h) in
 * the SQLite store.  A batch holds the file's write lock (BEGIN
 * IMMEDIATE) from its start, so reading a bucket and writing it back see
 * every other host's takes and nothing comes between them.  Taking is
 * rare beside a task's other writes, so the statements are prepared per
 * call rather than kept with the handle's.
 */
#include "store/sqlite/internal.h"

/* Whether `fence` still holds run `run_id`. */
static int fence_holds(sy_store_sqlite *q, int64_t run_id, const sy_store_fence *fence,
                       bool *holds)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "SELECT 1 FROM runs WHERE id = ?1 AND owner = ?2"
                                " AND lease_epoch = ?3", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = bind_fence(st, 2, fence);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    *holds = rc == SQLITE_ROW;
    int status = rc == SQLITE_ROW || rc == SQLITE_DONE ? SY_OK
                                                       : sy_sqlite_fail(q, rc, "check a fence");
    sqlite3_finalize(st);
    return status;
}

/* Key's bucket into *b; *found whether there is one. */
static int read_bucket(sy_store_sqlite *q, const char *key, sy_rate_bucket *b, bool *found)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "SELECT level, refilled, interval_ms FROM rate_buckets"
                                " WHERE key = ?1", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 1, key);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (*found)
        *b = (sy_rate_bucket){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                              sqlite3_column_int64(st, 2)};
    int status = rc == SQLITE_ROW || rc == SQLITE_DONE
                     ? SY_OK : sy_sqlite_fail(q, rc, "read the bucket of '%s'", key);
    sqlite3_finalize(st);
    return status;
}

/* Claim c's bucket `b`, with c's rate and burst for a listing. */
static int write_bucket(sy_store_sqlite *q, const sy_rate_claim *c, const sy_rate_bucket *b)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "INSERT INTO rate_buckets (key, level, refilled,"
                                " interval_ms, rate, burst) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                                " ON CONFLICT (key) DO UPDATE SET level = excluded.level,"
                                " refilled = excluded.refilled, interval_ms ="
                                " excluded.interval_ms, rate = excluded.rate,"
                                " burst = excluded.burst", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = bind_text(st, 1, c->key);
    keep(&rc, sqlite3_bind_int64(st, 2, b->level));
    keep(&rc, sqlite3_bind_int64(st, 3, b->refilled));
    keep(&rc, sqlite3_bind_int64(st, 4, b->interval_ms));
    keep(&rc, sqlite3_bind_int64(st, 5, c->rate));
    keep(&rc, sqlite3_bind_int64(st, 6, c->burst));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int status = rc == SQLITE_DONE ? SY_OK
                                   : sy_sqlite_fail(q, rc, "write the bucket of '%s'", c->key);
    sqlite3_finalize(st);
    return status;
}

int sy_sqlite_take_rates(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                         const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                         size_t *empty, int64_t *wait_ms)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "take_rates: no batch is open");
    *taken = false;
    bool holds = false;
    int status = fence_holds(q, run_id, fence, &holds);
    if (status != SY_OK)
        return status;
    if (!holds)
        return sy_sqlite_fenced(q, run_id, fence, SY_SQLITE_NO_TASK, 0, "take_rates");
    sy_rate_bucket b[SY_RATE_CLAIMS_MAX];
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        status = read_bucket(q, c[i].key, &b[i], &found);
        if (status != SY_OK)
            return status;
        if (!sy_rate_bucket_take(&b[i], !found, &c[i], now, wait_ms)) {
            *empty = i;
            return SY_OK;
        }
    }
    for (size_t i = 0; i < n; i++)
        if ((status = write_bucket(q, &c[i], &b[i])) != SY_OK)
            return status;
    *taken = true;
    return SY_OK;
}

int sy_sqlite_rate_bucket(sy_store *s, const char *key, sy_rate_bucket *b, bool *found)
{
    return read_bucket(sy_sqlite_handle(s), key, b, found);
}

int sy_sqlite_list_rate_buckets(sy_store *s, sy_rate_bucket_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "SELECT key, level, refilled, interval_ms, rate, burst"
                                " FROM rate_buckets ORDER BY key", -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_rate_bucket_row b = {
            (const char *)sqlite3_column_text(st, 0),
            {sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
             sqlite3_column_int64(st, 3)},
            sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5)};
        if (b.key && cb(arg, &b) != 0) {
            rc = SQLITE_DONE;
            break;
        }
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "list the rate buckets");
    sqlite3_finalize(st);
    return status;
}
