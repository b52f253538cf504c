/* A run's graph: the workflow as the run started it (its stored
 * definition, whatever the file says now) and each task's state and the
 * instance that ran it, from the task rows (service/runs.h). */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "service/runs.h"

/* Instance names repeat across a run's rows: a million tasks on three
 * instances keep three strings. */
#define NAMES_KEPT 64 /* beyond, "(other)"; names ends with a NULL */

struct rows {
    sy_run_graph *g;
    size_t n_names;
};

static const char *instance_name(struct rows *r, const char *name)
{
    sy_run_graph *g = r->g;
    for (size_t i = 0; i < r->n_names; i++)
        if (strcmp(g->names[i], name) == 0)
            return g->names[i];
    if (r->n_names == NAMES_KEPT)
        return "(other)";
    return g->names[r->n_names++] = sy_xstrdup(name);
}

static int take_row(void *arg, const sy_task_record *t)
{
    struct rows *r = arg;
    sy_run_graph *g = r->g;
    if (t->idx >= g->wf->n_tasks)
        return 0;
    g->state[t->idx] = t->state;
    g->executor[t->idx] = t->executor ? instance_name(r, t->executor) : NULL;
    return 0;
}

int sy_runs_graph(sy_store *st, int64_t run_id, sy_run_graph *g, char *err, size_t err_len)
{
    memset(g, 0, sizeof *g);
    sy_run_record run;
    int rc = sy_store_get_run(st, run_id, &run);
    if (rc != SY_OK) {
        sy_errf(err, err_len, "%s", rc == SY_ENOENT ? "no such run" : sy_store_errmsg(st));
        return rc;
    }
    rc = sy_runs_stored_workflow(st, run_id, run.hash, &g->wf, err, err_len);
    sy_run_record_clear(&run);
    if (rc != SY_OK)
        return rc;
    size_t n = g->wf->n_tasks;
    g->state = calloc(n, sizeof *g->state);
    g->executor = calloc(n, sizeof *g->executor);
    g->names = calloc(NAMES_KEPT + 1, sizeof *g->names);
    if (!g->state || !g->executor || !g->names)
        sy_oom("reading the tasks of run %lld", (long long)run_id);
    struct rows r = {g, 0};
    rc = sy_store_list_tasks(st, run_id, take_row, &r);
    if (rc != SY_OK) {
        sy_errf(err, err_len, "run %lld: %s", (long long)run_id, sy_store_errmsg(st));
        sy_run_graph_free(g);
    }
    return rc;
}

void sy_run_graph_free(sy_run_graph *g)
{
    for (size_t i = 0; g->names && g->names[i]; i++)
        free(g->names[i]);
    free(g->names);
    free(g->state);
    free(g->executor);
    sy_workflow_free(g->wf);
    memset(g, 0, sizeof *g);
}
