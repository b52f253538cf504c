/*
 * engine/internal.h -- the engine's structures, shared by its files:
 * engine.c (lifecycle, the loop turn), batch.c (the turn's changes),
 * attempt.c, dispatch.c, completion.c, run.c (transitions, triggers),
 * load.c (loading, recovery), serve.c, fenced.c (refused writes, events),
 * lease.c (a lapsed lease), input.c.  What each file offers the
 * others is in its own header.  Loop thread only, except where a field says
 * otherwise.
 */
#ifndef SY_ENGINE_INT_H
#define SY_ENGINE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/engine.h"
#include "engine/timer.h"
#include "engine/wake.h"
#include "executor/host_api.h"
#include "workflow/context_tree.h"

typedef struct sy_live_run sy_live_run;
typedef struct sy_attempt sy_attempt;
typedef struct sy_instance_queue sy_instance_queue;

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
    int64_t ready_at, started, finished;
    char *error;           /* owned; NULL */
    json_t *output;        /* owned object when Completed with output */
    char *output_text;     /* owned, as stored; NULL */
    sy_instance_queue *queue;  /* routed instance; NULL when the route names
                                  an instance that does not exist */
    const char *instance_name; /* the routed name (points into the routes) */
    sy_attempt *current;   /* the attempt in flight, NULL */
    sy_timer backoff;      /* armed while waiting for ready_at; data = run */
    bool dirty;            /* in the batch's dirty list */
    /* The context after the task (input.c): kept once settled (terminal,
     * every dependency settled); scratch while one call works it out. */
    sy_context_tree *after, *scratch;
    uint32_t visit;        /* the call (run's stamp) that made scratch */
    uint32_t children_left; /* settled: dependents not settled yet; at 0
                               the tree is dropped */
    bool settled;
    uint32_t deps_left;    /* dependencies not yet terminal: a task is
                              decided only when this reaches 0, so a wide
                              fan-in costs one check per dependency */
    /* The attempt token (store.h, "Fencing"): `token` is the current
     * attempt's, moved on when one starts; `token_stored` is what the row
     * holds as this host last wrote or read it, which every write of the
     * task names. */
    int64_t token, token_stored;
} sy_live_task;

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
    sy_live_task *t;       /* owned, wf->n_tasks */
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
    sy_live_run *next;
};

typedef struct { sy_live_run *run; size_t idx; } sy_task_ref;

/* The engine's side of one executor instance. */
struct sy_instance_queue {
    sy_instance_entry *entry;
    bool retired;          /* of a configuration a reload replaced */
    sy_engine *e;
    atomic_int woken;      /* set by wake() on any thread */
    int64_t reserved;      /* submits decided this turn, not yet made */
    int64_t cap;           /* capacity read this turn, -1 unread */
    sy_task_ref *waiting;  /* kept Ready for lack of capacity */
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
    bool timed_out, cancel_sent;
    /* Filled on the plugin's thread by the completion callback. */
    sy_outcome outcome;
    char *output;
    size_t output_len;
    bool output_oversized; /* output_len over max_context_bytes: not copied */
    char *result_error;
    char *result_note;     /* sy_result.note (1.1), at most 1 KiB; NULL */
    int64_t retry_after_ms; /* sy_result.retry_after_ms (1.1), DEFERRED */
    sy_attempt *done_next;         /* in the engine's completed list */
    sy_attempt *live_prev, *live_next; /* the engine's list of live attempts */
};

/* Ready tasks to offer, first in first out (a ring). */
typedef struct {
    sy_task_ref *v;
    size_t head, n, cap;
} sy_task_queue;

struct sy_engine {
    uv_loop_t *loop;
    sy_engine_opts o;
    int64_t (*now)(void);           /* the clock: o.clock or sy_clock_now_ms */
    sy_instance_queue *instances;
    size_t n_instances;
    sy_retired_table *retired;      /* engine/reload.c */
    sy_live_run *runs;
    sy_wake done;                   /* completions and wakes */
    uv_prepare_t flush;
    uv_timer_t poll, renew;
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
    sy_attempt *live;               /* attempts a plugin may still hold */
    sy_task_queue ready;            /* Ready tasks to offer */
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
    /* A lapsed lease (lease.c): set from the first write that found a
     * lease past, until the host comes back under a new owner id. */
    bool lease_past;                /* an event found its run's lease past */
    bool lapsed;
    char *lapse_why;                /* owned: the line logged */
    char *owner_base, *owner_own;   /* owned: the first id, the current
                                       one once it came back (o.owner) */
    unsigned owner_gen;
};

#endif
