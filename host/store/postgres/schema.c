/*
 * store/postgres/schema.c -- the PostgreSQL store's tables and their
 * version.
 *
 * The version is the one row of switchyard_schema.  Hosts started together
 * on a new database would race to create the tables, so the whole check
 * and every migration step run in one transaction under a transaction-
 * level advisory lock: the second host waits, then finds the schema
 * current.  DDL is transactional in PostgreSQL, so a step that fails
 * leaves nothing half made.
 *
 * Indexes are partial on live states where they serve claims and
 * renewals: finished runs pile up and must not grow what each claim scans
 * (docs/operations.md, on retention and autovacuum).
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/util.h"
#include "store/postgres/internal.h"

/* The advisory lock's key: "sy" and the schema's name, any constant no
 * other application on the database is likely to use. */
#define MIGRATION_LOCK "795518620018"

/* Step i takes the schema from version i to i + 1.  Append only: a shipped
 * step is never edited.  Version 1 here holds what SQLite's versions 1-3
 * built up (fencing and attempt tokens included). */
static const char *const migrations[] = {
    "CREATE TABLE definitions ("
    "  hash TEXT PRIMARY KEY,"
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  definition TEXT NOT NULL,"
    "  created BIGINT NOT NULL);"
    "CREATE TABLE runs ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  hash TEXT NOT NULL REFERENCES definitions(hash),"
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  state SMALLINT NOT NULL,"
    "  context TEXT,"
    "  owner TEXT,"
    "  lease_until BIGINT NOT NULL DEFAULT 0,"
    "  lease_epoch BIGINT NOT NULL DEFAULT 0,"
    "  cancel_requested SMALLINT NOT NULL DEFAULT 0,"
    "  created BIGINT NOT NULL,"
    "  started BIGINT NOT NULL DEFAULT 0,"
    "  finished BIGINT NOT NULL DEFAULT 0,"
    "  error TEXT,"
    "  n_tasks INTEGER NOT NULL);"
    "CREATE INDEX runs_live ON runs (id) WHERE state IN (0, 1);"
    "CREATE INDEX runs_owner ON runs (owner, lease_until)"
    "  WHERE state IN (0, 1);"
    "CREATE INDEX runs_finished ON runs (finished) WHERE state >= 2;"
    "CREATE TABLE tasks ("
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  task_id TEXT NOT NULL,"
    "  ns TEXT NOT NULL,"
    "  state SMALLINT NOT NULL DEFAULT 0,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  failures INTEGER NOT NULL DEFAULT 0,"
    "  recoveries INTEGER NOT NULL DEFAULT 0,"
    "  executor TEXT,"
    "  error TEXT,"
    "  output TEXT,"
    "  ready_at BIGINT NOT NULL DEFAULT 0,"
    "  started BIGINT NOT NULL DEFAULT 0,"
    "  finished BIGINT NOT NULL DEFAULT 0,"
    "  fence BIGINT NOT NULL DEFAULT 0,"
    "  host TEXT,"
    "  PRIMARY KEY (run_id, idx));"
    "CREATE TABLE events ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  detail TEXT,"
    "  at BIGINT NOT NULL);"
    "CREATE INDEX events_run ON events (run_id, id);",
    /* 1 -> 2: the process groups attempts run (sy_store_record_process),
     * so that the host recovering a task kills what a dead host left of
     * it before the retry starts. */
    "CREATE TABLE processes ("
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  pgid BIGINT NOT NULL,"
    "  host TEXT,"
    "  machine TEXT,"
    "  boot_id TEXT,"
    "  start_time BIGINT NOT NULL,"
    "  recorded BIGINT NOT NULL,"
    "  PRIMARY KEY (run_id, idx, attempt, pgid));",
    /* 2 -> 3: the ticks schedules fired (SQLite's 4 -> 5).  The key is
     * the claim; run_id is not a reference: retention deletes runs. */
    "CREATE TABLE schedule_ticks ("
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  tick BIGINT NOT NULL,"
    "  run_id BIGINT,"
    "  fired BIGINT NOT NULL,"
    "  PRIMARY KEY (tenant, workflow, tick));",
    /* 3 -> 4: what each attempt wrote on stdout and stderr, bounded by the
     * host's log_limit; a table of its own, so that listing tasks never
     * reads them, and gone with its run. */
    "CREATE TABLE attempt_logs ("
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL,"
    "  stream TEXT NOT NULL,"
    "  text TEXT NOT NULL,"
    "  size BIGINT NOT NULL,"
    "  dropped BIGINT NOT NULL,"
    "  at BIGINT NOT NULL,"
    "  PRIMARY KEY (run_id, idx, attempt, stream));",
    /* 4 -> 5: dynamic fan-out.  A mapped task's size, and its elements'
     * rows, made as they are started (store.h, "mapped tasks"). */
    "CREATE TABLE task_maps ("
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  size BIGINT NOT NULL,"
    "  PRIMARY KEY (run_id, idx));"
    "CREATE TABLE task_elements ("
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  elem BIGINT NOT NULL,"
    "  state SMALLINT NOT NULL DEFAULT 0,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  failures INTEGER NOT NULL DEFAULT 0,"
    "  recoveries INTEGER NOT NULL DEFAULT 0,"
    "  executor TEXT,"
    "  error TEXT,"
    "  output TEXT,"
    "  ready_at BIGINT NOT NULL DEFAULT 0,"
    "  started BIGINT NOT NULL DEFAULT 0,"
    "  finished BIGINT NOT NULL DEFAULT 0,"
    "  fence BIGINT NOT NULL DEFAULT 0,"
    "  host TEXT,"
    "  PRIMARY KEY (run_id, idx, elem));",
    /* Idempotent submits and backfills (store/keyed.h): as SQLite's. */
    "CREATE TABLE run_keys ("
    "  tenant TEXT NOT NULL,"
    "  workflow TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  run_id BIGINT NOT NULL,"
    "  created BIGINT NOT NULL,"
    "  PRIMARY KEY (tenant, workflow, key));"
    "ALTER TABLE schedule_ticks ADD COLUMN backfill SMALLINT NOT NULL DEFAULT 0;",
    /* Cached results (store/cache.h): as SQLite's. */
    "CREATE TABLE task_cache ("
    "  ns TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  output TEXT NOT NULL,"
    "  run_id BIGINT NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  completed BIGINT NOT NULL,"
    "  PRIMARY KEY (ns, key));",
    /* The audit trail (store/audit.h): who changed what, from where, and
     * how it ended.  Not tied to runs: a run's deletion keeps its rows;
     * retention deletes by time, hence the index on `at`. */
    "CREATE TABLE audit ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  at BIGINT NOT NULL,"
    "  who TEXT NOT NULL,"
    "  role TEXT NOT NULL,"
    "  action TEXT NOT NULL,"
    "  target TEXT,"
    "  origin TEXT NOT NULL,"
    "  ok BOOLEAN NOT NULL,"
    "  status INTEGER NOT NULL,"
    "  detail TEXT);"
    "CREATE INDEX audit_at ON audit(at);",
    /* Flow control (store/slots.h): one row per key an attempt holds,
     * with the claim it was taken under. */
    "CREATE TABLE slots ("
    "  key TEXT NOT NULL,"
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  elem BIGINT NOT NULL,"
    "  token BIGINT NOT NULL,"
    "  n BIGINT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch BIGINT NOT NULL,"
    "  taken BIGINT NOT NULL,"
    "  PRIMARY KEY (key, run_id, idx, elem, token));"
    "CREATE INDEX slots_run ON slots(run_id, idx, elem);",
    /* Named events (store/named_events.h; not the run-event journal,
     * `events`) and what workflow triggers made of them and of finished
     * runs: each item settled once per trigger (the key of
     * trigger_items), with the firing, and its run, that consumed it.
     * run_id is not a reference: retention deletes runs. */
    "CREATE TABLE named_events ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  name TEXT NOT NULL,"
    "  key TEXT,"
    "  data TEXT NOT NULL,"
    "  created BIGINT NOT NULL);"
    "CREATE INDEX named_events_name ON named_events (name, id);"
    "CREATE INDEX named_events_key ON named_events (name, key, created) WHERE key IS NOT NULL;"
    "CREATE TABLE trigger_states ("
    "  trigger_key TEXT PRIMARY KEY,"
    "  since BIGINT NOT NULL,"
    "  last_fired BIGINT NOT NULL DEFAULT 0,"
    "  last_run BIGINT NOT NULL DEFAULT 0,"
    "  firings BIGINT NOT NULL DEFAULT 0);"
    "CREATE TABLE trigger_firings ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  trigger_key TEXT NOT NULL,"
    "  run_id BIGINT NOT NULL,"
    "  fired BIGINT NOT NULL,"
    "  items INTEGER NOT NULL);"
    "CREATE INDEX trigger_firings_trigger ON trigger_firings (trigger_key, id);"
    "CREATE TABLE trigger_items ("
    "  trigger_key TEXT NOT NULL,"
    "  source SMALLINT NOT NULL,"
    "  item BIGINT NOT NULL,"
    "  firing BIGINT,"
    "  reason TEXT,"
    "  at BIGINT NOT NULL,"
    "  PRIMARY KEY (trigger_key, source, item));"
    "CREATE INDEX trigger_items_passed ON trigger_items (trigger_key, at) WHERE reason IS NOT NULL;",
    /* A run retried with `retry --no-cache`. */
    "ALTER TABLE runs ADD COLUMN no_cache SMALLINT NOT NULL DEFAULT 0;",
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
    "  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  elem BIGINT NOT NULL,"
    "  tenant TEXT NOT NULL,"
    "  priority BIGINT NOT NULL,"
    "  since BIGINT NOT NULL,"
    "  n BIGINT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch BIGINT NOT NULL,"
    "  PRIMARY KEY (key, run_id, idx, elem));"
    "CREATE INDEX slot_waiters_run ON slot_waiters(run_id, idx, elem);",
    /* Rate limits (store/rates.h): a token bucket per key. */
    "CREATE TABLE rate_buckets ("
    "  key TEXT PRIMARY KEY,"
    "  level BIGINT NOT NULL,"
    "  refilled BIGINT NOT NULL,"
    "  interval_ms BIGINT NOT NULL);",
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
    "  held BIGINT NOT NULL,"
    "  PRIMARY KEY (key, owner));"
    "INSERT INTO slot_counts (key, owner, held)"
    " SELECT key, owner, SUM(n) FROM slots GROUP BY key, owner;",
    /* A bucket's rate and burst, as its last take's claim said
     * (store/rates.h): a listing computes the tokens now from them; 0 on
     * a row no take has written since. */
    "ALTER TABLE rate_buckets ADD COLUMN rate BIGINT NOT NULL DEFAULT 0,"
    "  ADD COLUMN burst BIGINT NOT NULL DEFAULT 0;",
    /* Holds in the attempt's own row (postgres/holds.c): a take writes no
     * row of its own, the keys it took are a column of the task or
     * element row the start write sets.  What a key holds is counted per
     * host (slot_counts: key, owner), with the slots granted to that host
     * ahead (postgres/grants.c); a host's count lives until its leases
     * end (`until`, renewed with them).  Cancel requests get a table of
     * their own (a hold has no row to mark), and `slot_holders` names
     * every holder.  The live slot rows' counts carry over; the rows
     * stay, as holders. */
    "ALTER TABLE tasks ADD COLUMN hold TEXT;"
    "ALTER TABLE task_elements ADD COLUMN hold TEXT;"
    /* What a host holds of a key, by tenant ({"a":2,...}): a key with
     * waiters reads its tenants' shares every turn.  Added as sums. */
    "CREATE FUNCTION switchyard_counts_add(a jsonb, b jsonb) RETURNS jsonb"
    " LANGUAGE sql IMMUTABLE AS 'SELECT COALESCE(jsonb_object_agg(key, v), ''{}''::jsonb)"
    " FROM (SELECT key, sum(value::bigint) AS v FROM (SELECT * FROM jsonb_each_text(a)"
    " UNION ALL SELECT * FROM jsonb_each_text(b)) e GROUP BY key"
    " HAVING sum(value::bigint) > 0) m';"
    "CREATE TABLE slot_cancels ("
    "  key TEXT NOT NULL,"
    "  run_id BIGINT NOT NULL,"
    "  idx INTEGER NOT NULL,"
    "  elem BIGINT NOT NULL,"
    "  token BIGINT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  epoch BIGINT NOT NULL,"
    "  taken BIGINT NOT NULL,"
    "  why TEXT NOT NULL,"
    "  PRIMARY KEY (run_id, idx, elem, token, key));"
    "INSERT INTO slot_cancels SELECT key, run_id, idx, elem, token, owner, epoch, taken,"
    " cancel_why FROM slots WHERE cancel_why IS NOT NULL;"
    "ALTER TABLE slots DROP COLUMN cancel_why;"
    "DROP TABLE slot_counts;"
    "CREATE TABLE slot_counts ("
    "  key TEXT NOT NULL,"
    "  owner TEXT NOT NULL,"
    "  held BIGINT NOT NULL,"
    "  granted BIGINT NOT NULL,"
    "  extra BIGINT NOT NULL,"
    "  until BIGINT NOT NULL,"
    "  tenants JSONB NOT NULL,"
    "  PRIMARY KEY (key, owner));"
    "INSERT INTO slot_counts (key, owner, held, granted, extra, until, tenants)"
    " SELECT key, owner, SUM(n), SUM(n), 0, MIN(until), jsonb_object_agg(tenant, n) FROM"
    " (SELECT s.key, s.owner, r.tenant, SUM(s.n) AS n, MIN(r.lease_until) AS until"
    " FROM slots s JOIN runs r ON r.id = s.run_id AND r.owner = s.owner AND"
    " r.lease_epoch = s.epoch GROUP BY s.key, s.owner, r.tenant) x GROUP BY key, owner;"
    "CREATE VIEW slot_holders AS"
    " SELECT key, run_id, idx, elem, token, n, owner, epoch, taken FROM slots"
    " UNION ALL"
    " SELECT k ->> 0, t.run_id, t.idx, -1::bigint, t.fence, (k ->> 1)::bigint, t.host,"
    " (t.hold::jsonb ->> 'e')::bigint, t.started FROM runs r JOIN tasks t ON t.run_id = r.id"
    " CROSS JOIN jsonb_array_elements(t.hold::jsonb -> 'k') k"
    " WHERE r.state < 2 AND t.hold IS NOT NULL AND t.state = 2"
    " UNION ALL"
    " SELECT k ->> 0, t.run_id, t.idx, t.elem, t.fence, (k ->> 1)::bigint, t.host,"
    " (t.hold::jsonb ->> 'e')::bigint, t.started FROM runs r JOIN task_elements t"
    " ON t.run_id = r.id CROSS JOIN jsonb_array_elements(t.hold::jsonb -> 'k') k"
    " WHERE r.state < 2 AND t.hold IS NOT NULL AND t.state = 2;",
    /* Takes within a grant not written (postgres/unwritten.h): the row's
     * `held` is what its host held at its last write, and `ahead` bounds
     * what it took since; counts by tenant may go below 0 for a while
     * (a give-back of takes not written), so only 0 is dropped. */
    "ALTER TABLE slot_counts ADD COLUMN ahead BIGINT NOT NULL DEFAULT 0;"
    "CREATE OR REPLACE FUNCTION switchyard_counts_add(a jsonb, b jsonb) RETURNS jsonb"
    " LANGUAGE sql IMMUTABLE AS 'SELECT COALESCE(jsonb_object_agg(key, v), ''{}''::jsonb)"
    " FROM (SELECT key, sum(value::bigint) AS v FROM (SELECT * FROM jsonb_each_text(a)"
    " UNION ALL SELECT * FROM jsonb_each_text(b)) e GROUP BY key"
    " HAVING sum(value::bigint) <> 0) m';",
};
#define SCHEMA_VERSION ((int)SY_ARRAY_LEN(migrations))

const int sy_store_postgres_schema_version = SCHEMA_VERSION;

static int read_version(sy_store_pg *q, int *version)
{
    PGresult *r = PQexec(q->conn, "SELECT max(version) FROM switchyard_schema");
    int status = SY_OK;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        status = sy_pg_fail(q, r, "read schema version");
    else
        *version = (int)sy_pg_col_int(r, 0, 0);
    PQclear(r);
    return status;
}

static int migrate_locked(sy_store_pg *q)
{
    int status = sy_pg_exec(q, "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK
                               ")", "lock for migration");
    if (status == SY_OK)
        status = sy_pg_exec(q, "CREATE TABLE IF NOT EXISTS switchyard_schema"
                               " (version INTEGER NOT NULL)",
                            "create schema version table");
    int version = 0;
    if (status == SY_OK)
        status = read_version(q, &version);
    if (status == SY_OK && version > SCHEMA_VERSION)
        return sy_store_fail(&q->base, SY_ENOTSUP,
                             "%s: made by a newer switchyard (schema %d, this "
                             "build knows %d)", q->where, version,
                             SCHEMA_VERSION);
    for (; status == SY_OK && version < SCHEMA_VERSION; version++) {
        status = sy_pg_exec(q, migrations[version], "migrate schema");
        char set[96];
        snprintf(set, sizeof set,
                 "DELETE FROM switchyard_schema;"
                 " INSERT INTO switchyard_schema VALUES (%d)", version + 1);
        if (status == SY_OK)
            status = sy_pg_exec(q, set, "set schema version");
    }
    return status;
}

int sy_pg_migrate(sy_store_pg *q)
{
    int status = sy_pg_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    return sy_pg_transaction_end(q, false, migrate_locked(q));
}
