/*
 * engine/internal.h -- the engine's structures, shared by its files:
 * engine.c (lifecycle, the loop turn), batch.c (the turn's changes),
 * attempt.c, attempt_log.c (what attempts wrote), dispatch.c,
 * completion.c, run.c (transitions, triggers), load.c (loading,
 * recovery), resume.c (taking over a lost attempt), serve.c, fenced.c
 * (refused writes, events), lease.c (a lapsed lease), input.c.  What each
 * file offers the others is in its own header.  Loop thread only, except
 * where a field says otherwise.
 */
#ifndef SY_ENGINE_INT_H
#define SY_ENGINE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/engine.h"
#include "engine/metrics.h"
#include "engine/timer.h"
#include "engine/wake.h"
#include "executor/host_api.h"
#include "workflow/context_tree.h"

typedef struct sy_live_run sy_live_run;
typedef struct sy_attempt sy_attempt;
typedef struct sy_instance_queue sy_instance_queue;
typedef struct sy_process_request sy_process_request;
typedef struct sy_route_queue sy_route_queue;

/* One stream of an attempt as the host keeps it (engine/attempt_log.c). */
typedef struct sy_attempt_log {
    char *text;        /* owned, NUL-terminated UTF-8; NULL: nothing */
    int64_t size;      /* bytes the attempt wrote */
    int64_t dropped;   /* bytes of it not kept */
} sy_attempt_log;

/* The instance queues of a configuration a reload replaced, kept until
 * no attempt uses them (engine/reload.c). */
typedef struct sy_retired_table {
    sy_instance_queue *queues;
    size_t n;
    void (*retired)(void *arg); /* then called, to stop those instances */
    void *arg;
    struct sy_retired_table *next;
} sy_retired_table;

/* A task of an adopted run. */
typedef struct sy_live_task {
    sy_task_state state;
    uint32_t attempts, failures, recoveries;
    uint32_t deferrals;    /* SY_OUTCOME_DEFERRED in a row (not stored: a
                              restart starts the count again) */
    uint32_t map;          /* a slot's map: an index into r->maps (below) */
    int64_t ready_at, started, finished;
    char *error;           /* owned; NULL */
    char *waiting_for;     /* owned while Waiting: what for
                              (engine/waiting.h); NULL otherwise */
    json_t *output;        /* owned object when Completed with output */
    char *output_text;     /* owned, as stored; NULL */
    sy_route_queue *route;     /* its route: the instances it may go to
                                  (engine/route.h) */
    sy_instance_queue *queue;  /* the instance of the attempt in flight, or
                                  of the last one; before one, the route's
                                  first (NULL when it does not exist) */
    const char *instance_name; /* that instance's name, as the store keeps
                                  it (points into a configuration the
                                  caller keeps while the engine lives) */
    sy_attempt *current;   /* the attempt in flight, NULL */
    sy_timer backoff;      /* armed while waiting for ready_at; data = run */
    bool dirty;            /* in the batch's dirty list */
    bool settled;          /* its context is kept (input.c, below) */
    bool holds_slots;      /* its attempt in flight took flow-control
                              slots in the store under `token`
                              (engine/limits.h): given back when it ends */
    struct sy_slot_held *held; /* which (keys and slots), for the give-back:
                              owned, one allocation (free() frees it),
                              NULL when it holds none */
    bool waits_slot;       /* Waiting, in the limits' list of tasks that
                              found a key full (engine/limits.h) */
    uint8_t busy_tries;    /* takes in a row that found a key another
                              host's batch was taking (engine/limits.h:
                              the retry's delay); in what was padding */
    /* A slot of a mapped task (engine/map.c): r->t past wf->n_tasks holds
     * the elements in flight.  `elem` is the element it holds, -1 when
     * free (at most SY_MAP_LIMIT: an int32_t; it and `map` sit in what
     * would be padding, so that no task grows for them). */
    int32_t elem;
    /* The context after the task (input.c): kept once settled (terminal,
     * every dependency settled); scratch while one call works it out. */
    sy_context_tree *after, *scratch;
    uint32_t visit;        /* the call (run's stamp) that made scratch */
    uint32_t children_left; /* settled: dependents not settled yet; at 0
                               the tree is dropped */
    uint32_t deps_left;    /* dependencies not yet terminal: a task is
                              decided only when this reaches 0, so a wide
                              fan-in costs one check per dependency */
    uint32_t ready_ms;     /* the loop clock (low 32 bits, ms) when it was
                              last offered Ready: the dispatch latency's
                              start (engine/metrics.h); in what was padding */
    uint32_t waiter_key;   /* the hash of the key it has a waiter row for in
                              the store (engine/waiters.h); 0: none */
    uint32_t claims_at;    /* its keys as named this turn, if they were
                              (engine/claims.h: checked there, since a past
                              turn's mark may remain); in what was padding */
    /* The attempt token (store.h, "Fencing"): `token` is the current
     * attempt's, moved on when one starts; `token_stored` is what the row
     * holds as this host last wrote or read it, which every write of the
     * task names. */
    int64_t token, token_stored;
} sy_live_task;

/* The most elements of one map in flight (and in memory) at a time by
 * default (sy_engine_opts.map_window): the map's slots.  Elements beyond
 * them are made as slots free. */
#define SY_MAP_WINDOW 512

/* A mapped task of an adopted run (engine/map.c). */
typedef struct sy_live_map {
    size_t idx;            /* the mapped task */
    bool started;          /* size known, elements being made */
    bool stopped;          /* no more elements will be made: its list could
                              not be bound again after a restart */
    bool pending;          /* a slot freed or the map may be over: looked
                              at by the next turn (sy_map_turn) */
    int64_t size;          /* its elements */
    int64_t next;          /* the next element to make */
    int64_t ended, failed, cancelled; /* elements terminal, of them failed,
                                         cancelled or skipped */
    size_t first_slot, n_slots; /* its slots: r->t[first_slot ..] */
    size_t busy;           /* slots holding an element not yet written
                              terminal */
    json_t *base;          /* owned: the map's input context, less the list */
    json_t *list;          /* owned reference: the list; NULL for a range */
    char *first_error;     /* owned: the first failed element's, "[k] why" */
    char *first_cancel;    /* owned: the first element cancelled, skipped or
                            * dropped while its run was not: "[k] why" */
} sy_live_map;

struct sy_live_run {
    int64_t id;
    char id_text[24];      /* the id as handed to plugins in sy_task */
    sy_engine *e;
    sy_workflow *wf;       /* the definition the run started with: owned,
                              or borrowed from the options (wf_borrowed) */
    bool wf_borrowed;
    json_t *context;       /* owned: initial context */
    char *context_text;    /* owned */
    sy_run_state state;
    char *error;           /* owned */
    sy_live_task *t;       /* owned, n_t: wf->n_tasks, then the maps'
                              slots */
    size_t n_t;
    sy_live_map *maps;     /* owned, n_maps: one per mapped task */
    size_t n_maps;
    bool maps_pending;     /* a map of it is pending */
    size_t n_terminal, n_failed, n_skipped, n_running, n_with_output;
    size_t inflight;       /* attempts not yet returned by plugins, stale
                              ones included: the run is freed at 0 */
    /* Building inputs (input.c): the initial context as a tree, each
     * task's topological position, the scratch trees of one call and the
     * walk's stack; all made when first needed. */
    sy_context_tree *initial;
    uint32_t *position;
    size_t *walk, n_scratch;
    size_t *stack, stack_cap;
    uint32_t stamp;
    bool dirty, cancelling, finished, watched;
    /* Its priorities (engine/priority.h): the run's own, from submit
     * --priority (0: none), and whether it or any task definition of it
     * has one: 0 not looked yet, 1 none, 2 some. */
    int32_t priority;
    uint8_t prioritized;
    int32_t tenant_ix;     /* its tenant in e->fair, plus one; 0 not looked
                              up yet (engine/fair.h) */
    /* The claim this host holds the run under: every write for the run
     * names it, and the store refuses it once another claim took over. */
    sy_store_fence fence;
    int64_t lease_until;   /* when that claim's lease ends, by the engine's
                              clock: set by the claim and each renewal */
    bool fenced;           /* a write was refused this turn: dropped after
                              the commit (load.c, sy_live_drop) */
    char *fenced_why;      /* owned: the store's reason, for that log */
    bool lost;             /* dropped: nothing more is written or started
                              for it; freed once its attempts are back */
    bool renewed;          /* scratch of serve.c's renewal */
    bool no_cache;         /* retried with --no-cache: no cache looked up
                              (engine/cache.h) */
    char **cache_keys;     /* owned: per task, the cache key its dispatch
                              missed, put once it is Completed
                              (engine/cache.h); NULL until one missed */
    uint32_t gen;          /* the engine's reload generation when it was
                              loaded (engine/reload.c) */
    sy_live_run *next;
};

typedef struct { sy_live_run *run; size_t idx; } sy_task_ref;
typedef struct sy_fair_tenant sy_fair_tenant; /* engine/fair.c */
typedef struct sy_limits sy_limits;           /* engine/limits.c */

/* The engine's side of one executor instance. */
struct sy_instance_queue {
    sy_instance_entry *entry;
    bool retired;          /* of a configuration a reload replaced */
    sy_engine *e;
    atomic_int woken;      /* set by wake() on any thread */
    int64_t reserved;      /* submits decided this turn, not yet made */
    int64_t cap;           /* capacity read this turn, -1 unread */
    bool woke;             /* took a wake() this turn (dispatch.c) */
    sy_instance_metrics *metrics; /* its figures: e->metrics' */
};

/* One route of the routing table in force: a rule's (or the default's)
 * instances in the order they are tried (overflow), and the Ready tasks
 * that found all of them full (engine/route.c). */
struct sy_route_queue {
    sy_instance_queue **q; /* owned array; the queues that exist, in order */
    size_t n;
    const char *first;     /* the route's first instance name, even when it
                              does not exist (points into the routes) */
    sy_task_ref *waiting;  /* kept Ready until one of q frees capacity */
    size_t n_waiting, cap_waiting;
};

struct sy_attempt {
    sy_completion c;       /* its token is what the plugin holds */
    sy_task task;
    sy_engine *e;
    sy_live_run *run;
    size_t idx;
    uint32_t number;
    int64_t token;         /* its attempt token (store.h, "Fencing") */
    sy_instance_queue *queue;
    char *input;           /* owned unless input_borrowed */
    bool input_borrowed;
    sy_timer deadline;     /* armed while the attempt may time out */
    uint64_t submitted_ms; /* the loop clock when it was submitted */
    bool timed_out, cancel_sent;
    char *resumed_from;    /* owned: the host whose attempt this one takes
                              over (engine/resume.h); NULL for a submit */
    /* Filled on the plugin's thread by the completion callback. */
    sy_outcome outcome;
    char *output;
    size_t output_len;
    bool output_oversized; /* output_len over max_context_bytes: not copied */
    char *result_error;
    char *result_note;     /* sy_result.note (1.1), at most 1 KiB; NULL */
    int64_t retry_after_ms; /* sy_result.retry_after_ms (1.1), DEFERRED */
    sy_attempt_log log[2];  /* stdout, stderr as kept (attempt_log.h) */
    sy_attempt *done_next;         /* in the engine's completed list */
    sy_attempt *live_prev, *live_next; /* the engine's list of live attempts */
};

/* Ready tasks to offer, first in first out (a ring). */
typedef struct {
    sy_task_ref *v;
    size_t head, n, cap;
    size_t ranked;  /* pushes of tasks whose run has priorities since the
                       last turn sorted (engine/priority.h); 0: the turn
                       offers in order of readiness */
} sy_task_queue;

struct sy_engine {
    uv_loop_t *loop;
    sy_engine_opts o;
    int64_t (*now)(void);           /* the clock: o.clock or sy_clock_now_ms */
    sy_instance_queue *instances;
    size_t n_instances;
    sy_route_queue *routes;         /* engine/route.c: one per rule of
                                       o.routes, then the default's */
    size_t n_routes;
    sy_retired_table *retired;      /* engine/reload.c */
    uint32_t gen;                   /* reloads so far */
    sy_live_run *runs;
    bool maps_pending;              /* a run has a pending map */
    sy_wake done;                   /* completions and wakes */
    uv_prepare_t flush;
    uv_timer_t poll, renew;
    uv_timer_t sched_timer;         /* engine/schedule.c */
    struct sy_sched *sched;         /* owned: the workflows' schedules */
    size_t n_sched;
    int64_t (*sched_now)(void);     /* o.schedule_clock or the default */
    uint64_t ticks_fired, ticks_refused;
    struct sy_triggers *start_triggers; /* owned: engine/start_triggers.c */
    /* Called (loop thread) when another host wakes this one: set by
     * engine.c to the triggers' pass, so that serve.c, which the triggers
     * call to claim what they start, does not call back into them. */
    void (*on_store_wake)(sy_engine *e);
    /* engine/serve.c: claiming, woken by other hosts.  `claim` fires a
     * claim after this host's turn in line; `heat` counts its recent
     * claims (decaying, read at heat_at); `listen` is NULL while it does
     * not listen, and listen_retry is when it tries again. */
    uv_timer_t claim;
    struct sy_listen *listen;
    double heat;
    int64_t heat_at, listen_retry;
    sy_timers timers;               /* backoff and deadlines */
    pthread_mutex_t done_lock;      /* guards done_head/done_tail */
    sy_attempt *done_head, *done_tail; /* completed attempts, any thread */
    /* Process groups plugins report (engine/process.c): under done_lock,
     * waited for on proc_cond by the plugin threads that asked. */
    sy_process_request *proc_head, *proc_tail; /* waiting for a batch */
    sy_process_request *proc_written;          /* in this turn's batch */
    bool proc_closed;                          /* the loop has stopped */
    pthread_cond_t proc_cond;
    uint64_t proc_records;          /* under done_lock: requests answered, */
    uint64_t proc_wait_ns;          /* and how long their threads waited */
    pthread_t loop_thread;
    char machine_id[128], boot_id[64];         /* this host's, for records */
    sy_attempt *live;               /* attempts a plugin may still hold */
    sy_task_queue ready;            /* Ready tasks to offer */
    sy_fair_tenant *fair;           /* engine/fair.h: the tenants' passes;
                                       NULL when no tenant has a weight */
    size_t n_fair, cap_fair;
    int64_t fair_vtime;             /* the pass of the last start */
    sy_task_ref *dirty;             /* tasks changed this turn */
    size_t n_dirty, cap_dirty;
    sy_attempt **submit;            /* decided this turn */
    size_t n_submit, cap_submit;
    int drain;                      /* 0 running, 1 draining, 2 stop now:
                                       the signals' count, nobody else's */
    bool winding_down;              /* the runs are over; waiting for the
                                       attempts plugins still hold */
    bool fatal;
    bool stopping;
    uv_timer_t grace;               /* engine/shutdown.c: armed at shutdown */
    bool grace_armed;
    int64_t grace_started;          /* uv_now() when it was armed */
    int64_t grace_ms;               /* o.shutdown_grace_ms or its default */
    bool abandoned;                 /* the grace passed with attempts held */
    bool interrupted;               /* a second signal: attempts cancelled */
    size_t watched_left;            /* adopted runs with stop_when_done */
    sy_engine_counters counters;
    sy_engine_metrics metrics;      /* engine/metrics.h */
    /* A lapsed lease (lease.c): set from the first write that found a
     * lease past, until the host comes back under a new owner id. */
    bool lease_past;                /* an event found its run's lease past */
    bool lapsed;
    char *lapse_why;                /* owned: the line logged */
    char *owner_base, *owner_own;   /* owned: the first id, the current
                                       one once it came back (o.owner) */
    unsigned owner_gen;
    struct sy_observe *observe;     /* engine/observe.c; NULL: nobody */
    struct sy_limits *limits;       /* engine/limits.c: pools, tenants'
                                       bounds, slots to give back */
    struct sy_waiters *waiters;     /* engine/waiters.c: the turn's view of
                                       contended keys' waiters */
};

/* The definition task (or slot) idx runs: a slot runs its mapped task's. */
static inline const sy_task_def *sy_live_def(const sy_live_run *r, size_t idx)
{
    if (idx >= r->wf->n_tasks)
        idx = r->maps[r->t[idx].map].idx;
    return &r->wf->tasks[idx];
}

static inline bool sy_live_is_slot(const sy_live_run *r, size_t idx)
{
    return idx >= r->wf->n_tasks;
}

/* What the call record (executor/call_record.h) keeps of task idx: its
 * index, or for an element the element's index with the top bit set (a
 * slot's position is this host's alone; the element is the same for the
 * host that reads the record after a crash). */
#define SY_CALL_ELEMENT 0x80000000u
static inline uint32_t sy_live_call_idx(const sy_live_run *r, size_t idx)
{
    return sy_live_is_slot(r, idx) ? SY_CALL_ELEMENT | (uint32_t)r->t[idx].elem
                                   : (uint32_t)idx;
}

#endif
