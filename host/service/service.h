/*
 * service/service.h -- a host at work: the setup, its store and, for
 * `run` and `serve`, an engine on a loop of its own with SIGTERM/SIGINT
 * draining it.  What the CLI and the admin API open, submit to,
 * run and close; printing is the caller's.
 *
 * Single-threaded: one thread opens, runs and closes.
 */
#ifndef SY_SERVICE_H
#define SY_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "base/diagnostics.h"
#include "engine/engine.h"
#include "service/setup.h"
#include "service/signals.h"
#include "service/supervise.h"
#include "store/store.h"

typedef struct sy_service {
    sy_setup setup;
    sy_store *store;         /* NULL until opened */
    uv_loop_t loop;          /* the engine's; initialised by sy_service_start */
    bool have_loop;
    sy_engine *engine;       /* NULL until started */
    sy_signals signals;
    sy_supervise supervise;  /* serve: what systemd is told */
    char *owner;             /* owned: "host:pid" */
    sy_call_snapshot *crash; /* owned: what a host that died inside a
                                plugin left; NULL */
    bool have_call_record;   /* the call record and the watchdog are open */
    char *cfg_path;          /* owned: the configuration file, for reloads;
                                NULL when none */
    unsigned flags;          /* what sy_service_open was asked (SY_SETUP_*) */
    sy_setup **reloads;      /* owned: configurations SIGHUP loaded, the
                                last one in force; `setup` until the first.
                                reloads[k - 1] is generation k (engine.h);
                                NULL once released (service/reload.c) */
    size_t n_reloads;
    uv_timer_t audit_prune;  /* serve: audit rows past audit_keep deleted
                                (service/audit.c) */
    bool audit_pruning;      /* audit_prune started, to close */
    /* Called after each reload, done (ok) or refused, on the loop: the
     * admin API reads its tokens again (admin/server.c).  NULL: none. */
    void (*on_reload)(void *arg, bool ok);
    void *on_reload_arg;
} sy_service;

/* Opens the setup with `flags` (SY_SETUP_*), diagnostics into d; returns
 * the number of errors.  Either way *sv must be closed. */
int sy_service_open(sy_service *sv, const char *cfg_path, unsigned flags,
                    sy_diags *d);

/* Opens the store the config names; the reason in err when it does not. */
int sy_service_open_store(sy_service *sv, char *err, size_t err_len);

/* Records a new run of the workflow called `workflow` (opened with
 * SY_SETUP_WORKFLOWS) with `context` (a JSON object's text; NULL: {}).
 * Sets *wf to its definition when wf is not NULL.  A context over
 * max_context_bytes is refused (SY_ERANGE) with both sizes. */
int sy_service_submit(sy_service *sv, const char *workflow, const char *context,
                      int64_t *run_id, const sy_workflow **wf, char *err,
                      size_t err_len);

/* sy_service_submit under `key` (NULL: none): a run recorded under the
 * key within the configuration's submit_key_window is given back in
 * *run_id with *created false, and nothing is recorded (created may be
 * NULL).  A key that is empty, longer than SY_STORE_KEY_MAX or not
 * printable ASCII is refused (SY_EINVAL, err says why).  The run's
 * `priority` (submit --priority; 0: none) is added to each of its tasks'
 * when they are ordered for dispatch; out of SY_PRIORITY_MIN..MAX it is
 * refused (SY_ERANGE). */
int sy_service_submit_keyed(sy_service *sv, const char *workflow, const char *context,
                            const char *key, int32_t priority, int64_t *run_id, bool *created,
                            const sy_workflow **wf, char *err, size_t err_len);

/* Reads a submit's priority from `text` (a decimal integer) into *out:
 * SY_OK, or SY_ERANGE with why in err when it is not an integer from
 * SY_PRIORITY_MIN to SY_PRIORITY_MAX. */
int sy_service_parse_priority(const char *text, int32_t *out, char *err, size_t err_len);

/* SY_OK when `key` may name a submit; else SY_EINVAL and why in err. */
int sy_service_check_key(const char *key, char *err, size_t err_len);

/* SY_OK when the store outlives this process; else why a run recorded in
 * it would be lost (an in-memory store seen by `submit`). */
int sy_service_check_durable(const sy_service *sv, char *err, size_t err_len);

/* Makes the engine from the opened parts (store, routes, created
 * instances, workflows, the config's limits).  `mode` gives serve,
 * exit_when_idle, poll_ms and the callbacks; its parts are ignored. */
int sy_service_start(sy_service *sv, const sy_engine_opts *mode, char *err,
                     size_t err_len);

/* Runs the engine with the signals watched; sy_engine_run's result (2: a
 * second signal stopped it at once). */
int sy_service_run(sy_service *sv);

/* Frees the engine, destroys the instances, closes the store and the
 * setup. */
void sy_service_close(sy_service *sv);

/* Leaves the process with exit status `code` after sy_service_run returned
 * 2 or SY_ENGINE_ABANDONED: plugins may still hold attempts, so nothing is
 * freed; the runs are released and the call record removed first. */
_Noreturn void sy_service_leave(sy_service *sv, int code);

/* Cancels run `run_id`, whoever holds it (service/cancel.c).  A run a
 * live host holds gets a cancel request, which that host carries out; a
 * run nobody holds (its host stopped or released it) is claimed here, so
 * that a late host's writes are refused, and ended at once: its tasks
 * that were running Cancelled, the others Skipped, the run Cancelled.
 * *state is the run's state after it; SY_OK, or an error with err
 * (SY_ENOENT: no such run, SY_ESTATE: already ended).  Opens an engine
 * on the service's store: the service must not run one already. */
int sy_service_cancel(sy_service *sv, int64_t run_id, sy_run_state *state, char *err,
                      size_t err_len);

/* Cancel from inside a serving host (the admin API): records the request
 * as sy_service_cancel does, and when this host's engine holds the run,
 * stops it at once.  Never starts an engine.  *state: the run's state
 * (Cancelled when no host held it).  Loop thread. */
int sy_service_cancel_served(sy_service *sv, int64_t run_id, sy_run_state *state, char *err,
                             size_t err_len);

/* The configuration in force: `setup`, or the last one a reload loaded. */
sy_setup *sy_service_setup(sy_service *sv);

/* SIGHUP (service/reload.c): reads the configuration file again (routing
 * files, instances, workflows), and when it is valid swaps it into the
 * engine without losing a task: tasks not started go where the new routes
 * say, attempts in flight finish where they are, and the previous
 * instances are stopped once they have none.  A configuration with errors
 * (or another store) is refused, each reason logged, and the one in force
 * stays.  0, or -1.  Loop thread, after sy_service_start. */
int sy_service_reload(sy_service *sv);

/* sy_service_reload with the service manager told around it
 * (RELOADING=1, then READY=1: service/supervise.c), as SIGHUP and
 * `POST /api/v1/reload` do.  0, or -1.  Loop thread. */
int sy_service_reload_notified(sy_service *sv);

#endif
