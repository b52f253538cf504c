#include "service/setup.h"

#include <stdlib.h>
#include <string.h>

#include <switchyard/config_json.h>
#include <switchyard/json_params.h>

#include "base/log.h"
#include "config/params.h"
#include "base/util.h"
#include "executor/isolated.h"
#include "service/inspect.h"
#include "workflow/start_trigger.h"

#ifndef SY_PLUGIN_DIR
#define SY_PLUGIN_DIR "/usr/local/lib/switchyard/executors"
#endif

/* The keys of an instance group the host reads itself (config.h). */
static const char *const instance_skip[] = {"plugin", "call_timeout", "max_task_time",
                                            "isolate_plugin", NULL};

void sy_setup_plugin_dirs(const sy_setup *s,
                          void (*fn)(const char *dir, bool configured, void *),
                          void *arg)
{
    if (s->have_cfg)
        for (size_t i = 0; i < s->cfg.n_plugin_dirs; i++)
            fn(s->cfg.plugin_dirs[i], true, arg);
    const char *env = getenv("SWITCHYARD_PLUGIN_PATH");
    if (env && *env) {
        char *copy = sy_xstrdup(env), *save = NULL;
        for (char *dir = strtok_r(copy, ":", &save); dir;
             dir = strtok_r(NULL, ":", &save))
            fn(dir, true, arg);
        free(copy);
    }
    /* The installed directory; SWITCHYARD_DEFAULT_PLUGIN_DIR replaces it
     * (empty: none), so tests and relocated installs see only what they
     * name. */
    const char *def = getenv("SWITCHYARD_DEFAULT_PLUGIN_DIR");
    if (!def)
        def = SY_PLUGIN_DIR;
    if (*def)
        fn(def, false, arg);
}

struct scan_ctx {
    sy_setup *s;
    sy_diags *d;
};

static void scan_one(const char *dir, bool configured, void *arg)
{
    struct scan_ctx *c = arg;
    char err[512];
    if (sy_plugins_scan_dir(&c->s->plugins, dir, err, sizeof err) != 0 && configured)
        sy_warn(c->d, dir, 0, "plugin directory skipped: %s", err);
}

/* Refusals are warnings: one bad plugin must not stop the others, unless
 * the operator asked for strictness. */
static int report_refusals(sy_setup *s, sy_diags *d)
{
    int errors = 0;
    bool strict = s->have_cfg && s->cfg.strict_plugins;
    for (size_t i = 0; i < s->plugins.n; i++) {
        const sy_plugin *p = s->plugins.v[i];
        if (p->state != SY_PLUGIN_REFUSED)
            continue;
        sy_diag_add(d, strict ? SY_DIAG_ERROR : SY_DIAG_WARNING, p->path, 0,
                    "plugin refused: %s%s", p->reason,
                    strict ? " (strict_plugins = true)" : "");
        errors += strict;
    }
    return errors;
}

/* A refused file that would have been the wanted plugin, for a hint. */
static const sy_plugin *refused_named(const sy_plugins *ps, const char *name)
{
    for (size_t i = 0; i < ps->n; i++) {
        const sy_plugin *p = ps->v[i];
        if (p->state != SY_PLUGIN_REFUSED)
            continue;
        const char *base = strrchr(p->path, '/');
        base = base ? base + 1 : p->path;
        size_t n = strlen(name);
        if ((p->name && strcmp(p->name, name) == 0) ||
            (strncmp(base, name, n) == 0 && strcmp(base + n, ".so") == 0))
            return p;
    }
    return NULL;
}

/* The executors after `from` whose plugin is not loaded either, for the
 * first one's line: "; also 'b' (plugin 'x'), ..." ("" when none).  A
 * plugin directory that could not be read, or a plugin refused for want of
 * memory, leaves several instances without their plugin: one line names
 * them all, the first with its reason (each refusal has its own warning). */
static void unloaded_after(const sy_setup *s, size_t from, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = from + 1; i < s->cfg.n_executors && used < len; i++) {
        const sy_instance_config *c = &s->cfg.executors[i];
        if (sy_plugins_find(&s->plugins, c->plugin))
            continue;
        int n = snprintf(buf + used, len - used, "%s'%s' (plugin '%s')",
                         used ? ", " : "; their plugins not loaded either: executor ",
                         c->name, c->plugin);
        if (n < 0 || (size_t)n >= len - used) {
            /* Cut at a name's end: the rest is counted, not lost. */
            buf[used] = '\0';
            size_t more = 0;
            for (size_t k = i; k < s->cfg.n_executors; k++)
                more += !sy_plugins_find(&s->plugins, s->cfg.executors[k].plugin);
            snprintf(buf + used, len - used, "%s%zu more", used ? ", and " : "; ", more);
            return;
        }
        used += (size_t)n;
    }
}

/* `*said`: an instance before this one had its plugin missing and said
 * so for all of them (unloaded_after); this one is counted, not repeated. */
static int bind_plugin(sy_setup *s, size_t i, sy_instance_entry *e, bool *said, sy_diags *d)
{
    const sy_instance_config *c = e->cfg;
    if (e->plugin) {
        char what[128];
        snprintf(what, sizeof what, "executor '%s'", c->name);
        return sy_params_check(c->setting, instance_skip,
                               e->plugin->desc->instance_params, what, d);
    }
    if (*said)
        return 1;
    *said = true;
    char also[512];
    unloaded_after(s, i, also, sizeof also);
    const sy_plugin *r = refused_named(&s->plugins, c->plugin);
    if (r)
        sy_error(d, c->file, c->line,
                 "executor '%s': plugin '%s' is not loaded: %s was refused: %s%s",
                 c->name, c->plugin, r->path, r->reason, also);
    else if (!c->setting)
        sy_error(d, c->file, c->line,
                 "no executor instance '%s': define one under executors (e.g. "
                 "%s = { plugin = \"%s\"; }) or install the %s plugin%s",
                 c->name, c->name, c->plugin, c->plugin, also);
    else
        sy_error(d, c->file, c->line,
                 "executor '%s': plugin '%s' is not loaded (see `switchyard plugins`)%s",
                 c->name, c->plugin, also);
    return 1;
}

static int create_instance(sy_instance_entry *e, sy_diags *d)
{
    char err[1024] = "";
    if (sy_instance_create(e, err, sizeof err) == SY_OK)
        return 0;
    sy_error(d, e->cfg->file, e->cfg->line, "executor '%s': plugin '%s' refused its settings: %s",
             e->cfg->name, e->cfg->plugin, err);
    return 1;
}

static int open_instances(sy_setup *s, unsigned flags, sy_diags *d)
{
    s->n_instances = s->cfg.n_executors;
    s->instances = calloc(s->n_instances ? s->n_instances : 1, sizeof *s->instances);
    if (!s->instances)
        sy_oom("opening the executor instances");
    int errors = 0;
    bool unloaded_said = false;
    for (size_t i = 0; i < s->n_instances; i++) {
        sy_instance_entry *e = &s->instances[i];
        const sy_instance_config *c = &s->cfg.executors[i];
        sy_instance_init_plugin(e, c->name, sy_plugins_find(&s->plugins, c->plugin),
                                sy_sdk_json_from_setting(c->setting, instance_skip));
        e->cfg = c;
        e->call_timeout_ms = c->call_timeout_ms;
        e->max_task_ms = c->max_task_ms;
        if (!e->settings) {
            if (sy_sdk_setting_text_ok(c->setting))
                sy_oom("converting the settings of executor '%s' to JSON", c->name);
            /* A plugin without declarations gets its settings unchecked:
             * text that JSON cannot hold ends the conversion here.  The
             * next instances are still opened: a workflow checked after
             * this finds each by its name. */
            sy_error(d, c->file, c->line, "executor '%s': its settings "
                     "cannot be held in JSON (text that is not valid "
                     "UTF-8)", c->name);
            errors++;
            continue;
        }
        int bad = bind_plugin(s, i, e, &unloaded_said, d);
        errors += bad;
        if (!bad && c->isolate)
            sy_isolated_wrap(e, e->plugin);
        if (!bad && (flags & SY_SETUP_CREATE))
            errors += create_instance(e, d);
    }
    return errors;
}

/* A task's parameters are judged by the plugin of every instance it may
 * go to (an overflow list's too), while the workflow file still knows
 * their lines. */
static int check_task_on(sy_setup *s, const sy_workflow *wf, const sy_task_def *t,
                         const config_setting_t *setting, const char *name, bool first,
                         sy_diags *d)
{
    sy_instance_entry *instance = sy_setup_instance(s, name);
    /* No setting: a task from the parse cache, where a problem is only
     * counted (the loader then parses the file and reports it). */
    const char *file = setting ? config_setting_source_file(setting) : wf->file;
    int line = setting ? (int)config_setting_source_line(setting) : t->line;
    if (!instance) {
        sy_error(d, file, line, "task '%s' (%s) routes to executor '%s', which is not defined",
                 t->id, t->ns, name);
        return 1;
    }
    if (!instance->plugin)
        return 0; /* the instance's own error says why */
    char what[256];
    sy_concat(what, sizeof what, "task '", t->id, "' (executor '", name, "', plugin '",
              instance->plugin->name, "')", (char *)NULL);
    int errors = setting ? sy_params_check(setting, sy_workflow_task_keys,
                                           instance->desc->task_params, what, d)
                         : sy_params_problems_json(t->params, sy_workflow_task_keys,
                                                                   instance->desc->task_params);
    /* The command's program is the task's, whichever instance runs it. */
    if (errors == 0 && first && (s->flags & SY_SETUP_CHECK_COMMANDS))
        errors += sy_inspect_command(wf, t, file, line, d);
    const sy_executor *desc = instance->desc;
    if (errors == 0 && instance->inst && desc->validate) {
        char err[1024] = "";
        int rc = desc->validate(instance->inst, sy_sdk_params_view(t->params),
                                wf->base_dir ? wf->base_dir : ".", err, sizeof err);
        /* The plugin's shortage is not the file's error: reported as one,
         * the workflow was skipped and the command said it did not exist. */
        if (rc == SY_ENOMEM)
            sy_oom("in %s checking %s: %s", instance->plugin->name, what, err);
        if (rc != SY_OK) {
            sy_error(d, file, line, "%s: %s", what, err[0] ? err : "rejected its parameters");
            errors++;
        }
    }
    return errors;
}

static int check_task(void *arg, const sy_workflow *wf, const sy_task_def *t,
                      const config_setting_t *setting, sy_diags *d)
{
    sy_setup *s = arg;
    int errors = 0;
    /* A pool is switchyard.cfg's: known only here, not to the file's
     * reader. */
    if (t->flow && t->flow->pool && !sy_config_pool(&s->cfg.flow, t->flow->pool)) {
        char names[512];
        sy_error(d, setting ? config_setting_source_file(setting) : wf->file,
                 setting && t->flow->pool_line ? t->flow->pool_line : t->line,
                 "task '%s' (%s): pool '%s' is not defined in %s (defined: %s)", t->id, t->ns,
                 t->flow->pool, s->cfg.path,
                 sy_config_pool_names(&s->cfg.flow, names, sizeof names));
        errors++;
    }
    /* So is a named rate limit. */
    for (size_t i = 0; t->flow && i < t->flow->n_rates; i++) {
        const char *name = t->flow->rates[i].name;
        int line = t->flow->rates[i].line;
        if (name && !sy_config_rate(&s->cfg.flow, name)) {
            char names[512];
            sy_error(d, setting ? config_setting_source_file(setting) : wf->file,
                     setting && line ? line : t->line,
                     "task '%s' (%s): rate limit '%s' is not defined in %s (defined: %s)",
                     t->id, t->ns, name, s->cfg.path,
                     sy_config_rate_names(&s->cfg.flow, names, sizeof names));
            errors++;
        }
    }
    size_t n = 0;
    const sy_route_rule *win = sy_routes_resolve(&s->cfg.routes, t->ns, NULL, NULL);
    const char *const *to = sy_routes_targets(&s->cfg.routes, win, &n);
    for (size_t k = 0; k < n; k++)
        errors += check_task_on(s, wf, t, setting, to[k], k == 0, d);
    return errors;
}

/* A trigger on the runs of a workflow that no directory holds never
 * fires: said, not refused (the workflow may come with the next reload). */
static void check_trigger_runs(const sy_setup *s, sy_diags *d)
{
    for (size_t i = 0; i < s->n_wfs; i++) {
        const sy_workflow *wf = s->wfs[i];
        for (size_t j = 0; j < wf->n_triggers; j++)
            for (size_t k = 0; k < wf->triggers[j].n_parts; k++) {
                const char *run = wf->triggers[j].parts[k].run;
                bool found = false;
                for (size_t m = 0; run && !found && m < s->n_wfs; m++)
                    found = strcmp(s->wfs[m]->name, run) == 0 &&
                            strcmp(s->wfs[m]->tenant, wf->tenant) == 0;
                if (run && !found)
                    sy_warn(d, wf->file, wf->triggers[j].line,
                            "trigger '%s' waits for runs of '%s', which no workflow directory "
                            "holds for tenant '%s': it never fires", wf->triggers[j].name, run,
                            wf->tenant);
            }
    }
}

static int load_workflows(sy_setup *s, unsigned flags, sy_diags *d)
{
    int errors = 0;
    for (size_t i = 0; i < s->cfg.n_workflow_dirs; i++) {
        size_t before = s->n_wfs;
        int bad = sy_workflow_load_dir_cached(s->cfg.workflow_dirs[i], s->cfg.workflow_cache,
                                              check_task, s, &s->wfs, &s->n_wfs, d);
        if (bad && (flags & SY_SETUP_SKIP_BAD_WORKFLOWS)) {
            sy_warn(d, s->cfg.workflow_dirs[i], 0,
                    "workflow files with errors (above) skipped; %zu workflow%s loaded from "
                    "this directory",
                    s->n_wfs - before, s->n_wfs - before == 1 ? "" : "s");
            bad = 0;
        }
        errors += bad;
    }
    check_trigger_runs(s, d);
    return errors;
}

const sy_workflow *sy_setup_workflow(const sy_setup *s, const char *name, char *err,
                                     size_t err_len)
{
    const sy_workflow *found = NULL;
    size_t matches = 0;
    for (size_t i = 0; i < s->n_wfs; i++) {
        const sy_workflow *wf = s->wfs[i];
        size_t tl = strlen(wf->tenant);
        bool qualified = strncmp(name, wf->tenant, tl) == 0 && strncmp(name + tl, "::", 2) == 0 &&
                         strcmp(name + tl + 2, wf->name) == 0;
        if (strcmp(wf->name, name) == 0 || qualified) {
            found = wf;
            matches++;
        }
    }
    if (matches == 1)
        return found;
    if (matches > 1)
        sy_errf(err, err_len, "workflow '%s' exists in several tenants: write TENANT::%s", name,
                name);
    else
        sy_errf(err, err_len, "no workflow '%s' in the workflow directories (%zu known)", name,
                s->n_wfs);
    return NULL;
}

int sy_setup_open(sy_setup *s, const char *cfg_path, unsigned flags, sy_diags *d)
{
    memset(s, 0, sizeof *s);
    s->flags = flags;
    sy_plugins_init(&s->plugins);
    int errors = 0;
    if (cfg_path) {
        s->have_cfg = true;
        errors = sy_config_load(&s->cfg, cfg_path, d);
        if (errors)
            return errors;
        s->cfg_ok = true;
    }
    if (!(flags & (SY_SETUP_PLUGINS | SY_SETUP_CREATE | SY_SETUP_WORKFLOWS)))
        return 0;
    struct scan_ctx c = {s, d};
    sy_setup_plugin_dirs(s, scan_one, &c);
    errors += report_refusals(s, d);
    if (s->have_cfg)
        errors += open_instances(s, flags, d);
    if (s->have_cfg && (flags & SY_SETUP_WORKFLOWS))
        errors += load_workflows(s, flags, d);
    return errors;
}

sy_instance_entry *sy_setup_instance(sy_setup *s, const char *name)
{
    return sy_instance_find(s->instances, s->n_instances, name);
}

void sy_setup_close(sy_setup *s)
{
    for (size_t i = s->n_instances; i-- > 0;)
        sy_instance_destroy(&s->instances[i]);
    free(s->instances);
    for (size_t i = 0; i < s->n_wfs; i++)
        sy_workflow_free(s->wfs[i]);
    free(s->wfs);
    sy_plugins_free(&s->plugins);
    if (s->have_cfg)
        sy_config_free(&s->cfg);
    memset(s, 0, sizeof *s);
}
