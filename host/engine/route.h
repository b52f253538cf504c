/*
 * engine/route.h -- the routing table as the engine uses it: for every
 * rule of the routes in force (and for the default) the instance queues it
 * sends to, in the order they are tried, and the Ready tasks that found
 * every one of them full.  A task goes to the first instance of its route
 * that has capacity (dispatch.c); when none has, it waits on its route
 * and is offered again as soon as any instance of the route frees a slot,
 * so that neither a freed local slot nor a freed burst slot sits idle
 * while tasks wait.
 *
 * Loop thread only.
 */
#ifndef SY_ENGINE_ROUTE_H
#define SY_ENGINE_ROUTE_H

#include "engine/internal.h"

/* Builds the table from e->o.routes and e->instances. */
void sy_route_init(sy_engine *e);

/* Frees the table; with `offer`, the tasks waiting on it are offered
 * again (a reload routes them anew). */
void sy_route_free(sy_engine *e, bool offer);

/* Routes task idx of r: its route, and unless an attempt of it is in
 * flight (which keeps the instance it runs on) the route's first
 * instance as the one it is shown and recorded with. */
void sy_route_task(sy_engine *e, sy_live_run *r, size_t idx);

/* Gives slot `slot` of r the route of its mapped task. */
void sy_route_copy(sy_live_run *r, size_t slot, size_t owner);

/* Task idx of r waits until an instance of its route frees capacity. */
void sy_route_park(sy_live_run *r, size_t idx);

/* How many more tasks instance q takes this turn: none when it is
 * unhealthy (the watchdog caught it stuck), else its plugin's capacity(),
 * asked once per instance and turn, less the submits already decided for
 * it this turn; INT64_MAX when unlimited.  Capacity freed later in the
 * turn is seen in the next one, through the plugin's wake(). */
int64_t sy_route_room(sy_instance_queue *q);

/* Offers again what waits on every route with an instance that woke this
 * turn (sy_instance_queue.woke). */
void sy_route_take_wakes(sy_engine *e);

/* Drops run r's tasks from every route's waiting list. */
void sy_route_forget_run(sy_engine *e, const sy_live_run *r);

#endif
