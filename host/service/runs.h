/*
 * service/runs.h -- runs as the CLI and the admin API see them:
 * recording a new one, cancelling, and reading them back as JSON data.
 * Formatting is the caller's.
 *
 * Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_RUNS_H
#define SY_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/flow.h"
#include "store/keyed.h"
#include "store/store.h"
#include "workflow/workflow.h"

/* Stores the definition of `wf` and a new Pending run of it with
 * `context` (a JSON object's text). */
int sy_runs_record(sy_store *st, const sy_workflow *wf, const char *context,
                   int64_t *run_id, char *err, size_t err_len);

/* sy_runs_record under `key` (NULL: none) as sy_store_create_run_keyed
 * decides: a run recorded under it within `window_ms` is given back in
 * *run_id, *created false (created may be NULL).  The new run has
 * `priority` (submit --priority, 0: none). */
int sy_runs_record_keyed(sy_store *st, const sy_workflow *wf, const char *context,
                         const char *key, int64_t window_ms, int32_t priority, int64_t *run_id,
                         bool *created, char *err, size_t err_len);

/* How sy_runs_record_with records the run: the store call, with `r`
 * (borrowed for the call) and the caller's `arg`. */
typedef int (*sy_runs_create_fn)(sy_store *st, const sy_store_new_run *r, void *arg);

/* Stores the definition of `wf`, then has `create` record a run of it
 * with `context`; a store error's reason in err. */
int sy_runs_record_with(sy_store *st, const sy_workflow *wf, const char *context,
                        sy_runs_create_fn create, void *arg, char *err, size_t err_len);

/* The workflow run `run_id` started with, read back from the definition
 * the store holds under `hash` (the run's), into *out (the caller's to
 * free).  A store error ("run N: ..."), or SY_EINVAL when the stored text
 * does not read back (err says why). */
int sy_runs_stored_workflow(sy_store *st, int64_t run_id, const char *hash,
                            sy_workflow **out, char *err, size_t err_len);

/* Asks for run `run_id` to be cancelled (its host stops it; a run nobody
 * holds is Cancelled at once) and sets *state to its state after that.
 * SY_ENOENT ("no such run"), SY_ESTATE ("already ended"), or a store
 * error, with the reason in err. */
int sy_runs_cancel(sy_store *st, int64_t run_id, sy_run_state *state,
                   char *err, size_t err_len);

/* What sy_runs_status adds or leaves out. */
enum {
    SY_RUNS_DETAIL = 1u << 0,   /* "created", "started", "finished" (ms since
                                   the epoch, 0: not yet) and "owner" */
    SY_RUNS_NO_TASKS = 1u << 1, /* no "tasks": the run alone, cheap */
    SY_RUNS_NO_OUTPUT = 1u << 2, /* each task's "output" null: a reduce
                                    over a million elements is a million
                                    JSON values not parsed for a table */
};

/* Run `run_id` as an object: {"run_id", "workflow", "tenant", "status",
 * "error", "priority" (submit --priority, 0: none), "tasks": [{"index", "namespace", "id", "status", "attempts",
 * "recoveries", "executor", "error", "host", "abandoned", "output"}...]}
 * (the shape `status --json` prints).  "host" is the host that started
 * the task's latest attempt; "abandoned" lists the attempts hosts lost
 * with the run, as [{"attempt", "host", "at"}] (with "element", its
 * index, for an element of a mapped task).  SY_ENOENT ("no such
 * run") or a store error. */
int sy_runs_status(sy_store *st, int64_t run_id, unsigned flags,
                   json_t **out, char *err, size_t err_len);

/* Which of a run's tasks sy_runs_status_page lists: `limit` of them (0:
 * all) from the `offset`-th in index order, or with `task_id` the task of
 * that id alone. */
typedef struct sy_runs_page {
    size_t offset, limit;
    const char *task_id;
} sy_runs_page;

/* sy_runs_status with only the page's tasks in "tasks" (each with its
 * "index" in the definition), and "n_tasks" and "task_counts" (every
 * task's count by state name, states with none left out) for the whole
 * run; "tasks_offset" is the page's offset (not with task_id).  A NULL
 * page lists every task. */
int sy_runs_status_page(sy_store *st, int64_t run_id, unsigned flags,
                        const sy_runs_page *page, json_t **out, char *err,
                        size_t err_len);

/* The object of task `idx` in a listing of sy_runs_status_page (in index
 * order), or NULL when the page does not hold it.  Borrowed. */
json_t *sy_runs_task_at(const json_t *tasks, uint32_t idx);

/* Adds to each mapped task of `tasks` (sy_runs_status's array, in idx
 * order) "map": {"size", "created" (element rows so far), "elements"
 * (their counts by state name, states with none left out)}; for the task
 * called `elements_of` ("*": every mapped task; NULL: none) also
 * "list": [{"index", "status", "attempts", "recoveries", "executor",
 * "error", "host", "output"}...] in element order. */
int sy_runs_add_maps(sy_store *st, int64_t run_id, json_t *tasks,
                     const char *elements_of, char *err, size_t err_len);

/* Adds to each Waiting task and element of `tasks` (sy_runs_add_maps'
 * array, elements listed or not) whose "waiting_for" names a key
 * ("waiting for KEY ...", KEY "key:", "pool:", "tenant:" or "rate:"
 * and its name) "waiting_key", and "waiting_position" and
 * "waiting_count": where it stands at `now` (the leases' clock,
 * sy_clock_now_ms) among the key's live waiters in grant order (engine/grant.h, the tenants' weights of `flow`), null when
 * the store has no live waiter row of it there (a rate's wait), and
 * "waiting_held", what the key's live holders hold now (absent with no
 * waiter row).  With those, its "waiting_for" says "(H of L held" and
 * "position P of N waiting)" as now: the engine writes the reason once
 * per key, as first seen.  Reads the
 * store's waiter rows once, and only when something waits.  A store
 * error with its reason in err (tasks then left as they were). */
int sy_runs_add_waiting(sy_store *st, const sy_flow_config *flow, int64_t now,
                        int64_t run_id, json_t *tasks, char *err, size_t err_len);

/* The newest `limit` runs (0: all), newest first, as an array of
 * {"run_id", "status", "created", "started", "finished" (ms since the
 * epoch, 0: not yet), "duration_ms" (until now for a run not finished;
 * null when not started), "workflow", "tenant", "n_tasks", "tasks" (the
 * number of tasks in each state, by state name, states with none left
 * out), "error"}. */
int sy_runs_list(sy_store *st, size_t limit, json_t **out, char *err,
                 size_t err_len);

/* Which runs sy_runs_find lists. */
typedef struct sy_runs_filter {
    size_t limit;         /* at most this many (0: all) */
    int64_t after;        /* only runs older than this id (paging; 0: any) */
    int state;            /* an sy_run_state, or -1: any */
    const char *workflow; /* "NAME" or "TENANT::NAME"; NULL: any */
} sy_runs_filter;

/* sy_runs_list's array, newest first, of the runs `f` lets through. */
int sy_runs_find(sy_store *st, const sy_runs_filter *f, json_t **out, char *err,
                 size_t err_len);

/* What `graph --run` draws (service/run_graph.c): the workflow as the run
 * started it, from its stored definition (the file may have changed or
 * gone since), and from the task rows each task's state and the instance
 * its latest attempt went to.  Everything is owned by the struct. */
typedef struct sy_run_graph {
    sy_workflow *wf;
    sy_task_state *state;   /* wf->n_tasks of them; NotStarted without a row */
    const char **executor;  /* wf->n_tasks; NULL: never dispatched.  Point
                               into names */
    char **names;           /* the distinct instance names, NULL-ended */
} sy_run_graph;

/* Fills *g for run `run_id`.  SY_ENOENT ("no such run"), SY_EINVAL (the
 * stored definition does not read back, err says why), or a store error;
 * *g is empty on error.  Free with sy_run_graph_free. */
int sy_runs_graph(sy_store *st, int64_t run_id, sy_run_graph *g, char *err,
                  size_t err_len);
void sy_run_graph_free(sy_run_graph *g);

#endif
