/*
 * store/sqlite/step.c -- running the SQLite store's statements: SQLite's
 * result codes as sy_status with a one-line reason, and transactions.
 *
 * Operations made of several statements (create_run, request_cancel) run
 * in a transaction of their own outside a batch, or in a savepoint inside
 * one, so that a failure never leaves half of them applied.
 */
#include <stdarg.h>
#include <stdio.h>

#include "store/sqlite/internal.h"

/* --- errors ------------------------------------------------------------------- */

static int map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_OK:
        return SY_OK;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return SY_EBUSY;
    case SQLITE_NOMEM:
        return SY_ENOMEM;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
        return SY_EINVAL;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_PROTOCOL:
    case SQLITE_NOLFS:
        return SY_EIO;
    default:
        return SY_EINTERNAL;
    }
}

static int db_vfail(sy_store_sqlite *q, int rc, const char *fmt, va_list ap)
{
    char what[256];
    vsnprintf(what, sizeof what, fmt, ap);
    const char *msg = sqlite3_errcode(q->db) == rc ? sqlite3_errmsg(q->db)
                                                   : sqlite3_errstr(rc);
    snprintf(q->base.err, sizeof q->base.err, "%s: %s: %s", q->where, what,
             msg);
    return map_rc(rc);
}

int sy_sqlite_fail(sy_store_sqlite *q, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int status = db_vfail(q, rc, fmt, ap);
    va_end(ap);
    return status;
}

int sy_sqlite_fail_reset(sy_store_sqlite *q, sqlite3_stmt *st, int rc,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int status = db_vfail(q, rc, fmt, ap);
    va_end(ap);
    sqlite3_reset(st);
    return status;
}

int sy_sqlite_step_done(sy_store_sqlite *q, sqlite3_stmt *st,
                        const char *what)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "%s", what);
    sqlite3_reset(st);
    return SY_OK;
}

int sy_sqlite_not_reentered(sy_store_sqlite *q, sqlite3_stmt *st,
                            const char *fn)
{
    if (sqlite3_stmt_busy(st))
        return sy_store_fail(&q->base, SY_ESTATE,
                             "%s: called from its own callback", fn);
    return SY_OK;
}

/* --- transactions ------------------------------------------------------------- */

int sy_sqlite_transaction_begin(sy_store_sqlite *q, bool nested)
{
    q->held.valid = false;
    return sy_sqlite_step_done(q,
                               q->st[nested ? SY_SQL_SAVEPOINT : SY_SQL_BEGIN],
                               nested ? "savepoint" : "begin");
}

int sy_sqlite_transaction_end(sy_store_sqlite *q, bool nested, int status)
{
    q->held.valid = false;
    if (nested) {
        if (status != SY_OK) {
            sqlite3_step(q->st[SY_SQL_UNDO]);
            sqlite3_reset(q->st[SY_SQL_UNDO]);
        }
        int rc = sy_sqlite_step_done(q, q->st[SY_SQL_RELEASE],
                                     "release savepoint");
        return status != SY_OK ? status : rc;
    }
    if (status == SY_OK) {
        status = sy_sqlite_step_done(q, q->st[SY_SQL_COMMIT], "commit");
        if (status == SY_OK || !in_tx(q))
            return status;
    }
    sqlite3_step(q->st[SY_SQL_ROLLBACK]);
    sqlite3_reset(q->st[SY_SQL_ROLLBACK]);
    return status;
}

int sy_sqlite_exec(sy_store_sqlite *q, const char *sql, const char *what)
{
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? SY_OK : sy_sqlite_fail(q, rc, "%s", what);
}
