/*
 * flow.h -- the flow control of switchyard.cfg (docs/flow-control.md):
 * `pools`, named slot counts that tasks take slots of, `rate_limits`,
 * named token buckets' rates that tasks' rate limits name, and
 * `tenants`, each tenant's weight in the fair share and its bound on
 * running tasks.
 */
#ifndef SY_CONFIG_FLOW_H
#define SY_CONFIG_FLOW_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diagnostics.h"

#define SY_POOL_SIZE_MAX 1000000
#define SY_TENANT_WEIGHT_MAX 1000
#define SY_TENANT_RUNNING_MAX 1000000
#define SY_RATE_MAX 1000000               /* a rate's tokens, its burst */
#define SY_RATE_INTERVAL_MAX_MS 86400000  /* a rate's interval: one day */

/* One pool: `pools = { db = 50; };`. */
typedef struct sy_pool_config {
    char *name;  /* owned: its key, a valid instance-style name */
    int64_t size; /* its slots: 1..SY_POOL_SIZE_MAX */
    int line;    /* where it was written (in the sy_config's file) */
} sy_pool_config;

/* One tenant: `tenants = { a = { weight = 1; max_running = 10; }; };`. */
typedef struct sy_tenant_config {
    char *name;          /* owned: the tenant, as workflows name it */
    int64_t weight;      /* its share against other tenants with ready
                            tasks: 1..SY_TENANT_WEIGHT_MAX, 1 unless set */
    int64_t max_running; /* its tasks running at once, on every host
                            together: 1..SY_TENANT_RUNNING_MAX; 0 for no
                            bound (the default) */
    int line;            /* where it was written */
} sy_tenant_config;

/* One named rate limit: `rate_limits = { crm = { rate = 10; interval =
 * "1s"; burst = 2; }; };`.  A task's rate limit that names it (`{ name =
 * "crm"; }`) takes its tokens at this rate, read when it takes them, so
 * a reload's new rate applies to every run at once. */
typedef struct sy_rate_config {
    char *name;          /* owned: as a pool's name */
    int64_t rate;        /* tokens per interval: 1..SY_RATE_MAX */
    int64_t interval_ms; /* 1..SY_RATE_INTERVAL_MAX_MS */
    int64_t burst;       /* the most tokens held: 1..SY_RATE_MAX; `rate`
                            unless set */
    int line;            /* where it was written */
} sy_rate_config;

typedef struct sy_flow_config {
    sy_pool_config *pools;     /* owned, in file order, names distinct */
    size_t n_pools;
    sy_rate_config *rates;     /* owned, in file order, names distinct */
    size_t n_rates;
    sy_tenant_config *tenants; /* owned, in file order, names distinct */
    size_t n_tenants;
} sy_flow_config;

/* `pools` and `tenants` settings into f (appending); every problem an
 * error at its FILE:LINE.  Return the number of errors. */
int sy_config_pools_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d);
int sy_config_tenants_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d);
/* `rate_limits` the same way. */
int sy_config_rates_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d);

/* A rate's `interval` setting: a duration of 1 ms to a day, a string
 * ("1s") or integer milliseconds, into *ms; else an error "WHAT must be
 * a duration from 1ms to 1d, ..." at its FILE:LINE.  The errors (0, 1). */
int sy_config_rate_interval_read(const config_setting_t *s, const char *what, int64_t *ms,
                                 sy_diags *d);

/* The pool or tenant called `name`, or NULL. */
const sy_pool_config *sy_config_pool(const sy_flow_config *f, const char *name);
const sy_tenant_config *sy_config_tenant(const sy_flow_config *f, const char *name);
const sy_rate_config *sy_config_rate(const sy_flow_config *f, const char *name);
/* The same among n rate limits of a copy (the engine's). */
const sy_rate_config *sy_config_rate_in(const sy_rate_config *rates, size_t n, const char *name);

/* "a, b, c" (the pools' or the named rate limits' names) into buf,
 * "none" for none; returns buf. */
const char *sy_config_pool_names(const sy_flow_config *f, char *buf, size_t len);
const char *sy_config_rate_names(const sy_flow_config *f, char *buf, size_t len);

void sy_flow_config_free(sy_flow_config *f);

#endif
