/*
 * executor/instance.h -- executor instances: one configured use of a
 * plugin, created through its descriptor and destroyed before the plugin is
 * closed.
 *
 * An entry is made from a loaded plugin (the setup does that from the
 * config) or straight from a descriptor in memory (tests, embedders): the
 * engine needs only the descriptor and the created instance.
 *
 * Single-threaded: create and destroy from one thread.  A created entry's
 * `host` is handed to the plugin and must not move while the instance
 * lives.
 */
#ifndef SY_INSTANCE_H
#define SY_INSTANCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <switchyard/limits.h>

#include "config/config.h"
#include "executor/host_api.h"
#include "executor/plugin.h"


typedef struct sy_instance_entry {
    const char *name;               /* not owned: cfg->name, or the caller's */
    const sy_instance_config *cfg;  /* its configuration; NULL when made
                                       from a descriptor */
    sy_plugin *plugin;              /* the loaded plugin; NULL when it is not
                                       loaded or the entry was made from a
                                       descriptor */
    const sy_executor *desc;        /* the plugin's descriptor; NULL when not
                                       loaded */
    sy_instance *inst;              /* the plugin's instance; NULL until
                                       created */
    json_t *settings;               /* owned: its settings, `plugin` left out */
    int64_t call_timeout_ms;        /* how long a call into the plugin may
                                       take before the watchdog reports it
                                       (0: SY_CALL_BOUND_MS, the bound
                                       the kit tests against) */
    int64_t max_task_ms;            /* bound on an attempt without its own
                                       timeout (0: none) */
    atomic_bool unhealthy;          /* set by the watchdog when a call
                                       stuck: the instance gets no new task
                                       until the host restarts */
    struct sy_host host;            /* handed to the plugin; name = name */
} sy_instance_entry;

/* An entry for instance `name` of the plugin with descriptor `desc`;
 * `settings` (stolen; NULL: none) is what create() will read. */
void sy_instance_init(sy_instance_entry *e, const char *name,
                      const sy_executor *desc, json_t *settings);

/* An entry for instance `name` of `plugin` (NULL: not loaded). */
void sy_instance_init_plugin(sy_instance_entry *e, const char *name,
                             sy_plugin *plugin, json_t *settings);

/* Calls the plugin's create() with the entry's settings.  SY_OK, or the
 * plugin's refusal with its reason in err. */
int sy_instance_create(sy_instance_entry *e, char *err, size_t err_len);

/* Destroys the instance if it was created and drops the settings; the
 * entry can be initialised again. */
void sy_instance_destroy(sy_instance_entry *e);

/* The entry called `name` in v[0..n-1], or NULL. */
sy_instance_entry *sy_instance_find(sy_instance_entry *v, size_t n,
                                    const char *name);

#endif
