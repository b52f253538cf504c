/* SIGHUP: the configuration read again and swapped in without losing a
 * task. */
#include "service/service.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"

sy_setup *sy_service_setup(sy_service *sv)
{
    return sv->n_reloads ? sv->reloads[sv->n_reloads - 1] : &sv->setup;
}

/* Called by the engine once no attempt uses the replaced instances. */
static void stop_retired(void *arg)
{
    sy_setup *old = arg;
    for (size_t i = 0; i < old->n_instances; i++)
        sy_instance_destroy(&old->instances[i]);
    old->stopped = true;
    sy_log(SY_LOG_INFO, "reload", "the previous configuration's instances finished their "
                                  "attempts and were stopped");
}

static void refuse(const sy_diags *d, const char *why)
{
    for (size_t i = 0; i < d->n; i++) {
        char line[1536];
        if (d->v[i].level == SY_DIAG_ERROR)
            sy_log(SY_LOG_ERROR, "reload", "%s", sy_diag_format(&d->v[i], line, sizeof line));
    }
    sy_log(SY_LOG_ERROR, "reload", "reload refused: %s; the configuration in force stays", why);
}

/* What a reload that goes ahead found wrong: the errors of the workflow
 * files it left out (SY_SETUP_SKIP_BAD_WORKFLOWS: a file that no longer
 * checks, say one naming a pool or rate limit the new configuration
 * lacks) and the warnings, each logged, or the workflow would vanish from
 * the host without a word. */
static void report(const sy_diags *d)
{
    for (size_t i = 0; i < d->n; i++) {
        char line[1536];
        sy_log(d->v[i].level == SY_DIAG_ERROR ? SY_LOG_ERROR : SY_LOG_WARN, "reload", "%s",
               sy_diag_format(&d->v[i], line, sizeof line));
    }
}

/* Plugins found now that the configuration in force did not have: a
 * `.so` dropped into a plugin directory is loaded by the reload. */
static void log_new_plugins(const sy_setup *next, const sy_setup *old)
{
    for (size_t i = 0; i < next->plugins.n; i++) {
        const sy_plugin *p = next->plugins.v[i];
        if (p->state != SY_PLUGIN_LOADED)
            continue;
        bool known = false;
        for (size_t j = 0; j < old->plugins.n && !known; j++)
            known = old->plugins.v[j]->handle == p->handle;
        if (!known)
            sy_log(SY_LOG_INFO, "reload", "plugin %s %s loaded from %s", p->name,
                   p->version ? p->version : "", p->path);
    }
}

/* A plugin file replaced in place is not loaded again: dlopen() of a path
 * already mapped returns that mapping, and it stays mapped while the
 * instances of any configuration still use it (a plugin is never unloaded
 * under its instances).  Said, so that nobody believes the new version
 * runs. */
static void warn_replaced(sy_setup *next, const sy_setup *old)
{
    for (size_t i = 0; i < next->plugins.n; i++) {
        sy_plugin *p = next->plugins.v[i];
        for (size_t j = 0; j < old->plugins.n; j++) {
            if (!sy_plugins_replaced(p, old->plugins.v[j]))
                continue;
            sy_log(SY_LOG_WARN, "reload",
                   "plugin %s: %s was replaced on disk, but this host keeps running the "
                   "version it loaded (%s) until it restarts: the loader gives back the copy "
                   "already loaded for a path; to switch without a restart, install the new "
                   "version under a new file name and remove the old file",
                   p->name ? p->name : "?", p->path, p->version ? p->version : "?");
            break;
        }
    }
}

/* Frees the configurations of past reloads nothing uses any more: their
 * instances stopped, and no run loaded while they were in force or before
 * (such a run may point into them) is held.  The first configuration is
 * kept (the service reads it to the end).  Their plugins stay mapped: a
 * plugin is never unloaded while the host runs (the call record names
 * plugins by the addresses of their code). */
static void release_unused(sy_service *sv)
{
    uint32_t oldest = sy_engine_oldest_generation(sv->engine);
    /* reloads[k - 1] is generation k; the last is in force. */
    for (size_t k = 1; k < sv->n_reloads && k < oldest; k++) {
        sy_setup *s = sv->reloads[k - 1];
        if (!s || !s->stopped)
            continue;
        for (size_t i = 0; i < s->plugins.n; i++)
            s->plugins.v[i]->handle = NULL; /* left open on purpose */
        sy_setup_close(s);
        free(s);
        sv->reloads[k - 1] = NULL;
        sy_log(SY_LOG_DEBUG, "reload", "the configuration of reload %zu was freed: nothing "
                                       "uses it any more", k);
    }
}

int sy_service_reload(sy_service *sv)
{
    sy_setup *old = sy_service_setup(sv);
    sy_setup *next = calloc(1, sizeof *next);
    sy_setup **grown = realloc(sv->reloads, (sv->n_reloads + 1) * sizeof *grown);
    if (!next || !grown) {
        free(next);
        if (grown)
            sv->reloads = grown;
        sy_log(SY_LOG_ERROR, "reload", "reload refused: out of memory");
        return -1;
    }
    sv->reloads = grown;
    sy_log(SY_LOG_INFO, "reload", "Hangup: reading %s again", sv->cfg_path);
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_setup_open(next, sv->cfg_path, sv->flags, &d);
    const char *why = NULL;
    char buf[256];
    if (errors) {
        snprintf(buf, sizeof buf, "%d error%s", errors, errors == 1 ? "" : "s");
        why = buf;
    } else if (strcmp(next->cfg.store ? next->cfg.store : "", old->cfg.store ? old->cfg.store
                                                                               : "") != 0) {
        why = "the store cannot change while the host runs (restart it)";
    }
    if (why) {
        refuse(&d, why);
        sy_diags_free(&d);
        sy_setup_close(next);
        free(next);
        return -1;
    }
    report(&d);
    sy_diags_free(&d);
    warn_replaced(next, old);
    if (sy_engine_reload(sv->engine, &next->cfg.routes, next->instances, next->n_instances,
                         next->wfs, next->n_wfs, stop_retired, old) != SY_OK) {
        sy_log(SY_LOG_ERROR, "reload", "reload refused: out of memory");
        sy_setup_close(next);
        free(next);
        return -1;
    }
    sy_engine_set_tenants(sv->engine, next->cfg.flow.tenants, next->cfg.flow.n_tenants);
    sy_engine_set_limits(sv->engine, next->cfg.flow.pools, next->cfg.flow.n_pools,
                         next->cfg.flow.tenants, next->cfg.flow.n_tenants);
    sy_engine_set_rates(sv->engine, next->cfg.flow.rates, next->cfg.flow.n_rates);
    sv->reloads[sv->n_reloads++] = next;
    release_unused(sv);
    sy_log(SY_LOG_INFO, "reload",
           "reloaded: %zu instance%s, %zu workflow%s; tasks not started go where the new routes "
           "say, attempts in flight finish where they are",
           next->n_instances, next->n_instances == 1 ? "" : "s", next->n_wfs,
           next->n_wfs == 1 ? "" : "s");
    log_new_plugins(next, old);
    return 0;
}
