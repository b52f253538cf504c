/*
 * engine/internal.h -- the engine's internal structures, shared by engine.c
 * (loop, batches, dispatch, completions), engine/run.c (runs, transitions,
 * triggers, recovery) and engine/input.c (input contexts).  Loop thread only,
 * except where a field says otherwise.
 */
#ifndef SY_ENGINE_INT_H
#define SY_ENGINE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/engine.h"
#include "executor/host_api.h"
#include "engine/wake.h"

typedef struct sy_live_run sy_live_run;
typedef struct sy_attempt sy_attempt;
typedef struct sy_instance_queue sy_instance_queue;

/* A task of an adopted run. */
typedef struct sy_live_task {
    sy_task_state state;
    uint32_t attempts, failures, recoveries;
    int64_t ready_at, started, finished;
    char *error;           /* owned; NULL */
    json_t *output;        /* owned object when Completed with output */
    char *output_text;     /* owned, as stored; NULL */
    sy_instance_queue *queue;        /* routed instance; NULL when the route names
                              an instance that does not exist */
    const char *instance_name; /* the routed name (points into config) */
    sy_attempt *current;   /* the attempt in flight, NULL */
    uv_timer_t *backoff;   /* owned; armed while waiting for ready_at */
    bool dirty;            /* in the batch's dirty list */
    uint32_t visit;        /* DFS stamp for context materialisation */
    uint32_t deps_left;    /* dependencies not yet terminal: a task is
                              decided only when this reaches 0, so a wide
                              fan-in costs one check per dependency */
} sy_live_task;

struct sy_live_run {
    int64_t id;
    char id_text[24];      /* the id as handed to plugins in sy_task */
    sy_engine *e;
    sy_workflow *wf;       /* the definition the run started with: owned,
                              or borrowed from the setup (wf_borrowed) */
    bool wf_borrowed;
    json_t *context;       /* owned: initial context */
    char *context_text;    /* owned */
    sy_run_state state;
    char *error;           /* owned */
    sy_live_task *t;             /* owned, wf->n_tasks */
    size_t n_terminal, n_failed, n_skipped, n_running, n_with_output;
    size_t inflight;       /* attempts not yet returned by plugins, stale
                              ones included: the run is freed at 0 */
    uint32_t stamp;
    bool dirty, cancelling, finished, watched;
    sy_live_run *next;
};

/* The engine's side of one executor instance. */
struct sy_instance_queue {
    sy_instance_entry *entry;
    sy_engine *e;
    atomic_int woken;      /* set by wake() on any thread */
    int64_t reserved;      /* submits decided this turn, not yet made */
    int64_t cap;           /* capacity read this turn, -1 unread */
    struct { sy_live_run *run; size_t idx; } *waiting; /* kept Ready for lack
                                                     of capacity */
    size_t n_waiting, cap_waiting;
};

struct sy_attempt {
    sy_completion c;       /* first: the plugin hands it back */
    sy_task task;
    sy_engine *e;
    sy_live_run *run;
    size_t idx;
    uint32_t number;
    sy_instance_queue *queue;
    char *input;           /* owned unless input_borrowed */
    bool input_borrowed;
    uv_timer_t deadline;
    bool deadline_armed, timed_out, cancel_sent;
    /* Filled on the plugin's thread by the completion callback. */
    sy_outcome outcome;
    char *output;
    size_t output_len;
    char *result_error;
    sy_attempt *qnext;
    sy_attempt *lprev, *lnext; /* the engine's list of live attempts */
};

typedef struct { sy_live_run *run; size_t idx; } sy_task_ref;

typedef struct {
    sy_task_ref *v;
    size_t head, n, cap;
} sy_task_queue;

struct sy_engine {
    uv_loop_t *loop;
    sy_engine_opts o;
    sy_instance_queue *instances;
    size_t n_instances;
    sy_live_run *runs;
    sy_wake done;            /* completions and wakes */
    uv_prepare_t flush;
    uv_timer_t poll, renew;
    uv_signal_t sigterm, sigint;
    pthread_mutex_t qlock;          /* guards qhead/qtail */
    sy_attempt *qhead, *qtail;      /* completed attempts, any thread */
    sy_attempt *live;               /* attempts a plugin may still hold */
    sy_task_queue ready;                /* Ready tasks to offer */
    sy_task_ref *dirty;                 /* tasks changed this turn */
    size_t n_dirty, cap_dirty;
    sy_attempt **submit;            /* decided this turn */
    size_t n_submit, cap_submit;
    int drain;                      /* 0 running, 1 draining, 2 stop now */
    bool fatal;
    bool stopping;
    size_t watched_left;            /* adopted runs with stop_when_done */
};

/* engine.c */
void sy_engine_mark_task(sy_live_run *r, size_t idx);
void sy_engine_mark_run(sy_live_run *r);
void sy_engine_enqueue(sy_live_run *r, size_t idx);
void sy_engine_check_idle(sy_engine *e);
sy_instance_queue *sy_engine_instance_queue(sy_engine *e, const char *name);

/* engine/run.c */
bool sy_engine_set_state(sy_live_run *r, size_t idx, sy_task_state to);
void sy_engine_task_terminal(sy_live_run *r, size_t idx);
void sy_engine_task_ready(sy_live_run *r, size_t idx, int64_t ready_at);
void sy_engine_fail_or_retry(sy_live_run *r, size_t idx, bool timeout,
                          const char *error);
/* Fails a task that never started (Ready -> Failed), no retry. */
void sy_engine_fail_now(sy_live_run *r, size_t idx, const char *error);
void sy_engine_start_roots(sy_live_run *r);
void sy_engine_task_ready_reload(sy_live_run *r, size_t idx);
void sy_engine_arm_backoff(sy_live_run *r, size_t idx, int64_t delay);
void sy_engine_cancel_run(sy_live_run *r, const char *why);
void sy_engine_maybe_finish(sy_live_run *r);
void sy_engine_free_run(sy_live_run *r);
void sy_engine_fill_view(const sy_live_run *r, sy_engine_view *v);
int sy_engine_load_run(sy_engine *e, int64_t run_id, sy_live_run **out, char *err,
                    size_t err_len);

/* engine/input.c: the input of task idx, as JSON text.  Sets *borrowed when
 * the text is the run's own initial context.  NULL with err on failure
 * (too large, out of memory). */
char *sy_engine_input(sy_live_run *r, size_t idx, bool *borrowed, char *err,
                   size_t err_len);
/* The merged input context as a JSON object (new reference). */
json_t *sy_engine_input_json(sy_live_run *r, size_t idx);

#endif
