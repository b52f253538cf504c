/*
 * store/sqlite/statements.c -- every statement of the SQLite store.
 *
 * Every statement is prepared once, at open, and kept (a persistent
 * prepare); a call binds its parameters, steps and resets, so the hot path
 * (one task-row UPDATE per changed task, thousands per batch) allocates
 * nothing of its own.  Claims with a list of stale owners are the one
 * exception: the list has a variable length, so that statement is built
 * per call (claims are per run, not per task).
 *
 * States are stored as their sy_run_state / sy_task_state numbers
 * (workflow/state.h): a run is live in 0 and 1 (Pending, Running), a task
 * is done from 3 (Completed) up.
 */
#include <stdlib.h>

#include "base/util.h"
#include "store/sqlite/internal.h"

/* A hundred rows' worth of "(?,?,?,?)" for SY_SQL_INSERT_TASKS. */
#define TASK_ROW "(?,?,?,?)"
#define TASK_ROWS_10                                                          \
    TASK_ROW "," TASK_ROW "," TASK_ROW "," TASK_ROW "," TASK_ROW ","          \
    TASK_ROW "," TASK_ROW "," TASK_ROW "," TASK_ROW "," TASK_ROW
#define TASK_ROWS_100                                                         \
    TASK_ROWS_10 "," TASK_ROWS_10 "," TASK_ROWS_10 "," TASK_ROWS_10 ","       \
    TASK_ROWS_10 "," TASK_ROWS_10 "," TASK_ROWS_10 "," TASK_ROWS_10 ","       \
    TASK_ROWS_10 "," TASK_ROWS_10
_Static_assert(SY_SQL_TASK_ROWS == 100, "TASK_ROWS_100 writes 100 rows");

#define RUN_COLS                                                              \
    "id, workflow, tenant, hash, state, context, owner, lease_until, "        \
    "cancel_requested, created, started, finished, error, n_tasks, "          \
    "lease_epoch, no_cache, priority"

/* A fenced write's condition (store.h, sy_store_fence): the run is still
 * held by the fence's claim, or there is no fence.  Folded into each
 * write's own statement, so the check and the write are one step under
 * SQLite's write lock, and the hot path keeps one statement per task. */
#define FENCE(run, owner, epoch)                                              \
    " (" owner " IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = " run      \
    " AND owner = " owner " AND lease_epoch = " epoch "))"

/* The attempt token's condition for a statement on another table (an
 * event): task `idx` of the run still holds `token`, or there is no
 * fence.  On the task row itself it is just "fence = token". */
#define TOKEN(run, idx, owner, token)                                         \
    " (" owner " IS NULL OR EXISTS (SELECT 1 FROM tasks WHERE run_id = " run \
    " AND idx = " idx " AND fence = " token "))"

/* The hold a row's write leaves (sqlite/holds.c): the one given, when the
 * write starts the attempt that took it; none once the task leaves
 * Running (2) or its attempt token moves on; else the row's. */
#define HOLD(given, state, token)                                             \
    "CASE WHEN " given " IS NOT NULL THEN " given " WHEN " state " <> 2 OR "  \
    token " <> fence THEN NULL ELSE hold END"

/* The task-row write: every mutable column; a write that moves the
 * attempt token on (?15 past the row's) starts an attempt, and the
 * fence's owner (?13) is recorded as its host. */
#define UPDATE_TASK_SET                                                       \
    "UPDATE tasks SET state = ?3, attempts = ?4, failures = ?5,"              \
    " recoveries = ?6, executor = ?7, error = ?8, output = ?9,"              \
    " ready_at = ?10, started = ?11, finished = ?12,"                        \
    " host = CASE WHEN ?15 <> fence THEN ?13 ELSE host END, fence = ?15,"    \
    " waiting_for = ?17, hold = " HOLD("?18", "?3", "?15") " WHERE run_id = ?1 AND idx = ?2"

/* The claim condition: a live run nobody holds (no owner, an expired
 * lease, or a dead owner's).  ?3 is now; the stale list is ?5... */
#define CLAIMABLE "state IN (0, 1) AND (owner IS NULL OR lease_until < ?3%s)"
#define CLAIM_SET                                                             \
    "UPDATE runs SET owner = ?1, lease_until = ?2, "                          \
    "lease_epoch = lease_epoch + 1, "                                         \
    "started = CASE WHEN state = 0 THEN ?3 ELSE started END, "                \
    "state = CASE WHEN state = 0 THEN 1 ELSE state END "
const char sy_sqlite_claim_one_format[] =
    CLAIM_SET "WHERE id = ?4 AND " CLAIMABLE;
/* RETURNING gives no order: the ids are sorted afterwards. */
const char sy_sqlite_claim_many_format[] =
    CLAIM_SET "WHERE id IN (SELECT id FROM runs WHERE " CLAIMABLE
              " ORDER BY id LIMIT ?4) RETURNING id";

static const char *const sql_text[SY_SQL_COUNT] = {
    [SY_SQL_BEGIN] = "BEGIN IMMEDIATE",
    [SY_SQL_COMMIT] = "COMMIT",
    [SY_SQL_ROLLBACK] = "ROLLBACK",
    [SY_SQL_SAVEPOINT] = "SAVEPOINT sy_op",
    [SY_SQL_RELEASE] = "RELEASE sy_op",
    [SY_SQL_UNDO] = "ROLLBACK TO sy_op",
    [SY_SQL_PUT_DEF] =
        "INSERT INTO definitions (hash, tenant, workflow, definition, created)"
        " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (hash) DO NOTHING",
    [SY_SQL_GET_DEF] = "SELECT definition FROM definitions WHERE hash = ?1",
    [SY_SQL_HAS_DEF] = "SELECT 1 FROM definitions WHERE hash = ?1",
    [SY_SQL_INSERT_RUN] =
        "INSERT INTO runs (hash, tenant, workflow, state, context, created,"
        " n_tasks) VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)",
    [SY_SQL_SET_RUN_PRIORITY] = "UPDATE runs SET priority = ?2 WHERE id = ?1",
    [SY_SQL_INSERT_TASK] =
        "INSERT INTO tasks (run_id, idx, task_id, ns) VALUES (?1, ?2, ?3, ?4)",
    /* SY_SQL_TASK_ROWS rows a statement: one a row cost twice as much per
     * row (1.5 s against 0.7 s for a million), the statement's own start
     * and reset being most of a row. */
    [SY_SQL_INSERT_TASKS] =
        "INSERT INTO tasks (run_id, idx, task_id, ns) VALUES " TASK_ROWS_100,
    [SY_SQL_GET_RUN] = "SELECT " RUN_COLS " FROM runs WHERE id = ?1",
    [SY_SQL_LIST_RUNS] =
        "SELECT " RUN_COLS " FROM runs ORDER BY id DESC LIMIT ?1",
    [SY_SQL_RUN_EXISTS] = "SELECT 1 FROM runs WHERE id = ?1",
    [SY_SQL_LIST_TASKS] =
        "SELECT idx, task_id, ns, state, attempts, failures, recoveries,"
        " executor, error, output, ready_at, started, finished, fence, host,"
        " waiting_for FROM tasks WHERE run_id = ?1 ORDER BY idx",
    /* SY_SQL_CLAIM_ONE and SY_SQL_CLAIM_MANY: from the formats above. */
    [SY_SQL_LIST_OWNERS] =
        "SELECT DISTINCT owner FROM runs WHERE state IN (0, 1)"
        " AND owner IS NOT NULL ORDER BY owner",
    /* An expired lease is left alone: another host may be claiming it. */
    [SY_SQL_RENEW] = "UPDATE runs SET lease_until = ?2"
                     " WHERE owner = ?1 AND state IN (0, 1)"
                     " AND lease_until >= ?3 RETURNING id",
    [SY_SQL_RELEASE_OWNER] = "UPDATE runs SET owner = NULL, lease_until = 0"
                             " WHERE owner = ?1 AND state IN (0, 1)",
    [SY_SQL_RUN_STATE] = "SELECT state, owner IS NULL FROM runs WHERE id = ?1",
    [SY_SQL_CANCEL_PENDING] =
        "UPDATE runs SET state = 4, cancel_requested = 1, finished = ?2,"
        " error = 'cancelled before it started' WHERE id = ?1",
    [SY_SQL_SKIP_TASKS] = "UPDATE tasks SET state = 5, finished = ?2, waiting_for = NULL"
                          " WHERE run_id = ?1 AND (state < 3 OR state = 7)",
    [SY_SQL_FLAG_CANCEL] = "UPDATE runs SET cancel_requested = 1 WHERE id = ?1",
    [SY_SQL_CANCEL_REQUESTS] =
        "SELECT id FROM runs WHERE owner = ?1 AND cancel_requested = 1"
        " AND state IN (0, 1) ORDER BY id",
    /* ?16 is the attempt token the writer holds. */
    [SY_SQL_UPDATE_TASK] =
        UPDATE_TASK_SET " AND (?13 IS NULL OR fence = ?16) AND"
        FENCE("?1", "?13", "?14"),
    /* The same without the run's claim, for a run whose claim a write of
     * the open batch has passed already; the token is still checked, per
     * task. */
    [SY_SQL_UPDATE_TASK_HELD] = UPDATE_TASK_SET " AND fence = ?16",
    [SY_SQL_UPDATE_RUN] =
        "UPDATE runs SET"
        " started = CASE WHEN ?2 = 1 AND state <> 1 THEN ?4 ELSE started END,"
        " finished = CASE WHEN ?2 >= 2 AND state < 2 THEN ?4 ELSE finished END,"
        " state = ?2, error = ?3 WHERE id = ?1 AND (?5 IS NULL OR"
        " (owner = ?5 AND lease_epoch = ?6))",
    [SY_SQL_ADD_EVENT] =
        "INSERT INTO events (run_id, idx, attempt, kind, detail, at)"
        " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE" FENCE("?1", "?7", "?8")
        " AND" TOKEN("?1", "?2", "?7", "?9"),
    [SY_SQL_RUN_HOLDER] = "SELECT owner, lease_epoch FROM runs WHERE id = ?1",
    [SY_SQL_TASK_TOKEN] =
        "SELECT fence, host FROM tasks WHERE run_id = ?1 AND idx = ?2",
    /* Tasks and events go with their run (ON DELETE CASCADE). */
    [SY_SQL_DELETE_FINISHED] =
        "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE state >= 2"
        " AND finished < ?1 ORDER BY finished, id LIMIT ?2)",
    [SY_SQL_PUT_MAP] = "INSERT OR IGNORE INTO task_maps (run_id, idx, size)"
                       " SELECT ?1, ?2, ?3 WHERE" FENCE("?1", "?4", "?5"),
    /* The element row's write (sqlite/elements.c): as UPDATE_TASK, with the
     * element's own token; a row not there yet is inserted by the next. */
    [SY_SQL_UPDATE_ELEMENT] =
        "UPDATE task_elements SET state = ?4, attempts = ?5, failures = ?6,"
        " recoveries = ?7, executor = ?8, error = ?9, output = ?10,"
        " ready_at = ?11, started = ?12, finished = ?13,"
        " host = CASE WHEN ?16 <> fence THEN ?14 ELSE host END, fence = ?16,"
        " waiting_for = ?18, hold = " HOLD("?19", "?4", "?16")
        " WHERE run_id = ?1 AND idx = ?2 AND elem = ?3 AND (?14 IS NULL OR fence = ?17)"
        " AND" FENCE("?1", "?14", "?15"),
    [SY_SQL_INSERT_ELEMENT] =
        "INSERT OR IGNORE INTO task_elements (run_id, idx, elem, state, attempts,"
        " failures, recoveries, executor, error, output, ready_at, started, finished,"
        " host, fence, waiting_for, hold) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
        " ?11, ?12, ?13, CASE WHEN ?16 <> 0 THEN ?14 END, ?16, ?18, ?19"
        " WHERE (SELECT size FROM task_maps WHERE run_id = ?1 AND idx = ?2) > ?3 AND"
        FENCE("?1", "?14", "?15"),
    [SY_SQL_LIST_MAPS] =
        "SELECT m.idx, m.size, e.state, count(e.elem) FROM task_maps m"
        " LEFT JOIN task_elements e ON e.run_id = m.run_id AND e.idx = m.idx"
        " WHERE m.run_id = ?1 GROUP BY m.idx, e.state ORDER BY m.idx",
    [SY_SQL_LIST_ELEMENTS] =
        "SELECT elem, state, attempts, failures, recoveries, executor, error,"
        " output, ready_at, started, finished, fence, host, waiting_for FROM task_elements"
        " WHERE run_id = ?1 AND idx = ?2 AND (?3 = 0 OR state < 3 OR state = 7)"
        " ORDER BY elem",
    [SY_SQL_LIST_EVENTS] = "SELECT idx, attempt, kind, detail, at FROM events"
                           " WHERE run_id = ?1 ORDER BY id",
    /* Fenced like an event: only for the attempt the task still holds. */
    [SY_SQL_RECORD_PROCESS] =
        "INSERT INTO processes (run_id, idx, attempt, pgid, host, machine,"
        " boot_id, start_time, recorded)"
        " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE" FENCE("?1", "?10", "?11")
        " AND" TOKEN("?1", "?2", "?10", "?12")
        " AND EXISTS (SELECT 1 FROM runs WHERE id = ?1)"
        " ON CONFLICT (run_id, idx, attempt, pgid) DO UPDATE SET"
        " host = excluded.host, machine = excluded.machine,"
        " boot_id = excluded.boot_id, start_time = excluded.start_time,"
        " recorded = excluded.recorded",
    [SY_SQL_LIST_PROCESSES] =
        "SELECT idx, attempt, host, machine, boot_id, pgid, start_time,"
        " recorded FROM processes WHERE run_id = ?1 ORDER BY idx, attempt, pgid",
    /* Fenced as an event is. */
    [SY_SQL_ADD_LOG] =
        "INSERT OR REPLACE INTO attempt_logs (run_id, idx, attempt, stream,"
        " text, size, dropped, at) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8"
        " WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1) AND"
        FENCE("?1", "?9", "?10") " AND" TOKEN("?1", "?2", "?9", "?11"),
    /* "stdout" sorts after "stderr": DESC puts it first. */
    [SY_SQL_LIST_LOGS] =
        "SELECT idx, attempt, stream, text, size, dropped, at FROM attempt_logs"
        " WHERE run_id = ?1 AND at >= ?2 ORDER BY idx, attempt, stream DESC",
    [SY_SQL_REOPEN_RUN] =
        "UPDATE runs SET state = 0, owner = NULL, lease_until = 0,"
        " lease_epoch = lease_epoch + 1, cancel_requested = 0, finished = 0,"
        " error = NULL, no_cache = ?2 WHERE id = ?1 AND state >= 2",
    [SY_SQL_REOPEN_TASK] =
        "UPDATE tasks SET state = 0, failures = 0, recoveries = 0,"
        " error = NULL, output = NULL, ready_at = 0, finished = 0,"
        " waiting_for = NULL WHERE run_id = ?1 AND idx = ?2",
    /* A mapped task retried maps again, from its input as it is then. */
    [SY_SQL_REOPEN_MAP] = "DELETE FROM task_maps WHERE run_id = ?1 AND idx = ?2",
    [SY_SQL_REOPEN_ELEMENTS] = "DELETE FROM task_elements WHERE run_id = ?1 AND idx = ?2",
    /* Flow-control slots (sqlite/slots.c): a slot row taken; the holders
     * of an attempt or a run, given back. */
    [SY_SQL_SLOT_TAKE] = "INSERT INTO slots (key, run_id, idx, elem, token, n, owner, epoch,"
                         " taken) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                         " ON CONFLICT DO UPDATE SET n = excluded.n, owner = excluded.owner,"
                         " epoch = excluded.epoch, taken = excluded.taken",
    [SY_SQL_SLOT_HELD_BY] = "SELECT key, owner, n, epoch, run_id FROM slot_holders WHERE"
                            " run_id = ?1 AND idx = ?2 AND elem = ?3 AND token = ?4",
    [SY_SQL_SLOT_HELD_BY_RUN] = "SELECT key, owner, n, epoch, run_id FROM slot_holders"
                                " WHERE run_id = ?1",
    [SY_SQL_SLOT_RETURN] = "DELETE FROM slots WHERE run_id = ?1 AND idx = ?2 AND elem = ?3"
                           " AND token = ?4",
    [SY_SQL_SLOT_RETURN_RUN] = "DELETE FROM slots WHERE run_id = ?1",
    /* A take given back by its key: one seek of the primary key. */
    [SY_SQL_SLOT_RETURN_TAKE] = "DELETE FROM slots WHERE key = ?1 AND run_id = ?2 AND"
                                " idx = ?3 AND elem = ?4 AND token = ?5 AND owner = ?6",
    /* Slot waiters (sqlite/waiters.c): a key's live ones, asked at every
     * take that finds none yet this turn (engine/limits.c). */
    /* Whether any task waits at all: a turn of many keys asks each only
     * when one does. */
    [SY_SQL_ANY_WAITERS] = "SELECT EXISTS (SELECT 1 FROM slot_waiters)",
    [SY_SQL_KEY_WAITERS] = "SELECT w.key, w.run_id, w.idx, w.elem, w.tenant, w.priority,"
                           " w.since, w.n, w.owner FROM slot_waiters w WHERE w.key = ?1 AND"
                           SY_SQLITE_WAITER_LIVE("?2"),
    /* What each run's takes hold (sqlite/counts.c): its claim with its
     * row's (version and counts); written; what every live claim's rows
     * hold. */
    [SY_SQL_COUNT_CLAIM] = "SELECT r.owner, r.lease_epoch, r.lease_until, c.owner, c.epoch,"
                           " c.version, c.counts FROM runs r LEFT JOIN slot_counts c ON"
                           " c.run_id = r.id WHERE r.id = ?1",
    [SY_SQL_COUNT_PUT] = "INSERT INTO slot_counts (run_id, owner, epoch, counts, version)"
                         " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id) DO UPDATE SET"
                         " owner = excluded.owner, epoch = excluded.epoch,"
                         " counts = excluded.counts, version = excluded.version",
    [SY_SQL_COUNT_DELETE] = "DELETE FROM slot_counts WHERE run_id = ?1",
    [SY_SQL_COUNT_LIVE] = "SELECT c.run_id, c.counts FROM slot_counts c JOIN runs r ON"
                          " r.id = c.run_id AND r.owner = c.owner AND"
                          " r.lease_epoch = c.epoch AND r.lease_until > ?1",
    /* A take no start write carried, as slot rows (sqlite/holds.c). */
    [SY_SQL_HOLD_ROWS] = "INSERT INTO slots (key, run_id, idx, elem, token, n, owner, epoch,"
                         " taken) SELECT k.value ->> 0, ?1, ?2, ?3, ?4, k.value ->> 1,"
                         " ?6, ?5 ->> 'e', ?7 FROM json_each(?5, '$.k') k"
                         " WHERE true ON CONFLICT DO UPDATE SET n = excluded.n,"
                         " owner = excluded.owner, epoch = excluded.epoch,"
                         " taken = excluded.taken",
};

int sy_sqlite_prepare_all(sy_store_sqlite *q)
{
    char *one = sy_asprintf(sy_sqlite_claim_one_format, "");
    char *many = sy_asprintf(sy_sqlite_claim_many_format, "");
    int status = one && many
                     ? SY_OK
                     : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    for (int i = 0; i < SY_SQL_COUNT && status == SY_OK; i++) {
        const char *sql = i == SY_SQL_CLAIM_ONE    ? one
                          : i == SY_SQL_CLAIM_MANY ? many
                                                   : sql_text[i];
        int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
                                    &q->st[i], NULL);
        if (rc != SQLITE_OK)
            status = sy_sqlite_fail(q, rc, "prepare statement %d", i);
    }
    free(one);
    free(many);
    return status;
}
