/*
 * trigger.h -- deciding, from its dependencies' states, whether a task runs.
 *
 * The scheduler asks once per change of a dependency.  Until every
 * dependency is terminal (Completed, Failed, Skipped, Cancelled or
 * Dropped) the answer is WAIT; then the task's trigger rule says RUN or
 * SKIP.  A Skipped dependency is neither a success nor a failure: that is
 * how skipping propagates (all_success after a Skipped task skips;
 * none_failed runs).  A Dropped one (a full key's strategy `drop`) counts
 * as Skipped; a Cancelled one as failed.
 * `when` conditions are a separate step (sy_conds_hold), taken only on RUN.
 *
 * Pure functions, any thread.
 */
#ifndef SY_TRIGGER_H
#define SY_TRIGGER_H

#include <stddef.h>

#include "workflow/state.h"
#include "workflow/workflow.h"

typedef enum {
    SY_TRIG_WAIT, /* some dependency is not terminal yet */
    SY_TRIG_RUN,  /* the rule holds: the task may become Ready */
    SY_TRIG_SKIP  /* the rule can never hold: the task becomes Skipped */
} sy_trig_verdict;

/* The verdict of rule `t` over the states of a task's `n` dependencies
 * (`dep_states` is read, never kept; it may be NULL when n is 0).  A task
 * without dependencies always runs.  An out-of-range `t` is SKIP. */
sy_trig_verdict sy_trigger_eval(sy_trigger t, const sy_task_state *dep_states,
                                size_t n);

#endif
