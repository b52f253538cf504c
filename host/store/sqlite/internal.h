/*
 * store/sqlite/internal.h -- what the files of the SQLite store share.
 *
 * Internal to store/.  The files, from the bottom up; each calls only
 * files above it in this list, never one below:
 *   sqlite/step.c        running statements: SQLite's codes as sy_status,
 *                        failure messages, transactions and savepoints
 *   sqlite/statements.c  every statement's SQL, prepared once at open
 *   sqlite/schema.c      the tables, their version, migrations
 *   sqlite/runs.c        definitions and run rows: create, read, list,
 *                        state changes
 *   sqlite/ownership.c   which host runs what: claims, leases, cancel
 *                        requests
 *   sqlite/holds.c       a turn's takes, carried by its attempts' rows
 *   sqlite/tasks.c       batches, task rows, the event log
 *   sqlite/schedule.c    the ticks schedules fired
 *   sqlite/logs.c        attempt logs, reopening a finished run to retry it
 *   sqlite/audit.c       the audit trail
 *   sqlite.c             opening and closing a handle, the driver table
 */
#ifndef SY_STORE_SQLITE_INTERNAL_H
#define SY_STORE_SQLITE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>

#include "store/checkpoint.h"
#include "store/driver.h"
#include "store/slots.h"
#include "store/rates.h"
#include "store/preempt.h"

/* --- sqlite/statements.c ------------------------------------------------------ */

/* Task rows SY_SQL_INSERT_TASKS writes at once (four parameters each). */
#define SY_SQL_TASK_ROWS 100

/* Every statement a handle keeps prepared, by what it does. */
enum {
    SY_SQL_BEGIN, SY_SQL_COMMIT, SY_SQL_ROLLBACK,
    SY_SQL_SAVEPOINT, SY_SQL_RELEASE, SY_SQL_UNDO,
    SY_SQL_PUT_DEF, SY_SQL_GET_DEF, SY_SQL_HAS_DEF,
    SY_SQL_INSERT_RUN, SY_SQL_SET_RUN_PRIORITY, SY_SQL_INSERT_TASK, SY_SQL_INSERT_TASKS, SY_SQL_GET_RUN,
    SY_SQL_LIST_RUNS,
    SY_SQL_RUN_EXISTS, SY_SQL_LIST_TASKS,
    SY_SQL_CLAIM_ONE, SY_SQL_CLAIM_MANY, SY_SQL_LIST_OWNERS, SY_SQL_RENEW,
    SY_SQL_RELEASE_OWNER,
    SY_SQL_RUN_STATE, SY_SQL_CANCEL_PENDING, SY_SQL_SKIP_TASKS,
    SY_SQL_FLAG_CANCEL, SY_SQL_CANCEL_REQUESTS,
    SY_SQL_UPDATE_TASK, SY_SQL_UPDATE_TASK_HELD, SY_SQL_UPDATE_RUN, SY_SQL_ADD_EVENT,
    SY_SQL_LIST_EVENTS, SY_SQL_RUN_HOLDER, SY_SQL_TASK_TOKEN,
    SY_SQL_DELETE_FINISHED,
    SY_SQL_RECORD_PROCESS, SY_SQL_LIST_PROCESSES,

    SY_SQL_ADD_LOG, SY_SQL_LIST_LOGS, SY_SQL_REOPEN_RUN, SY_SQL_REOPEN_TASK,
    SY_SQL_REOPEN_MAP, SY_SQL_REOPEN_ELEMENTS,

    SY_SQL_PUT_MAP, SY_SQL_UPDATE_ELEMENT, SY_SQL_INSERT_ELEMENT,
    SY_SQL_LIST_MAPS, SY_SQL_LIST_ELEMENTS,

    SY_SQL_SLOT_TAKE, SY_SQL_SLOT_RETURN, SY_SQL_SLOT_RETURN_RUN,
    SY_SQL_SLOT_HELD_BY, SY_SQL_SLOT_HELD_BY_RUN, SY_SQL_SLOT_RETURN_TAKE, SY_SQL_HOLD_ROWS,
    SY_SQL_COUNT_CLAIM, SY_SQL_COUNT_PUT, SY_SQL_COUNT_DELETE,
    SY_SQL_COUNT_LIVE,

    SY_SQL_KEY_WAITERS, SY_SQL_ANY_WAITERS,
    SY_SQL_COUNT
};

/* Text built by appending (sqlite/text.c): JSON the store writes. */
typedef struct sy_sqlite_text {
    char *p; /* NUL-terminated, owned; NULL before the first append */
    size_t len, cap;
} sy_sqlite_text;

/* Each appends to b, false when out of memory (b keeps what it had):
 * `len` bytes; a JSON string (quoted, escaped); a decimal integer. */
/* Room for `more` bytes and the NUL: false when out of memory. */
bool sy_sqlite_text_reserve(sy_sqlite_text *b, size_t more);
/* sy_sqlite_text_put's way when b must grow; s must not point into b. */
bool sy_sqlite_text_grow(sy_sqlite_text *b, const char *s, size_t len);
static inline bool sy_sqlite_text_put(sy_sqlite_text *b, const char *s, size_t len)
{
    /* Inline: a take's text is a dozen appends of a few bytes. */
    if (b->len + len >= b->cap)
        return sy_sqlite_text_grow(b, s, len);
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
    return true;
}
bool sy_sqlite_text_string(sy_sqlite_text *b, const char *s);
bool sy_sqlite_text_int(sy_sqlite_text *b, int64_t v);

/* A run's counts (sqlite/counts.c) are a JSON object {"key":n,...}, n
 * > 0.  _put appends "key":n to b, which holds "{" and the pairs so far
 * (false when out of memory); _next reads the pair at *p (the object's
 * text, NUL-terminated, *p moved past it) into key (unescaped) and *n:
 * 1, 0 at the object's end, -1 when it is not such an object (a broken
 * row: never read past its NUL). */
bool sy_sqlite_counts_put(sy_sqlite_text *b, const char *key, int64_t n);
int sy_sqlite_counts_next(const char **p, sy_sqlite_text *key, int64_t *n);

/* One attempt's takes of the open batch (sqlite/holds.c), until the write
 * that starts it carries them. */
typedef struct sy_sqlite_hold {
    int64_t run_id, elem, token, epoch, taken;
    uint32_t idx;
    const char *owner; /* one of the holds' owners */
    bool first;   /* no key in the text yet */
    bool closed;  /* the text's list and object are closed */
    bool written; /* carried by its start write, or made slot rows */
    size_t off, len; /* the hold's JSON, in the holds' arena */
} sy_sqlite_hold;

/* A hold's text after its first take, {"e":epoch,"k":[["key",n], kept
 * (sqlite/holds.c): most attempts of a turn take one key (a pool, a
 * workflow's limit) under their run's epoch, so the text is copied, not
 * built again.  Found by the key's address, checked by its text. */
typedef struct sy_sqlite_hold_memo {
    const char *key_at; /* the key's address when kept; NULL: empty */
    int64_t epoch, n;
    uint8_t len;  /* of text */
    char key[48];
    char text[96];
} sy_sqlite_hold_memo;

enum { SY_SQLITE_HOLD_MEMOS = 256 };

/* The open batch's holds, found by (run, task, element) through an
 * open-addressing index of entry numbers (0: empty). */
typedef struct sy_sqlite_holds {
    sy_sqlite_hold *v;
    size_t n, cap;
    uint32_t *slots;
    size_t n_slots; /* a power of two, at least twice n */
    sy_sqlite_text arena;  /* every hold's text, one after another */
    sy_sqlite_hold *tail;  /* the hold at the arena's end */
    char **owners;  /* the owners named, copied (sy_sqlite_owner; one, but
                       for tests); kept from batch to batch */
    size_t n_owners;
    sy_sqlite_hold_memo *memos; /* SY_SQLITE_HOLD_MEMOS, kept from batch
                                   to batch; NULL before the first */
} sy_sqlite_holds;

/* One key's count in one run, as the open batch changed it
 * (sqlite/counts.c). */
typedef struct sy_sqlite_count {
    size_t key;    /* where its key starts in the counts' `keys` */
    uint64_t hash; /* the key's */
    size_t run; /* its run's number in the batch */
    uint32_t next; /* the next entry of its run, + 1; 0: the last */
    int64_t held;
} sy_sqlite_count;

/* A run whose counts the open batch read, under the claim its changes
 * were made under. */
typedef struct sy_sqlite_count_run {
    int64_t run_id, epoch;
    const char *owner;   /* one of the handle's owners (sy_sqlite_owner) */
    bool current;        /* the claim is the run's (else changes count for
                            nothing) */
    bool verified;       /* claim and version checked in this batch */
    bool loaded;         /* the copy holds the row as of `version` */
    bool dirty;          /* changed since written */
    int64_t version;     /* the row's, as read or written (0: no row) */
    uint32_t first;      /* its first entry, + 1; 0: none */
    int64_t lease_until; /* the run's lease, as read */
} sy_sqlite_count_run;

/* The copies of runs' counts (kept from batch to batch, checked at each
 * batch's first use), found by (run, key) through an open-addressing
 * index of entry numbers (0: empty). */
typedef struct sy_sqlite_counts {
    sy_sqlite_count *v;
    size_t n, cap;
    uint32_t *slots;
    size_t n_slots;
    sy_sqlite_count_run *runs;
    size_t n_runs, cap_runs;
    size_t last;         /* the run of the last change */
    size_t last_entry;   /* the entry of the last change */
    sy_sqlite_text text; /* a row's JSON, built for its write */
    sy_sqlite_text key;  /* a key read from a row */
    sy_sqlite_text keys; /* the entries' keys, each NUL-terminated */
    uint64_t salt;       /* this handle's part of the versions it writes */
    uint32_t writes;     /* rows written, the versions' other part */
} sy_sqlite_counts;

/* The handle behind every sy_store this implementation opens. */
typedef struct sy_store_sqlite {
    sy_store base; /* first: the handle is cast both ways */
    sqlite3 *db;
    char *where; /* "sqlite:PATH" for messages */
    sqlite3_stmt *st[SY_SQL_COUNT];
    sy_ckpt *ckpt; /* checkpoints off this thread; NULL: SQLite's own */
    /* The last fence a write of the open batch was applied under: the
     * batch holds the write lock (BEGIN IMMEDIATE) to its end, so the run
     * cannot change hands before then, and further task writes for that
     * run and claim skip the run's check (sqlite/tasks.c; each still
     * checks its task's attempt token).  Cleared at every begin, end, and
     * claim or release. */
    struct {
        bool valid;
        int64_t run_id, epoch;
        char owner[128]; /* a longer owner is never cached */
    } held;
    sy_sqlite_holds holds; /* the open batch's takes (sqlite/holds.c) */
    sy_sqlite_counts counts; /* the open batch's counts (sqlite/counts.c) */
    /* Slot rows this handle wrote and has not deleted, at most: while
     * none, a give-back has no row to delete (its take is in the
     * attempt's row), and skips the statement. */
    size_t slot_rows;
} sy_store_sqlite;

/* The claim statements with "%s" where the list of stale owners goes
 * (" OR owner IN (?5, ...)"; "" for none): the list has a variable
 * length, so claims naming stale owners build their statement per call. */
extern const char sy_sqlite_claim_one_format[];
extern const char sy_sqlite_claim_many_format[];

/* Prepares every statement into q->st. */
int sy_sqlite_prepare_all(sy_store_sqlite *q);

/* --- sqlite/step.c ------------------------------------------------------------ */

/* Records "<where>: <what>: <SQLite's message>" in q->base.err and returns
 * SQLite's code `rc` as a sy_status.  Call it before resetting the
 * statement that failed: the reset may replace the message. */
int sy_sqlite_fail(sy_store_sqlite *q, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* sy_sqlite_fail, then resets `st`. */
int sy_sqlite_fail_reset(sy_store_sqlite *q, sqlite3_stmt *st, int rc,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Steps a statement that returns no rows, then resets it. */
int sy_sqlite_step_done(sy_store_sqlite *q, sqlite3_stmt *st,
                        const char *what);

/* SY_ESTATE when listing statement `st` is being stepped already: a
 * callback that calls the same listing again would reset it under its
 * caller.  `fn` names the listing in the message. */
int sy_sqlite_not_reentered(sy_store_sqlite *q, sqlite3_stmt *st,
                            const char *fn);

/* Runs SQL text once, unprepared (pragmas, migrations). */
int sy_sqlite_exec(sy_store_sqlite *q, const char *sql, const char *what);

/* Begins a transaction, or with `nested` a savepoint inside the open
 * one. */
int sy_sqlite_transaction_begin(sy_store_sqlite *q, bool nested);

/* Ends what sy_sqlite_transaction_begin began: kept when status is SY_OK,
 * undone otherwise.  Returns status, or the failure to commit. */
int sy_sqlite_transaction_end(sy_store_sqlite *q, bool nested, int status);

/* The small helpers of every statement, inline: the task-row update runs
 * them a dozen times per changed task. */

static inline sy_store_sqlite *sy_sqlite_handle(sy_store *s)
{
    return (sy_store_sqlite *)s;
}

static inline bool in_tx(sy_store_sqlite *q)
{
    return !sqlite3_get_autocommit(q->db);
}

/* Keeps the first failing bind's code. */
static inline void keep(int *rc, int r)
{
    if (*rc == SQLITE_OK)
        *rc = r;
}

static inline int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    /* The caller's string outlives the step, and every call rebinds every
     * parameter, so SQLite need not copy it. */
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC)
             : sqlite3_bind_null(st, i);
}

static inline char *col_text(sqlite3_stmt *st, int i)
{
    return (char *)sqlite3_column_text(st, i);
}

/* --- sqlite/elements.c -------------------------------------------------------- */

int sy_sqlite_put_map(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                      uint32_t idx, int64_t size);
int sy_sqlite_update_element(sy_store *s, int64_t run_id,
                             const sy_store_fence *fence, int64_t token,
                             int64_t elem, const sy_task_record *t);
int sy_sqlite_list_maps(sy_store *s, int64_t run_id, sy_store_map_cb cb,
                        void *arg);
int sy_sqlite_list_elements(sy_store *s, int64_t run_id, uint32_t idx,
                            bool open_only, sy_store_element_cb cb, void *arg);

/* --- sqlite/audit.c --------------------------------------------------------- */

int sy_sqlite_add_audit(sy_store *s, const sy_audit_record *r);
int sy_sqlite_list_audit(sy_store *s, const sy_audit_filter *f, sy_store_audit_cb cb,
                         void *arg);
int sy_sqlite_delete_audit(sy_store *s, int64_t before, size_t *deleted);
/* --- sqlite/rates.c: rate limits' buckets (store/rates.h) ------------------- */

int sy_sqlite_take_rates(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                         const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                         size_t *empty, int64_t *wait_ms);
int sy_sqlite_rate_bucket(sy_store *s, const char *key, sy_rate_bucket *b, bool *found);
int sy_sqlite_list_rate_buckets(sy_store *s, sy_rate_bucket_cb cb, void *arg);

/* --- sqlite/preempt.c: cancel requests on slot rows (store/preempt.h) ------- */

int sy_sqlite_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                             bool *asked);
int sy_sqlite_list_cancel_requests(sy_store *s, const char *owner, int64_t now,
                                   int (*cb)(void *arg, const sy_cancel_request *r),
                                   void *arg);

/* --- sqlite/holds.c ----------------------------------------------------------- */

/* The handle's copy of `owner`, the same pointer for the same name until
 * it closes: the holds and counts compare owners by pointer.  NULL when
 * out of memory (failed on q). */
const char *sy_sqlite_owner(sy_store_sqlite *q, const char *owner);

/* Keeps take t (made by `owner`, as sy_sqlite_owner gave it, at
 * `now`) for its attempt's start write. */
int sy_sqlite_hold_add(sy_store_sqlite *q, const char *owner, const sy_slot_take *t,
                       int64_t now);

/* *hold: the hold that a write starting attempt `token` of (run, idx,
 * elem) stores, and *text its JSON ((*hold)->len bytes, not terminated;
 * valid until the batch's next take), or NULLs for none.  The write sets its `written` once it changed the
 * row. */
int sy_sqlite_hold_for(sy_store_sqlite *q, int64_t run_id, uint32_t idx, int64_t elem,
                       int64_t token, sy_sqlite_hold **hold, const char **text);

/* Writes h's takes as slot rows, unless its start write carried them. */
int sy_sqlite_hold_rows(sy_store_sqlite *q, sy_sqlite_hold *h);

/* Every take of the batch no start write carried yet becomes rows now,
 * for a statement that reads the holders (a cancel request): their start
 * writes then store no hold. */
int sy_sqlite_holds_to_rows(sy_store_sqlite *q);

/* Before the commit: every take no start write carried becomes rows;
 * then the batch's holds are forgotten. */
int sy_sqlite_holds_flush(sy_store_sqlite *q);

/* Forgets the batch's holds (a rollback, a new batch). */
void sy_sqlite_holds_clear(sy_store_sqlite *q);

/* At close. */
void sy_sqlite_holds_free(sy_store_sqlite *q);

/* --- sqlite/counts.c ---------------------------------------------------------- */

/* Adds n (negative: gives back) to what key holds in run_id under the
 * claim (owner, as sy_sqlite_owner gave it, and epoch): nothing when that
 * is not the run's claim. */
int sy_sqlite_count_add(sy_store_sqlite *q, int64_t run_id, const char *owner, int64_t epoch,
                        const char *key, int64_t n);

/* held[i]: what c[i].key's live holders at `now` hold, the batch's
 * changes included. */
int sy_sqlite_counts_held(sy_store_sqlite *q, const sy_slot_claim *c, size_t n, int64_t now,
                          int64_t *held);

/* Writes the runs the batch changed, keeping its copies (a read in SQL
 * of the same batch then sees them). */
int sy_sqlite_counts_write(sy_store_sqlite *q);

/* Before the commit: writes the batch's changes (the copies stay; on a
 * failure they go). */
int sy_sqlite_counts_flush(sy_store_sqlite *q);

/* At a batch's begin: every copy is checked again before use. */
void sy_sqlite_counts_begin(sy_store_sqlite *q);

/* Forgets every copy (a rollback: they may hold what it undid). */
void sy_sqlite_counts_clear(sy_store_sqlite *q);

/* At close. */
void sy_sqlite_counts_free(sy_store_sqlite *q);

/* --- sqlite/slots.c ----------------------------------------------------------- */

/* The live condition of a slot row `s` (store/slots.h) at ?NOW. */
#define SY_SQLITE_SLOT_LIVE(now)                                              \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner" \
    " AND r.lease_epoch = s.epoch AND r.lease_until > " now ")"

/* The live condition of waiter row `w` (store/waiters.h): its claim,
 * as a slot row's. */
#define SY_SQLITE_WAITER_LIVE(now)                                            \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = w.run_id AND r.owner = w.owner" \
    " AND r.lease_epoch = w.epoch AND r.lease_until > " now ")"

int sy_sqlite_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                         const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                         size_t *full, int64_t *held);
int sy_sqlite_slot_room(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                        int64_t now, int64_t *held);
int sy_sqlite_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                        int64_t now, bool *put);
int sy_sqlite_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n);
int sy_sqlite_return_slots(sy_store *s, const sy_slot_holder *h, size_t n);
int sy_sqlite_reap_slots(sy_store *s, int64_t now, size_t *n);
int sy_sqlite_list_slots(sy_store *s, int64_t now,
                         int (*cb)(void *arg, const sy_slot_record *r), void *arg);

/* --- sqlite/schema.c ---------------------------------------------------------- */

/* Brings the file's schema up to this build's version (or refuses a file
 * made by a newer build, or by something else). */
int sy_sqlite_migrate(sy_store_sqlite *q);

/* --- the operations: each as its sy_store_ops entry in store/driver.h -------- */

/* sqlite/runs.c */
int sy_sqlite_put_definition(sy_store *s, const char *hash,
                             const char *tenant, const char *workflow,
                             const char *definition);
int sy_sqlite_get_definition(sy_store *s, const char *hash, char **out);
int sy_sqlite_create_run(sy_store *s, const sy_store_new_run *r, int64_t now,
                         int64_t *run_id);
int sy_sqlite_get_run(sy_store *s, int64_t run_id, sy_run_record *out);
/* A run's row and its task rows, inside the caller's transaction. */
int sy_sqlite_insert_run(sy_store_sqlite *q, const char *hash, const char *tenant,
                         const char *workflow, const char *context, size_t n_tasks,
                         const char *const *task_ids, const char *const *ns, int64_t now,
                         int64_t *run_id);
/* Run r's row and task rows as sy_sqlite_insert_run, with its priority. */
int sy_sqlite_insert_new_run(sy_store_sqlite *q, const sy_store_new_run *r, int64_t now,
                             int64_t *run_id);
int sy_sqlite_list_runs(sy_store *s, size_t limit, sy_store_run_cb cb,
                        void *arg);
int sy_sqlite_delete_finished(sy_store *s, int64_t before, size_t max,
                              size_t *deleted);
int sy_sqlite_update_run(sy_store *s, int64_t run_id,
                         const sy_store_fence *fence, sy_run_state state,
                         const char *error, int64_t now);

/* After a fenced write changed nothing: SY_STORE_EFENCED when the run
 * exists but `fence` no longer holds it (saying who does), or when task
 * `idx` (SY_SQLITE_NO_TASK for a run write) holds another attempt token
 * than `token`; SY_ENOENT when there is no such row (`what` names it). */
#define SY_SQLITE_NO_TASK UINT32_MAX
int sy_sqlite_fenced(sy_store_sqlite *q, int64_t run_id,
                     const sy_store_fence *fence, uint32_t idx, int64_t token,
                     const char *what);

/* Binds a fence's owner and epoch at `i` and `i + 1` (NULLs for none). */
static inline int bind_fence(sqlite3_stmt *st, int i,
                             const sy_store_fence *fence)
{
    int rc = bind_text(st, i, fence ? fence->owner : NULL);
    keep(&rc, fence ? sqlite3_bind_int64(st, i + 1, fence->epoch)
                    : sqlite3_bind_null(st, i + 1));
    return rc;
}

/* sqlite/ownership.c */
int sy_sqlite_claim_run(sy_store *s, int64_t run_id, const char *owner,
                        int64_t lease_until, int64_t now,
                        const char *const *stale, size_t n_stale,
                        bool *claimed);
int sy_sqlite_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                         int64_t now, const char *const *stale,
                         size_t n_stale, size_t max, int64_t *ids, size_t *n);
int sy_sqlite_list_owners(sy_store *s, sy_store_owner_cb cb, void *arg);
int sy_sqlite_renew(sy_store *s, const char *owner, int64_t lease_until,
                    int64_t now, sy_store_id_cb cb, void *arg);
int sy_sqlite_release(sy_store *s, const char *owner);
int sy_sqlite_request_cancel(sy_store *s, int64_t run_id, int64_t now);
int sy_sqlite_cancel_requests(sy_store *s, const char *owner,
                              sy_store_id_cb cb, void *arg);

/* sqlite/logs.c */
int sy_sqlite_add_log(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                      int64_t token, const sy_log_record *log);
int sy_sqlite_list_logs(sy_store *s, int64_t run_id, int64_t since,
                        sy_store_log_cb cb, void *arg);
int sy_sqlite_reopen_run(sy_store *s, int64_t run_id, const uint32_t *idx,
                         size_t n, bool no_cache, int64_t now);

/* sqlite/tasks.c */
int sy_sqlite_begin(sy_store *s);
int sy_sqlite_commit(sy_store *s);
void sy_sqlite_rollback(sy_store *s);
int sy_sqlite_list_tasks(sy_store *s, int64_t run_id, sy_store_task_cb cb,
                         void *arg);
int sy_sqlite_update_task(sy_store *s, int64_t run_id,
                          const sy_store_fence *fence, int64_t token,
                          const sy_task_record *t);
int sy_sqlite_add_event(sy_store *s, int64_t run_id,
                        const sy_store_fence *fence, int64_t token,
                        uint32_t idx, uint32_t attempt, const char *kind,
                        const char *detail, int64_t now);
int sy_sqlite_list_events(sy_store *s, int64_t run_id, sy_store_event_cb cb,
                          void *arg);

/* --- sqlite/processes.c -------------------------------------------------- */

int sy_sqlite_record_process(sy_store *s, int64_t run_id,
                             const sy_store_fence *fence, int64_t token,
                             const sy_process_record *p);
int sy_sqlite_list_processes(sy_store *s, int64_t run_id,
                             int (*cb)(void *arg, const sy_process_record *p),
                             void *arg);

/* sqlite/schedule.c */
int sy_sqlite_fire_tick(sy_store *s, const char *hash, const char *tenant,
                        const char *workflow, int64_t tick, const char *context,
                        size_t n_tasks, const char *const *task_ids,
                        const char *const *ns, int64_t now, bool *fired, int64_t *run_id);
int sy_sqlite_last_tick(sy_store *s, const char *tenant, const char *workflow,
                        int64_t *tick, int64_t *run_id);

/* sqlite/keyed.c */
int sy_sqlite_create_run_keyed(sy_store *s, const sy_store_new_run *r, const char *key,
                               int64_t window_ms, int64_t now, int64_t *run_id, bool *created);
int sy_sqlite_backfill_tick(sy_store *s, const sy_store_new_run *r, int64_t tick, int64_t now,
                            bool *fired, int64_t *run_id);
int sy_sqlite_tick_run(sy_store *s, const char *tenant, const char *workflow, int64_t tick,
                       bool *claimed, int64_t *run_id);

/* sqlite/cache.c */
int sy_sqlite_cache_put(sy_store *s, const char *ns, const char *key, const char *output,
                        int64_t run_id, uint32_t idx, int64_t now);
int sy_sqlite_cache_get(sy_store *s, const char *ns, const char *key, int64_t since,
                        char **output, int64_t *run_id);

#endif
