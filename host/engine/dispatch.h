/*
 * engine/dispatch.h -- from Ready to submitted: each turn decides which
 * Ready tasks start (backoff over, instance has capacity), and after the
 * turn's transaction has committed, submits them.  Tasks kept Ready for
 * lack of capacity wait per instance until its plugin calls wake().
 */
#ifndef SY_ENGINE_DISPATCH_H
#define SY_ENGINE_DISPATCH_H

#include "engine/internal.h"

/* One queue per created instance of o.instances; wires their wake(). */
void sy_dispatch_init(sy_engine *e);
void sy_dispatch_free(sy_engine *e);

/* Forgets what the turn knew of capacity. */
void sy_dispatch_begin_turn(sy_engine *e);

/* Marks Running, in the open batch, each Ready task that can start now. */
void sy_dispatch_decide(sy_engine *e, int64_t now);

/* Submits what was decided (after the commit). */
void sy_dispatch_submit(sy_engine *e);

/* The turn's commit failed: what was decided was never recorded, so it is
 * never sent, and released at once (a host stopping on a store error must
 * not wait its shutdown grace for attempts no plugin holds). */
void sy_dispatch_discard(sy_engine *e);

/* Offers again the tasks of instances whose plugin called wake(). */
void sy_dispatch_take_wakes(sy_engine *e);

/* Drops run r from the Ready queue and every waiting list. */
void sy_dispatch_forget_run(sy_engine *e, const sy_live_run *r);

/* A slot came back (engine/limits.h): the tasks that found a key full
 * are offered again, this turn. */
void sy_dispatch_offer_waiting(sy_engine *e);

/* The named rate limits changed (a reload): the tasks parked until a
 * token of the old rate was due are offered again now, this turn, as
 * are those that found a key full. */
void sy_dispatch_offer_rate_waiting(sy_engine *e);

#endif
