/*
 * engine/priority.h -- the order in which a turn offers its Ready tasks:
 * higher priority first, ties in order of readiness, and aging, so that
 * nothing waits for ever behind newer work of a higher priority.
 *
 * A task's effective priority is its definition's (the task's `priority`,
 * else its workflow's) plus its run's (`submit --priority`), plus one for
 * every `aging` milliseconds it has waited Ready (since it was last
 * offered Ready).  A task of priority p therefore goes ahead of every task
 * of priority P > p that became Ready after it had waited (P - p) * aging:
 * with aging of 1 s, a task of 0 behind a stream of tasks of 10 starts
 * within 10 s of capacity it could have had.
 *
 * Between tasks of equal priority, tenants with weights take turns
 * (engine/fair.h); within a tenant, the order of readiness.
 *
 * The common case costs nothing: while no run with a priority pushed a
 * task Ready and no tenant has a weight (sy_task_queue.ranked stays 0),
 * the turn offers in order of readiness, as before.  Otherwise the
 * turn's Ready tasks are sorted once (n log n), put in turns by tenant
 * (n times the tenants) and the priority classes merged (n times the
 * classes) before they are offered.  Loop thread only.
 */
#ifndef SY_ENGINE_PRIORITY_H
#define SY_ENGINE_PRIORITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/internal.h"

/* One priority point per this many milliseconds waited, unless
 * sy_engine_opts.priority_aging_ms says otherwise. */
#define SY_PRIORITY_AGING_MS 1000

/* Task idx of r's priority before aging: its definition's plus its
 * run's, within int64. */
int64_t sy_priority_base(const sy_live_run *r, size_t idx);

/* Whether r or any task definition of it has a priority (looked once
 * per run; a slot's definition is its mapped task's). */
bool sy_priority_any(sy_live_run *r);

/* `base` aged by `waited_ms` at one point per `aging_ms` (>= 1). */
int64_t sy_priority_aged(int64_t base, uint32_t waited_ms, int64_t aging_ms);

/* Reorders the first `n` tasks of e->ready (all of it, at the start of
 * a turn) highest effective priority first, stably, when any of them was
 * pushed with a priority (e->ready.ranked); then clears that count.
 * `now_ms`: the loop clock's low 32 bits, as sy_live_task.ready_ms. */
void sy_priority_order(sy_engine *e, size_t n, uint32_t now_ms);

#endif
