/*
 * setup.h -- a loaded host: the configuration, the plugin registry and the
 * executor instances, assembled in that order and torn down in reverse
 * (instances destroyed before any plugin is closed).
 *
 * Single-threaded: open and close from one thread.  While open, the config
 * and registry are read-only and may be read from any thread.
 */
#ifndef SY_SETUP_H
#define SY_SETUP_H

#include <jansson.h>

#include "config/config.h"
#include "base/diagnostics.h"
#include "executor/instance.h"
#include "executor/plugin.h"
#include "workflow/workflow.h"

typedef struct sy_setup {
    sy_config cfg;
    bool have_cfg;           /* false when running without a config file */
    bool cfg_ok;             /* the config loaded without errors */
    sy_plugins plugins;
    sy_instance_entry *instances; /* owned, one per cfg.executors entry */
    size_t n_instances;
    sy_workflow **wfs;       /* owned: the workflows of workflow_dirs */
    size_t n_wfs;
    unsigned flags;          /* what sy_setup_open was asked to do */
    bool stopped;            /* a reload replaced it and its instances were
                                stopped (service/reload.c) */
} sy_setup;

/* What sy_setup_open does beyond reading the config. */
enum {
    SY_SETUP_PLUGINS = 1u << 0, /* scan plugin directories, check instances */
    SY_SETUP_CREATE = 1u << 1,  /* also create every instance */
    SY_SETUP_WORKFLOWS = 1u << 2, /* also read workflow_dirs, checking each
                                     task against the plugin it routes to */
    SY_SETUP_SKIP_BAD_WORKFLOWS = 1u << 3, /* a workflow file with errors is
                                     reported and left out, not counted:
                                     one bad file must not stop a host
                                     from running the good ones */
    SY_SETUP_CHECK_COMMANDS = 1u << 4, /* also find the program of every
                                     command task (service/inspect.h) */
};

/* Reads `cfg_path` (NULL: no config, plugin directories from the
 * environment and the default only) and does what `flags` ask.  Returns
 * the number of errors added to `d`; *s must be closed either way. */
int sy_setup_open(sy_setup *s, const char *cfg_path, unsigned flags,
                  sy_diags *d);

/* The workflow called `name` ("NAME" or "TENANT::NAME"); NULL with a
 * reason in err when there is none or the name is ambiguous. */
const sy_workflow *sy_setup_workflow(const sy_setup *s, const char *name,
                                     char *err, size_t err_len);

/* Destroys every created instance, then closes the plugins. */
void sy_setup_close(sy_setup *s);

/* The instance called `name`, or NULL. */
sy_instance_entry *sy_setup_instance(sy_setup *s, const char *name);

/* The directories scanned for plugins, in order: the config's
 * plugin_dirs, then $SWITCHYARD_PLUGIN_PATH (colon-separated), then the
 * installed default.  Calls fn for each; `configured` is true for the
 * first two kinds. */
void sy_setup_plugin_dirs(const sy_setup *s,
                          void (*fn)(const char *dir, bool configured, void *),
                          void *arg);

#endif
