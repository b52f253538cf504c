/*
 * store/sqlite/schema.c -- the SQLite store's tables and their version.
 *
 * The schema is versioned with PRAGMA user_version; each migration step
 * runs in its own transaction and re-reads the version inside it, so two
 * processes opening a fresh file at once do not both apply a step.
 */
#include <stdio.h>

#include "base/util.h"
#include "store/sqlite/internal.h"

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
    /* 1 -> 2: fencing.  Each claim bumps the epoch, so a write naming
     * (owner, epoch) tells the current claim from an earlier one of a host
     * that was paused past its lease. */
    "ALTER TABLE runs ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;",
    /* 2 -> 3: attempt tokens.  Each attempt a host starts moves its task's
     * token on, so a write naming the token tells the current attempt from
     * an earlier one; `host` is whose write started it, so the host that
     * takes a run over can say whose attempts it found abandoned. */
    "ALTER TABLE tasks ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tasks ADD COLUMN host TEXT;",
    /* 3 -> 4: the process groups attempts run (sy_store_record_process),
     * so that the host recovering a task kills what a dead host left of
     * it before the retry starts. */
    "CREATE TABLE processes ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  pgid INTEGER NOT NULL,"
    "  host TEXT,"
    "  machine TEXT,"
    "  boot_id TEXT,"
    "  start_time INTEGER NOT NULL,"
    "  recorded INTEGER NOT NULL,"
    "  PRIMARY KEY (run_id, idx, attempt, pgid)) WITHOUT ROWID;",
    /* 4 -> 5: the ticks schedules fired.  The key is the claim: of the
     * hosts that fire one tick, one inserts its row, with its run, in one
     * transaction.  run_id is not a reference: retention deletes runs. */
    "CREATE TABLE schedule_ticks ("
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  tick INTEGER NOT NULL,"
    "  run_id INTEGER,"
    "  fired INTEGER NOT NULL,"
    "  PRIMARY KEY (tenant, workflow, tick)) WITHOUT ROWID;",
    /* 5 -> 6: what each attempt wrote on stdout and stderr, bounded by the
     * host's log_limit; a table of its own, so that listing tasks never
     * reads them, and gone with its run. */
    "CREATE TABLE attempt_logs ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  stream TEXT NOT NULL,"
    "  text TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  dropped INTEGER NOT NULL,"
    "  at INTEGER NOT NULL,"
    "  PRIMARY KEY (run_id, idx, attempt, stream)) WITHOUT ROWID;",
    /* 6 -> 7: dynamic fan-out.  A mapped task's size, and its elements'
     * rows, made as they are started (store.h, "mapped tasks"). */
    "CREATE TABLE task_maps ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  PRIMARY KEY (run_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE task_elements ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  elem INTEGER NOT NULL,"
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
    "  fence INTEGER NOT NULL DEFAULT 0,"
    "  host TEXT,"
    "  PRIMARY KEY (run_id, idx, elem)) WITHOUT ROWID;",
    /* Idempotent submits and backfills (store/keyed.h).  A run recorded
     * under a caller's key: the key is the claim, inserted with the run in
     * one transaction.  run_id is not a reference: retention deletes
     * runs.  A backfilled tick is marked so that the live schedule's "no
     * later tick fired" and its last tick look past it. */
    "CREATE TABLE run_keys ("
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL,"
    "  created INTEGER NOT NULL,"
    "  PRIMARY KEY (tenant, workflow, key)) WITHOUT ROWID;"
    "ALTER TABLE schedule_ticks ADD COLUMN backfill INTEGER NOT NULL DEFAULT 0;",
    /* Cached results (store/cache.h): the newest output of each task
     * namespace under each key.  run_id is not a reference: the output
     * outlives its run's retention. */
    "CREATE TABLE task_cache ("
    "  ns TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  output TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  completed INTEGER NOT NULL,"
    "  PRIMARY KEY (ns, key)) WITHOUT ROWID;",
    /* The audit trail (store/audit.h): who changed what, from where, and
     * how it ended.  Not tied to runs: a run's deletion keeps its rows;
     * retention deletes by time, hence the index on `at`. */
    "CREATE TABLE audit ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  at INTEGER NOT NULL,"
    "  who TEXT NOT NULL,"
    "  role TEXT NOT NULL,"
    "  action TEXT NOT NULL,"
    "  target TEXT,"
    "  origin TEXT NOT NULL,"
    "  ok INTEGER NOT NULL,"
    "  status INTEGER NOT NULL,"
    "  detail TEXT);"
    "CREATE INDEX audit_at ON audit(at);",
    /* Flow control (store/slots.h): one row per key an attempt holds,
     * with the claim it was taken under; by key to count a key's
     * holders, by run to give an attempt's back. */
    "CREATE TABLE slots ("
    "  key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  elem INTEGER NOT NULL,"
    "  token INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  taken INTEGER NOT NULL,"
    "  PRIMARY KEY (key, run_id, idx, elem, token)) WITHOUT ROWID;"
    "CREATE INDEX slots_run ON slots(run_id, idx, elem);",
    /* Named events (store/named_events.h; not the run-event journal,
     * `events`) and what workflow triggers made of them and of finished
     * runs: each item settled once per trigger (the key of
     * trigger_items), with the firing, and its run, that consumed it.
     * run_id is not a reference: retention deletes runs. */
    "CREATE TABLE named_events ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  name TEXT NOT NULL,"
    "  key TEXT,"
    "  data TEXT NOT NULL,"
    "  created INTEGER NOT NULL);"
    "CREATE INDEX named_events_name ON named_events(name, id);"
    "CREATE INDEX named_events_key ON named_events(name, key, created) WHERE key IS NOT NULL;"
    "CREATE TABLE trigger_states ("
    "  trigger_key TEXT PRIMARY KEY NOT NULL,"
    "  since INTEGER NOT NULL,"
    "  last_fired INTEGER NOT NULL DEFAULT 0,"
    "  last_run INTEGER NOT NULL DEFAULT 0,"
    "  firings INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;"
    "CREATE TABLE trigger_firings ("
    "  id INTEGER PRIMARY KEY,"
    "  trigger_key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL,"
    "  fired INTEGER NOT NULL,"
    "  items INTEGER NOT NULL);"
    "CREATE INDEX trigger_firings_trigger ON trigger_firings(trigger_key, id);"
    "CREATE TABLE trigger_items ("
    "  trigger_key TEXT NOT NULL,"
    "  source INTEGER NOT NULL,"
    "  item INTEGER NOT NULL,"
    "  firing INTEGER,"
    "  reason TEXT,"
    "  at INTEGER NOT NULL,"
    "  PRIMARY KEY (trigger_key, source, item)) WITHOUT ROWID;"
    "CREATE INDEX trigger_items_passed ON trigger_items(trigger_key, at) WHERE reason IS NOT NULL;",
    /* A run retried with `retry --no-cache`. */
    "ALTER TABLE runs ADD COLUMN no_cache INTEGER NOT NULL DEFAULT 0;",
    /* Why a Waiting task waits (a full concurrency key, pool or tenant
     * bound): written once per change of reason, cleared when it starts. */
    "ALTER TABLE tasks ADD COLUMN waiting_for TEXT;"
    "ALTER TABLE task_elements ADD COLUMN waiting_for TEXT;",
    /* What triggers made of an event, by the event (the dashboard's
     * events view, sy_store_event_settlements). */
    "CREATE INDEX trigger_items_item ON trigger_items (source, item);",
    /* Slot waiters (store/waiters.h): one row per task waiting for a key,
     * under its run's claim as a slot row; by key for the grant order,
     * by run to delete a task's. */
    "CREATE TABLE slot_waiters ("
    "  key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  elem INTEGER NOT NULL,"
    "  tenant TEXT NOT NULL,"
    "  priority INTEGER NOT NULL,"
    "  since INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  PRIMARY KEY (key, run_id, idx, elem)) WITHOUT ROWID;"
    "CREATE INDEX slot_waiters_run ON slot_waiters(run_id, idx, elem);",
    /* Rate limits (store/rates.h): a token bucket per key. */
    "CREATE TABLE rate_buckets ("
    "  key TEXT PRIMARY KEY,"
    "  level INTEGER NOT NULL,"
    "  refilled INTEGER NOT NULL,"
    "  interval_ms INTEGER NOT NULL) WITHOUT ROWID;",
    /* cancel_in_progress (store/preempt.h): a request to cancel the
     * holder, with why. */
    "ALTER TABLE slots ADD COLUMN cancel_why TEXT;",
    /* A run's priority from `submit --priority`, added to its tasks'. */
    "ALTER TABLE runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;",
    /* What each key's slot rows hold, by the host that took them, kept
     * with the rows (store/slots.h): a take reads it instead of counting
     * the key's holders.  Never less than what the live rows hold, so
     * filled in from the rows a store has. */
    "CREATE TABLE slot_counts ("
    "  key TEXT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  held INTEGER NOT NULL,"
    "  PRIMARY KEY (key, owner)) WITHOUT ROWID;"
    "INSERT INTO slot_counts (key, owner, held)"
    " SELECT key, owner, SUM(n) FROM slots GROUP BY key, owner;",
    /* Slot and waiter rows without a reference to their run: with foreign
     * keys on, SQLite looked the run up at each row's delete, 7 us of a
     * give-back's 11 (docs/flow-control.md, "The cost of limits").  A
     * deleted run's rows count for nothing (not live) and are reaped.
     * Slots lose their index by run too: the host gives a take back by
     * its key (sy_store_return_takes); only sy_store_return_slots, which
     * the host does not call, reads them by holder. */
    "CREATE TABLE slots_new ("
    "  key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  elem INTEGER NOT NULL,"
    "  token INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  taken INTEGER NOT NULL,"
    "  cancel_why TEXT,"
    "  PRIMARY KEY (key, run_id, idx, elem, token)) WITHOUT ROWID;"
    "INSERT INTO slots_new SELECT key, run_id, idx, elem, token, n, owner, epoch, taken,"
    " cancel_why FROM slots;"
    "DROP TABLE slots;"
    "ALTER TABLE slots_new RENAME TO slots;"
    "CREATE TABLE slot_waiters_new ("
    "  key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  elem INTEGER NOT NULL,"
    "  tenant TEXT NOT NULL,"
    "  priority INTEGER NOT NULL,"
    "  since INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  PRIMARY KEY (key, run_id, idx, elem)) WITHOUT ROWID;"
    "INSERT INTO slot_waiters_new SELECT key, run_id, idx, elem, tenant, priority, since, n,"
    " owner, epoch FROM slot_waiters;"
    "DROP TABLE slot_waiters;"
    "ALTER TABLE slot_waiters_new RENAME TO slot_waiters;"
    "CREATE INDEX slot_waiters_run ON slot_waiters(run_id, idx, elem);",
    /* A bucket's rate and burst, as its last take's claim said
     * (store/rates.h): a listing computes the tokens now from them; 0 on
     * a row no take has written since. */
    "ALTER TABLE rate_buckets ADD COLUMN rate INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE rate_buckets ADD COLUMN burst INTEGER NOT NULL DEFAULT 0;",
    /* Holds in the attempt's own row (sqlite/holds.c; docs/flow-control.md,
     * "The cost of limits"): the keys an attempt took are a column of its
     * task or element row, set by the write that starts it, so a take
     * writes no row of its own.  The counters become exact: one row per
     * run, what its takes hold key by key (JSON), under the claim that
     * took them, counted only while that claim is live (sqlite/counts.c).
     * Cancel requests get a table of their own (a hold in a
     * task row has no row to mark), and `slot_holders` names every holder,
     * in a slot row (a take no start write carried) or in an attempt's
     * row. */
    "ALTER TABLE tasks ADD COLUMN hold TEXT;"
    "ALTER TABLE task_elements ADD COLUMN hold TEXT;"
    "CREATE TABLE slot_cancels ("
    "  key TEXT NOT NULL,"
    "  run_id INTEGER NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  elem INTEGER NOT NULL,"
    "  token INTEGER NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  taken INTEGER NOT NULL,"
    "  why TEXT NOT NULL,"
    "  PRIMARY KEY (run_id, idx, elem, token, key)) WITHOUT ROWID;"
    "INSERT INTO slot_cancels SELECT key, run_id, idx, elem, token, owner, epoch, taken,"
    " cancel_why FROM slots WHERE cancel_why IS NOT NULL;"
    "ALTER TABLE slots DROP COLUMN cancel_why;"
    "DROP TABLE slot_counts;"
    "CREATE TABLE slot_counts ("
    "  run_id INTEGER PRIMARY KEY,"
    "  owner TEXT NOT NULL,"
    "  epoch INTEGER NOT NULL,"
    "  counts TEXT NOT NULL,"
    "  version INTEGER NOT NULL);"
    "INSERT INTO slot_counts (run_id, owner, epoch, counts, version)"
    " SELECT run_id, owner, epoch, json_group_object(key, n), -1 FROM"
    " (SELECT s.run_id, s.owner, s.epoch, s.key, SUM(s.n) AS n FROM slots s JOIN runs r ON"
    " r.id = s.run_id AND r.owner = s.owner AND r.lease_epoch = s.epoch"
    " GROUP BY s.run_id, s.key) GROUP BY run_id;"
    "CREATE VIEW slot_holders AS"
    " SELECT key, run_id, idx, elem, token, n, owner, epoch, taken FROM slots"
    " UNION ALL"
    " SELECT k.value ->> 0, t.run_id, t.idx, -1, t.fence, k.value ->> 1, t.host,"
    " t.hold ->> 'e', t.started FROM runs r JOIN tasks t ON t.run_id = r.id,"
    " json_each(t.hold, '$.k') k WHERE r.state < 2 AND t.hold IS NOT NULL AND t.state = 2"
    " UNION ALL"
    " SELECT k.value ->> 0, t.run_id, t.idx, t.elem, t.fence, k.value ->> 1, t.host,"
    " t.hold ->> 'e', t.started FROM runs r JOIN task_elements t ON t.run_id = r.id,"
    " json_each(t.hold, '$.k') k WHERE r.state < 2 AND t.hold IS NOT NULL AND t.state = 2;",
};
#define SCHEMA_VERSION ((int)SY_ARRAY_LEN(migrations))

const int sy_store_sqlite_schema_version = SCHEMA_VERSION;

static int read_version(sy_store_sqlite *q, int *version)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(q->db, "PRAGMA user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        rc = SQLITE_OK;
    }
    int status = rc == SQLITE_OK ? SY_OK
                                 : sy_sqlite_fail(q, rc, "read schema version");
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
    int status = sy_sqlite_exec(q, "BEGIN IMMEDIATE", "begin migration");
    if (status != SY_OK)
        return status;
    status = read_version(q, &version);
    if (status == SY_OK)
        status = check_version(q, version);
    *done = status != SY_OK || version == SCHEMA_VERSION;
    if (status == SY_OK && !*done) {
        char set[64];
        snprintf(set, sizeof set, "PRAGMA user_version = %d", version + 1);
        status = sy_sqlite_exec(q, migrations[version], "migrate schema");
        if (status == SY_OK)
            status = sy_sqlite_exec(q, set, "set schema version");
    }
    if (status == SY_OK)
        return sy_sqlite_exec(q, "COMMIT", "commit migration");
    sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    return status;
}

int sy_sqlite_migrate(sy_store_sqlite *q)
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
