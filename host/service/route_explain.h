/*
 * service/route_explain.h -- the routing table as data: which instances a
 * namespace goes to and why, and the rules as written.  What `switchyard
 * route --json` prints and GET /api/v1/routes answers, made in one place.
 */
#ifndef SY_SERVICE_ROUTE_EXPLAIN_H
#define SY_SERVICE_ROUTE_EXPLAIN_H

#include <jansson.h>

#include "config/routes.h"

/* {"namespace", "executor" (the first instance), "executors" (every
 *  instance, in the order they are tried: an overflow list), "rule":
 *  {"file", "line", "match"} or null, "default": {"file", "line"} or null,
 *  "tried": [{"file", "line", "match", "executor", "executors",
 *  "matched"}]}.  A new reference. */
json_t *sy_route_explain(const sy_routes *r, const char *ns);

/* {"rules": [{"file", "line", "match", "executor", "executors"}],
 *  "default": the default's first instance or null, "defaults": its
 *  instances (the implicit one when none was written)}.  A new
 *  reference. */
json_t *sy_route_rules(const sy_routes *r);

#endif
