/*
 * route.h -- the routing table: ordered glob rules from libconfig, each
 * sending a namespace to an executor instance, or to a list of them tried
 * in order (overflow: the first with capacity takes the task), the first
 * match winning and `default` taking the rest.
 *
 * Loading is single-threaded; a loaded table is immutable and may be
 * resolved from any thread.
 */
#ifndef SY_ROUTE_H
#define SY_ROUTE_H

#include <libconfig.h>
#include <stdbool.h>

#include "base/diagnostics.h"
#include "config/glob.h"

/* The instance every unrouted task goes to unless routes say otherwise. */
#define SY_DEFAULT_INSTANCE "default"

typedef struct sy_route_rule {
    sy_glob glob;    /* compiled `match` */
    char *executor;  /* the first instance: to[0] (not owned apart) */
    char **to;       /* owned: the instances in the order they are tried
                        (`to` or `executor`, a name or a list); n_to >= 1 */
    size_t n_to;
    char *file;      /* owned: where the rule was written */
    int line;
} sy_route_rule;

typedef struct sy_routes {
    sy_route_rule *rules; /* owned, in file order */
    size_t n;
    char *default_executor; /* default_to[0]; NULL when no `default` was
                               given */
    char **default_to;      /* owned: the default's instances, in order */
    size_t n_default_to;
    char *default_file;     /* owned; where `default` was written */
    int default_line;
} sy_routes;

void sy_routes_init(sy_routes *r);
void sy_routes_free(sy_routes *r);

/* Appends the rules of one `routes = { default = "..."; rules = (...); }`
 * group.  Errors (with the setting's file and line) go to `d`: unknown
 * keys, a rule without `match` or `executor` (or `to`: the same thing),
 * both `executor` and `to`, a value of the wrong type, an empty list of
 * instances or one naming an instance twice, an invalid pattern, `default`
 * given twice (naming both places).  A bad
 * rule is skipped; the others are kept.  Returns the number of errors
 * added. */
int sy_routes_add_group(sy_routes *r, const config_setting_t *routes,
                        sy_diags *d);

/* Reads a routing file (its top level must hold one `routes` group and
 * nothing else) and appends it as above.  A parse error is reported as
 * FILE:LINE: error: <libconfig's text>.  Returns the number of errors
 * added. */
int sy_routes_add_file(sy_routes *r, const char *path, sy_diags *d);

/* The one route lookup.  The rule that wins for `ns`, or NULL when none
 * matches (the default applies).  *executor gets the instance name either
 * way: the rule's, else the routing default, else SY_DEFAULT_INSTANCE.  *tried, when not NULL, gets the number of rules examined (the
 * winner included): rules[0 .. *tried-1] were tried, in order. */
const sy_route_rule *sy_routes_resolve(const sy_routes *r, const char *ns,
                                       const char **executor, size_t *tried);

/* The instances a lookup's result sends to, in the order they are tried:
 * the rule's (`win`), else the routing default's, else SY_DEFAULT_INSTANCE
 * alone.  *n gets their number (at least 1).  Borrowed from `r`. */
const char *const *sy_routes_targets(const sy_routes *r, const sy_route_rule *win,
                                     size_t *n);

/* Adds a warning for every rule that an earlier rule subsumes (it can
 * never win), naming both places. */
void sy_routes_check_shadowing(const sy_routes *r, sy_diags *d);

#endif
