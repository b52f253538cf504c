/* `switchyard graph WORKFLOW` and `graph --run RUN`: the DAG in Graphviz
 * DOT, a run's with each task's state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/common.h"
#include "service/runs.h"

/* A million tasks make two million lines: they are laid end to end in a
 * buffer of our own and written a block at a time, with no format parsed
 * per line (printf was a tenth of the command). */
typedef struct dot {
    char buf[1 << 16];
    size_t len;
} dot;

static void flush(dot *o)
{
    fwrite(o->buf, 1, o->len, stdout);
    o->len = 0;
}

static void put_n(dot *o, const char *s, size_t n)
{
    if (o->len + n > sizeof o->buf)
        flush(o);
    if (n > sizeof o->buf) {
        fwrite(s, 1, n, stdout);
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void put(dot *o, const char *s) { put_n(o, s, strlen(s)); }

/* `s` with '"' and '\' escaped, as DOT reads them in a quoted string. */
static void escaped(dot *o, const char *s)
{
    const char *run = s;
    for (; *s; s++)
        if (*s == '"' || *s == '\\') {
            put_n(o, run, (size_t)(s - run));
            put_n(o, "\\", 1);
            run = s;
        }
    put_n(o, run, (size_t)(s - run));
}

static void quoted(dot *o, const char *s)
{
    put_n(o, "\"", 1);
    escaped(o, s);
    put_n(o, "\"", 1);
}

/* A state's fill: where a run stands, at a glance. */
static const char *state_fill(sy_task_state st)
{
    switch (st) {
    case SY_TASK_READY: return "lightyellow";
    case SY_TASK_RUNNING: return "lightblue";
    case SY_TASK_COMPLETED: return "palegreen";
    case SY_TASK_FAILED: return "salmon";
    case SY_TASK_SKIPPED: return "lightgray";
    case SY_TASK_CANCELLED: return "khaki";
    case SY_TASK_WAITING: return "orange";
    case SY_TASK_DROPPED: return "gainsboro";
    default: return NULL;
    }
}

/* The workflow's graph; with a run's `g`, each task labelled with the
 * instance its latest attempt went to and filled by its state, instead of
 * where the routes send it now. */
static void write_dot(dot *o, const sy_workflow *wf, const sy_routes *routes,
                      const sy_run_graph *g)
{
    put(o, "digraph ");
    quoted(o, wf->name);
    put(o, " {\n  rankdir=LR;\n  node [shape=box];\n");
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *t = &wf->tasks[i];
        const char *exec = NULL;
        if (g)
            exec = g->executor[i] ? g->executor[i] : "-";
        else
            sy_routes_resolve(routes, t->ns, &exec, NULL);
        put(o, "  ");
        quoted(o, t->id);
        put(o, " [label=\"");
        put(o, t->id);
        put(o, "\\n");
        escaped(o, exec ? exec : "-");
        if (t->trigger != SY_TRIGGER_ALL_SUCCESS) {
            put(o, "\\n");
            put(o, sy_trigger_name(t->trigger));
        }
        /* A mapped task is drawn as a stack: one box stands for many. */
        if (t->map) {
            put(o, "\\nmap ");
            escaped(o, t->map);
        } else if (t->mapped) {
            char range[64];
            snprintf(range, sizeof range, "\\nmap [%lld, %lld)", (long long)t->range_from,
                     (long long)t->range_to);
            put(o, range);
        }
        const char *fill = g ? state_fill(g->state[i]) : NULL;
        if (g) {
            put(o, "\\n");
            put(o, sy_task_state_name(g->state[i]));
        }
        put(o, t->mapped ? "\", shape=box3d" : "\"");
        if (fill) {
            put(o, ", style=filled, fillcolor=");
            put(o, fill);
        }
        put(o, "];\n");
    }
    for (size_t i = 0; i < wf->n_tasks; i++)
        for (size_t j = 0; j < wf->tasks[i].n_deps; j++) {
            put(o, "  ");
            quoted(o, wf->tasks[wf->tasks[i].deps[j]].id);
            put(o, " -> ");
            quoted(o, wf->tasks[i].id);
            put(o, ";\n");
        }
    put(o, "}\n");
    flush(o);
}

static void print_dot(const sy_workflow *wf, const sy_routes *routes, const sy_run_graph *g)
{
    dot *o = sy_xmalloc(sizeof *o);
    o->len = 0;
    write_dot(o, wf, routes, g);
    free(o);
}

/* A run's graph comes from the store: the definition it started with. */
static int graph_run(const sy_cli *cli, const char *arg)
{
    uint64_t id;
    int rc = sy_cli_number("graph", "--run", arg, 1, INT64_MAX, &id);
    if (rc != SY_EXIT_OK)
        return rc;
    if (cli->host)
        return sy_cli_usage_error("graph", "graph --run reads the store; it has no --host "
                                  "form (status --json %llu gives the run over the admin API)",
                                  (unsigned long long)id);
    sy_service sv;
    rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    char err[512];
    sy_run_graph g;
    if (sy_runs_graph(sv.store, (int64_t)id, &g, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: graph: run %llu: %s\n", (unsigned long long)id, err);
        sy_service_close(&sv);
        return SY_EXIT_FAIL;
    }
    print_dot(g.wf, NULL, &g);
    sy_run_graph_free(&g);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}

int sy_cmd_graph(const sy_cli *cli, int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[0], "--run") == 0)
        return graph_run(cli, argv[1]);
    if (argc != 1 || argv[0][0] == '-')
        return sy_cli_usage_error("graph", "usage: switchyard graph WORKFLOW | --run RUN");
    sy_service sv;
    int rc = sy_cli_open(cli, SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, false, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    char err[512];
    const sy_workflow *wf = sy_setup_workflow(&sv.setup, argv[0], err, sizeof err);
    if (!wf) {
        sy_service_close(&sv);
        return sy_cli_usage_error("graph", "%s", err);
    }
    print_dot(wf, &sv.setup.cfg.routes, NULL);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
