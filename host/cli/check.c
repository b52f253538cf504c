/* `switchyard check`: everything that can be validated without running. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "service/inspect.h"
#include "service/setup.h"

/* A rule no known task matches is dead weight or a typo; said only when
 * there are workflows to judge by. */
static void warn_unmatched(const sy_setup *s, sy_diags *d)
{
    if (s->n_wfs == 0)
        return;
    size_t tasks = 0;
    for (size_t w = 0; w < s->n_wfs; w++)
        tasks += s->wfs[w]->n_tasks;
    for (size_t i = 0; i < s->cfg.routes.n; i++) {
        const sy_route_rule *r = &s->cfg.routes.rules[i];
        bool hit = false;
        for (size_t w = 0; w < s->n_wfs && !hit; w++)
            for (size_t t = 0; t < s->wfs[w]->n_tasks && !hit; t++)
                hit = sy_glob_match(&r->glob, s->wfs[w]->tasks[t].ns);
        if (!hit)
            sy_warn(d, r->file, r->line,
                    "rule \"%s\" matches none of the %zu tasks of the %zu known workflow%s",
                    r->glob.source, tasks, s->n_wfs, s->n_wfs == 1 ? "" : "s");
    }
}

/* An overflow list past an instance that never runs out of capacity: the
 * instances after it never get a task. */
static void warn_overflow(sy_setup *s, const char *const *to, size_t n, const char *what,
                          const char *file, int line, sy_diags *d)
{
    for (size_t k = 0; k + 1 < n; k++) {
        sy_instance_entry *e = sy_setup_instance(s, to[k]);
        if (!e || !e->inst || e->desc->capacity(e->inst) != SY_CAPACITY_UNLIMITED)
            continue;
        sy_warn(d, file, line,
                "%s: executor '%s' has unlimited capacity, so '%s' after it never gets a task",
                what, to[k], to[k + 1]);
        return;
    }
}

static void warn_overflows(sy_setup *s, sy_diags *d)
{
    const sy_routes *r = &s->cfg.routes;
    for (size_t i = 0; i < r->n; i++) {
        char what[300];
        snprintf(what, sizeof what, "rule \"%s\"", r->rules[i].glob.source);
        warn_overflow(s, (const char *const *)r->rules[i].to, r->rules[i].n_to, what,
                      r->rules[i].file, r->rules[i].line, d);
    }
    warn_overflow(s, (const char *const *)r->default_to, r->n_default_to, "the default route",
                  r->default_file, r->default_line, d);
}

int sy_cmd_check(const sy_cli *cli, int argc, char **argv)
{
    if (argc > 0)
        return sy_cli_usage_error("check", "unexpected argument '%s'", argv[0]);
    sy_diags d;
    sy_diags_init(&d);
    sy_setup s;
    unsigned flags = SY_SETUP_CREATE | SY_SETUP_WORKFLOWS | SY_SETUP_CHECK_COMMANDS;
    int errors = sy_setup_open(&s, cli->config, flags, &d);
    if (s.have_cfg) {
        sy_routes_check_shadowing(&s.cfg.routes, &d);
        warn_unmatched(&s, &d);
    }
    if (s.cfg_ok) {
        sy_inspect(&s, &d);
        warn_overflows(&s, &d);
    }
    sy_diags_print(&d, stdout);
    if (errors == 0 && d.errors == 0) {
        size_t loaded = 0;
        for (size_t i = 0; i < s.plugins.n; i++)
            loaded += s.plugins.v[i]->state == SY_PLUGIN_LOADED;
        printf("%s: ok: %zu executor instance%s, %zu routing rule%s, %zu plugin%s "
               "loaded, %zu workflow%s, %zu warning%s\n",
               cli->config, s.n_instances, s.n_instances == 1 ? "" : "s", s.cfg.routes.n,
               s.cfg.routes.n == 1 ? "" : "s", loaded, loaded == 1 ? "" : "s", s.n_wfs,
               s.n_wfs == 1 ? "" : "s", d.warnings, d.warnings == 1 ? "" : "s");
    } else {
        printf("%s: %zu error%s, %zu warning%s\n", cli->config, d.errors,
               d.errors == 1 ? "" : "s", d.warnings, d.warnings == 1 ? "" : "s");
    }
    int rc = d.errors ? SY_EXIT_FAIL : SY_EXIT_OK;
    sy_setup_close(&s);
    sy_diags_free(&d);
    return rc;
}
