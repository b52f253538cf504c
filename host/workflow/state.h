/*
 * state.h -- task and run states and the table of legal transitions.
 *
 * Task:  NotStarted -> Ready -> Running -> Completed | Failed | Skipped,
 *        Running -> Ready (a retry after its backoff, an orphan recovered
 *        from a dead owner), NotStarted -> Skipped (a trigger rule or `when`
 *        that does not hold), Ready -> Skipped/Failed (the run was
 *        cancelled or failed before it started),
 *        Ready -> Waiting (a concurrency key, pool or tenant bound is full:
 *        `waiting_for` says which) -> Running | Ready | Skipped | Cancelled
 *        | Failed | Dropped, Ready | Waiting -> Dropped (a full key whose
 *        strategy is `drop`: the task ends without running, saying why).
 * Run:   Pending -> Running -> Completed | Failed | Cancelled,
 *        Pending -> Cancelled.
 *
 * The names are the contract of `status --json`; never rename them.
 * Pure functions, any thread.
 */
#ifndef SY_STATE_H
#define SY_STATE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sy_task_state {
    SY_TASK_NOT_STARTED = 0,
    SY_TASK_READY = 1,
    SY_TASK_RUNNING = 2,
    SY_TASK_COMPLETED = 3,
    SY_TASK_FAILED = 4,
    SY_TASK_SKIPPED = 5,
    SY_TASK_CANCELLED = 6, /* its attempt was stopped with its run */
    SY_TASK_WAITING = 7,   /* ready, but a flow-control slot it needs is
                              full (engine/limits.h); not terminal */
    SY_TASK_DROPPED = 8    /* ended without running: a full key's
                              strategy is `drop`; terminal, and to trigger
                              rules as Skipped */
} sy_task_state;
#define SY_TASK_STATE_COUNT 9

typedef enum sy_run_state {
    SY_RUN_PENDING = 0,
    SY_RUN_RUNNING = 1,
    SY_RUN_COMPLETED = 2,
    SY_RUN_FAILED = 3,
    SY_RUN_CANCELLED = 4
} sy_run_state;
#define SY_RUN_STATE_COUNT 5

/* "NotStarted", "Ready", "Running", "Completed", "Failed", "Skipped",
 * "Cancelled", "Waiting", "Dropped". */
const char *sy_task_state_name(sy_task_state s);
/* "Pending", "Running", "Completed", "Failed", "Cancelled". */
const char *sy_run_state_name(sy_run_state s);

/* Parses a name back; -1 when unknown. */
int sy_task_state_parse(const char *name);
int sy_run_state_parse(const char *name);

bool sy_task_state_terminal(sy_task_state s);
/* Ready or Waiting: offered to dispatch, no attempt in flight. */
bool sy_task_state_offerable(sy_task_state s);
bool sy_run_state_terminal(sy_run_state s);

/* Whether the transition is in the table.  A transition to the same state
 * is not a transition and is illegal. */
bool sy_task_transition_ok(sy_task_state from, sy_task_state to);
bool sy_run_transition_ok(sy_run_state from, sy_run_state to);

/* The bound a Waiting task's reason names, as the engine writes it
 * ("waiting for KEY" or "waiting for KEY (...)", KEY one of "key:...",
 * "pool:...", "tenant:...", "rate:..."): *key points at KEY in `why`,
 * and the result is its length; 0 (*key left alone) for NULL or any
 * other text (a wait for an executor's capacity).  The one reader of
 * reasons: the metrics' kinds (engine/waiting.c) and where a Waiting
 * task stands (service/run_waiting.c). */
size_t sy_waiting_key(const char *why, const char **key);

#endif
