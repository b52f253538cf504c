/* `switchyard graph WORKFLOW`: the DAG in Graphviz DOT. */
#include <stdio.h>
#include <string.h>

#include "cli/common.h"

static void quoted(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
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
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *t = &wf->tasks[i];
        const char *exec = NULL;
        sy_routes_resolve(&sv.setup.cfg.routes, t->ns, &exec, NULL);
        printf("  ");
        quoted(t->id);
        printf(" [label=\"%s\\n%s%s%s", t->id, exec,
               t->trigger != SY_TRIGGER_ALL_SUCCESS ? "\\n" : "",
               t->trigger != SY_TRIGGER_ALL_SUCCESS ? sy_trigger_name(t->trigger) : "");
        /* A mapped task is drawn as a stack: one box stands for many. */
        if (t->map) {
            printf("\\nmap ");
            for (const char *c = t->map; *c; c++)
                printf("%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
        } else if (t->mapped) {
            printf("\\nmap [%lld, %lld)", (long long)t->range_from, (long long)t->range_to);
        }
        printf("\"%s];\n", t->mapped ? ", shape=box3d" : "");
    }
    for (size_t i = 0; i < wf->n_tasks; i++)
        for (size_t j = 0; j < wf->tasks[i].n_deps; j++) {
            printf("  ");
            quoted(wf->tasks[wf->tasks[i].deps[j]].id);
            printf(" -> ");
            quoted(wf->tasks[i].id);
            printf(";\n");
        }
    printf("}\n");
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
