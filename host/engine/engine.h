/*
 * engine.h -- the scheduler and the dispatcher on one libuv loop.
 *
 * The engine adopts runs from the store (claiming them for its owner id),
 * keeps their tasks in memory, and drives them: a completion makes its
 * dependents Ready (or Skipped) in the same store transaction, the
 * dispatcher routes each Ready task to its executor instance, asks its
 * capacity and submits after the transaction that marked it Running has
 * committed.  One transaction per loop turn holds every change of that
 * turn.  Completions arrive from plugin threads through a queue and a
 * wake-up descriptor; backoff and deadlines are timers on the engine's
 * clock (engine/timer.h).
 *
 * The engine is built from parts: a store, the routes, a table of executor
 * instances and the known workflows, all borrowed.  It installs no signal
 * handler and never exits the process: its user decides when to drain it
 * and what a stop means.
 *
 * Threading: every function here is called on the loop thread.
 */
#ifndef SY_ENGINE_H
#define SY_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config/routes.h"
#include "config/flow.h"
#include "executor/call_record.h"
#include "executor/instance.h"
#include "store/store.h"
#include "workflow/state.h"
#include "workflow/workflow.h"

typedef struct sy_engine sy_engine;

/* What the engine reports to its user (the `run` progress display). */
typedef struct sy_engine_view {
    int64_t run_id;
    const sy_workflow *wf;
    sy_run_state state;
    size_t n_tasks, n_done, n_failed, n_skipped, n_running;
} sy_engine_view;

typedef struct sy_engine_opts {
    sy_store *store;          /* borrowed; loop thread only */
    const sy_routes *routes;  /* borrowed: which instance runs a task; NULL:
                                 every task goes to SY_DEFAULT_INSTANCE */
    sy_instance_entry *instances; /* borrowed table; entries not created are
                                     left out.  The engine sets each
                                     created one's host.on_wake */
    size_t n_instances;
    sy_workflow *const *workflows; /* borrowed: definitions this process
                                      read, reused for runs with the same
                                      hash instead of parsing the stored
                                      copy; may be NULL */
    size_t n_workflows;
    const char *owner;        /* "host:pid": who holds the runs */
    size_t max_context_bytes; /* bound on inputs and outputs */
    int64_t log_limit;        /* bytes of each attempt's stdout and stderr
                                 kept in the store (0: 64 KiB; negative:
                                 none kept) */
    int64_t lease_ms;         /* run lease; renewed every third of it */
    uint32_t max_recoveries;  /* attempts lost with a dead host before the
                                 task fails (0: the first loss fails it) */
    /* What the previous host on this machine left when it died (NULL:
     * nothing, or it exited cleanly): recovery charges the task that was
     * inside the crashing call, and re-queues the other tasks it finds
     * Running without charging them. */
    const sy_call_snapshot *crash;
    /* How long a draining host, or one whose runs are over, waits for
     * the attempts plugins still hold before it abandons them (0: 30 s;
     * engine/shutdown.h). */
    int64_t shutdown_grace_ms;
    /* The most elements of one map in flight, in memory and in the store
     * at a time (engine/map.h; 0: SY_MAP_WINDOW, 512). */
    uint32_t map_window;
    /* A Ready task's priority grows by one per this many milliseconds it
     * waits (engine/priority.h; 0: SY_PRIORITY_AGING_MS, 1 s). */
    int64_t priority_aging_ms;
    /* Tenants' weights (switchyard.cfg `tenants`; borrowed, copied at
     * sy_engine_new): among tasks of equal priority, tenants with Ready
     * tasks share the starts in proportion to weight (engine/fair.h).
     * None: in order of readiness. */
    const sy_tenant_config *tenants;
    size_t n_tenants;
    /* Pools (switchyard.cfg `pools`; borrowed, copied at sy_engine_new):
     * a task with a `pool` takes its slots of it, held in the store
     * (engine/limits.h), as tenants' `max_running` and concurrency keys
     * are. */
    const sy_pool_config *pools;
    size_t n_pools;
    /* Named rate limits (switchyard.cfg `rate_limits`; borrowed, copied at
     * sy_engine_new): the rate, interval and burst of a task's rate
     * limit that names one, read at each take (engine/rates.h). */
    const sy_rate_config *rates;
    size_t n_rates;
    bool serve;               /* pick up submitted runs, honour cancel
                                 requests, renew leases */
    bool exit_when_idle;      /* serve: stop when nothing is left to do */
    int64_t poll_ms;          /* serve: how often to look for new runs;
                                 run: for cancel requests */
    /* The clock every time the engine records or waits for is read from
     * (NULL: sy_clock_now_ms).  A test passes a fake one and moves it:
     * turning the loop then fires the backoff and deadlines it made due. */
    int64_t (*clock)(void);
    /* The clock schedules are evaluated on (NULL: sy_clock_schedule_ms,
     * which SWITCHYARD_FAKE_CLOCK may move; engine/schedule.h). */
    int64_t (*schedule_clock)(void);
    /* Called after each task reaches a terminal state or retries, and
     * when a run ends.  May be NULL. */
    void (*on_task)(void *arg, const sy_engine_view *v, const char *task_id,
                    sy_task_state state, uint32_t attempt, const char *error);
    void (*on_run)(void *arg, const sy_engine_view *v);
    void *arg;
} sy_engine_opts;

/* What the engine counts, for tests and the metrics. */
typedef struct sy_engine_counters {
    uint64_t writes_refused; /* writes the store refused by their fence:
                                the run or the task held by another claim */
    uint64_t runs_lost;      /* runs dropped: their lease lost */
    uint64_t lapses;         /* times this host found its lease lapsed */
    uint64_t abandoned;      /* attempts of hosts that lost a run, found
                                Running when this host took the run */
    uint64_t resumed;        /* of those, taken over by their plugin
                                (resume, ABI 1.4) instead of abandoned */
    uint64_t process_records; /* process groups plugins asked to record
                                 (attempt_process), answered */
    uint64_t process_wait_ns; /* the time the asking threads waited for
                                 those answers (the loop's write and
                                 commit): a command starts only after */
} sy_engine_counters;

int sy_engine_new(sy_engine **out, uv_loop_t *loop, const sy_engine_opts *o,
                  char *err, size_t err_len);

/* Claims run `run_id` and starts driving it.  With `stop_when_done` the
 * loop stops once it ends.  SY_EBUSY when another live host holds it. */
int sy_engine_adopt(sy_engine *e, int64_t run_id, bool stop_when_done,
                    char *err, size_t err_len);

/* Cancels run `run_id` as a cancel request does: tasks not yet started
 * are Skipped, running ones are asked to cancel, and the run ends
 * Cancelled once they are back.  SY_ENOENT when the engine holds no such
 * unfinished run. */
int sy_engine_cancel(sy_engine *e, int64_t run_id, const char *why);

/* What sy_engine_run returns when the shutdown grace passed with attempts
 * still held by plugins (engine/shutdown.h): they are named in the log.  The
 * caller must not free the engine nor destroy the instances (plugins may
 * still touch what the attempts point to); it leaves the process. */
#define SY_ENGINE_ABANDONED 3

/* sy_engine_run's result when this host's lease lapsed and it stopped
 * (engine/lease.h): not serving, or a drain came during the lapse.  The
 * reason is sy_engine_lapse_reason(). */
#define SY_ENGINE_LAPSED 4

/* Runs the loop until the watched run ends, a drain finishes, or (serve
 * with exit_when_idle) nothing is left.  Returns 0, -1 on a fatal store
 * error (the reason is logged), 2 after a second drain stopped it at once
 * (attempts may still be with plugins: the store is consistent, and the
 * caller may exit without waiting), SY_ENGINE_ABANDONED, or SY_ENGINE_LAPSED.  A serving engine whose
 * lease lapses goes on as a new host instead. */
int sy_engine_run(sy_engine *e);

/* Stops dispatching, waits for attempts in flight (at most the shutdown
 * grace), releases the runs.  A second call cancels the attempts in flight
 * (engine/shutdown.h) and sy_engine_run returns SY_ENGINE_INTERRUPTED once
 * they are back and written; a third stops at once (it returns 2). */
void sy_engine_drain(sy_engine *e);

/* Swaps in a new configuration while runs go on (engine/reload.h): routes,
 * instance table and workflows, borrowed like the options'.  Runs loaded
 * before keep pointing into the configurations they were loaded and run
 * under (their workflow, the names of the instances their tasks ran on),
 * so the caller keeps every configuration's routes, workflows and
 * instance names until the engine is freed (service/reload.c keeps each
 * setup).  Tasks not running are routed anew, by a route that may name
 * several instances (engine/route.h); attempts in flight finish where they
 * are.  `retired(arg)` is called on the loop thread once no
 * attempt uses the instance table this replaced: the caller may then
 * destroy those instances.  SY_OK or SY_ENOMEM (nothing changed). */
int sy_engine_reload(sy_engine *e, const sy_routes *routes, sy_instance_entry *instances,
                     size_t n_instances, sy_workflow *const *workflows, size_t n_workflows,
                     void (*retired)(void *arg), void *arg);

/* New weights for the tenants' fair share (engine/fair.h; a reload's
 * `tenants`, copied): each tenant keeps its pass, so the change costs no
 * burst; a tenant no longer listed gets weight 1. */
void sy_engine_set_tenants(sy_engine *e, const sy_tenant_config *tenants, size_t n);

/* New named rate limits (a reload's `rate_limits`, copied): the next
 * token a task takes of one is at its new rate; one no longer named
 * limits nothing (a reload that removes one in use is refused by the
 * workflows' check first). */
void sy_engine_set_rates(sy_engine *e, const sy_rate_config *rates, size_t n);

/* New pool sizes and tenants' bounds (a reload's `pools` and `tenants`,
 * copied): the next start compares with them; slots held stay held. */
void sy_engine_set_limits(sy_engine *e, const sy_pool_config *pools, size_t n_pools,
                          const sy_tenant_config *tenants, size_t n_tenants);

/* The reload generation (0 before the first sy_engine_reload, then 1,
 * 2, ...) of the oldest run the engine holds, or the current one when it
 * holds none.  A run may point into the configuration of every
 * generation from the one it was loaded under on (its workflow, the names
 * of the instances its tasks ran on); a configuration older than this one
 * whose instances were handed back (`retired`) is no longer used. */
uint32_t sy_engine_oldest_generation(const sy_engine *e);

/* How many drains have begun: 0 none, 1 draining, 2 cancelling. */
int sy_engine_draining(const sy_engine *e);

/* What sy_engine_run returns after a second drain, all written. */
#define SY_ENGINE_INTERRUPTED 5

/* The tasks running now (attempts their task waits for): their number,
 * and up to five namespaces in names ("a, b and 3 more"). */
size_t sy_engine_running(const sy_engine *e, char *names, size_t len);

/* What is left of the shutdown grace (all of it before a drain). */
int64_t sy_engine_grace_left_ms(const sy_engine *e);

/* Whether the runs are over and the engine only waits, at most the grace,
 * for attempts plugins still hold after cancel(); a signal then ends the
 * wait at once (the attempts are abandoned, named in the log). */
bool sy_engine_winding_down(const sy_engine *e);

/* Whether the engine serves (picks up runs) rather than drives one. */
bool sy_engine_serving(const sy_engine *e);

/* What the engine holds of run `run_id`; false when it holds no such run
 * (never adopted, or ended and freed). */
bool sy_engine_view_run(const sy_engine *e, int64_t run_id, sy_engine_view *v);

/* How many runs the engine holds now (adopted, not yet ended and freed). */
size_t sy_engine_runs_held(const sy_engine *e);

/* The engine's counters so far. */
void sy_engine_counters_get(const sy_engine *e, sy_engine_counters *out);

/* The owner id the engine holds its runs under now: o.owner, or the new
 * id it took after its lease lapsed. */
const char *sy_engine_owner(const sy_engine *e);

/* The line logged when the lease last lapsed; NULL when it never did. */
const char *sy_engine_lapse_reason(const sy_engine *e);

/* A task's or a run's state as a committed batch wrote it. */
typedef struct sy_engine_event {
    int64_t run_id;
    const char *workflow;
    const char *task;     /* the task's id; NULL: the run itself */
    int64_t element;      /* the element of a mapped task; -1: none */
    const char *state;    /* as spelled in "State" (sy_task_state_name) */
    uint32_t attempt;     /* the task's attempts so far */
    const char *error;    /* what ended it; NULL */
    const char *waiting_for; /* Waiting: what for ("waiting for key:db
                                (2 of 2 held)"); NULL otherwise */
    const char *trigger;  /* the workflow trigger whose firing recorded the
                             run, Pending (engine/start_triggers.h); NULL:
                             a state change */
    int64_t cached_from;  /* the task was Completed from the cache
                             (engine/cache.h) with the output of this run;
                             0: a state change */
} sy_engine_event;

/* Calls fn after each commit with every task and run state change it
 * wrote, in order (states held for less than a loop turn are not seen);
 * the event and its strings live for the call.  fn NULL stops it.  One
 * observer at a time. */
void sy_engine_observe(sy_engine *e, void (*fn)(void *arg, const sy_engine_event *ev),
                       void *arg);

/* Tears down; every attempt must have ended (sy_engine_run returned). */
void sy_engine_free(sy_engine *e);

/* "HOSTNAME:PID" for this process, malloc'd. */
char *sy_engine_owner_id(void);

/* The workflows' triggers (engine/start_triggers.h) look for new items as
 * soon as the loop turns: a named event was just recorded (loop thread). */
void sy_engine_triggers_soon(sy_engine *e);

#endif
