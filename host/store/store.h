/*
 * store.h -- the durable record of runs and tasks.
 *
 * One interface, two implementations: SQLite (store/sqlite/sqlite.c, the embedded
 * default: one file, WAL) and PostgreSQL (store/postgres/postgres.c: several hosts
 * on one database; built with libpq).  The host owns all state: plugins never see the store.
 *
 * Threading: a sy_store handle is used by one thread at a time (the host's
 * loop thread); open one handle per thread otherwise.
 *
 * Writes are batched: the scheduler opens one transaction per loop turn
 * (sy_store_begin), writes every changed task row and run row, and commits;
 * a completion and the dependents it made Ready land together.  Every
 * function returns SY_OK (0) or a negative sy_status (executor.h), with the
 * reason in sy_store_errmsg().
 *
 * Times are milliseconds since the Unix epoch.
 */
#ifndef SY_STORE_H
#define SY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

#include "workflow/state.h"

typedef struct sy_store sy_store;

/* A run as stored.  Strings are owned by the struct (free with
 * sy_run_record_clear) when returned by sy_store_get_run; borrowed (valid
 * only during the callback) when handed to a list callback. */
typedef struct sy_run_record {
    int64_t id;
    char *workflow;     /* name, may hold "::" */
    char *tenant;
    char *hash;         /* the definition it runs */
    sy_run_state state;
    char *context;      /* initial context, JSON object text */
    char *owner;        /* the host running it, NULL when none */
    int64_t lease_until;
    int64_t lease_epoch; /* bumped by every claim: which claim of `owner`
                            holds the lease (sy_store_fence) */
    bool cancel_requested;
    bool no_cache;      /* retried with `retry --no-cache`: its tasks run
                           without looking their cache up (they still put
                           what they complete) */
    int32_t priority;   /* submit --priority, added to each task's (0) */
    int64_t created, started, finished; /* 0 when not yet */
    char *error;        /* why it failed or was cancelled; NULL */
    uint32_t n_tasks;
} sy_run_record;

/* A task row.  Same ownership rules as sy_run_record. */
typedef struct sy_task_record {
    uint32_t idx;        /* the task's index in its workflow definition */
    char *task_id;
    char *ns;
    sy_task_state state;
    uint32_t attempts;   /* attempts dispatched so far (the current
                            attempt's number while Running) */
    uint32_t failures;   /* attempts that failed or timed out: the retry
                            budget */
    uint32_t recoveries; /* attempts lost with a dead host */
    char *executor;      /* instance of the last dispatch; NULL before */
    char *error;         /* last error; NULL */
    char *output;        /* JSON object text when Completed; NULL */
    int64_t ready_at;    /* Ready: not before this (backoff); 0 = now */
    int64_t started;     /* last dispatch; 0 */
    int64_t finished;    /* reached a terminal state; 0 */
    int64_t fence;       /* the attempt token: which attempt of the task the
                            row belongs to (see "Fencing" below); 0 before
                            the first */
    char *host;          /* read only: the host (fence owner) whose write
                            started the current attempt; NULL before the
                            first or when unknown.  Ignored when writing */
    char *waiting_for;   /* Waiting: what it waits for ("waiting for
                            key:db (2 of 2 held)"), free text (a rate
                            limit's wait says its own); NULL otherwise */
} sy_task_record;

void sy_run_record_clear(sy_run_record *r);

/* --- Fencing ---------------------------------------------------------------
 *
 * A write is applied only while its writer still holds what it writes
 * for, checked by the store in the WHERE clause of the write's own
 * statement, so that nothing can change hands between the check and the
 * write.  Two tokens are checked:
 *
 *  - The run's claim (sy_store_fence): the owner id and the lease epoch a
 *    claim got.  Every claim of a run bumps runs.lease_epoch, so a host
 *    that was paused past its lease and whose run another host took over
 *    writes nothing for it when it resumes.
 *  - The task's attempt token (tasks.fence): monotonic per task.  A write
 *    that starts an attempt moves the row from the token its writer holds
 *    to a greater one, as a compare-and-set: of two writers starting an
 *    attempt from the same token, one wins.  Every later write the attempt
 *    causes (its state, its outcome and output, its retry, an event about
 *    it) names the token it was started under and lands only while the
 *    row still holds it.
 *
 * A refused write returns SY_STORE_EFENCED, writes nothing, and leaves the
 * batch usable for other runs.  A store where hosts claim single tasks
 * rather than runs (PostgreSQL, FOR UPDATE SKIP LOCKED) moves the attempt
 * token in the claim's UPDATE and checks both tokens the same way:
 * "... WHERE run_id = $1 AND idx = $2 AND fence = $token AND EXISTS
 * (SELECT 1 FROM runs WHERE id = $1 AND owner = $owner AND lease_epoch =
 * $epoch)".
 *
 * A NULL fence writes unconditionally (neither token is checked): for
 * tools and tests acting outside any host. */
typedef struct sy_store_fence {
    const char *owner;
    int64_t epoch;
} sy_store_fence;

/* What a fenced write returns when the run is no longer held by the
 * fence's claim (taken over, released, or re-claimed), or the task no
 * longer holds the write's attempt token.  Nothing was written; the batch
 * stays usable.  A store-layer code, never handed to plugins: outside the
 * sy_status range on purpose. */
#define SY_STORE_EFENCED (-100)
void sy_task_record_clear(sy_task_record *t);

/* Opens (creating and migrating as needed) the store at `url`:
 *   "sqlite:PATH"            PATH relative to base_dir; parent directories
 *                            are created.  ?sync=full asks for fsync on
 *                            every commit (power-loss durability); the
 *                            default (WAL, synchronous=NORMAL) survives a
 *                            killed process.
 *   "sqlite::memory:"        a throwaway store.
 *   "postgresql://...", "postgres://..."
 *                            any libpq connection URI; "postgresql:" then a
 *                            libpq keyword string.  A build without libpq
 *                            refuses them with SY_ENOTSUP.
 * On failure returns a negative status with a one-line reason in err. */
int sy_store_open(const char *url, const char *base_dir, sy_store **out,
                  char *err, size_t err_len);
void sy_store_close(sy_store *s);

/* `url` fit for a log or a message: a password in it (a URI's
 * "user:PASSWORD@", a keyword string's "password=...") written as "***".
 * Writes at most `len` bytes to `out` and returns it. */
char *sy_store_redact(const char *url, char *out, size_t len);

/* The reason for the last failure on this handle. */
const char *sy_store_errmsg(const sy_store *s);

/* --- definitions ---------------------------------------------------------- */

/* Stores a canonical workflow definition under its hash; storing the same
 * hash again is a no-op. */
int sy_store_put_definition(sy_store *s, const char *hash, const char *tenant,
                            const char *workflow, const char *definition);

/* The definition stored under `hash`, malloc'd into *out; SY_ENOENT. */
int sy_store_get_definition(sy_store *s, const char *hash, char **out);

/* --- runs ------------------------------------------------------------------ */

/* Records a new Pending run and its task rows (all NotStarted), in one
 * transaction, outside any batch.  The definition must be stored first. */
int sy_store_create_run(sy_store *s, const char *hash, const char *tenant,
                        const char *workflow, const char *context,
                        size_t n_tasks, const char *const *task_ids,
                        const char *const *ns, int64_t now, int64_t *run_id);

/* One run; SY_ENOENT when there is none.  Clear *out afterwards. */
int sy_store_get_run(sy_store *s, int64_t run_id, sy_run_record *out);

/* Runs, newest first, at most `limit` (0: all).  The callback returns 0 to
 * go on, non-zero to stop. */
int sy_store_list_runs(sy_store *s, size_t limit,
                       int (*cb)(void *arg, const sy_run_record *r), void *arg);

/* A run's tasks in idx order; SY_ENOENT when the run does not exist. */
int sy_store_list_tasks(sy_store *s, int64_t run_id,
                        int (*cb)(void *arg, const sy_task_record *t),
                        void *arg);

/* --- ownership: which host runs what ---------------------------------------- */

/* Takes run `run_id` for `owner` (lease until `lease_until`) if it is
 * Pending, or Running with no owner, an expired lease (< now), or an owner
 * listed in `stale` (hosts known dead).  *claimed says whether it did.
 * A Pending run becomes Running (started = now). */
int sy_store_claim_run(sy_store *s, int64_t run_id, const char *owner,
                       int64_t lease_until, int64_t now,
                       const char *const *stale, size_t n_stale,
                       bool *claimed);

/* Claims up to `max` runs as above, oldest first, writing their ids to
 * `ids` and the count to *n. */
int sy_store_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                        int64_t now, const char *const *stale, size_t n_stale,
                        size_t max, int64_t *ids, size_t *n);

/* The distinct owners of runs that are not terminal. */
int sy_store_list_owners(sy_store *s,
                         int (*cb)(void *arg, const char *owner), void *arg);

/* Extends the lease of every non-terminal run `owner` holds whose lease
 * has not expired by `now`.  An expired lease is not renewed even when no
 * other host took the run yet: its holder must treat it as lost (another
 * host may claim it at any moment) and claim it again.  `cb`, when not
 * NULL, is called with each renewed run's id; a run the host works on and
 * `cb` does not name is lost. */
int sy_store_renew(sy_store *s, const char *owner, int64_t lease_until,
                   int64_t now, int (*cb)(void *arg, int64_t run_id),
                   void *arg);

/* Gives up `owner`'s runs that are not terminal (a draining host): they
 * keep their state and lose their owner, for another host to take. */
int sy_store_release(sy_store *s, const char *owner);

/* Asks for a run to be cancelled.  A Pending run with no owner becomes
 * Cancelled at once (and its tasks Skipped); otherwise cancel_requested is
 * set for its owner to act on.  SY_ENOENT; SY_ESTATE when already
 * terminal. */
int sy_store_request_cancel(sy_store *s, int64_t run_id, int64_t now);

/* Runs owned by `owner` with cancel_requested set. */
int sy_store_cancel_requests(sy_store *s, const char *owner,
                             int (*cb)(void *arg, int64_t run_id), void *arg);

/* --- wake-ups: runs to claim, cancels to act on ------------------------------ */

/* Starts listening for wake-ups: a run submitted, runs released by a
 * draining host, a cancel request.  The PostgreSQL store listens
 * (LISTEN) on a connection of its own, so that a wake-up never waits in
 * the buffer of another statement's answer; *fd is its socket, to watch
 * for reading.  *fd is -1 where the store has no such thing (SQLite: its
 * hosts poll).  Called again, it drops the old connection and opens a new
 * one (after sy_store_wakeups said it was lost). */
int sy_store_listen(sy_store *s, int *fd);

/* Reads what came on the listening connection: *n wake-ups since the last
 * call (0 when nothing came).  SY_EIO when the connection is lost: no
 * wake-up comes until sy_store_listen again. */
int sy_store_wakeups(sy_store *s, size_t *n);

/* --- batches ------------------------------------------------------------------ */

int sy_store_begin(sy_store *s);
int sy_store_commit(sy_store *s);
void sy_store_rollback(sy_store *s);

/* Writes every mutable field of task `t->idx` of `run_id` (state,
 * attempts, failures, recoveries, executor, error, output, ready_at,
 * started, finished, fence).  Inside a batch.  With a fence, the row must
 * hold attempt token `token` (the one its writer holds: the token of the
 * attempt the write comes from, as the writer last wrote or read it), and
 * then holds t->fence: `token` again, or a greater one for a write that
 * starts an attempt, which also records fence->owner as the row's host.
 * SY_STORE_EFENCED when `fence` no longer holds the run or the row holds
 * another token (nothing written). */
int sy_store_update_task(sy_store *s, int64_t run_id,
                         const sy_store_fence *fence, int64_t token,
                         const sy_task_record *t);

/* One task-row write of sy_store_update_tasks: the arguments of
 * sy_store_update_task. */
typedef struct sy_store_task_write {
    int64_t run_id;
    const sy_store_fence *fence;
    int64_t token;
    const sy_task_record *t;
} sy_store_task_write;

/* Called for write w[i] that its fence refused (SY_STORE_EFENCED) or that
 * found no row (SY_ENOENT), with the reason in sy_store_errmsg during the
 * call. */
typedef void (*sy_store_refused_cb)(void *arg, size_t i, int status);

/* The n writes, each exactly as sy_store_update_task would make it, its
 * fence checked per row in the same statement, in as few round trips as
 * the store can (PostgreSQL: one).  Inside a batch; no task twice in one
 * call.  Every write lands or is refused: `refused` names each refused
 * one before this returns, the others have landed, and SY_OK.  Any other
 * failure returns it, and which writes landed is unknown: the caller rolls
 * the batch back.  An invalid write (as update_task would refuse it)
 * fails the call before anything is sent. */
int sy_store_update_tasks(sy_store *s, const sy_store_task_write *w, size_t n,
                          sy_store_refused_cb refused, void *arg);

/* Sets a run's state (started/finished stamped with `now` when it becomes
 * Running/terminal) and error (NULL clears).  Inside a batch.
 * SY_STORE_EFENCED as above. */
int sy_store_update_run(sy_store *s, int64_t run_id,
                        const sy_store_fence *fence, sy_run_state state,
                        const char *error, int64_t now);

/* Appends to the run's event log: what happened to an attempt beyond the
 * task row (a failure with its error, a timeout, an attempt abandoned by
 * a host that lost the run, a completion for an attempt no longer
 * current).  `kind` is a short word; for "abandoned", `detail` is the id
 * of the host that lost the attempt (NULL: unknown).  With a fence, task
 * `idx` must hold attempt token `token` (the task's current one, as the
 * writer holds it).  SY_STORE_EFENCED as above. */
int sy_store_add_event(sy_store *s, int64_t run_id,
                       const sy_store_fence *fence, int64_t token,
                       uint32_t idx, uint32_t attempt, const char *kind,
                       const char *detail, int64_t now);

/* A run's events in order. */
int sy_store_list_events(sy_store *s, int64_t run_id,
                         int (*cb)(void *arg, uint32_t idx, uint32_t attempt,
                                   const char *kind, const char *detail,
                                   int64_t at),
                         void *arg);

/* --- processes: what an attempt runs on its machine -------------------------
 *
 * A plugin reports each operating-system process group an attempt starts
 * (sy_host_api.attempt_process); the host records it before the plugin
 * lets the command go on, so that the host which recovers the task after
 * a crash can kill what is left of it before the retry starts.  A group
 * is named by its id, the start time of its leader (clock ticks after
 * boot), the boot and the machine: a pid reused since, another boot, or
 * another machine is never taken for it. */
typedef struct sy_process_record {
    uint32_t idx;        /* the task */
    uint32_t attempt;    /* its attempt number */
    char *host;          /* the host (fence owner) that recorded it; NULL */
    char *machine;       /* sy_process_machine_id() of the host's machine */
    char *boot_id;       /* sy_process_boot_id() of the boot */
    int64_t pgid;        /* the process group (its leader's pid) */
    uint64_t start_time; /* the leader's start: clock ticks after boot; 0
                            unknown (then nothing is killed for it) */
    int64_t recorded;    /* when, ms since the epoch */
} sy_process_record;

/* Records process group `p` of task p->idx's attempt p->attempt, in a
 * batch or alone (its own transaction).  With a fence, the task must
 * still hold attempt token `token` (as sy_store_add_event).  Recording the
 * same (task, attempt, pgid) again replaces the row.  SY_STORE_EFENCED
 * when the run or the task moved on (nothing written). */
int sy_store_record_process(sy_store *s, int64_t run_id,
                            const sy_store_fence *fence, int64_t token,
                            const sy_process_record *p);

/* The process groups recorded for a run's tasks, by task and attempt.
 * Strings are borrowed (valid during the callback).  No rows is SY_OK. */
int sy_store_list_processes(sy_store *s, int64_t run_id,
                            int (*cb)(void *arg, const sy_process_record *p),
                            void *arg);

/* --- attempt logs and retries ------------------------------------------------- */

/* What an attempt wrote on one stream ("stdout" when it is not the task's
 * output, "stderr"), as kept: `text` is at most the host's log_limit, its
 * head and tail with a marker line between them when `dropped` bytes of
 * the middle were left out.  Borrowed during the callback. */
typedef struct sy_log_record {
    uint32_t idx;
    uint32_t attempt;
    const char *stream;
    const char *text;    /* NUL-terminated UTF-8 */
    int64_t size;        /* bytes the attempt wrote on the stream */
    int64_t dropped;     /* bytes of it not kept */
    int64_t at;
} sy_log_record;

/* Records the log of one stream of attempt `attempt` of task `idx`
 * (replacing one recorded before for the same attempt and stream).
 * Fenced like sy_store_add_event.  `text` must be valid UTF-8 without NUL
 * bytes (the host cleans it). */
int sy_store_add_log(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                     int64_t token, const sy_log_record *log);

/* A run's logs recorded at `since` or later (0: all), by task, attempt
 * and stream; SY_ENOENT when the run does not exist.  A reader that
 * follows a run asks again from a little before the newest `at` it saw
 * (hosts' clocks differ), so it reads each log about once. */
int sy_store_list_logs(sy_store *s, int64_t run_id, int64_t since,
                       int (*cb)(void *arg, const sy_log_record *log),
                       void *arg);

/* Makes a finished run (Completed, Failed or Cancelled) live again for a
 * retry: it becomes Pending with no owner, its claim epoch moves on (a
 * late write of the host that ran it before is refused), its error and
 * cancel request are cleared; each task listed in `idx` becomes NotStarted
 * with its error, output, failures and recoveries cleared, keeping its
 * attempt count (new attempts are numbered after the old ones) and its
 * attempt token.  The run's no_cache becomes `no_cache`.  One
 * transaction, outside a batch.  SY_ENOENT: no such run; SY_ESTATE: the
 * run is not finished; SY_EINVAL: an index beyond the run's tasks. */
int sy_store_reopen_run(sy_store *s, int64_t run_id, const uint32_t *idx,
                        size_t n, bool no_cache, int64_t now);

/* --- mapped tasks (dynamic fan-out) -------------------------------------------
 *
 * A mapped task keeps its own row in `tasks` (the map as a whole) and one
 * element row per element made so far, keyed by (run, idx, elem).  Element
 * rows are made by their first write, in the batches the engine writes as
 * capacity frees, never all at once.  They follow the task rows' fencing:
 * the run's claim, and each element's own attempt token. */

typedef struct sy_map_record {
    uint32_t idx;        /* the mapped task */
    int64_t size;        /* how many elements the map has */
    int64_t created;     /* element rows made so far */
    int64_t count[SY_TASK_STATE_COUNT]; /* element rows by state */
} sy_map_record;

/* Records that task `idx` maps over `size` elements (again: no-op).
 * Inside a batch; fenced by the run's claim. */
int sy_store_put_map(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                     uint32_t idx, int64_t size);

/* Writes element `elem` of mapped task t->idx, every mutable field as
 * sy_store_update_task does, making the row when it does not exist yet
 * (token 0).  Inside a batch.  SY_STORE_EFENCED as update_task. */
int sy_store_update_element(sy_store *s, int64_t run_id,
                            const sy_store_fence *fence, int64_t token,
                            int64_t elem, const sy_task_record *t);

/* One element-row write of sy_store_update_elements: the arguments of
 * sy_store_update_element. */
typedef struct sy_store_element_write {
    int64_t run_id;
    const sy_store_fence *fence;
    int64_t token;
    int64_t elem;
    const sy_task_record *t;
} sy_store_element_write;

/* The n writes, each exactly as sy_store_update_element would make it
 * (the row made by its first write), fenced per row in the same
 * statement, in as few round trips as the store can (PostgreSQL: one).
 * The rest as sy_store_update_tasks: inside a batch, no element twice in
 * one call, `refused` told of each write refused (SY_STORE_EFENCED) or
 * without its map or row (SY_ENOENT) before this returns, any other
 * failure returned with the batch to roll back, an invalid write failing
 * the call before anything is sent. */
int sy_store_update_elements(sy_store *s, const sy_store_element_write *w, size_t n,
                             sy_store_refused_cb refused, void *arg);

/* The run's maps in idx order, with their element counts by state. */
int sy_store_list_maps(sy_store *s, int64_t run_id,
                       int (*cb)(void *arg, const sy_map_record *m),
                       void *arg);

/* The element rows of mapped task `idx` in element order (with
 * `open_only`, those not terminal).  t->task_id and t->ns are NULL. */
int sy_store_list_elements(sy_store *s, int64_t run_id, uint32_t idx,
                           bool open_only,
                           int (*cb)(void *arg, int64_t elem,
                                     const sy_task_record *t),
                           void *arg);

/* --- retention ------------------------------------------------------------------ */

/* Deletes at most `max` runs that ended (Completed, Failed or Cancelled)
 * before `before`, oldest first, with their tasks and events, in one short
 * transaction; *deleted says how many.  Definitions are kept.  Outside a
 * batch (SY_ESTATE inside one).  Call it again until it deletes fewer
 * than `max`: small batches keep each transaction's locks short. */
int sy_store_delete_finished(sy_store *s, int64_t before, size_t max,
                             size_t *deleted);

/* --- schedules ---------------------------------------------------------------- */

/* Fires tick `tick` (ms since the epoch) of the schedule of workflow
 * (`tenant`, `workflow`): claims the tick and records a new Pending run
 * as sy_store_create_run does, in one transaction, so that of several
 * hosts firing the same tick exactly one records a run.  A tick is
 * claimed once, and only while no later tick of the workflow is: when
 * another host has fired it or a later one, nothing is written and
 * *fired is false.  Ticks more than 90 days older than `tick` are
 * forgotten.  Outside a batch; the definition must be stored first. */
int sy_store_fire_tick(sy_store *s, const char *hash, const char *tenant,
                       const char *workflow, int64_t tick, const char *context,
                       size_t n_tasks, const char *const *task_ids,
                       const char *const *ns, int64_t now, bool *fired,
                       int64_t *run_id);

/* The latest tick fired of the workflow's schedule and the run it
 * recorded; both 0 when none was. */
int sy_store_last_tick(sy_store *s, const char *tenant, const char *workflow,
                       int64_t *tick, int64_t *run_id);

#endif
