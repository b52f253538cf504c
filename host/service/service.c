/* A host at work: setup, store, engine, signals, opened and closed in
 * order. */
#include "service/service.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "service/runs.h"

int sy_service_open(sy_service *sv, const char *cfg_path, unsigned flags, sy_diags *d)
{
    memset(sv, 0, sizeof *sv);
    return sy_setup_open(&sv->setup, cfg_path, flags, d);
}

int sy_service_open_store(sy_service *sv, char *err, size_t err_len)
{
    return sy_store_open(sv->setup.cfg.store, sv->setup.cfg.dir, &sv->store, err, err_len);
}

int sy_service_submit(sy_service *sv, const char *workflow, const char *context,
                      int64_t *run_id, const sy_workflow **wf, char *err, size_t err_len)
{
    const sy_workflow *found = sy_setup_workflow(&sv->setup, workflow, err, err_len);
    if (!found)
        return SY_ENOENT;
    if (wf)
        *wf = found;
    return sy_runs_record(sv->store, found, context ? context : "{}", run_id, err, err_len);
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
    sv->owner = sy_engine_owner_id();
    o.owner = sv->owner;
    uv_loop_init(&sv->loop);
    sv->have_loop = true;
    return sy_engine_new(&sv->engine, &sv->loop, &o, err, err_len);
}

int sy_service_run(sy_service *sv)
{
    sy_signals_start(&sv->signals, &sv->loop, sv->engine);
    int rc = sy_engine_run(sv->engine);
    sy_signals_close(&sv->signals);
    return rc;
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
    free(sv->owner);
    sy_store_close(sv->store);
    sy_setup_close(&sv->setup);
    memset(sv, 0, sizeof *sv);
}
