/*
 * service/retry.h -- `switchyard retry`: running again what failed in a
 * finished run, in the same run.
 *
 * A retry makes the run live again rather than making a new one: the
 * tasks that completed keep their rows and outputs (so the tasks run
 * again get them in their input context exactly as the first time), and
 * each task's attempts go on from where they were (attempt 3 after 2), so
 * `status` and `logs` show the whole history of the run in one place.
 * The run becomes Pending with no owner and a new claim epoch
 * (sy_store_reopen_run): whoever claims it next (the `retry` command
 * itself, or a `serve` host) runs it, and a late write of the host that
 * ran it before is refused.
 *
 * Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_SERVICE_RETRY_H
#define SY_SERVICE_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

/* What a retry of run `run_id` would run again: with `task_id` NULL each
 * task that did not complete (Failed, Cancelled, Skipped, or never
 * started); else task `task_id` and every task downstream of it, whatever
 * their state.  *plan: {"run_id", "workflow", "status", "task" (or
 * null), "rerun": [{"id", "index", "status", "attempts"}], "kept": [the
 * same]}, "index" being the task's place in the definition.  SY_ENOENT: no such run or task; SY_ESTATE:
 * the run has not finished (err says so in one line); SY_EINVAL: nothing
 * to run again (every task completed). */
int sy_retry_plan(sy_store *st, int64_t run_id, const char *task_id, json_t **plan,
                  char *err, size_t err_len);

/* Reopens the run for the tasks `plan` names in "rerun" (a plan from
 * sy_retry_plan) and records a "retry" event for each; with `no_cache`
 * the run's tasks do not look their cache up (retry --no-cache). */
int sy_retry_apply(sy_store *st, const json_t *plan, bool no_cache, int64_t now, char *err,
                   size_t err_len);

#endif
