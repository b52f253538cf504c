/*
 * engine/fair.h -- the share of slots between tenants: among tasks of
 * equal priority, tenants take turns in proportion to their weight
 * (`tenants` in switchyard.cfg; config/flow.h).
 *
 * The algorithm is stride scheduling (Waldspurger and Weihl, 1995), the
 * deterministic form of weighted fair queueing: each tenant has a pass,
 * and the tenant with the lowest pass among those with Ready tasks goes
 * next; each task it starts adds 1/weight to its pass.  Over any stretch
 * in which tenants have work, a tenant of weight w gets w/W of the starts
 * (W the sum of the weights of the tenants with work), within one task
 * per tenant at any moment: tighter than weighted round robin, which
 * serves a tenant's w tasks in a burst, and, unlike deficit round robin,
 * with no quantum to tune, since every task costs one slot.  A tenant that
 * had no Ready task rejoins at the current virtual time (the pass of the
 * last start), so idleness banks no credit to spend in a burst later.
 *
 * A start is charged when it is decided: one that the plugin then
 * refuses as busy (it stays Ready) has still cost its tenant its turn.
 *
 * Per host: each host shares its own starts.  A contended key is granted
 * across hosts by its holders' weighted shares (engine/grant.h).
 * Loop thread only.
 */
#ifndef SY_ENGINE_FAIR_H
#define SY_ENGINE_FAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/internal.h"

/* The tenants' table from sy_engine_opts.tenants (copied); none: fair
 * share is off and costs nothing. */
void sy_fair_init(sy_engine *e);
void sy_fair_free(sy_engine *e);

/* Whether any tenant has a weight: then every turn orders its Ready
 * tasks (engine/priority.h). */
bool sy_fair_active(const sy_engine *e);

/* Reorders v[0..n) (task references of equal effective priority, in
 * order of readiness) so that tenants take turns by weight, each
 * tenant's tasks keeping their order. */
void sy_fair_interleave(sy_engine *e, sy_task_ref *v, size_t n);

/* A task of r started: its tenant's pass moves on. */
void sy_fair_started(sy_engine *e, sy_live_run *r);

/* `tenant`'s stride: a scale over its weight (weight 1 when the
 * configuration does not name it), so that held slots times it compare
 * tenants' shares of a key (engine/grant.h). */
int64_t sy_fair_stride(const sy_engine *e, const char *tenant);

#endif
