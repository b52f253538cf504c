/* A host at work: setup, store, engine, signals, opened and closed in
 * order. */
#include "service/service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "executor/call_record.h"
#include "executor/watchdog.h"
#include "service/audit.h"
#include "service/inspect.h"
#include "service/runs.h"
#include "store/keyed.h"

int sy_service_open(sy_service *sv, const char *cfg_path, unsigned flags, sy_diags *d)
{
    memset(sv, 0, sizeof *sv);
    sv->cfg_path = cfg_path ? strdup(cfg_path) : NULL;
    sv->flags = flags;
    return sy_setup_open(&sv->setup, cfg_path, flags, d);
}


int sy_service_open_store(sy_service *sv, char *err, size_t err_len)
{
    return sy_store_open(sv->setup.cfg.store, sv->setup.cfg.dir, &sv->store, err, err_len);
}

int sy_service_submit(sy_service *sv, const char *workflow, const char *context,
                      int64_t *run_id, const sy_workflow **wf, char *err, size_t err_len)
{
    return sy_service_submit_keyed(sv, workflow, context, NULL, 0, run_id, NULL, wf, err,
                                   err_len);
}

int sy_service_submit_keyed(sy_service *sv, const char *workflow, const char *context,
                            const char *key, int32_t priority, int64_t *run_id, bool *created,
                            const sy_workflow **wf, char *err, size_t err_len)
{
    if (created)
        *created = true;
    if (key && sy_service_check_key(key, err, err_len) != SY_OK)
        return SY_EINVAL;
    if (priority < SY_PRIORITY_MIN || priority > SY_PRIORITY_MAX) {
        sy_errf(err, err_len, "the priority %ld is not an integer from %d to %d", (long)priority,
                SY_PRIORITY_MIN, SY_PRIORITY_MAX);
        return SY_ERANGE;
    }
    /* The workflows in force: a serving host may have reloaded them. */
    const sy_workflow *found = sy_setup_workflow(sy_service_setup(sv), workflow, err, err_len);
    if (!found)
        return SY_ENOENT;
    if (wf)
        *wf = found;
    /* Refused here, with both numbers, rather than failing the first task
     * that reads it. */
    size_t len = context ? strlen(context) : 2;
    const sy_config *c = &sv->setup.cfg;
    if ((int64_t)len > c->max_context_bytes) {
        const config_setting_t *set = config_lookup(&c->lc, "max_context_bytes");
        if (set)
            sy_errf(err, err_len, "the context is %zu bytes, more than max_context_bytes %lld "
                    "(%s:%d)", len, (long long)c->max_context_bytes, c->path,
                    (int)config_setting_source_line(set));
        else
            sy_errf(err, err_len, "the context is %zu bytes, more than max_context_bytes %lld "
                    "(the default; set it in %s)", len, (long long)c->max_context_bytes,
                    c->path);
        return SY_ERANGE;
    }
    return sy_runs_record_keyed(sv->store, found, context ? context : "{}", key,
                                c->submit_key_window_ms, priority, run_id, created, err,
                                err_len);
}

int sy_service_parse_priority(const char *text, int32_t *out, char *err, size_t err_len)
{
    char *end = NULL;
    errno = 0;
    long long v = text && *text ? strtoll(text, &end, 10) : 0;
    if (!text || !*text || *end || errno || v < SY_PRIORITY_MIN || v > SY_PRIORITY_MAX) {
        sy_errf(err, err_len, "'%s' is not an integer from %d to %d", text ? text : "",
                SY_PRIORITY_MIN, SY_PRIORITY_MAX);
        return SY_ERANGE;
    }
    *out = (int32_t)v;
    return SY_OK;
}

int sy_service_check_key(const char *key, char *err, size_t err_len)
{
    size_t n = strlen(key);
    if (n == 0 || n > SY_STORE_KEY_MAX) {
        sy_errf(err, err_len, "the key is %zu bytes: it must be 1 to %d", n, SY_STORE_KEY_MAX);
        return SY_EINVAL;
    }
    /* Printable ASCII: a key is echoed in logs, headers and messages. */
    for (size_t i = 0; i < n; i++)
        if (key[i] < 0x21 || key[i] > 0x7e) {
            sy_errf(err, err_len, "the key holds byte 0x%02x at offset %zu: use printable "
                    "ASCII without spaces", (unsigned char)key[i], i);
            return SY_EINVAL;
        }
    return SY_OK;
}

int sy_service_check_durable(const sy_service *sv, char *err, size_t err_len)
{
    const sy_config *c = &sv->setup.cfg;
    if (!sy_inspect_store_is_memory(c->store))
        return SY_OK;
    sy_errf(err, err_len, "the store \"%s\" (%s:%d) lives only as long as one process: a "
            "run submitted to it would be lost when this command exits and no host could "
            "see it; use `switchyard run`, or a \"sqlite:PATH\" store", c->store, c->path,
            c->store_line);
    return SY_ENOTSUP;
}

/* Where this host's call record lives: beside an SQLite file, or in the
 * state directory systemd names ($STATE_DIRECTORY), else the
 * configuration's directory; NULL (memory only) for an in-memory store,
 * which nothing outlives anyway. */
static char *call_record_prefix(const sy_config *cfg)
{
    const char *url = cfg->store ? cfg->store : "";
    if (strncmp(url, "sqlite:", 7) == 0) {
        const char *p = url + 7;
        if (strncmp(p, ":memory:", 8) == 0)
            return NULL;
        char *rel = sy_asprintf("%.*s", (int)strcspn(p, "?"), p);
        char *path = rel ? sy_path_join(cfg->dir ? cfg->dir : ".", rel) : NULL;
        char *prefix = path ? sy_asprintf("%s.calls", path) : NULL;
        free(rel);
        free(path);
        return prefix;
    }
    /* Under systemd, the unit's state directory: the configuration's is
     * read-only there (ProtectSystem=strict). */
    const char *state = getenv("STATE_DIRECTORY");
    if (state && *state)
        return sy_asprintf("%.*s/switchyard.calls", (int)strcspn(state, ":"), state);
    return sy_asprintf("%s/switchyard.calls", cfg->dir ? cfg->dir : ".");
}

/* Opens this host's call record and reads what a host that died before it
 * left; starts the watchdog.  Failures only lose the crash report. */
static void open_call_record(sy_service *sv)
{
    char *prefix = call_record_prefix(&sv->setup.cfg);
    char path[4200], err[512];
    if (prefix) {
        sy_call_snapshot prev;
        if (sy_call_record_take_previous(prefix, &prev)) {
            sv->crash = malloc(sizeof *sv->crash);
            if (sv->crash)
                *sv->crash = prev;
        }
        sy_call_record_path(prefix, path, sizeof path);
    }
    if (sy_call_record_open(prefix ? path : NULL, sv->owner, err, sizeof err) != 0)
        sy_log(SY_LOG_WARN, "host", "%s; a crash inside a plugin will not be named", err);
    free(prefix);
    if (sy_watchdog_start(err, sizeof err) != 0)
        sy_log(SY_LOG_WARN, "host", "%s; stuck plugin calls will not be reported", err);
    sv->have_call_record = true;
}

int sy_service_start(sy_service *sv, const sy_engine_opts *mode, char *err, size_t err_len)
{
    const sy_config *cfg = &sv->setup.cfg;
    sy_engine_opts o = *mode;
    o.store = sv->store;
    o.routes = &cfg->routes;
    o.instances = sv->setup.instances;
    o.n_instances = sv->setup.n_instances;
    o.workflows = sv->setup.wfs;
    o.n_workflows = sv->setup.n_wfs;
    o.max_context_bytes = (size_t)cfg->max_context_bytes;
    o.lease_ms = cfg->lease_ms;
    o.max_recoveries = (uint32_t)cfg->max_recoveries;
    o.log_limit = cfg->log_limit > 0 ? cfg->log_limit : -1;
    o.shutdown_grace_ms = cfg->shutdown_grace_ms;
    o.tenants = cfg->flow.tenants;
    o.n_tenants = cfg->flow.n_tenants;
    o.pools = cfg->flow.pools;
    o.n_pools = cfg->flow.n_pools;
    o.rates = cfg->flow.rates;
    o.n_rates = cfg->flow.n_rates;
    sv->owner = sy_engine_owner_id();
    o.owner = sv->owner;
    open_call_record(sv);
    o.crash = sv->crash;
    int lrc = uv_loop_init(&sv->loop);
    if (lrc != 0)
        return sy_errf(err, err_len, "cannot start the event loop: %s", uv_strerror(lrc)),
               SY_EIO;
    /* Its idle time is a metric (service/metrics.c); counting it costs
     * two clock reads a poll. */
    uv_loop_configure(&sv->loop, UV_METRICS_IDLE_TIME);
    sv->have_loop = true;
    return sy_engine_new(&sv->engine, &sv->loop, &o, err, err_len);
}

int sy_service_reload_notified(sy_service *sv)
{
    sy_supervise_reloading(&sv->supervise);
    int rc = sy_service_reload(sv);
    sy_supervise_reloaded(&sv->supervise, rc == 0);
    if (sv->on_reload)
        sv->on_reload(sv->on_reload_arg, rc == 0);
    return rc;
}

static void reload_on_hangup(void *arg)
{
    sy_service *sv = arg;
    int rc = sy_service_reload_notified(sv);
    /* A signal says nothing of who sent it: the host's user stands for
     * them. */
    char user[256];
    sy_audit_user(user, sizeof user);
    sy_audit_record r = {.who = user, .role = "local", .action = "reload",
                         .origin = "signal", .ok = rc == 0,
                         .detail = rc == 0 ? "SIGHUP" : "SIGHUP: the configuration has errors; "
                                                        "the one in force stays"};
    sy_service_audit(sv, &r);
}

int sy_service_run(sy_service *sv)
{
    sy_signals_start(&sv->signals, &sv->loop, sv->engine, sv->cfg_path ? reload_on_hangup : NULL,
                     sv);
    if (sy_engine_serving(sv->engine)) {
        sy_supervise_start(&sv->supervise, &sv->loop, sv->engine);
        sy_service_audit_start(sv);
    }
    int rc = sy_engine_run(sv->engine);
    sy_service_audit_stop(sv);
    sy_supervise_close(&sv->supervise);
    sy_signals_close(&sv->signals);
    return rc;
}

void sy_service_leave(sy_service *sv, int code)
{
    /* Plugins may still hold attempts: nothing they point to is freed.
     * What outlives the process is put right: the runs are released for
     * the next host, and the call record, a clean exit's, is removed. */
    if (sv->store && sv->owner)
        sy_store_release(sv->store, sv->owner);
    if (sv->have_call_record) {
        sy_watchdog_stop();
        sy_call_record_close();
    }
    fflush(stdout);
    fflush(stderr);
    _exit(code);
}

void sy_service_close(sy_service *sv)
{
    /* The engine first (it closes its handles and lets the loop finish
     * closing the signals'), then the loop, the store, and the setup,
     * which destroys the instances before closing their plugins. */
    sy_engine_free(sv->engine);
    if (sv->have_loop) {
        uv_run(&sv->loop, UV_RUN_DEFAULT);
        uv_loop_close(&sv->loop);
    }
    sy_store_close(sv->store);
    for (size_t i = sv->n_reloads; i-- > 0;) {
        if (!sv->reloads[i])
            continue; /* released by a later reload */
        sy_setup_close(sv->reloads[i]);
        free(sv->reloads[i]);
    }
    free(sv->reloads);
    sy_setup_close(&sv->setup);
    /* After the instances are destroyed: destroy() is a plugin call too. */
    if (sv->have_call_record) {
        sy_watchdog_stop();
        sy_call_record_close();
    }
    free(sv->crash);
    free(sv->owner);
    free(sv->cfg_path);
    memset(sv, 0, sizeof *sv);
}
