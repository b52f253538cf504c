/* `switchyard graph WORKFLOW`: the DAG in Graphviz DOT. */
#include <stdio.h>
#include <string.h>

#include "cli/common.h"

/* A million tasks make two million lines: written with the stream's lock
 * taken once and no format parsed per line (printf was a tenth of the
 * command). */
static void put(const char *s) { fputs_unlocked(s, stdout); }

static void quoted(const char *s)
{
    putc_unlocked('"', stdout);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putc_unlocked('\\', stdout);
        putc_unlocked(*s, stdout);
    }
    putc_unlocked('"', stdout);
}

int sy_cmd_graph(const sy_cli *cli, int argc, char **argv)
{
    if (argc != 1)
        return sy_cli_usage_error("graph", "usage: switchyard graph WORKFLOW");
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
    printf("digraph ");
    quoted(wf->name);
    printf(" {\n  rankdir=LR;\n  node [shape=box];\n");
    flockfile(stdout);
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *t = &wf->tasks[i];
        const char *exec = NULL;
        sy_routes_resolve(&sv.setup.cfg.routes, t->ns, &exec, NULL);
        put("  ");
        quoted(t->id);
        put(" [label=\"");
        put(t->id);
        put("\\n");
        put(exec);
        if (t->trigger != SY_TRIGGER_ALL_SUCCESS) {
            put("\\n");
            put(sy_trigger_name(t->trigger));
        }
        /* A mapped task is drawn as a stack: one box stands for many. */
        if (t->map) {
            printf("\\nmap ");
            for (const char *c = t->map; *c; c++)
                printf("%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
        } else if (t->mapped) {
            printf("\\nmap [%lld, %lld)", (long long)t->range_from, (long long)t->range_to);
        }
        put(t->mapped ? "\", shape=box3d];\n" : "\"];\n");
    }
    for (size_t i = 0; i < wf->n_tasks; i++)
        for (size_t j = 0; j < wf->tasks[i].n_deps; j++) {
            put("  ");
            quoted(wf->tasks[wf->tasks[i].deps[j]].id);
            put(" -> ");
            quoted(wf->tasks[i].id);
            put(";\n");
        }
    funlockfile(stdout);
    printf("}\n");
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
