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
    if (s.cfg_ok)
        sy_inspect(&s, &d);
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
