/*
 * engine/run.h -- a live run's tasks: every change of state, trigger rules
 * and `when` conditions, retries and their backoff, cancelling, finishing.
 */
#ifndef SY_ENGINE_RUN_H
#define SY_ENGINE_RUN_H

#include "engine/internal.h"

/* Moves task idx to `to` if that transition is legal (else logs a bug and
 * returns false); counts terminal states and marks the task dirty. */
bool sy_live_set_state(sy_live_run *r, size_t idx, sy_task_state to);

/* Replaces a task's error (msg NULL: none). */
void sy_live_set_error(sy_live_task *t, const char *msg);

/* Makes task idx Ready, offered at `ready_at` (0: now). */
void sy_live_task_ready(sy_live_run *r, size_t idx, int64_t ready_at);

/* Offers a task that is already Ready once its ready_at has come. */
void sy_live_offer(sy_live_run *r, size_t idx);

/* Waits until `due` on the engine's clock, then offers task idx. */
void sy_live_arm_backoff(sy_live_run *r, size_t idx, int64_t due);

/* Fails a task that never started (Ready -> Failed), no retry. */
void sy_live_fail_now(sy_live_run *r, size_t idx, const char *error);

/* An attempt the plugin deferred (SY_OUTCOME_DEFERRED): not charged, so
 * the task goes back Ready under the same attempt number, offered again
 * after `retry_after_ms` (capped at an hour) or, when 0, the host's own
 * backoff, which doubles from 10 ms to 5 s while the task keeps being
 * deferred.  Past SY_DEFER_MAX deferrals in a row the task fails, naming
 * `instance`: a plugin that never takes a task must not spin forever. */
#define SY_DEFER_MAX 1000
void sy_live_defer(sy_live_run *r, size_t idx, const char *instance, int64_t retry_after_ms,
                   const char *why);

/* An attempt failed (or timed out): Ready again after the retry policy's
 * delay, or Failed. */
void sy_live_fail_or_retry(sy_live_run *r, size_t idx, bool timeout,
                           const char *error);

/* Task idx reached a terminal state: decide its dependents (Ready or
 * Skipped, down the graph), then maybe the run. */
void sy_live_task_terminal(sy_live_run *r, size_t idx);

/* Decides every task whose dependencies have all ended (a new or loaded
 * run's roots). */
void sy_live_start_roots(sy_live_run *r);

/* Skips what has not started, asks the plugins to cancel what runs; the run
 * ends Cancelled once the running tasks are back. */
void sy_live_cancel(sy_live_run *r, const char *why);
/* Cancels the unfinished run `run_id` the engine holds: SY_OK, or
 * SY_ENOENT when it holds no such run (the serve loop's cancel requests
 * and sy_engine_cancel both land here). */
int sy_live_cancel_by_id(sy_engine *e, int64_t run_id, const char *why);

/* Ends the run when every task is terminal. */
void sy_live_finish_if_done(sy_live_run *r);

void sy_live_fill_view(const sy_live_run *r, sy_engine_view *v);

#endif
