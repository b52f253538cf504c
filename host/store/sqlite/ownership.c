/*
 * store/sqlite/ownership.c -- which host runs what, in the SQLite store:
 * claiming runs under a lease, renewing and releasing leases, the owners
 * of live runs, and cancel requests for an owner to act on.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "store/sqlite/internal.h"

/* The claim statement for this many stale owners: the cached one for none,
 * else a fresh one the caller finalizes. */
static int claim_stmt(sy_store_sqlite *q, bool many, size_t n_stale,
                      sqlite3_stmt **out)
{
    *out = q->st[many ? SY_SQL_CLAIM_MANY : SY_SQL_CLAIM_ONE];
    if (n_stale == 0)
        return SY_OK;
    int max_vars = sqlite3_limit(q->db, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
    if (n_stale > (size_t)max_vars - 4)
        return sy_store_fail(&q->base, SY_ERANGE,
                             "claim: %zu stale owners is too many", n_stale);
    /* " OR owner IN (" + n * "?NNNNN," + ")" */
    size_t cap = 16 + n_stale * 8;
    char *list = malloc(cap);
    if (!list)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    size_t len = (size_t)snprintf(list, cap, " OR owner IN (");
    for (size_t i = 0; i < n_stale; i++)
        len += (size_t)snprintf(list + len, cap - len, "%s?%zu", i ? "," : "",
                                i + 5);
    snprintf(list + len, cap - len, ")");
    char *sql = sy_asprintf(many ? sy_sqlite_claim_many_format
                                 : sy_sqlite_claim_one_format,
                            list);
    free(list);
    if (!sql)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    int rc = sqlite3_prepare_v3(q->db, sql, -1, 0, out, NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return sy_sqlite_fail(q, rc, "prepare claim");
    return SY_OK;
}

static void claim_stmt_done(sy_store_sqlite *q, sqlite3_stmt *st)
{
    if (st == q->st[SY_SQL_CLAIM_ONE] || st == q->st[SY_SQL_CLAIM_MANY])
        sqlite3_reset(st);
    else
        sqlite3_finalize(st);
}

static int bind_claim(sqlite3_stmt *st, const char *owner, int64_t lease_until,
                      int64_t now, int64_t fourth, const char *const *stale,
                      size_t n_stale)
{
    int rc = bind_text(st, 1, owner);
    keep(&rc, sqlite3_bind_int64(st, 2, lease_until));
    keep(&rc, sqlite3_bind_int64(st, 3, now));
    keep(&rc, sqlite3_bind_int64(st, 4, fourth));
    for (size_t i = 0; i < n_stale; i++)
        keep(&rc, bind_text(st, (int)i + 5, stale[i]));
    return rc;
}

int sy_sqlite_claim_run(sy_store *s, int64_t run_id, const char *owner,
                        int64_t lease_until, int64_t now,
                        const char *const *stale, size_t n_stale,
                        bool *claimed)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    q->held.valid = false; /* a claim inside a batch moves the epoch */
    sqlite3_stmt *st;
    int status = claim_stmt(q, false, n_stale, &st);
    if (status != SY_OK)
        return status;
    int rc = bind_claim(st, owner, lease_until, now, run_id, stale, n_stale);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE)
        *claimed = sqlite3_changes(q->db) == 1;
    else
        status = sy_sqlite_fail(q, rc, "claim run %lld for %s",
                                (long long)run_id, owner);
    claim_stmt_done(q, st);
    return status;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int sy_sqlite_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                         int64_t now, const char *const *stale, size_t n_stale,
                         size_t max, int64_t *ids, size_t *n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    q->held.valid = false;
    sqlite3_stmt *st;
    int status = claim_stmt(q, true, n_stale, &st);
    if (status != SY_OK)
        return status;
    int64_t lim = max > INT64_MAX ? INT64_MAX : (int64_t)max;
    int rc = bind_claim(st, owner, lease_until, now, lim, stale, n_stale);
    /* The LIMIT bounds the rows; the check on *n guards ids regardless. */
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n < max)
            ids[(*n)++] = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE) {
        status = sy_sqlite_fail(q, rc, "claim runs for %s", owner);
        *n = 0;
    }
    claim_stmt_done(q, st);
    qsort(ids, *n, sizeof *ids, cmp_id);
    return status;
}

int sy_sqlite_list_owners(sy_store *s, sy_store_owner_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_LIST_OWNERS];
    int status = sy_sqlite_not_reentered(q, st, "list_owners");
    if (status != SY_OK)
        return status;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(arg, col_text(st, 0)) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list owners");
    sqlite3_reset(st);
    return SY_OK;
}

int sy_sqlite_renew(sy_store *s, const char *owner, int64_t lease_until,
                    int64_t now, sy_store_id_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_RENEW];
    int rc = bind_text(st, 1, owner);
    keep(&rc, sqlite3_bind_int64(st, 2, lease_until));
    keep(&rc, sqlite3_bind_int64(st, 3, now));
    /* Every row is stepped even when cb is NULL: RETURNING applies the
     * update row by row. */
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (cb)
            cb(arg, sqlite3_column_int64(st, 0));
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "renew leases of %s", owner);
    sqlite3_reset(st);
    return SY_OK;
}

int sy_sqlite_release(sy_store *s, const char *owner)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    q->held.valid = false;
    sqlite3_stmt *st = q->st[SY_SQL_RELEASE_OWNER];
    int rc = bind_text(st, 1, owner);
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "release runs");
    return sy_sqlite_step_done(q, st, "release runs");
}

/* Binds the run id (and `now` where the statement has it) and steps. */
static int run_write(sy_store_sqlite *q, int id, int64_t run_id, int64_t now,
                     const char *what)
{
    sqlite3_stmt *st = q->st[id];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_bind_parameter_count(st) >= 2)
        keep(&rc, sqlite3_bind_int64(st, 2, now));
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "%s", what);
    return sy_sqlite_step_done(q, st, what);
}

static int cancel_in_tx(sy_store_sqlite *q, int64_t run_id, int64_t now)
{
    sqlite3_stmt *st = q->st[SY_SQL_RUN_STATE];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(&q->base, SY_ENOENT, "cancel: no run %lld",
                             (long long)run_id);
    }
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "cancel run %lld",
                                    (long long)run_id);
    sy_run_state state = (sy_run_state)sqlite3_column_int(st, 0);
    bool unowned = sqlite3_column_int(st, 1) != 0;
    sqlite3_reset(st);
    if (sy_run_state_terminal(state))
        return sy_store_fail(&q->base, SY_ESTATE,
                             "cancel: run %lld is already %s",
                             (long long)run_id, sy_run_state_name(state));
    if (state != SY_RUN_PENDING || !unowned)
        return run_write(q, SY_SQL_FLAG_CANCEL, run_id, now, "request cancel");
    int status = run_write(q, SY_SQL_CANCEL_PENDING, run_id, now, "cancel run");
    if (status == SY_OK)
        status = run_write(q, SY_SQL_SKIP_TASKS, run_id, now, "skip tasks");
    return status;
}

int sy_sqlite_request_cancel(sy_store *s, int64_t run_id, int64_t now)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    bool nested = in_tx(q);
    int status = sy_sqlite_transaction_begin(q, nested);
    if (status != SY_OK)
        return status;
    return sy_sqlite_transaction_end(q, nested, cancel_in_tx(q, run_id, now));
}

int sy_sqlite_cancel_requests(sy_store *s, const char *owner,
                              sy_store_id_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = q->st[SY_SQL_CANCEL_REQUESTS];
    int status = sy_sqlite_not_reentered(q, st, "cancel_requests");
    if (status != SY_OK)
        return status;
    int rc = bind_text(st, 1, owner);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = cb(arg, sqlite3_column_int64(st, 0)) != 0 ? SQLITE_DONE
                                                      : SQLITE_OK;
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "list cancel requests of %s",
                                    owner);
    sqlite3_reset(st);
    return SY_OK;
}
