/*
 * store/sqlite.c -- the embedded store: one SQLite file in WAL mode.
 *
 * Every statement is prepared once, at open, and kept (a persistent
 * prepare); a call binds its parameters, steps and resets, so the hot path
 * (one task-row UPDATE per changed task, thousands per batch) allocates
 * nothing of its own.  Claims with a list of stale owners are the one
 * exception: the list has a variable length, so that statement is built
 * per call (claims are per run, not per task).
 *
 * The schema is versioned with PRAGMA user_version; each migration step
 * runs in its own transaction and re-reads the version inside it, so two
 * processes opening a fresh file at once do not both apply a step.
 *
 * Operations made of several statements (create_run, request_cancel) run
 * in a transaction of their own outside a batch, or in a savepoint inside
 * one, so that a failure never leaves half of them applied.
 */
#include "base/clock.h"
#include "store/store.h"

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "store/checkpoint.h"
#include "store/driver.h"
#include "base/util.h"

#define DEFAULT_BUSY_TIMEOUT_MS 5000

/* --- schema ----------------------------------------------------------------- */

/* Step i takes the schema from version i to i + 1.  Append only: a shipped
 * step is never edited. */
static const char *const migrations[] = {
    "CREATE TABLE definitions ("
    "  hash TEXT PRIMARY KEY NOT NULL,"
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  definition TEXT NOT NULL,"
    "  created INTEGER NOT NULL);"
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  hash TEXT NOT NULL REFERENCES definitions(hash),"
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  state INTEGER NOT NULL,"
    "  context TEXT,"
    "  owner TEXT,"
    "  lease_until INTEGER NOT NULL DEFAULT 0,"
    "  cancel_requested INTEGER NOT NULL DEFAULT 0,"
    "  created INTEGER NOT NULL,"
    "  started INTEGER NOT NULL DEFAULT 0,"
    "  finished INTEGER NOT NULL DEFAULT 0,"
    "  error TEXT,"
    "  n_tasks INTEGER NOT NULL);"
    /* Claims, renewals and owner lists look at live runs by owner and
     * lease; terminal runs pile up and must not be scanned. */
    "CREATE INDEX runs_claim ON runs(state, owner, lease_until);"
    "CREATE TABLE tasks ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  task_id TEXT NOT NULL,"
    "  ns TEXT NOT NULL,"
    "  state INTEGER NOT NULL DEFAULT 0,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  failures INTEGER NOT NULL DEFAULT 0,"
    "  recoveries INTEGER NOT NULL DEFAULT 0,"
    "  executor TEXT,"
    "  error TEXT,"
    "  output TEXT,"
    "  ready_at INTEGER NOT NULL DEFAULT 0,"
    "  started INTEGER NOT NULL DEFAULT 0,"
    "  finished INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY (run_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE events ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  detail TEXT,"
    "  at INTEGER NOT NULL);"
    "CREATE INDEX events_run ON events(run_id, id);",
};
#define SCHEMA_VERSION ((int)SY_ARRAY_LEN(migrations))

/* --- statements --------------------------------------------------------------- */

enum {
    ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_SAVEPOINT, ST_RELEASE, ST_UNDO,
    ST_PUT_DEF, ST_GET_DEF,
    ST_INSERT_RUN, ST_INSERT_TASK, ST_GET_RUN, ST_LIST_RUNS, ST_RUN_EXISTS,
    ST_LIST_TASKS,
    ST_CLAIM_ONE, ST_CLAIM_MANY, ST_LIST_OWNERS, ST_RENEW, ST_RELEASE_OWNER,
    ST_RUN_STATE, ST_CANCEL_PENDING, ST_SKIP_TASKS, ST_FLAG_CANCEL,
    ST_CANCEL_REQUESTS,
    ST_UPDATE_TASK, ST_UPDATE_RUN, ST_ADD_EVENT, ST_LIST_EVENTS,
    ST_COUNT
};

#define RUN_COLS                                                              \
    "id, workflow, tenant, hash, state, context, owner, lease_until, "        \
    "cancel_requested, created, started, finished, error, n_tasks"

/* The claim condition: a live run nobody holds (no owner, an expired
 * lease, or a dead owner's).  ?3 is now; the stale list is ?5... */
#define CLAIMABLE "state IN (0, 1) AND (owner IS NULL OR lease_until < ?3%s)"
#define CLAIM_SET                                                             \
    "UPDATE runs SET owner = ?1, lease_until = ?2, "                          \
    "started = CASE WHEN state = 0 THEN ?3 ELSE started END, "                \
    "state = CASE WHEN state = 0 THEN 1 ELSE state END "
static const char claim_one_fmt[] = CLAIM_SET "WHERE id = ?4 AND " CLAIMABLE;
/* RETURNING gives no order: the ids are sorted afterwards. */
static const char claim_many_fmt[] =
    CLAIM_SET "WHERE id IN (SELECT id FROM runs WHERE " CLAIMABLE
              " ORDER BY id LIMIT ?4) RETURNING id";

static const char *const sql_text[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_SAVEPOINT] = "SAVEPOINT sy_op",
    [ST_RELEASE] = "RELEASE sy_op",
    [ST_UNDO] = "ROLLBACK TO sy_op",
    [ST_PUT_DEF] =
        "INSERT INTO definitions (hash, tenant, workflow, definition, created)"
        " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (hash) DO NOTHING",
    [ST_GET_DEF] = "SELECT definition FROM definitions WHERE hash = ?1",
    [ST_INSERT_RUN] =
        "INSERT INTO runs (hash, tenant, workflow, state, context, created,"
        " n_tasks) VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)",
    [ST_INSERT_TASK] =
        "INSERT INTO tasks (run_id, idx, task_id, ns) VALUES (?1, ?2, ?3, ?4)",
    [ST_GET_RUN] = "SELECT " RUN_COLS " FROM runs WHERE id = ?1",
    [ST_LIST_RUNS] =
        "SELECT " RUN_COLS " FROM runs ORDER BY id DESC LIMIT ?1",
    [ST_RUN_EXISTS] = "SELECT 1 FROM runs WHERE id = ?1",
    [ST_LIST_TASKS] =
        "SELECT idx, task_id, ns, state, attempts, failures, recoveries,"
        " executor, error, output, ready_at, started, finished"
        " FROM tasks WHERE run_id = ?1 ORDER BY idx",
    /* ST_CLAIM_ONE and ST_CLAIM_MANY are built from the formats above. */
    [ST_LIST_OWNERS] =
        "SELECT DISTINCT owner FROM runs WHERE state IN (0, 1)"
        " AND owner IS NOT NULL ORDER BY owner",
    [ST_RENEW] = "UPDATE runs SET lease_until = ?2"
                 " WHERE owner = ?1 AND state IN (0, 1)",
    [ST_RELEASE_OWNER] = "UPDATE runs SET owner = NULL, lease_until = 0"
                         " WHERE owner = ?1 AND state IN (0, 1)",
    [ST_RUN_STATE] = "SELECT state, owner IS NULL FROM runs WHERE id = ?1",
    [ST_CANCEL_PENDING] =
        "UPDATE runs SET state = 4, cancel_requested = 1, finished = ?2,"
        " error = 'cancelled before it started' WHERE id = ?1",
    [ST_SKIP_TASKS] = "UPDATE tasks SET state = 5, finished = ?2"
                      " WHERE run_id = ?1 AND state < 3",
    [ST_FLAG_CANCEL] = "UPDATE runs SET cancel_requested = 1 WHERE id = ?1",
    [ST_CANCEL_REQUESTS] =
        "SELECT id FROM runs WHERE owner = ?1 AND cancel_requested = 1"
        " AND state IN (0, 1) ORDER BY id",
    [ST_UPDATE_TASK] =
        "UPDATE tasks SET state = ?3, attempts = ?4, failures = ?5,"
        " recoveries = ?6, executor = ?7, error = ?8, output = ?9,"
        " ready_at = ?10, started = ?11, finished = ?12"
        " WHERE run_id = ?1 AND idx = ?2",
    [ST_UPDATE_RUN] =
        "UPDATE runs SET"
        " started = CASE WHEN ?2 = 1 AND state <> 1 THEN ?4 ELSE started END,"
        " finished = CASE WHEN ?2 >= 2 AND state < 2 THEN ?4 ELSE finished END,"
        " state = ?2, error = ?3 WHERE id = ?1",
    [ST_ADD_EVENT] =
        "INSERT INTO events (run_id, idx, attempt, kind, detail, at)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_LIST_EVENTS] = "SELECT idx, attempt, kind, detail, at FROM events"
                       " WHERE run_id = ?1 ORDER BY id",
};

typedef struct sy_store_sqlite {
    sy_store base; /* first: the handle is cast both ways */
    sqlite3 *db;
    char *where; /* "sqlite:PATH" for messages */
    sqlite3_stmt *st[ST_COUNT];
    sy_ckpt *ckpt; /* checkpoints off this thread; NULL: SQLite's own */
} sy_store_sqlite;

static sy_store_sqlite *to_q(sy_store *s) { return (sy_store_sqlite *)s; }

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

/* Records "<what>: <SQLite's message>" and returns the mapped status.
 * Call it before resetting the statement that failed: the reset may
 * replace the message. */
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

static int db_fail(sy_store_sqlite *q, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int db_fail(sy_store_sqlite *q, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int status = db_vfail(q, rc, fmt, ap);
    va_end(ap);
    return status;
}

/* db_fail, then resets `st`. */
static int st_fail(sy_store_sqlite *q, sqlite3_stmt *st, int rc,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int st_fail(sy_store_sqlite *q, sqlite3_stmt *st, int rc,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int status = db_vfail(q, rc, fmt, ap);
    va_end(ap);
    sqlite3_reset(st);
    return status;
}

/* Keeps the first failing bind's code. */
static void keep(int *rc, int r)
{
    if (*rc == SQLITE_OK)
        *rc = r;
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    /* The caller's string outlives the step, and every call rebinds every
     * parameter, so SQLite need not copy it. */
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC)
             : sqlite3_bind_null(st, i);
}

static char *col_text(sqlite3_stmt *st, int i)
{
    return (char *)sqlite3_column_text(st, i);
}

/* Steps a statement that returns no rows, then resets it. */
static int step_done(sy_store_sqlite *q, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "%s", what);
    sqlite3_reset(st);
    return SY_OK;
}

static bool in_tx(sy_store_sqlite *q) { return !sqlite3_get_autocommit(q->db); }

/* A listing statement being stepped is in use: a callback that calls the
 * same listing again would reset it under its caller. */
static int not_reentered(sy_store_sqlite *q, sqlite3_stmt *st, const char *fn)
{
    if (sqlite3_stmt_busy(st))
        return sy_store_fail(&q->base, SY_ESTATE,
                             "%s: called from its own callback", fn);
    return SY_OK;
}

/* --- transactions ------------------------------------------------------------- */

static int tx_begin(sy_store_sqlite *q, bool nested)
{
    return step_done(q, q->st[nested ? ST_SAVEPOINT : ST_BEGIN],
                     nested ? "savepoint" : "begin");
}

/* Ends what tx_begin began: kept when status is SY_OK, undone otherwise.
 * Returns status, or the failure to commit. */
static int tx_end(sy_store_sqlite *q, bool nested, int status)
{
    if (nested) {
        if (status != SY_OK) {
            sqlite3_step(q->st[ST_UNDO]);
            sqlite3_reset(q->st[ST_UNDO]);
        }
        int rc = step_done(q, q->st[ST_RELEASE], "release savepoint");
        return status != SY_OK ? status : rc;
    }
    if (status == SY_OK) {
        status = step_done(q, q->st[ST_COMMIT], "commit");
        if (status == SY_OK || !in_tx(q))
            return status;
    }
    sqlite3_step(q->st[ST_ROLLBACK]);
    sqlite3_reset(q->st[ST_ROLLBACK]);
    return status;
}

static int sq_begin(sy_store *s)
{
    sy_store_sqlite *q = to_q(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "begin: a batch is already open");
    return tx_begin(q, false);
}

/* A failed commit rolls the batch back, so the handle is usable again. */
static int sq_commit(sy_store *s)
{
    sy_store_sqlite *q = to_q(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "commit: no batch is open");
    return tx_end(q, false, SY_OK);
}

static void sq_rollback(sy_store *s)
{
    sy_store_sqlite *q = to_q(s);
    if (in_tx(q))
        tx_end(q, false, SY_ESTATE);
}

/* --- definitions --------------------------------------------------------------- */

static int sq_put_definition(sy_store *s, const char *hash, const char *tenant,
                             const char *workflow, const char *definition)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_PUT_DEF];
    int rc = bind_text(st, 1, hash);
    keep(&rc, bind_text(st, 2, tenant));
    keep(&rc, bind_text(st, 3, workflow));
    keep(&rc, bind_text(st, 4, definition));
    keep(&rc, sqlite3_bind_int64(st, 5, sy_clock_now_ms()));
    if (rc != SQLITE_OK)
        return st_fail(q, st, rc, "store definition %s", hash);
    return step_done(q, st, "store definition");
}

static int sq_get_definition(sy_store *s, const char *hash, char **out)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_GET_DEF];
    int rc = bind_text(st, 1, hash);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(s, SY_ENOENT, "no definition stored under hash %s",
                             hash);
    }
    if (rc != SQLITE_ROW)
        return st_fail(q, st, rc, "read definition %s", hash);
    *out = strdup(col_text(st, 0));
    sqlite3_reset(st);
    return *out ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
}

/* --- runs ------------------------------------------------------------------------ */

static int insert_run(sy_store_sqlite *q, const char *hash, const char *tenant,
                      const char *workflow, const char *context, size_t n,
                      int64_t now, int64_t *run_id)
{
    sqlite3_stmt *st = q->st[ST_INSERT_RUN];
    int rc = bind_text(st, 1, hash);
    keep(&rc, bind_text(st, 2, tenant));
    keep(&rc, bind_text(st, 3, workflow));
    keep(&rc, bind_text(st, 4, context));
    keep(&rc, sqlite3_bind_int64(st, 5, now));
    keep(&rc, sqlite3_bind_int64(st, 6, (int64_t)n));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
        sqlite3_reset(st);
        return sy_store_fail(&q->base, SY_ENOENT,
                             "create_run: no definition stored under hash %s",
                             hash);
    }
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "create run of %s", workflow);
    sqlite3_reset(st);
    *run_id = sqlite3_last_insert_rowid(q->db);
    return SY_OK;
}

static int insert_tasks(sy_store_sqlite *q, int64_t run_id, size_t n,
                        const char *const *task_ids, const char *const *ns)
{
    sqlite3_stmt *st = q->st[ST_INSERT_TASK];
    for (size_t i = 0; i < n; i++) {
        int rc = sqlite3_bind_int64(st, 1, run_id);
        keep(&rc, sqlite3_bind_int64(st, 2, (int64_t)i));
        keep(&rc, bind_text(st, 3, task_ids[i]));
        keep(&rc, bind_text(st, 4, ns[i]));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            return st_fail(q, st, rc, "create task %zu (%s) of run %lld", i,
                           task_ids[i], (long long)run_id);
        sqlite3_reset(st);
    }
    return SY_OK;
}

static int sq_create_run(sy_store *s, const char *hash, const char *tenant,
                         const char *workflow, const char *context,
                         size_t n_tasks, const char *const *task_ids,
                         const char *const *ns, int64_t now, int64_t *run_id)
{
    sy_store_sqlite *q = to_q(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE,
                             "create_run: called inside a batch; commit first");
    int64_t id = 0;
    int status = tx_begin(q, false);
    if (status != SY_OK)
        return status;
    status = insert_run(q, hash, tenant, workflow, context, n_tasks, now, &id);
    if (status == SY_OK)
        status = insert_tasks(q, id, n_tasks, task_ids, ns);
    status = tx_end(q, false, status);
    if (status == SY_OK && run_id)
        *run_id = id;
    return status;
}

/* The row's strings are borrowed from the statement. */
static void row_to_run(sqlite3_stmt *st, sy_run_record *r)
{
    r->id = sqlite3_column_int64(st, 0);
    r->workflow = col_text(st, 1);
    r->tenant = col_text(st, 2);
    r->hash = col_text(st, 3);
    r->state = (sy_run_state)sqlite3_column_int(st, 4);
    r->context = col_text(st, 5);
    r->owner = col_text(st, 6);
    r->lease_until = sqlite3_column_int64(st, 7);
    r->cancel_requested = sqlite3_column_int(st, 8) != 0;
    r->created = sqlite3_column_int64(st, 9);
    r->started = sqlite3_column_int64(st, 10);
    r->finished = sqlite3_column_int64(st, 11);
    r->error = col_text(st, 12);
    r->n_tasks = (uint32_t)sqlite3_column_int64(st, 13);
}

/* Replaces each borrowed string by an owned copy; false when out of
 * memory (the copies made so far stay owned, the rest become NULL). */
static bool own_strings(char **v[], size_t n)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (!*v[i])
            continue;
        *v[i] = ok ? strdup(*v[i]) : NULL;
        ok = ok && *v[i];
    }
    return ok;
}

static int sq_get_run(sy_store *s, int64_t run_id, sy_run_record *out)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_GET_RUN];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(s, SY_ENOENT, "no run %lld", (long long)run_id);
    }
    if (rc != SQLITE_ROW)
        return st_fail(q, st, rc, "read run %lld", (long long)run_id);
    row_to_run(st, out);
    char **strs[] = {&out->workflow, &out->tenant, &out->hash,
                     &out->context, &out->owner,   &out->error};
    bool ok = own_strings(strs, SY_ARRAY_LEN(strs));
    sqlite3_reset(st);
    if (ok)
        return SY_OK;
    sy_run_record_clear(out);
    return sy_store_fail(s, SY_ENOMEM, "out of memory");
}

static int sq_list_runs(sy_store *s, size_t limit, sy_store_run_cb cb,
                        void *arg)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_LIST_RUNS];
    int status = not_reentered(q, st, "list_runs");
    if (status != SY_OK)
        return status;
    int64_t lim = limit == 0 || limit > INT64_MAX ? -1 : (int64_t)limit;
    int rc = sqlite3_bind_int64(st, 1, lim);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_run_record r;
        row_to_run(st, &r);
        if (cb(arg, &r) != 0)
            rc = SQLITE_DONE;
        else
            rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "list runs");
    sqlite3_reset(st);
    return SY_OK;
}

static int run_exists(sy_store_sqlite *q, int64_t run_id, bool *exists)
{
    sqlite3_stmt *st = q->st[ST_RUN_EXISTS];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return st_fail(q, st, rc, "look up run %lld", (long long)run_id);
    *exists = rc == SQLITE_ROW;
    sqlite3_reset(st);
    return SY_OK;
}

/* For listings that return nothing: no rows is fine for a run that exists
 * (a run without events), SY_ENOENT for one that does not. */
static int empty_listing(sy_store_sqlite *q, int64_t run_id)
{
    bool exists = false;
    int status = run_exists(q, run_id, &exists);
    if (status == SY_OK && !exists)
        return sy_store_fail(&q->base, SY_ENOENT, "no run %lld",
                             (long long)run_id);
    return status;
}

static void row_to_task(sqlite3_stmt *st, sy_task_record *t)
{
    t->idx = (uint32_t)sqlite3_column_int64(st, 0);
    t->task_id = col_text(st, 1);
    t->ns = col_text(st, 2);
    t->state = (sy_task_state)sqlite3_column_int(st, 3);
    t->attempts = (uint32_t)sqlite3_column_int64(st, 4);
    t->failures = (uint32_t)sqlite3_column_int64(st, 5);
    t->recoveries = (uint32_t)sqlite3_column_int64(st, 6);
    t->executor = col_text(st, 7);
    t->error = col_text(st, 8);
    t->output = col_text(st, 9);
    t->ready_at = sqlite3_column_int64(st, 10);
    t->started = sqlite3_column_int64(st, 11);
    t->finished = sqlite3_column_int64(st, 12);
}

static int sq_list_tasks(sy_store *s, int64_t run_id, sy_store_task_cb cb,
                         void *arg)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_LIST_TASKS];
    int status = not_reentered(q, st, "list_tasks");
    if (status != SY_OK)
        return status;
    size_t rows = 0;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_task_record t;
        row_to_task(st, &t);
        rows++;
        rc = cb(arg, &t) != 0 ? SQLITE_DONE : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "list tasks of run %lld", (long long)run_id);
    sqlite3_reset(st);
    return rows ? SY_OK : empty_listing(q, run_id);
}

/* --- ownership ----------------------------------------------------------------- */

/* The claim statement for this many stale owners: the cached one for none,
 * else a fresh one the caller finalizes. */
static int claim_stmt(sy_store_sqlite *q, bool many, size_t n_stale,
                      sqlite3_stmt **out)
{
    *out = q->st[many ? ST_CLAIM_MANY : ST_CLAIM_ONE];
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
    char *sql = sy_asprintf(many ? claim_many_fmt : claim_one_fmt, list);
    free(list);
    if (!sql)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    int rc = sqlite3_prepare_v3(q->db, sql, -1, 0, out, NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return db_fail(q, rc, "prepare claim");
    return SY_OK;
}

static void claim_stmt_done(sy_store_sqlite *q, sqlite3_stmt *st)
{
    if (st == q->st[ST_CLAIM_ONE] || st == q->st[ST_CLAIM_MANY])
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

static int sq_claim_run(sy_store *s, int64_t run_id, const char *owner,
                        int64_t lease_until, int64_t now,
                        const char *const *stale, size_t n_stale,
                        bool *claimed)
{
    sy_store_sqlite *q = to_q(s);
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
        status = db_fail(q, rc, "claim run %lld for %s", (long long)run_id,
                         owner);
    claim_stmt_done(q, st);
    return status;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int sq_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                         int64_t now, const char *const *stale, size_t n_stale,
                         size_t max, int64_t *ids, size_t *n)
{
    sy_store_sqlite *q = to_q(s);
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
        status = db_fail(q, rc, "claim runs for %s", owner);
        *n = 0;
    }
    claim_stmt_done(q, st);
    qsort(ids, *n, sizeof *ids, cmp_id);
    return status;
}

static int sq_list_owners(sy_store *s, sy_store_owner_cb cb, void *arg)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_LIST_OWNERS];
    int status = not_reentered(q, st, "list_owners");
    if (status != SY_OK)
        return status;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (cb(arg, col_text(st, 0)) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "list owners");
    sqlite3_reset(st);
    return SY_OK;
}

static int owner_update(sy_store_sqlite *q, int id, const char *owner,
                        int64_t lease_until, const char *what)
{
    sqlite3_stmt *st = q->st[id];
    int rc = bind_text(st, 1, owner);
    if (id == ST_RENEW)
        keep(&rc, sqlite3_bind_int64(st, 2, lease_until));
    if (rc != SQLITE_OK)
        return st_fail(q, st, rc, "%s", what);
    return step_done(q, st, what);
}

static int sq_renew(sy_store *s, const char *owner, int64_t lease_until)
{
    return owner_update(to_q(s), ST_RENEW, owner, lease_until, "renew leases");
}

static int sq_release(sy_store *s, const char *owner)
{
    return owner_update(to_q(s), ST_RELEASE_OWNER, owner, 0, "release runs");
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
        return st_fail(q, st, rc, "%s", what);
    return step_done(q, st, what);
}

static int cancel_in_tx(sy_store_sqlite *q, int64_t run_id, int64_t now)
{
    sqlite3_stmt *st = q->st[ST_RUN_STATE];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(st);
        return sy_store_fail(&q->base, SY_ENOENT, "cancel: no run %lld",
                             (long long)run_id);
    }
    if (rc != SQLITE_ROW)
        return st_fail(q, st, rc, "cancel run %lld", (long long)run_id);
    sy_run_state state = (sy_run_state)sqlite3_column_int(st, 0);
    bool unowned = sqlite3_column_int(st, 1) != 0;
    sqlite3_reset(st);
    if (sy_run_state_terminal(state))
        return sy_store_fail(&q->base, SY_ESTATE,
                             "cancel: run %lld is already %s",
                             (long long)run_id, sy_run_state_name(state));
    if (state != SY_RUN_PENDING || !unowned)
        return run_write(q, ST_FLAG_CANCEL, run_id, now, "request cancel");
    int status = run_write(q, ST_CANCEL_PENDING, run_id, now, "cancel run");
    if (status == SY_OK)
        status = run_write(q, ST_SKIP_TASKS, run_id, now, "skip tasks");
    return status;
}

static int sq_request_cancel(sy_store *s, int64_t run_id, int64_t now)
{
    sy_store_sqlite *q = to_q(s);
    bool nested = in_tx(q);
    int status = tx_begin(q, nested);
    if (status != SY_OK)
        return status;
    return tx_end(q, nested, cancel_in_tx(q, run_id, now));
}

static int sq_cancel_requests(sy_store *s, const char *owner,
                              sy_store_id_cb cb, void *arg)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_CANCEL_REQUESTS];
    int status = not_reentered(q, st, "cancel_requests");
    if (status != SY_OK)
        return status;
    int rc = bind_text(st, 1, owner);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = cb(arg, sqlite3_column_int64(st, 0)) != 0 ? SQLITE_DONE
                                                      : SQLITE_OK;
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "list cancel requests of %s", owner);
    sqlite3_reset(st);
    return SY_OK;
}

/* --- batch writes ---------------------------------------------------------------- */

static int sq_update_task(sy_store *s, int64_t run_id, const sy_task_record *t)
{
    sy_store_sqlite *q = to_q(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "update_task: no batch is open");
    sqlite3_stmt *st = q->st[ST_UPDATE_TASK];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, t->idx));
    keep(&rc, sqlite3_bind_int(st, 3, (int)t->state));
    keep(&rc, sqlite3_bind_int64(st, 4, t->attempts));
    keep(&rc, sqlite3_bind_int64(st, 5, t->failures));
    keep(&rc, sqlite3_bind_int64(st, 6, t->recoveries));
    keep(&rc, bind_text(st, 7, t->executor));
    keep(&rc, bind_text(st, 8, t->error));
    keep(&rc, bind_text(st, 9, t->output));
    keep(&rc, sqlite3_bind_int64(st, 10, t->ready_at));
    keep(&rc, sqlite3_bind_int64(st, 11, t->started));
    keep(&rc, sqlite3_bind_int64(st, 12, t->finished));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "update task %u of run %lld", t->idx,
                       (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0)
        return sy_store_fail(s, SY_ENOENT, "update_task: run %lld has no task %u",
                             (long long)run_id, t->idx);
    return SY_OK;
}

static int sq_update_run(sy_store *s, int64_t run_id, sy_run_state state,
                         const char *error, int64_t now)
{
    sy_store_sqlite *q = to_q(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "update_run: no batch is open");
    sqlite3_stmt *st = q->st[ST_UPDATE_RUN];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int(st, 2, (int)state));
    keep(&rc, bind_text(st, 3, error));
    keep(&rc, sqlite3_bind_int64(st, 4, now));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "update run %lld", (long long)run_id);
    sqlite3_reset(st);
    if (sqlite3_changes(q->db) == 0)
        return sy_store_fail(s, SY_ENOENT, "update_run: no run %lld",
                             (long long)run_id);
    return SY_OK;
}

static int sq_add_event(sy_store *s, int64_t run_id, uint32_t idx,
                        uint32_t attempt, const char *kind, const char *detail,
                        int64_t now)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_ADD_EVENT];
    int rc = sqlite3_bind_int64(st, 1, run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, idx));
    keep(&rc, sqlite3_bind_int64(st, 3, attempt));
    keep(&rc, bind_text(st, 4, kind));
    keep(&rc, bind_text(st, 5, detail));
    keep(&rc, sqlite3_bind_int64(st, 6, now));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_CONSTRAINT_FOREIGNKEY) {
        sqlite3_reset(st);
        return sy_store_fail(s, SY_ENOENT, "add_event: no run %lld",
                             (long long)run_id);
    }
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "add event to run %lld", (long long)run_id);
    sqlite3_reset(st);
    return SY_OK;
}

static int sq_list_events(sy_store *s, int64_t run_id, sy_store_event_cb cb,
                          void *arg)
{
    sy_store_sqlite *q = to_q(s);
    sqlite3_stmt *st = q->st[ST_LIST_EVENTS];
    int status = not_reentered(q, st, "list_events");
    if (status != SY_OK)
        return status;
    size_t rows = 0;
    int rc = sqlite3_bind_int64(st, 1, run_id);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rows++;
        rc = cb(arg, (uint32_t)sqlite3_column_int64(st, 0),
                (uint32_t)sqlite3_column_int64(st, 1), col_text(st, 2),
                col_text(st, 3), sqlite3_column_int64(st, 4)) != 0
                 ? SQLITE_DONE
                 : SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        return st_fail(q, st, rc, "list events of run %lld", (long long)run_id);
    sqlite3_reset(st);
    return rows ? SY_OK : empty_listing(q, run_id);
}

/* --- open and close --------------------------------------------------------------- */

static void sq_close(sy_store *s)
{
    sy_store_sqlite *q = to_q(s);
    sy_ckpt_stop(q->ckpt);
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(q->st[i]);
    /* With every statement finalized this cannot fail with SQLITE_BUSY; an
     * open batch is rolled back. */
    sqlite3_close(q->db);
    free(q->where);
    free(q);
}

static const struct sy_store_ops sqlite_ops = {
    .close = sq_close,
    .put_definition = sq_put_definition,
    .get_definition = sq_get_definition,
    .create_run = sq_create_run,
    .get_run = sq_get_run,
    .list_runs = sq_list_runs,
    .list_tasks = sq_list_tasks,
    .claim_run = sq_claim_run,
    .claim_runs = sq_claim_runs,
    .list_owners = sq_list_owners,
    .renew = sq_renew,
    .release = sq_release,
    .request_cancel = sq_request_cancel,
    .cancel_requests = sq_cancel_requests,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .update_task = sq_update_task,
    .update_run = sq_update_run,
    .add_event = sq_add_event,
    .list_events = sq_list_events,
};

typedef struct open_opts {
    bool sync_full;
    int busy_timeout_ms;
} open_opts;

static int parse_option(const char *opt, size_t len, open_opts *o,
                        char *err, size_t err_len)
{
    const char *eq = memchr(opt, '=', len);
    size_t klen = eq ? (size_t)(eq - opt) : len;
    const char *val = eq ? eq + 1 : "";
    int vlen = eq ? (int)(len - klen - 1) : 0;
    if (klen == 4 && memcmp(opt, "sync", 4) == 0) {
        if (vlen == 4 && memcmp(val, "full", 4) == 0)
            o->sync_full = true;
        else if (vlen == 6 && memcmp(val, "normal", 6) == 0)
            o->sync_full = false;
        else
            goto bad_value;
        return SY_OK;
    }
    if (klen == 12 && memcmp(opt, "busy_timeout", 12) == 0) {
        long ms = 0;
        for (int i = 0; i < vlen; i++) {
            if (val[i] < '0' || val[i] > '9' || ms > INT_MAX / 10)
                goto bad_value;
            ms = ms * 10 + (val[i] - '0');
        }
        if (vlen == 0 || ms > INT_MAX)
            goto bad_value;
        o->busy_timeout_ms = (int)ms;
        return SY_OK;
    }
    sy_errf(err, err_len,
            "unknown option \"%.*s\" (known: sync=full|normal, "
            "busy_timeout=MILLISECONDS)", (int)klen, opt);
    return SY_EINVAL;
bad_value:
    sy_errf(err, err_len, "bad value \"%.*s\" for option \"%.*s\"", vlen, val,
            (int)klen, opt);
    return SY_EINVAL;
}

static int parse_query(const char *query, open_opts *o, char *err,
                       size_t err_len)
{
    while (*query) {
        size_t len = strcspn(query, "&");
        int status = parse_option(query, len, o, err, err_len);
        if (status != SY_OK)
            return status;
        query += len + (query[len] == '&');
    }
    return SY_OK;
}

/* mkdir -p of the directory that holds `path`. */
static int make_parents(const char *path, char *err, size_t err_len)
{
    char *dir = sy_path_dirname(path);
    int status = SY_OK;
    for (char *p = dir + 1; status == SY_OK; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        struct stat sb;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            sy_errf(err, err_len, "cannot create directory %s: %s", dir,
                    strerror(errno));
            status = SY_EIO;
        } else if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            sy_errf(err, err_len, "%s is not a directory", dir);
            status = SY_EIO;
        }
        *p = c;
        if (!c)
            break;
    }
    free(dir);
    return status;
}

static int exec_sql(sy_store_sqlite *q, const char *sql, const char *what)
{
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? SY_OK : db_fail(q, rc, "%s", what);
}

static int read_version(sy_store_sqlite *q, int *version)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(q->db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_OK ? SY_OK : db_fail(q, rc, "read schema version");
    sqlite3_finalize(st);
    return status;
}

static int check_version(sy_store_sqlite *q, int version)
{
    if (version <= SCHEMA_VERSION && version >= 0)
        return SY_OK;
    if (version < 0)
        return sy_store_fail(&q->base, SY_ENOTSUP,
                             "%s: not a switchyard store (user_version %d)",
                             q->where, version);
    return sy_store_fail(&q->base, SY_ENOTSUP,
                         "%s: made by a newer switchyard (schema %d, this "
                         "build knows %d)", q->where, version, SCHEMA_VERSION);
}

/* One step in its own transaction, if another process has not done it. */
static int migrate_step(sy_store_sqlite *q, bool *done)
{
    int version = 0;
    int status = exec_sql(q, "BEGIN IMMEDIATE", "begin migration");
    if (status != SY_OK)
        return status;
    status = read_version(q, &version);
    if (status == SY_OK)
        status = check_version(q, version);
    *done = status != SY_OK || version == SCHEMA_VERSION;
    if (status == SY_OK && !*done) {
        char set[64];
        snprintf(set, sizeof set, "PRAGMA user_version = %d", version + 1);
        status = exec_sql(q, migrations[version], "migrate schema");
        if (status == SY_OK)
            status = exec_sql(q, set, "set schema version");
    }
    if (status == SY_OK)
        return exec_sql(q, "COMMIT", "commit migration");
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    return status;
}

static int migrate(sy_store_sqlite *q)
{
    int version = 0;
    /* The common case, an up-to-date file, takes no write lock. */
    int status = read_version(q, &version);
    if (status == SY_OK)
        status = check_version(q, version);
    for (bool done = version == SCHEMA_VERSION; status == SY_OK && !done;)
        status = migrate_step(q, &done);
    return status;
}

static int configure(sy_store_sqlite *q, const open_opts *o)
{
    sqlite3_extended_result_codes(q->db, 1);
    sqlite3_busy_timeout(q->db, o->busy_timeout_ms);
    /* The log file outlives the connection: the last close still copies
     * every frame into the database and syncs it, but leaves the file to
     * the next open instead of deleting it.  Deleting a file whose blocks
     * were synced frees them, and on a filesystem mounted with `discard`
     * (common on virtual disks) that took 7-9 ms of every host's exit for
     * a log of 4 MB; the next open reads the log back in under 1 ms.  (No
     * such file for "sqlite::memory:": SQLITE_NOTFOUND, nothing to do.) */
    int persist = 1;
    sqlite3_file_control(q->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
    int status = exec_sql(q, "PRAGMA journal_mode = WAL", "set WAL mode");
    if (status == SY_OK)
        status = exec_sql(q, o->sync_full ? "PRAGMA synchronous = FULL"
                                          : "PRAGMA synchronous = NORMAL",
                          "set synchronous");
    if (status == SY_OK)
        status = exec_sql(q, "PRAGMA foreign_keys = ON", "enable foreign keys");
    return status;
}

static int prepare_all(sy_store_sqlite *q)
{
    char *one = sy_asprintf(claim_one_fmt, "");
    char *many = sy_asprintf(claim_many_fmt, "");
    int status = one && many ? SY_OK
                             : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    for (int i = 0; i < ST_COUNT && status == SY_OK; i++) {
        const char *sql = i == ST_CLAIM_ONE    ? one
                          : i == ST_CLAIM_MANY ? many
                                               : sql_text[i];
        int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
                                    &q->st[i], NULL);
        if (rc != SQLITE_OK)
            status = db_fail(q, rc, "prepare statement %d", i);
    }
    free(one);
    free(many);
    return status;
}

/* Splits "PATH?QUERY" and resolves PATH; *path is malloc'd. */
static int parse_target(const char *target, const char *base_dir, char **path,
                        open_opts *o, char *err, size_t err_len)
{
    const char *q = strchr(target, '?');
    size_t len = q ? (size_t)(q - target) : strlen(target);
    if (len == 0) {
        sy_errf(err, err_len, "store \"sqlite:%s\": no file path (write "
                "\"sqlite:PATH\" or \"sqlite::memory:\")", target);
        return SY_EINVAL;
    }
    if (len >= 2 && target[0] == '/' && target[1] == '/') {
        sy_errf(err, err_len, "store \"sqlite:%s\": write \"sqlite:PATH\" "
                "without \"//\" (e.g. \"sqlite:/var/lib/switchyard.db\")",
                target);
        return SY_EINVAL;
    }
    o->sync_full = false;
    o->busy_timeout_ms = DEFAULT_BUSY_TIMEOUT_MS;
    char qerr[256];
    if (q && parse_query(q + 1, o, qerr, sizeof qerr) != SY_OK) {
        sy_errf(err, err_len, "store \"sqlite:%s\": %s", target, qerr);
        return SY_EINVAL;
    }
    char *p = sy_xmalloc(len + 1);
    memcpy(p, target, len);
    p[len] = '\0';
    if (strcmp(p, ":memory:") == 0) {
        *path = p;
        return SY_OK;
    }
    *path = sy_path_join(base_dir, p);
    free(p);
    return SY_OK;
}

static int open_db(sy_store_sqlite *q, const char *path, const open_opts *o)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(path, &q->db, flags, NULL);
    if (rc != SQLITE_OK) {
        if (!q->db)
            return sy_store_fail(&q->base, SY_ENOMEM, "%s: out of memory",
                                 q->where);
        return db_fail(q, rc, "open");
    }
    int status = configure(q, o);
    if (status == SY_OK)
        status = migrate(q);
    if (status == SY_OK)
        status = prepare_all(q);
    return status;
}

int sy_store_sqlite_open(const char *target, const char *base_dir,
                         sy_store **out, char *err, size_t err_len)
{
    char *path = NULL;
    open_opts o;
    int status = parse_target(target, base_dir, &path, &o, err, err_len);
    if (status != SY_OK)
        return status;
    bool memory = strcmp(path, ":memory:") == 0;
    if (!memory && (status = make_parents(path, err, err_len)) != SY_OK) {
        free(path);
        return status;
    }
    sy_store_sqlite *q = calloc(1, sizeof *q);
    if (q)
        q->where = sy_asprintf("sqlite:%s", path);
    if (!q || !q->where) {
        free(q);
        free(path);
        sy_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    q->base.ops = &sqlite_ops;
    status = open_db(q, path, &o);
    if (status == SY_OK && !memory)
        q->ckpt = sy_ckpt_start(q->db, path, o.busy_timeout_ms);
    free(path);
    if (status != SY_OK) {
        sy_errf(err, err_len, "%s", q->base.err);
        sq_close(&q->base);
        return status;
    }
    *out = &q->base;
    return SY_OK;
}
