/* What the host is configured with: workflows and their DAG, instances
 * and their health, routes explained, health of the host, reload. */
#include "admin/api.h"

#include <stdio.h>
#include <string.h>

#include "config/glob.h"
#include "engine/metrics.h"
#include "service/route_explain.h"

int sy_api_health(sy_admin_req *rq)
{
    sy_service *sv = rq->admin->sv;
    char names[512] = "";
    size_t running = sv->engine ? sy_engine_running(sv->engine, names, sizeof names) : 0;
    int draining = sv->engine ? sy_engine_draining(sv->engine) : 0;
    return sy_admin_json(rq, 200,
                         json_pack("{s:s, s:s, s:b, s:I}", "status",
                                   draining ? "draining" : "serving", "owner",
                                   sv->engine ? sy_engine_owner(sv->engine) : "",
                                   "draining", draining > 0, "running", (json_int_t)running));
}

/* The DAG: a node per task with the instance its route names, an edge
 * per `after`. */
static json_t *workflow_json(const sy_setup *s, const sy_workflow *wf)
{
    json_t *nodes = json_array(), *edges = json_array();
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *t = &wf->tasks[i];
        const char *exec = NULL;
        size_t n = 0;
        const sy_route_rule *win = sy_routes_resolve(&s->cfg.routes, t->ns, &exec, NULL);
        const char *const *to = sy_routes_targets(&s->cfg.routes, win, &n);
        json_t *all = json_array();
        for (size_t k = 0; k < n; k++)
            json_array_append_new(all, json_string(to[k]));
        json_array_append_new(nodes, json_pack("{s:s, s:s, s:s?, s:o, s:s}", "id", t->id,
                                               "namespace", t->ns, "executor", exec,
                                               "executors", all, "trigger",
                                               sy_trigger_name(t->trigger)));
        for (size_t j = 0; j < t->n_deps; j++)
            json_array_append_new(edges, json_pack("{s:s, s:s}", "from",
                                                   wf->tasks[t->deps[j]].id, "to", t->id));
    }
    return json_pack("{s:s, s:s, s:I, s:s?, s:s?, s:s, s:{s:o, s:o}}", "tenant", wf->tenant,
                     "name", wf->name, "tasks", (json_int_t)wf->n_tasks, "schedule",
                     wf->schedule, "file", wf->file, "hash", wf->hash, "dag", "nodes", nodes,
                     "edges", edges);
}

int sy_api_workflows(sy_admin_req *rq)
{
    const sy_setup *s = sy_service_setup(rq->admin->sv);
    json_t *list = json_array();
    for (size_t i = 0; i < s->n_wfs; i++)
        json_array_append_new(list, workflow_json(s, s->wfs[i]));
    return sy_admin_json(rq, 200, json_pack("{s:o}", "workflows", list));
}

int sy_api_workflow_get(sy_admin_req *rq)
{
    const sy_setup *s = sy_service_setup(rq->admin->sv);
    char err[512];
    const sy_workflow *wf = sy_setup_workflow(s, rq->caps[0], err, sizeof err);
    if (!wf)
        return sy_admin_error(rq, 404, "%s", err);
    return sy_admin_json(rq, 200, workflow_json(s, wf));
}

static void add_figure(void *sink, const char *name, int64_t value)
{
    if (name && !json_object_get(sink, name))
        json_object_set_new(sink, name, json_integer((json_int_t)value));
}

int sy_api_instances(sy_admin_req *rq)
{
    sy_setup *s = sy_service_setup(rq->admin->sv);
    json_t *list = json_array();
    /* Settings are left out: an instance's may hold credentials.  Its
     * figures (the plugin's metrics(): a gpu instance's drained devices,
     * their Xid and time) are what an operator asks it about. */
    for (size_t i = 0; i < s->n_instances; i++) {
        sy_instance_entry *e = &s->instances[i];
        bool unhealthy = atomic_load(&e->unhealthy);
        const char *health = !e->inst ? "not created" : unhealthy ? "stuck" : "ok";
        json_t *figures = json_object();
        sy_engine_metrics_plugin(e, add_figure, figures);
        json_array_append_new(
            list, json_pack("{s:s, s:s?, s:s?, s:b, s:b, s:s, s:b, s:o}", "name", e->name,
                            "plugin", e->cfg ? e->cfg->plugin : NULL, "version",
                            e->plugin ? e->plugin->version : NULL, "created", e->inst != NULL,
                            "healthy", e->inst != NULL && !unhealthy, "health", health,
                            "isolated", e->cfg && e->cfg->isolate, "metrics", figures));
    }
    json_t *plugins = json_array();
    for (size_t i = 0; i < s->plugins.n; i++) {
        const sy_plugin *p = s->plugins.v[i];
        char abi[32];
        snprintf(abi, sizeof abi, "%u.%u", p->abi_major, p->abi_minor);
        bool loaded = p->state == SY_PLUGIN_LOADED;
        json_array_append_new(plugins,
                              json_pack("{s:s?, s:s?, s:s, s:s, s:s, s:s?}", "name", p->name,
                                        "version", p->version, "abi", abi, "status",
                                        loaded ? "loaded" : "refused", "path", p->path,
                                        "reason", loaded ? NULL : p->reason));
    }
    return sy_admin_json(rq, 200, json_pack("{s:o, s:o}", "instances", list, "plugins", plugins));
}

/* `switchyard route NAMESPACE --json`, over HTTP. */
int sy_api_routes(sy_admin_req *rq)
{
    const sy_setup *s = sy_service_setup(rq->admin->sv);
    const sy_routes *r = &s->cfg.routes;
    const char *ns = sy_admin_query(rq, "namespace");
    if (!ns)
        return sy_admin_json(rq, 200, sy_route_rules(r));
    char why[256];
    if (sy_ns_validate(ns, why, sizeof why) != 0)
        return sy_admin_error(rq, 400, "query 'namespace': \"%s\": %s", ns, why);
    return sy_admin_json(rq, 200, sy_route_explain(r, ns));
}

int sy_api_reload(sy_admin_req *rq)
{
    sy_service *sv = rq->admin->sv;
    if (!sv->cfg_path)
        return sy_admin_error(rq, 409, "no configuration file to read again");
    if (sy_service_reload_notified(sv) != 0)
        return sy_admin_error(rq, 422, "reload refused: the configuration has errors (the "
                              "host's log names each); the one in force stays");
    return sy_admin_json(rq, 200, json_pack("{s:b}", "reloaded", 1));
}
