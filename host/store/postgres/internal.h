/*
 * store/postgres/internal.h -- what the files of the PostgreSQL store share.
 *
 * Internal to store/.  The files, from the bottom up; each calls only
 * files above it in this list, never one below:
 *   postgres/dial.c       connecting (keepalives and TCP timeouts unless
 *                         the connection string sets them) and
 *                         reconnecting with backoff
 *   postgres/journal.c    the open batch's statements, kept to be sent
 *                         again after a reconnect
 *   postgres/conn.c       the SQL of every statement, prepared on first
 *                         use and sent again on a new connection when
 *                         safe; PostgreSQL's errors as sy_status;
 *                         transactions and savepoints
 *   postgres/listen.c     wake-ups: NOTIFY, and LISTEN on a connection
 *                         of its own
 *   postgres/holds.c      a batch's flow-control takes, kept for the
 *                         writes that start their attempts
 *   postgres/key_table.c  a number per key: grants' hints, slots given back
 *   postgres/unwritten.c  takes and give-backs within a grant not
 *                         written yet, kept once their batch commits
 *   postgres/schema.c     the tables, their version, migrations under an
 *                         advisory lock
 *   postgres/runs.c       definitions and run rows: create, read, list,
 *                         state changes, why a fenced write was refused
 *   postgres/ownership.c  which host runs what: claims (FOR UPDATE SKIP
 *                         LOCKED), leases, cancel requests
 *   postgres/tasks.c      batches, task rows, the event log
 *   postgres/batch.c      a turn's task-row writes in one statement
 *   postgres/schedule.c   the ticks schedules fired
 *   postgres/logs.c       attempt logs, reopening a finished run to retry
 *                         it
 *   postgres/audit.c      the audit trail
 *   postgres.c            the URL, opening and closing a handle, the
 *                         driver table
 *
 * The semantics are the SQLite store's (store.h); where PostgreSQL's
 * concurrency differs (several hosts write at once, not one writer at a
 * time), the comment at the statement says how the same guarantee holds.
 */
#ifndef SY_STORE_POSTGRES_INTERNAL_H
#define SY_STORE_POSTGRES_INTERNAL_H

#include <stdbool.h>

#include "store/driver.h"
#include "store/postgres/holds.h"
#include "store/postgres/key_table.h"
#include "store/postgres/unwritten.h"
#include "store/postgres/libpq.h"
#include "store/slots.h"
#include "store/rates.h"
#include "store/preempt.h"

/* Every statement a handle prepares (on first use, again after a
 * reconnect), by what it does; their SQL is in postgres/conn.c. */
enum {
    SY_PG_PUT_DEF, SY_PG_GET_DEF,
    SY_PG_INSERT_RUN, SY_PG_SET_RUN_PRIORITY, SY_PG_INSERT_TASKS, SY_PG_GET_RUN, SY_PG_LIST_RUNS,
    SY_PG_RUN_EXISTS, SY_PG_LIST_TASKS,
    SY_PG_CLAIM_ONE, SY_PG_CLAIM_MANY, SY_PG_LIST_OWNERS, SY_PG_RENEW,
    SY_PG_RELEASE_OWNER,
    SY_PG_RUN_STATE, SY_PG_CANCEL_PENDING, SY_PG_SKIP_TASKS,
    SY_PG_FLAG_CANCEL, SY_PG_CANCEL_REQUESTS,
    SY_PG_UPDATE_TASK, SY_PG_UPDATE_TASK_HELD, SY_PG_UPDATE_TASKS,
    SY_PG_UPDATE_RUN,
    SY_PG_ADD_EVENT, SY_PG_LIST_EVENTS, SY_PG_RUN_HOLDER, SY_PG_TASK_TOKEN,
    SY_PG_DELETE_FINISHED,
    SY_PG_RECORD_PROCESS, SY_PG_LIST_PROCESSES,

    SY_PG_TICK_LOCK, SY_PG_TICK_CLAIM, SY_PG_TICK_RUN, SY_PG_TICK_FORGET, SY_PG_LAST_TICK,

    SY_PG_ADD_LOG, SY_PG_LIST_LOGS, SY_PG_REOPEN_RUN, SY_PG_REOPEN_TASK,
    SY_PG_RUN_STATE_OF,

    /* Mapped tasks' statements, from here on: their SQL is in
     * postgres/map_sql.c. */
    SY_PG_MAP_FIRST,
    SY_PG_PUT_MAP = SY_PG_MAP_FIRST, SY_PG_UPDATE_ELEMENT, SY_PG_INSERT_ELEMENT,
    SY_PG_UPDATE_ELEMENTS, SY_PG_LIST_MAPS, SY_PG_LIST_ELEMENTS,

    /* Runs recorded under a key, from here on: their SQL is in
     * postgres/keyed.c. */
    SY_PG_KEYED_FIRST,
    SY_PG_KEY_FORGET = SY_PG_KEYED_FIRST, SY_PG_KEY_CLAIM, SY_PG_KEY_RUN, SY_PG_KEY_READ,
    SY_PG_TICK_BACKFILL, SY_PG_TICK_READ, SY_PG_CACHE_PUT, SY_PG_CACHE_GET,

    /* The audit trail's, from here on: their SQL is in postgres/audit.c. */
    SY_PG_AUDIT_FIRST,
    SY_PG_ADD_AUDIT = SY_PG_AUDIT_FIRST, SY_PG_LIST_AUDIT, SY_PG_DELETE_AUDIT,

    /* Flow-control slots' statements, from here on: their SQL is in
     * postgres/slot_sql.c. */
    SY_PG_SLOT_FIRST,
    SY_PG_SLOT_LOCK = SY_PG_SLOT_FIRST, SY_PG_SLOT_ROWS, SY_PG_SLOT_HELD,
    SY_PG_SLOT_RETURN, SY_PG_SLOT_REAP, SY_PG_SLOT_LIST,
    SY_PG_SLOT_FORGET, SY_PG_SLOT_ROOM, SY_PG_SLOT_PUT, SY_PG_SLOT_RETURN_TAKES,
    SY_PG_SLOT_DELETE_TAKES,
    SY_PG_SLOT_WAITERS, SY_PG_GRANT_SHARE, SY_PG_GRANT_READ, SY_PG_GRANT_TOPUP,
    SY_PG_GRANT_TRIM, SY_PG_GRANT_LOCK, SY_PG_SLOT_SETTLE, SY_PG_SLOT_PUT_QUICK,

    /* Rate limits' statements, from here on: their SQL is in
     * postgres/rates.c. */
    SY_PG_RATE_FIRST,
    SY_PG_RATE_LOCK = SY_PG_RATE_FIRST, SY_PG_RATE_READ, SY_PG_RATE_WRITE,
    SY_PG_COUNT
};

/* Array parameter n of a batched write, of SQL type `type`, hidden from
 * the planner (docs/flow-control.md, "The batched write's first plans"):
 * seen, it made the first plans hash all of tasks for one batch. */
#define SY_PG_ARRAY(n, type) "(SELECT $" #n "::" type "[])"

/* The hold a task or element row keeps through a write that gives none
 * (postgres/holds.c): none once the task leaves Running (2) or its token
 * moves on.  SQL: the state and token written, the row's token and hold. */
#define SY_PG_HOLD_KEPT(state, token, fence, hold)                            \
    "CASE WHEN " state " <> 2 OR " token " <> " fence " THEN NULL ELSE " hold " END"

/* Flow control's counts, in SQL (postgres/slots.c, postgres/grants.c):
 * slot_counts has a row per key and host, what the host's attempts hold
 * of the key and what was granted to it, counted while its `until` (the
 * host's lease end) is after `now`.  `key`, `owner` and `now` are SQL
 * expressions.
 *
 * SY_PG_USED: what every host but `owner` (every one for NULL) holds of
 * `key` or was granted of it, the greater of the two per host. */
#define SY_PG_USED(key, owner, now)                                           \
    "(SELECT COALESCE(sum(GREATEST(k.held, k.granted)), 0)::bigint FROM slot_counts k" \
    " WHERE k.key = " key " AND k.until > " now " AND k.owner IS DISTINCT FROM " \
    owner ")"

/* SY_PG_HELD_BY_OTHERS: what they may hold, grants left out: each
 * host's count and the bound of its takes not written (`ahead`,
 * postgres/unwritten.h), which a grant taken back keeps. */
#define SY_PG_HELD_BY_OTHERS(key, owner, now)                                 \
    "(SELECT COALESCE(sum(k.held + k.ahead), 0)::bigint FROM slot_counts k WHERE k.key = " key \
    " AND k.until > " now " AND k.owner IS DISTINCT FROM " owner ")"

/* The earliest lease end of `owner`'s runs live at `now` (NULL: it holds
 * none): when its counts stop counting.  A run whose lease ended holds
 * nothing already. */
#define SY_PG_LEASE_END(owner, now)                                           \
    "(SELECT min(lease_until) FROM runs WHERE owner = " owner " AND state IN (0, 1)" \
    " AND lease_until > " now ")"

/* SY_PG_TENANTS_ADD: jsonb `obj` ({"tenant":n,...}) with the batch's
 * `count` tenants added, `plus` as an object, or, for one tenant (the
 * rule), `tenant` and its `n` (negative to take off), by jsonb_set
 * rather than the SQL function; a tenant left at 0 dropped.  Below 0 is
 * kept: a host's takes not written yet add to it (postgres/unwritten.h). */
#define SY_PG_TENANTS_ADD(obj, count, tenant, n, plus)                       \
    "CASE WHEN " count " = 1 THEN CASE WHEN COALESCE((" obj " ->> " tenant    \
    ")::bigint, 0) + " n " <> 0 THEN jsonb_set(" obj ", ARRAY[" tenant "],"   \
    " to_jsonb(COALESCE((" obj " ->> " tenant ")::bigint, 0) + " n "))"       \
    " ELSE " obj " - " tenant " END ELSE switchyard_counts_add(" obj ","      \
    " COALESCE(" plus ", '{}'::jsonb)) END"

/* SY_PG_WAITED: whether `key` has a waiter under its run's claim. */
#define SY_PG_WAITED(key)                                                     \
    "EXISTS (SELECT 1 FROM slot_waiters w JOIN runs r ON r.id = w.run_id AND"  \
    " r.owner = w.owner AND r.lease_epoch = w.epoch WHERE w.key = " key ")"

/* The SQL of statement SY_PG_MAP_FIRST + i, SY_PG_KEYED_FIRST + i, and
 * so on for each group of the enum above. */
extern const char *const sy_pg_map_sql[SY_PG_KEYED_FIRST - SY_PG_MAP_FIRST];
extern const char *const sy_pg_keyed_sql[SY_PG_AUDIT_FIRST - SY_PG_KEYED_FIRST];
extern const char *const sy_pg_audit_sql[SY_PG_SLOT_FIRST - SY_PG_AUDIT_FIRST];
extern const char *const sy_pg_slot_sql[SY_PG_RATE_FIRST - SY_PG_SLOT_FIRST];
extern const char *const sy_pg_rate_sql[SY_PG_COUNT - SY_PG_RATE_FIRST];

/* A fenced write's condition (store.h): the run is still held by the
 * fence's claim.  FOR SHARE makes it hold until the write's transaction
 * ends: a claim by another host (an UPDATE of the row) waits for the
 * batch to commit, and a claim that committed first is seen (the lock
 * reads the newest row version), so no write lands under a claim that was
 * already taken over.  SQLite gets the same from its single writer. */
#define SY_PG_FENCE(run, owner, epoch)                                        \
    " (" owner "::text IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = "    \
    run " AND owner = " owner " AND lease_epoch = " epoch " FOR SHARE))"

/* The listings that refuse to be entered again from their own callback,
 * as the SQLite store's do (store.h). */
enum { SY_PG_LIST_RUNS_L, SY_PG_LIST_OWNERS_L, SY_PG_CANCEL_L, SY_PG_LISTS };

/* A statement's parameters as libpq takes them: text, NULL for SQL NULL.
 * Numbers are formatted into the struct's own buffers. */
#define SY_PG_MAX_PARAMS 20
typedef struct sy_pg_params {
    int n;
    const char *v[SY_PG_MAX_PARAMS];
    char num[SY_PG_MAX_PARAMS][24];
} sy_pg_params;

/* One statement of the open batch: a prepared one (id) with its
 * parameters, or SQL text (sql); the rows it changed or returned. */
typedef struct sy_pg_entry {
    int id;
    const char *sql;
    struct {
        int n;
        const char *v[SY_PG_MAX_PARAMS];
    } p;
    int64_t changes;
} sy_pg_entry;

typedef struct sy_pg_journal {
    sy_pg_entry **e;
    size_t n, cap;
} sy_pg_journal;

/* The handle behind every sy_store this implementation opens. */
typedef struct sy_store_pg {
    sy_store base; /* first: the handle is cast both ways */
    PGconn *conn;
    PGconn *listener; /* LISTENing (postgres/listen.c); NULL when not */
    char *conninfo; /* what libpq was given; may hold a password, so it is
                       never printed */
    char *where;    /* "postgresql://user@host:port/db" for messages */
    bool prepared[SY_PG_COUNT];
    bool batch;     /* a batch (sy_store_begin) is open */
    bool in_tx;     /* a transaction (a batch's or the store's own) is open */
    bool lost;      /* the connection dropped inside the open batch and its
                       replay failed: its writes are gone, commit says so */
    bool listing[SY_PG_LISTS];
    /* The last fence a write of the open batch was checked under: that
     * check took a share lock on the run's row, held to the end of the
     * batch, so no claim can move the run before then, and further task
     * writes for that run and claim check only their attempt token.
     * Cleared at every begin, end, and claim or release. */
    struct {
        bool valid;
        int64_t run_id, epoch;
        char owner[128]; /* a longer owner is never cached */
    } held;
    sy_pg_journal journal; /* the open batch's statements */
    sy_pg_holds holds;     /* the open batch's takes (postgres/holds.c) */
    /* The keys whose grants the open batch made (postgres/grants.c),
     * "{...}" text[] literals joined, and their owner: trimmed at the
     * commit to what is held and the extra; what is free in the grants. */
    char *granted_keys, *granted_owner;
    size_t granted_len, granted_cap;
    sy_pg_key_table hints;
    /* The open batch's give-back not sent yet (postgres/slots.c): $1..$4
     * of SY_PG_SLOT_RETURN_TAKES and its owner; by key, its slots. */
    char *back[5];
    sy_pg_key_table back_by_key;
    /* The keys the open batch read under their shared locks: a give-back
     * sent alone keeps their grants, which the turn takes within. */
    sy_pg_key_table read_shared;
    sy_pg_unwritten unwritten; /* takes not written (postgres/unwritten.h) */
    int quick_rest; /* takes left before SY_PG_SLOT_PUT_QUICK is tried again */
} sy_store_pg;

static inline sy_store_pg *sy_pg_handle(sy_store *s)
{
    return (sy_store_pg *)s;
}

void sy_pg_text(sy_pg_params *p, int i, const char *s);
void sy_pg_int(sy_pg_params *p, int i, int64_t v);

/* --- postgres/elements.c ---------------------------------------------------- */

int sy_pg_put_map(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                  uint32_t idx, int64_t size);
int sy_pg_update_element(sy_store *s, int64_t run_id,
                         const sy_store_fence *fence, int64_t token,
                         int64_t elem, const sy_task_record *t);
/* Why an element write found no row to write (one statement): its fence
 * refused it (SY_STORE_EFENCED) or it has no map or row (SY_ENOENT), with
 * the reason set; any other failure as it came. */
int sy_pg_element_refused(sy_store_pg *q, int64_t run_id, const sy_store_fence *fence,
                          int64_t token, int64_t elem, uint32_t idx);
int sy_pg_list_maps(sy_store *s, int64_t run_id, sy_store_map_cb cb,
                    void *arg);
int sy_pg_list_elements(sy_store *s, int64_t run_id, uint32_t idx,
                        bool open_only, sy_store_element_cb cb, void *arg);

/* --- postgres/rates.c: rate limits' buckets (store/rates.h) ----------------- */

int sy_pg_take_rates(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                     const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                     size_t *empty, int64_t *wait_ms);
int sy_pg_rate_bucket(sy_store *s, const char *key, sy_rate_bucket *b, bool *found);
int sy_pg_list_rate_buckets(sy_store *s, sy_rate_bucket_cb cb, void *arg);

/* --- postgres/preempt.c: cancel requests on slot rows (store/preempt.h) ----- */

int sy_pg_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                         bool *asked);
int sy_pg_list_cancel_requests(sy_store *s, const char *owner, int64_t now,
                               int (*cb)(void *arg, const sy_cancel_request *r), void *arg);

/* --- postgres/slots.c ------------------------------------------------------ */

/* Locks the n keys of text[] literal `keys` for the transaction with
 * statement `id` (SY_PG_SLOT_LOCK, SY_PG_RATE_LOCK: pg_try_advisory_xact_lock
 * of each, in key order, giving rows (1-based index, locked): every
 * key's, or only those not locked); *busy the first one another host's
 * batch holds, or n when none. */
int sy_pg_lock_keys(sy_store_pg *q, int id, const char *keys, size_t n, size_t *busy);
int sy_pg_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                     const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                     size_t *full, int64_t *held);
/* --- postgres/grants.c: a turn's keys read, slots granted ahead -------------- */

int sy_pg_slot_room(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                    int64_t now, int64_t *held);
/* The next number of a PostgreSQL bigint[] text at *p ("{1,-2,3}"; NULL
 * for none), *p moved past it; false when none is left. */
bool sy_pg_next_int(const char **p, int64_t *v);
/* The SQL of SY_PG_GRANT_SHARE, _READ, _TOPUP, _TRIM and _LOCK. */
extern const char sy_pg_grant_share_sql[], sy_pg_grant_read_sql[], sy_pg_grant_topup_sql[],
    sy_pg_grant_trim_sql[], sy_pg_grant_lock_sql[];
/* At the commit: the grants the batch made kept to what the host holds
 * and its extra (none while the key has a waiter). */
int sy_pg_grants_trim(sy_store_pg *q);
void sy_pg_grants_clear(sy_store_pg *q);
/* The give-back not sent yet (sy_pg_return_takes) sent alone, or dropped. */
int sy_pg_returns_flush(sy_store_pg *q);
/* The same at the commit, by the take's statement (nothing is taken). */
int sy_pg_returns_commit(sy_store_pg *q);
/* What `owner` did not write of the n keys (postgres/unwritten.h),
 * written into their rows (SY_PG_SLOT_SETTLE) and staged as none. */
int sy_pg_settle(sy_store_pg *q, const char *owner, const char *const *key, size_t n);
void sy_pg_returns_clear(sy_store_pg *q);
int sy_pg_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                    int64_t now, bool *put);
int sy_pg_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n);
int sy_pg_return_slots(sy_store *s, const sy_slot_holder *h, size_t n);
int sy_pg_reap_slots(sy_store *s, int64_t now, size_t *n);
int sy_pg_list_slots(sy_store *s, int64_t now,
                     int (*cb)(void *arg, const sy_slot_record *r), void *arg);

/* --- postgres/holds.c: a batch's takes, carried by their attempts' rows ---- */

/* Keeps the n takes under `owner` for their start writes. */
int sy_pg_holds_add(sy_store_pg *q, const char *owner, const sy_slot_take *t, size_t n,
                    int64_t now);
/* The hold for the write that gives attempt `token` of (run, idx, elem):
 * {"e":epoch,"k":[["key",n],...]}, the takes it carries marked written;
 * NULL when it took nothing in this batch (or out of memory: *oom).
 * Valid until the next call.  *id (when id is not NULL): the same for
 * every call that gives this text and for no other text, or 0 when it
 * says nothing (compare the texts). */
const char *sy_pg_hold_text(sy_store_pg *q, int64_t run_id, uint32_t idx, int64_t elem,
                            int64_t token, bool *oom, uint64_t *id);
/* The takes no start write carried, as slot rows (at the commit, and
 * before a cancel request looks for holders). */
int sy_pg_holds_to_rows(sy_store_pg *q);
/* Whether sy_pg_holds_to_rows wrote slot rows in this process (any handle):
 * until then a give-back has none to delete (an owner is one process). */
bool sy_pg_slot_rows_made(void);
void sy_pg_holds_clear(sy_store_pg *q);
void sy_pg_holds_free(sy_store_pg *q);

/* --- postgres/journal.c ----------------------------------------------------- */

/* Appends a statement of the open batch (id, or sql when not NULL). */
int sy_pg_journal_add(sy_store_pg *q, int id, const char *sql,
                      const sy_pg_params *p, int64_t changes);
void sy_pg_journal_clear(sy_store_pg *q);
void sy_pg_journal_free(sy_store_pg *q);

/* --- postgres/dial.c -------------------------------------------------------- */

/* A new connection from `conninfo` (a libpq connection string or URI),
 * with keepalives, a connect timeout and a TCP user timeout added unless
 * the string sets them: a partitioned server then shows as a dropped
 * connection within seconds, not after the kernel's 15 minutes.  As
 * PQconnectdb: NULL only when out of memory; check PQstatus. */
PGconn *sy_pg_dial(const char *conninfo);

/* How long a lost connection is tried again before the store gives up;
 * the host's lease (30 s by default) bounds what waiting longer could
 * save. */
#define SY_PG_RECONNECT_MS 30000

/* Connects q->conn from q->conninfo; sets q->where. */
int sy_pg_connect(sy_store_pg *q);

/* A new connection for q->conn's dropped one (PQreset), tried with a
 * pause doubling from 100 ms to 2 s for up to SY_PG_RECONNECT_MS; the
 * prepared statements forgotten.  Logged when it starts and when it
 * ends.  SY_OK, or SY_EIO with the store's error once it gives up. */
int sy_pg_reconnect(sy_store_pg *q);

/* --- postgres/conn.c -------------------------------------------------------- */

/* Records "<where>: <what>: <PostgreSQL's message>" in q->base.err and
 * returns the matching sy_status (SY_EIO for a lost connection, SY_EBUSY
 * for a serialization failure or deadlock). `res` may be NULL. */
int sy_pg_fail(sy_store_pg *q, const PGresult *res, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Runs statement `id` with `p`; on success *res (when not NULL) holds the
 * result, to PQclear.  A dropped connection is re-established and the
 * statement sent again where that is safe (postgres/conn.c says when). */
int sy_pg_run(sy_store_pg *q, int id, const sy_pg_params *p, PGresult **res,
              const char *what);

/* Runs SQL text once, unprepared and without parameters. */
int sy_pg_exec(sy_store_pg *q, const char *sql, const char *what);
/* sy_pg_run for SQL text not among the prepared statements, sent with
 * its parameters unprepared (statements run rarely: named events and
 * triggers, postgres/named_events.c). */
int sy_pg_query(sy_store_pg *q, const char *sql, const sy_pg_params *p, PGresult **res,
                const char *what);

/* Rows a write changed. */
int64_t sy_pg_changes(const PGresult *res);

/* Begins a transaction, or with `nested` a savepoint inside the open
 * batch; ends it: kept when status is SY_OK, undone otherwise.  Returns
 * status, or the failure to commit. */
int sy_pg_transaction_begin(sy_store_pg *q, bool nested);
int sy_pg_transaction_end(sy_store_pg *q, bool nested, int status);

/* SY_ESTATE while listing `which` is running (a callback calling it
 * again); otherwise marks it running until sy_pg_list_done. */
int sy_pg_list_enter(sy_store_pg *q, int which, const char *fn);
static inline void sy_pg_list_done(sy_store_pg *q, int which)
{
    q->listing[which] = false;
}

/* A column as C values: NULL for SQL NULL (text), 0 (numbers). */
static inline char *sy_pg_col(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}
int64_t sy_pg_col_int(const PGresult *r, int row, int col);

/* --- postgres/listen.c ------------------------------------------------------ */

/* Wakes the hosts listening (NOTIFY): at the commit of the open
 * transaction, if any. */
int sy_pg_notify(sy_store_pg *q);
int sy_pg_listen(sy_store *s, int *fd);
int sy_pg_wakeups(sy_store *s, size_t *n);
void sy_pg_listen_close(sy_store_pg *q);

/* --- postgres/schema.c ------------------------------------------------------ */

/* Brings the database's schema up to this build's version under an
 * advisory lock (or refuses one made by a newer build). */
int sy_pg_migrate(sy_store_pg *q);

/* --- the operations: each as its sy_store_ops entry in store/driver.h ---- */

/* postgres/runs.c */
int sy_pg_put_definition(sy_store *s, const char *hash, const char *tenant,
                         const char *workflow, const char *definition);
int sy_pg_get_definition(sy_store *s, const char *hash, char **out);
int sy_pg_create_run(sy_store *s, const sy_store_new_run *r, int64_t now, int64_t *run_id);
int sy_pg_get_run(sy_store *s, int64_t run_id, sy_run_record *out);
/* A run's row and its task rows, inside the caller's transaction. */
int sy_pg_insert_run(sy_store_pg *q, const char *hash, const char *tenant,
                     const char *workflow, const char *context, size_t n_tasks,
                     const char *const *task_ids, const char *const *ns, int64_t now,
                     int64_t *run_id);
/* Run r's row and task rows as sy_pg_insert_run, with its priority. */
int sy_pg_insert_new_run(sy_store_pg *q, const sy_store_new_run *r, int64_t now,
                         int64_t *run_id);
int sy_pg_list_runs(sy_store *s, size_t limit, sy_store_run_cb cb, void *arg);
int sy_pg_delete_finished(sy_store *s, int64_t before, size_t max,
                          size_t *deleted);
int sy_pg_update_run(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                     sy_run_state state, const char *error, int64_t now);

/* After a fenced write changed nothing: SY_STORE_EFENCED when the run
 * exists but `fence` no longer holds it, or task `idx` (SY_PG_NO_TASK for
 * a run write) holds another attempt token than `token`; SY_ENOENT when
 * there is no such row. */
#define SY_PG_NO_TASK UINT32_MAX
int sy_pg_fenced(sy_store_pg *q, int64_t run_id, const sy_store_fence *fence,
                 uint32_t idx, int64_t token, const char *what);

/* A text[] literal of `n` strings, malloc'd ("{}" for none); NULL when
 * out of memory. */
char *sy_pg_text_array(const char *const *v, size_t n);
/* A bigint[] literal of the n values v[i * stride], malloc'd; NULL when
 * out of memory. */
char *sy_pg_int_array(const int64_t *v, size_t stride, size_t n);

/* Writes v in decimal at o (room for 20 characters); the end.  By hand:
 * snprintf was most of the host's part of the arrays a turn sends (a
 * slot take's 7 numbers cost 6,600 instructions, a task write's 10 over
 * half of its 11,600; bench/limits SY_LIMITS_INSTRUCTIONS=1).  Two digits
 * at a time: a limit of 1,000,000 is four steps, not seven. */
static inline char *sy_pg_decimal(char *o, int64_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    char tmp[20];
    size_t n = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (v < 0)
        *o++ = '-';
    if (u < 10) {
        *o++ = (char)('0' + u);
        return o;
    }
    while (u >= 100) {
        const char *d = &pairs[2 * (u % 100)];
        u /= 100;
        tmp[--n] = d[1];
        tmp[--n] = d[0];
    }
    if (u >= 10) {
        tmp[--n] = pairs[2 * u + 1];
        tmp[--n] = pairs[2 * u];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    while (n < sizeof tmp)
        *o++ = tmp[n++];
    return o;
}

/* postgres/ownership.c */
int sy_pg_claim_run(sy_store *s, int64_t run_id, const char *owner,
                    int64_t lease_until, int64_t now,
                    const char *const *stale, size_t n_stale, bool *claimed);
int sy_pg_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                     int64_t now, const char *const *stale, size_t n_stale,
                     size_t max, int64_t *ids, size_t *n);
int sy_pg_list_owners(sy_store *s, sy_store_owner_cb cb, void *arg);
int sy_pg_renew(sy_store *s, const char *owner, int64_t lease_until,
                int64_t now, sy_store_id_cb cb, void *arg);
int sy_pg_release(sy_store *s, const char *owner);
int sy_pg_request_cancel(sy_store *s, int64_t run_id, int64_t now);
int sy_pg_cancel_requests(sy_store *s, const char *owner, sy_store_id_cb cb,
                          void *arg);

/* postgres/tasks.c */
int sy_pg_begin(sy_store *s);
int sy_pg_commit(sy_store *s);
void sy_pg_rollback(sy_store *s);
int sy_pg_list_tasks(sy_store *s, int64_t run_id, sy_store_task_cb cb,
                     void *arg);
int sy_pg_update_task(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                      int64_t token, const sy_task_record *t);
/* postgres/batch.c */
int sy_pg_update_tasks(sy_store *s, const sy_store_task_write *w, size_t n,
                       sy_store_refused_cb refused, void *arg);
int sy_pg_update_elements(sy_store *s, const sy_store_element_write *w, size_t n,
                          sy_store_refused_cb refused, void *arg);
int sy_pg_add_event(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                    int64_t token, uint32_t idx, uint32_t attempt,
                    const char *kind, const char *detail, int64_t now);
int sy_pg_list_events(sy_store *s, int64_t run_id, sy_store_event_cb cb,
                      void *arg);

/* --- postgres/processes.c ---------------------------------------------- */

int sy_pg_record_process(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                         int64_t token, const sy_process_record *p);
int sy_pg_list_processes(sy_store *s, int64_t run_id,
                         int (*cb)(void *arg, const sy_process_record *p),
                         void *arg);

/* postgres/schedule.c */
int sy_pg_fire_tick(sy_store *s, const char *hash, const char *tenant, const char *workflow,
                    int64_t tick, const char *context, size_t n_tasks,
                    const char *const *task_ids, const char *const *ns, int64_t now,
                    bool *fired, int64_t *run_id);
int sy_pg_last_tick(sy_store *s, const char *tenant, const char *workflow, int64_t *tick,
                    int64_t *run_id);

/* postgres/keyed.c */
int sy_pg_create_run_keyed(sy_store *s, const sy_store_new_run *r, const char *key,
                           int64_t window_ms, int64_t now, int64_t *run_id, bool *created);
int sy_pg_backfill_tick(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                        bool *fired, int64_t *run_id);
int sy_pg_tick_run(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                   bool *claimed, int64_t *run_id);

/* postgres/cache.c */
int sy_pg_cache_put(sy_store *s, const char *ns, const char *key, const char *output,
                    int64_t run_id, uint32_t idx, int64_t now);
int sy_pg_cache_get(sy_store *s, const char *ns, const char *key, int64_t since,
                    char **output, int64_t *run_id);
/* postgres/audit.c */
int sy_pg_add_audit(sy_store *s, const sy_audit_record *r);
int sy_pg_list_audit(sy_store *s, const sy_audit_filter *f, sy_store_audit_cb cb, void *arg);
int sy_pg_delete_audit(sy_store *s, int64_t before, size_t *deleted);

/* postgres/logs.c */
int sy_pg_add_log(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                  int64_t token, const sy_log_record *log);
int sy_pg_list_logs(sy_store *s, int64_t run_id, int64_t since,
                        sy_store_log_cb cb, void *arg);
int sy_pg_reopen_run(sy_store *s, int64_t run_id, const uint32_t *idx,
                     size_t n, bool no_cache, int64_t now);

#endif
