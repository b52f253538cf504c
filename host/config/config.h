/*
 * config.h -- switchyard.cfg: the store, where plugins and workflows live,
 * the routing rules and the executor instances.
 *
 * Loading is single-threaded and reports every problem at once through
 * sy_diags, each naming FILE:LINE.  Paths inside the file are relative to
 * the file's directory; the loaded config holds them resolved.  A config
 * that loaded with errors must not be used (keep the old one running).
 */
#ifndef SY_CONFIG_H
#define SY_CONFIG_H

#include <libconfig.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/diagnostics.h"
#include "base/log_line.h"
#include "config/admin.h"
#include "config/flow.h"
#include "config/routes.h"

/* The plugin behind an implicit `default` instance. */
#define SY_DEFAULT_PLUGIN "thread"

typedef struct sy_instance_config {
    char *name;   /* owned: the instance name (the key under executors) */
    char *plugin; /* owned: the plugin name it asks for */
    const config_setting_t *setting; /* its group; NULL for the implicit
                                        default.  Lives as long as the
                                        sy_config */
    const char *file; /* where it was defined (owned by the sy_config) */
    int line;
    int64_t call_timeout_ms; /* `call_timeout`: bound on one call into the
                                plugin before the watchdog reports it (0:
                                the default, 1 s) */
    int64_t max_task_ms;     /* `max_task_time`: bound on an attempt whose
                                task has no timeout (0: none) */
    bool isolate;            /* `isolate_plugin`: the plugin runs in a
                                worker process of its own
                                (executor/isolated.h).  Not `isolate`,
                                which the thread plugin's instances use
                                for isolating each task */
} sy_instance_config;

/* Where parsed workflow files are kept (workflow.h), beside the default
 * store's file. */
#define SY_WORKFLOW_CACHE_DEFAULT "var/workflow-cache"

/* A day: long enough for a caller's retries of one request, short enough
 * that the store keeps few keys. */
#define SY_SUBMIT_KEY_WINDOW_DEFAULT ((int64_t)24 * 3600 * 1000)
/* 90 days: an audit trail covers at least a quarter's review. */
#define SY_AUDIT_KEEP_DEFAULT_MS ((int64_t)90 * 86400 * 1000)
/* How long named events and what triggers settled are kept by default. */
#define SY_EVENTS_KEEP_DEFAULT_MS ((int64_t)7 * 86400 * 1000)

typedef struct sy_config {
    config_t lc;           /* the parsed file; settings point into it */
    char *path;            /* owned: the file as given */
    char *dir;             /* owned: its directory */
    char *store;           /* owned: store URL as written ("sqlite:...") */
    int store_line;
    char **plugin_dirs;    /* owned: resolved against dir */
    size_t n_plugin_dirs;
    char **workflow_dirs;  /* owned: resolved against dir */
    size_t n_workflow_dirs;
    char *workflow_cache;  /* owned: the parse cache's directory, resolved
                              against dir (default SY_WORKFLOW_CACHE_DEFAULT);
                              NULL: no cache (workflow_cache = "") */
    bool strict_plugins;   /* a refused plugin is an error, not a warning */
    int64_t max_context_bytes; /* bound on a task's input and output
                                  (default 16 MiB) */
    int64_t lease_ms;      /* how long a host holds runs without renewing
                              (default 30 s) */
    int64_t max_recoveries; /* attempts lost with a dead host before the
                               task fails (default 5) */
    int64_t shutdown_grace_ms; /* how long a stopping host waits for
                                  attempts plugins hold (default 30 s) */
    int64_t submit_key_window_ms; /* how long a submit's key gives back its
                                     run rather than a new one (default
                                     SY_SUBMIT_KEY_WINDOW_DEFAULT) */
    int64_t audit_keep_ms; /* how long audit rows are kept (default
                              SY_AUDIT_KEEP_DEFAULT_MS); `serve` and `gc`
                              delete older ones */
    int64_t events_keep_ms; /* how long named events and trigger rows are
                               kept (default SY_EVENTS_KEEP_DEFAULT_MS,
                               at least a day); `serve` and `gc` delete
                               older ones no trigger still needs */
    int64_t log_limit;     /* bytes of each attempt's stdout and stderr
                              kept (default 64 KiB; 0: none) */
    bool log_format_set;   /* `log.format` was given (else "auto") */
    sy_log_format log_format; /* its value, when set */
    sy_instance_config *executors; /* owned, in file order; the implicit default
                               (if any) last */
    size_t n_executors;
    sy_routes routes;
    sy_admin_config admin; /* the admin API's listener (enabled: false
                              without an `admin` group) */
    sy_flow_config flow;   /* `pools` and `tenants` (none without them) */
} sy_config;

/* Reads and validates `path`.  Returns the number of errors added to `d`
 * (0: usable).  Checks everything that needs no plugin: syntax, unknown
 * keys, types, instance names, patterns, rules naming an unknown instance,
 * a missing default.  *cfg must be freed with sy_config_free either way. */
int sy_config_load(sy_config *cfg, const char *path, sy_diags *d);
void sy_config_free(sy_config *cfg);

/* The instance called `name`, or NULL. */
const sy_instance_config *sy_config_instance(const sy_config *cfg, const char *name);

/* Reports a libconfig parse failure of `lc` reading `path`. */
void sy_config_parse_error(const config_t *lc, const char *path, sy_diags *d);

/* Whether `name` is a valid instance or plugin name: letters, digits, `_`,
 * `-`, 1 to 64 characters. */
bool sy_name_valid(const char *name);

#endif
