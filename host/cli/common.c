/* What several commands share: opening the setup and the store, reading a
 * --context argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "cli/common.h"
#include "base/util.h"

int sy_cli_open(const sy_cli *cli, unsigned flags, sy_setup *s, sy_store **store)
{
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_setup_open(s, cli->config, flags, &d);
    sy_diags_print(&d, stderr);
    sy_diags_free(&d);
    if (errors) {
        sy_setup_close(s);
        return SY_EXIT_USAGE;
    }
    if (!store)
        return SY_EXIT_OK;
    char err[512];
    if (sy_store_open(s->cfg.store, s->cfg.dir, store, err, sizeof err) != SY_OK) {
        fprintf(stderr, "%s:%d: error: store \"%s\": %s\n", s->cfg.path,
                s->cfg.store_line, s->cfg.store, err);
        sy_setup_close(s);
        return SY_EXIT_USAGE;
    }
    return SY_EXIT_OK;
}

char *sy_cli_context(const char *arg, char *err, size_t err_len)
{
    if (!arg)
        return sy_xstrdup("{}");
    json_error_t je;
    json_t *v = arg[0] == '@' ? json_load_file(arg + 1, 0, &je) : json_loads(arg, 0, &je);
    if (!v) {
        sy_errf(err, err_len, "--context %s: %s (line %d, column %d)", arg, je.text, je.line,
                je.column);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        sy_errf(err, err_len, "--context must be a JSON object");
        return NULL;
    }
    char *text = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return text;
}

int64_t sy_cli_run_id(const char *cmd, const char *arg)
{
    char *end;
    long long id = arg ? strtoll(arg, &end, 10) : 0;
    if (!arg || *end || id <= 0) {
        sy_cli_usage_error(cmd, "expected a run id (a positive number), got '%s'",
                           arg ? arg : "");
        return -1;
    }
    return id;
}

int sy_cli_record_run(sy_store *st, const sy_workflow *wf, const char *context,
                      int64_t *run_id, char *err, size_t err_len)
{
    int rc = sy_store_put_definition(st, wf->hash, wf->tenant, wf->name, wf->definition);
    if (rc == SY_OK) {
        const char **ids = sy_xmalloc((wf->n_tasks + 1) * sizeof *ids);
        const char **ns = sy_xmalloc((wf->n_tasks + 1) * sizeof *ns);
        for (size_t i = 0; i < wf->n_tasks; i++) {
            ids[i] = wf->tasks[i].id;
            ns[i] = wf->tasks[i].ns;
        }
        rc = sy_store_create_run(st, wf->hash, wf->tenant, wf->name, context, wf->n_tasks,
                                 ids, ns, sy_clock_now_ms(), run_id);
        free(ids);
        free(ns);
    }
    if (rc != SY_OK)
        sy_errf(err, err_len, "%s", sy_store_errmsg(st));
    return rc;
}

sy_engine_opts sy_cli_engine_opts(sy_setup *s, sy_store *st, const char *owner)
{
    return (sy_engine_opts){
        .store = st,
        .setup = s,
        .owner = owner,
        .max_context_bytes = (size_t)s->cfg.max_context_bytes,
        .lease_ms = s->cfg.lease_ms,
        .max_recoveries = (uint32_t)s->cfg.max_recoveries,
    };
}
