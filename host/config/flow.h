/*
 * flow.h -- the flow control of switchyard.cfg (docs/flow-control.md):
 * `pools`, named slot counts that tasks take slots of, and `tenants`,
 * each tenant's weight in the fair share and its bound on running tasks.
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

typedef struct sy_flow_config {
    sy_pool_config *pools;     /* owned, in file order, names distinct */
    size_t n_pools;
    sy_tenant_config *tenants; /* owned, in file order, names distinct */
    size_t n_tenants;
} sy_flow_config;

/* `pools` and `tenants` settings into f (appending); every problem an
 * error at its FILE:LINE.  Return the number of errors. */
int sy_config_pools_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d);
int sy_config_tenants_read(sy_flow_config *f, const config_setting_t *s, sy_diags *d);

/* The pool or tenant called `name`, or NULL. */
const sy_pool_config *sy_config_pool(const sy_flow_config *f, const char *name);
const sy_tenant_config *sy_config_tenant(const sy_flow_config *f, const char *name);

/* "a, b, c" (the pools' names) into buf, "none" for none; returns buf. */
const char *sy_config_pool_names(const sy_flow_config *f, char *buf, size_t len);

void sy_flow_config_free(sy_flow_config *f);

#endif
