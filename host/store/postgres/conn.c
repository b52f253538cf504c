/*
 * store/postgres/conn.c -- the PostgreSQL store's statements: the SQL of
 * each (mapped tasks' in postgres/map_sql.c), running them (again on a new
 * connection when safe), errors as sy_status, transactions and
 * savepoints.  Connecting and reconnecting are postgres/dial.c's.
 *
 * Each statement is prepared on the connection the first time it runs and
 * kept; a reconnect forgets them.  A statement that fails because the
 * connection dropped (a server restart, a network cut) is sent again on a
 * new connection, tried with a growing pause for up to SY_PG_RECONNECT_MS, when
 * that is safe: outside any transaction, or inside a batch, whose
 * statements so far are replayed first (postgres/journal.c).  It is not
 * safe inside a transaction of the store's own (create_run's: the caller
 * is told and may submit again) nor for a COMMIT, which may have landed:
 * those fail with SY_EIO.
 *
 * States are stored as their sy_run_state / sy_task_state numbers
 * (workflow/state.h): a run is live in 0 and 1, a task done from 3 up.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "store/postgres/internal.h"

#define RUN_COLS                                                              \
    "id, workflow, tenant, hash, state, context, owner, lease_until, "        \
    "cancel_requested, created, started, finished, error, n_tasks, "          \
    "lease_epoch, no_cache, priority"

/* The task-row write: every mutable column; a write that moves the
 * attempt token on ($15 past the row's) starts an attempt, and the
 * fence's owner ($13) is recorded as its host. */
#define UPDATE_TASK_SET                                                       \
    "UPDATE tasks SET state = $3, attempts = $4, failures = $5,"              \
    " recoveries = $6, executor = $7, error = $8, output = $9,"              \
    " ready_at = $10, started = $11, finished = $12,"                        \
    " host = CASE WHEN $15 <> fence THEN $13::text ELSE host END,"            \
    " fence = $15, waiting_for = $17::text, hold = COALESCE($18::text, "     \
    SY_PG_HOLD_KEPT("$3::smallint", "$15", "fence", "hold") ")"              \
    " WHERE run_id = $1 AND idx = $2"

#define CLAIM_SET                                                             \
    "UPDATE runs SET owner = $1, lease_until = $2,"                           \
    " lease_epoch = lease_epoch + 1,"                                         \
    " started = CASE WHEN state = 0 THEN $3 ELSE started END,"                \
    " state = CASE WHEN state = 0 THEN 1 ELSE state END "
/* A live run nobody holds: no owner, an expired lease, or a dead owner
 * ($5, a text[]). */
#define CLAIMABLE                                                             \
    "state IN (0, 1) AND (owner IS NULL OR lease_until < $3"                  \
    " OR owner = ANY ($5::text[]))"

static const char *const sql_text[SY_PG_MAP_FIRST] = {
    [SY_PG_PUT_DEF] =
        "INSERT INTO definitions (hash, tenant, workflow, definition, created)"
        " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (hash) DO NOTHING",
    [SY_PG_GET_DEF] = "SELECT definition FROM definitions WHERE hash = $1",
    /* No row when the definition is missing: a foreign-key error would
     * abort the transaction it runs in. */
    [SY_PG_SET_RUN_PRIORITY] = "UPDATE runs SET priority = $2::int WHERE id = $1::bigint",
    [SY_PG_INSERT_RUN] =
        "INSERT INTO runs (hash, tenant, workflow, state, context, created,"
        " n_tasks) SELECT $1, $2, $3, 0, $4, $5, $6 WHERE EXISTS"
        " (SELECT 1 FROM definitions WHERE hash = $1) RETURNING id",
    /* Every task row of a run in one round trip. */
    [SY_PG_INSERT_TASKS] =
        "INSERT INTO tasks (run_id, idx, task_id, ns)"
        " SELECT $1, u.i - 1, u.t, u.n FROM unnest($2::text[], $3::text[])"
        " WITH ORDINALITY AS u(t, n, i)",
    [SY_PG_GET_RUN] = "SELECT " RUN_COLS " FROM runs WHERE id = $1",
    /* LIMIT NULL is no limit. */
    [SY_PG_LIST_RUNS] =
        "SELECT " RUN_COLS " FROM runs ORDER BY id DESC LIMIT $1",
    [SY_PG_RUN_EXISTS] = "SELECT 1 FROM runs WHERE id = $1",
    [SY_PG_LIST_TASKS] =
        "SELECT idx, task_id, ns, state, attempts, failures, recoveries,"
        " executor, error, output, ready_at, started, finished, fence, host,"
        " waiting_for FROM tasks WHERE run_id = $1 ORDER BY idx",
    /* An UPDATE re-checks its WHERE on the newest row version after any
     * wait, so of two hosts claiming one run, one gets it. */
    [SY_PG_CLAIM_ONE] = CLAIM_SET "WHERE id = $4 AND " CLAIMABLE,
    /* SKIP LOCKED: hosts claiming at once take different runs instead of
     * queueing behind each other. */
    [SY_PG_CLAIM_MANY] =
        CLAIM_SET "WHERE id IN (SELECT id FROM runs WHERE " CLAIMABLE
        " ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING id",
    [SY_PG_LIST_OWNERS] =
        "SELECT DISTINCT owner FROM runs WHERE state IN (0, 1)"
        " AND owner IS NOT NULL ORDER BY owner",
    /* An expired lease is left alone: another host may be claiming it. */
    /* A host's slot counts (postgres/grants.c) live as its leases do. */
    [SY_PG_RENEW] = "WITH g AS (UPDATE slot_counts SET until = $2 WHERE owner = $1"
                    " AND until >= $3) UPDATE runs SET lease_until = $2"
                    " WHERE owner = $1 AND state IN (0, 1)"
                    " AND lease_until >= $3 RETURNING id",
    [SY_PG_RELEASE_OWNER] = "WITH g AS (DELETE FROM slot_counts WHERE owner = $1)"
                            " UPDATE runs SET owner = NULL, lease_until = 0"
                            " WHERE owner = $1 AND state IN (0, 1)",
    [SY_PG_RUN_STATE] =
        "SELECT state, owner IS NULL FROM runs WHERE id = $1 FOR UPDATE",
    [SY_PG_CANCEL_PENDING] =
        "UPDATE runs SET state = 4, cancel_requested = 1, finished = $2,"
        " error = 'cancelled before it started' WHERE id = $1",
    [SY_PG_SKIP_TASKS] = "UPDATE tasks SET state = 5, finished = $2, waiting_for = NULL, hold = NULL"
                         " WHERE run_id = $1 AND (state < 3 OR state = 7)",
    [SY_PG_FLAG_CANCEL] = "UPDATE runs SET cancel_requested = 1 WHERE id = $1",
    [SY_PG_CANCEL_REQUESTS] =
        "SELECT id FROM runs WHERE owner = $1 AND cancel_requested = 1"
        " AND state IN (0, 1) ORDER BY id",
    /* $16 is the attempt token the writer holds; the row lock the UPDATE
     * takes serializes two writers of one task, and the second re-checks
     * the token on the first's row. */
    [SY_PG_UPDATE_TASK] =
        UPDATE_TASK_SET " AND ($13::text IS NULL OR fence = $16) AND"
        SY_PG_FENCE("$1", "$13", "$14"),
    /* The same for a run whose claim this batch has checked (and share-
     * locked) already; the token is still checked, per task.  $14 (the
     * epoch) is named only so that both statements take the same
     * parameters. */
    [SY_PG_UPDATE_TASK_HELD] =
        UPDATE_TASK_SET " AND fence = $16 AND $14::bigint IS NOT NULL",
    /* Many task rows, each written and fenced as by UPDATE_TASK: one
     * array per column, a row per element; the rows written come back by
     * their position (postgres/batch.c).  Each run's claim is checked
     * once per statement, not once per row: `held` share-locks the run
     * rows the fenced writes name, $20 (FOR SHARE returns the newest
     * version of a row a claim changed meanwhile, and makes later claims
     * wait for the batch, as SY_PG_FENCE does) and each row compares its
     * fence with it (a hashed subplan over `held`'s few rows).
     * The runs come as their own array so that the rows' arrays are read
     * once, as they are unnested: found from them, the rows were kept a
     * second time for `held` to read.  A row's hold
     * (`hd`) is an index into $19, the statement's distinct holds (0:
     * none): a turn's holds of a pool are one text, sent once. */
    [SY_PG_UPDATE_TASKS] =
        "WITH held AS MATERIALIZED (SELECT id, owner, lease_epoch FROM runs"
        " WHERE id = ANY($20::bigint[]) FOR SHARE)"
        " UPDATE tasks AS t SET state = u.st, attempts = u.att,"
        " failures = u.fail, recoveries = u.rec, executor = u.ex,"
        " error = u.err, output = u.out, ready_at = u.ra, started = u.sa,"
        " finished = u.fi,"
        " host = CASE WHEN u.fe <> t.fence THEN u.ow ELSE t.host END,"
        " fence = u.fe, waiting_for = u.wf, hold = COALESCE(($19::text[])[u.hd], "
        SY_PG_HOLD_KEPT("u.st", "u.fe", "t.fence", "t.hold") ")"
        " FROM unnest(" SY_PG_ARRAY(1, "bigint") ", "
        SY_PG_ARRAY(2, "int") ", " SY_PG_ARRAY(3, "int") ", " SY_PG_ARRAY(4, "int") ", "
        SY_PG_ARRAY(5, "int") ", " SY_PG_ARRAY(6, "int") ", " SY_PG_ARRAY(7, "text") ", "
        SY_PG_ARRAY(8, "text") ", " SY_PG_ARRAY(9, "text") ", " SY_PG_ARRAY(10, "bigint") ", "
        SY_PG_ARRAY(11, "bigint") ", " SY_PG_ARRAY(12, "bigint") ", " SY_PG_ARRAY(13, "text") ", "
        SY_PG_ARRAY(14, "bigint") ", " SY_PG_ARRAY(15, "bigint") ", " SY_PG_ARRAY(16, "bigint")
        ", " SY_PG_ARRAY(17, "text") ", " SY_PG_ARRAY(18, "int") ") WITH ORDINALITY AS u(run, i, st,"
        " att, fail, rec, ex, err, out, ra, sa, fi, ow, ep, fe, tok, wf, hd, n)"
        " WHERE t.run_id = u.run AND t.idx = u.i AND (u.ow IS NULL OR (t.fence = u.tok AND"
        " (u.run, u.ow, u.ep) IN (SELECT id, owner, lease_epoch FROM held)))"
        " RETURNING u.n",
    [SY_PG_UPDATE_RUN] =
        "UPDATE runs SET"
        " started = CASE WHEN $2 = 1 AND state <> 1 THEN $4 ELSE started END,"
        " finished = CASE WHEN $2 >= 2 AND state < 2 THEN $4"
        " ELSE finished END,"
        " state = $2, error = $3 WHERE id = $1 AND ($5::text IS NULL OR"
        " (owner = $5 AND lease_epoch = $6))",
    [SY_PG_ADD_EVENT] =
        "INSERT INTO events (run_id, idx, attempt, kind, detail, at)"
        " SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM runs"
        " WHERE id = $1) AND" SY_PG_FENCE("$1", "$7", "$8") " AND ($7::text IS NULL"
        " OR EXISTS (SELECT 1 FROM tasks WHERE run_id = $1 AND idx = $2"
        " AND fence = $9 FOR SHARE))",
    [SY_PG_RUN_HOLDER] = "SELECT owner, lease_epoch FROM runs WHERE id = $1",
    [SY_PG_TASK_TOKEN] =
        "SELECT fence, host FROM tasks WHERE run_id = $1 AND idx = $2",
    /* Tasks and events go with their run (ON DELETE CASCADE); SKIP LOCKED
     * leaves a run some host still holds a lock on for the next pass. */
    [SY_PG_DELETE_FINISHED] =
        "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE state >= 2"
        " AND finished < $1 ORDER BY finished, id LIMIT $2"
        " FOR UPDATE SKIP LOCKED)",
    [SY_PG_LIST_EVENTS] = "SELECT idx, attempt, kind, detail, at FROM events"
                          " WHERE run_id = $1 ORDER BY id",
    /* Fenced like an event: only for the attempt the task still holds. */
    [SY_PG_RECORD_PROCESS] =
        "INSERT INTO processes (run_id, idx, attempt, pgid, host, machine,"
        " boot_id, start_time, recorded)"
        " SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 WHERE EXISTS (SELECT 1"
        " FROM runs WHERE id = $1) AND" SY_PG_FENCE("$1", "$10", "$11")
        " AND ($10::text IS NULL OR EXISTS (SELECT 1 FROM tasks WHERE"
        " run_id = $1 AND idx = $2 AND fence = $12 FOR SHARE))"
        " ON CONFLICT (run_id, idx, attempt, pgid) DO UPDATE SET"
        " host = excluded.host, machine = excluded.machine,"
        " boot_id = excluded.boot_id, start_time = excluded.start_time,"
        " recorded = excluded.recorded",
    [SY_PG_LIST_PROCESSES] =
        "SELECT idx, attempt, host, machine, boot_id, pgid, start_time,"
        " recorded FROM processes WHERE run_id = $1 ORDER BY idx, attempt, pgid",
    /* One schedule's ticks are fired one transaction at a time: without
     * the lock, two hosts firing two different ticks would both find no
     * later one (postgres/schedule.c).  21337 is "SY"; hashtext spreads
     * the workflows. */
    [SY_PG_TICK_LOCK] = "SELECT pg_advisory_xact_lock(21337,"
                        " hashtext($1::text || '::' || $2::text))",
    [SY_PG_TICK_CLAIM] =
        "INSERT INTO schedule_ticks (tenant, workflow, tick, fired)"
        " SELECT $1::text, $2::text, $3::bigint, $4::bigint"
        " WHERE NOT EXISTS (SELECT 1 FROM schedule_ticks"
        " WHERE tenant = $1 AND workflow = $2 AND tick >= $3 AND backfill = 0)"
        " ON CONFLICT DO NOTHING",
    [SY_PG_TICK_RUN] = "UPDATE schedule_ticks SET run_id = $4"
                       " WHERE tenant = $1 AND workflow = $2 AND tick = $3",
    [SY_PG_TICK_FORGET] = "DELETE FROM schedule_ticks"
                          " WHERE tenant = $1 AND workflow = $2 AND tick < $3",
    [SY_PG_LAST_TICK] = "SELECT tick, coalesce(run_id, 0) FROM schedule_ticks"
                        " WHERE tenant = $1 AND workflow = $2 AND backfill = 0"
                        " ORDER BY tick DESC LIMIT 1",
    /* Fenced as an event is; a second write for the same attempt and
     * stream replaces the first. */
    [SY_PG_ADD_LOG] =
        "INSERT INTO attempt_logs (run_id, idx, attempt, stream, text, size,"
        " dropped, at) SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE EXISTS"
        " (SELECT 1 FROM runs WHERE id = $1) AND" SY_PG_FENCE("$1", "$9", "$10")
        " AND ($9::text IS NULL OR EXISTS (SELECT 1 FROM tasks WHERE"
        " run_id = $1 AND idx = $2 AND fence = $11 FOR SHARE))"
        " ON CONFLICT (run_id, idx, attempt, stream) DO UPDATE SET"
        " text = EXCLUDED.text, size = EXCLUDED.size,"
        " dropped = EXCLUDED.dropped, at = EXCLUDED.at",
    [SY_PG_LIST_LOGS] =
        "SELECT idx, attempt, stream, text, size, dropped, at FROM attempt_logs"
        " WHERE run_id = $1 AND at >= $2 ORDER BY idx, attempt, stream DESC",
    /* Only a finished run is reopened; the row lock it takes makes a
     * concurrent claim or a second retry wait, then find it Pending. */
    [SY_PG_REOPEN_RUN] =
        "UPDATE runs SET state = 0, owner = NULL, lease_until = 0,"
        " lease_epoch = lease_epoch + 1, cancel_requested = 0, finished = 0,"
        " error = NULL, no_cache = $2::int WHERE id = $1 AND state >= 2",
    /* A mapped task retried maps again, from its input as it is then. */
    [SY_PG_REOPEN_TASK] =
        "WITH elements AS (DELETE FROM task_elements WHERE run_id = $1 AND idx = $2),"
        " maps AS (DELETE FROM task_maps WHERE run_id = $1 AND idx = $2)"
        " UPDATE tasks SET state = 0, failures = 0, recoveries = 0,"
        " error = NULL, output = NULL, ready_at = 0, finished = 0,"
        " waiting_for = NULL, hold = NULL WHERE run_id = $1 AND idx = $2",
    [SY_PG_RUN_STATE_OF] = "SELECT state FROM runs WHERE id = $1",
};

/* --- parameters ------------------------------------------------------------ */

void sy_pg_text(sy_pg_params *p, int i, const char *s)
{
    p->v[i - 1] = s;
    if (p->n < i)
        p->n = i;
}

void sy_pg_int(sy_pg_params *p, int i, int64_t v)
{
    snprintf(p->num[i - 1], sizeof p->num[i - 1], "%lld", (long long)v);
    sy_pg_text(p, i, p->num[i - 1]);
}

int64_t sy_pg_col_int(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0
                                    : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

int64_t sy_pg_changes(const PGresult *res)
{
    const char *n = PQcmdTuples((PGresult *)res);
    return n && *n ? strtoll(n, NULL, 10) : 0;
}

/* --- errors ---------------------------------------------------------------- */

static int map_state(const char *sqlstate, bool connection_bad)
{
    if (connection_bad || !sqlstate)
        return SY_EIO;
    if (strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0 ||
        strcmp(sqlstate, "55P03") == 0)
        return SY_EBUSY;
    if (strncmp(sqlstate, "08", 2) == 0 || strncmp(sqlstate, "57", 2) == 0 ||
        strncmp(sqlstate, "53", 2) == 0)
        return SY_EIO;
    if (strncmp(sqlstate, "22", 2) == 0 || strncmp(sqlstate, "23", 2) == 0)
        return SY_EINVAL;
    return SY_EINTERNAL;
}

int sy_pg_fail(sy_store_pg *q, const PGresult *res, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *msg = res ? PQresultErrorMessage(res) : "";
    if (!msg || !*msg)
        msg = q->conn ? PQerrorMessage(q->conn) : "no connection";
    /* libpq's messages end in a newline and may go on with DETAIL lines:
     * the first line is the reason. */
    int len = (int)strcspn(msg, "\n");
    snprintf(q->base.err, sizeof q->base.err, "%s: %s: %.*s", q->where, what,
             len, msg);
    bool bad = !q->conn || PQstatus(q->conn) == CONNECTION_BAD;
    return map_state(res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL,
                     bad);
}

static int prepare(sy_store_pg *q, int id)
{
    if (q->prepared[id])
        return SY_OK;
    char name[16];
    snprintf(name, sizeof name, "sy%d", id);
    const char *sql = id < SY_PG_MAP_FIRST     ? sql_text[id]
                      : id < SY_PG_KEYED_FIRST ? sy_pg_map_sql[id - SY_PG_MAP_FIRST]
                      : id < SY_PG_AUDIT_FIRST ? sy_pg_keyed_sql[id - SY_PG_KEYED_FIRST]
                      : id < SY_PG_SLOT_FIRST  ? sy_pg_audit_sql[id - SY_PG_AUDIT_FIRST]
                      : id < SY_PG_RATE_FIRST  ? sy_pg_slot_sql[id - SY_PG_SLOT_FIRST]
                                               : sy_pg_rate_sql[id - SY_PG_RATE_FIRST];
    PGresult *r = PQprepare(q->conn, name, sql, 0, NULL);
    int status = PQresultStatus(r) == PGRES_COMMAND_OK
                     ? SY_OK
                     : sy_pg_fail(q, r, "prepare statement %d", id);
    PQclear(r);
    q->prepared[id] = status == SY_OK;
    return status;
}

/* Sends one statement (prepared `id`, or `sql` when not NULL) once. */
static PGresult *send_once(sy_store_pg *q, int id, const char *sql, int n,
                           const char *const *v)
{
    if (sql)
        return n ? PQexecParams(q->conn, sql, n, NULL, v, NULL, NULL, 0) : PQexec(q->conn, sql);
    if (prepare(q, id) != SY_OK)
        return NULL;
    char name[16];
    snprintf(name, sizeof name, "sy%d", id);
    return PQexecPrepared(q->conn, name, n, v, NULL, NULL, 0);
}

static bool succeeded(const PGresult *r)
{
    ExecStatusType st = PQresultStatus(r);
    return r && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
}

/* Rows a statement changed or returned: what a replay must find again. */
static int64_t rows_of(const PGresult *r)
{
    return PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r)
                                                : sy_pg_changes(r);
}

/* What a replay must find again of statement `id`: its rows and, for a
 * take, which keys it left unwritten and how much (the host keeps that,
 * postgres/unwritten.h, so a replay deciding otherwise fails). */
static int64_t outcome_of(int id, const PGresult *r)
{
    int64_t rows = rows_of(r);
    if ((id != SY_PG_SLOT_PUT && id != SY_PG_SLOT_PUT_QUICK) || PQntuples(r) != 1 ||
        PQnfields(r) < 5)
        return rows;
    uint64_t h = sy_fnv1a(SY_FNV_START, PQgetvalue(r, 0, 3));
    h = sy_fnv1a(h, PQgetvalue(r, 0, 4));
    return rows | (int64_t)((h & 0xffffffffffffULL) << 8);
}

/* On a new connection: the batch begun again and its statements so far
 * sent again, each changing what it changed the first time. */
static int replay(sy_store_pg *q)
{
    PGresult *r = PQexec(q->conn, "BEGIN");
    int status = succeeded(r) ? SY_OK : sy_pg_fail(q, r, "begin again");
    PQclear(r);
    for (size_t i = 0; status == SY_OK && i < q->journal.n; i++) {
        const sy_pg_entry *e = q->journal.e[i];
        r = send_once(q, e->id, e->sql, e->p.n, e->p.v);
        if (!succeeded(r))
            status = sy_pg_fail(q, r, "replay the batch after a reconnect");
        else if (outcome_of(e->id, r) == e->changes)
            ;
        else if (e->id == SY_PG_SLOT_PUT || e->id == SY_PG_SLOT_PUT_QUICK)
            status = sy_store_fail(&q->base, SY_EIO,
                                   "%s: replay the batch after a reconnect: "
                                   "statement %zu, a take of slots, decided "
                                   "otherwise than the first time (another host "
                                   "wrote in between)", q->where, i + 1);
        else
            status = sy_store_fail(&q->base, SY_EIO,
                                   "%s: replay the batch after a reconnect: "
                                   "statement %zu changed %lld rows, not "
                                   "%lld (another host wrote in between)",
                                   q->where, i + 1, (long long)rows_of(r),
                                   (long long)e->changes);
        PQclear(r);
    }
    if (status != SY_OK)
        q->lost = true;
    return status;
}

/* Runs a statement; see the top of this file for when a dropped
 * connection is re-established and the statement sent again. */
static int execute(sy_store_pg *q, int id, const char *sql,
                   const sy_pg_params *p, PGresult **res, const char *what)
{
    if (q->lost)
        return sy_store_fail(&q->base, SY_EIO,
                             "%s: %s: the connection was lost inside this "
                             "batch and it could not be replayed", q->where,
                             what);
    bool resendable = (!q->in_tx || q->batch) && !(sql && q->in_tx &&
                      (strncmp(sql, "COMMIT", 6) == 0 ||
                       strncmp(sql, "ROLLBACK", 8) == 0));
    int n = p ? p->n : 0;
    const char *const *v = p ? p->v : NULL;
    int64_t first_loss = 0;
    for (int attempt = 0;; attempt++) {
        int status = SY_OK;
        /* A new connection inside a batch has lost the batch's
         * transaction: it is replayed before anything else is sent. */
        if (PQstatus(q->conn) == CONNECTION_BAD) {
            status = resendable ? sy_pg_reconnect(q) : SY_EIO;
            if (status == SY_OK && q->batch)
                status = replay(q);
        }
        if (status != SY_OK) {
            if (q->batch)
                q->lost = true;
            return status == SY_EIO && !resendable
                       ? sy_pg_fail(q, NULL, "%s", what)
                       : status;
        }
        PGresult *r = send_once(q, id, sql, n, v);
        if (succeeded(r)) {
            if (q->batch)
                status = sy_pg_journal_add(q, id, sql, p, outcome_of(id, r));
            if (res && status == SY_OK)
                *res = r;
            else
                PQclear(r);
            return status;
        }
        /* A statement that may be sent again is, on each new connection,
         * for as long as a reconnect may take: a network that drops the
         * new connection too (flapping) is ridden out like one drop. */
        if (attempt == 0)
            first_loss = sy_clock_now_ms();
        if (PQstatus(q->conn) != CONNECTION_BAD || !resendable ||
            sy_clock_now_ms() - first_loss >= SY_PG_RECONNECT_MS) {
            status = r ? sy_pg_fail(q, r, "%s", what) : sy_pg_fail(q, NULL, "%s", what);
            PQclear(r);
            if (q->batch && PQstatus(q->conn) == CONNECTION_BAD)
                q->lost = true;
            return status;
        }
        PQclear(r);
    }
}

int sy_pg_run(sy_store_pg *q, int id, const sy_pg_params *p, PGresult **res,
              const char *what)
{
    if (res)
        *res = NULL;
    return execute(q, id, NULL, p, res, what);
}

int sy_pg_exec(sy_store_pg *q, const char *sql, const char *what)
{
    return execute(q, -1, sql, NULL, NULL, what);
}

int sy_pg_query(sy_store_pg *q, const char *sql, const sy_pg_params *p, PGresult **res,
                const char *what)
{
    if (res)
        *res = NULL;
    return execute(q, -1, sql, p, res, what);
}

/* --- transactions ---------------------------------------------------------- */

int sy_pg_transaction_begin(sy_store_pg *q, bool nested)
{
    if (nested)
        return sy_pg_exec(q, "SAVEPOINT sy_op", "savepoint");
    int status = sy_pg_exec(q, "BEGIN", "begin");
    q->in_tx = status == SY_OK;
    return status;
}

int sy_pg_transaction_end(sy_store_pg *q, bool nested, int status)
{
    if (nested) {
        if (status == SY_OK)
            return sy_pg_exec(q, "RELEASE SAVEPOINT sy_op", "release savepoint");
        sy_pg_exec(q, "ROLLBACK TO SAVEPOINT sy_op", "undo savepoint");
        return status;
    }
    q->in_tx = false;
    sy_pg_journal_clear(q);
    if (status == SY_OK) {
        if (PQstatus(q->conn) == CONNECTION_BAD)
            return sy_pg_fail(q, NULL, "commit");
        PGresult *r = PQexec(q->conn, "COMMIT");
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            status = sy_pg_fail(q, r, "commit");
        /* A COMMIT of a transaction that failed earlier answers ROLLBACK
         * without an error: nothing was kept. */
        else if (strcmp(PQcmdStatus(r), "COMMIT") != 0)
            status = sy_store_fail(&q->base, SY_EIO,
                                   "%s: commit: the transaction had failed; "
                                   "nothing was written", q->where);
        PQclear(r);
        return status;
    }
    if (PQstatus(q->conn) == CONNECTION_OK &&
        PQtransactionStatus(q->conn) != PQTRANS_IDLE)
        PQclear(PQexec(q->conn, "ROLLBACK"));
    return status;
}

int sy_pg_list_enter(sy_store_pg *q, int which, const char *fn)
{
    if (q->listing[which])
        return sy_store_fail(&q->base, SY_ESTATE,
                             "%s: called from its own callback", fn);
    q->listing[which] = true;
    return SY_OK;
}
