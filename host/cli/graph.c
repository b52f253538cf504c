/* `switchyard graph WORKFLOW`: the DAG in Graphviz DOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cli/common.h"

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

static void write_dot(dot *o, const sy_workflow *wf, const sy_routes *routes)
{
    put(o, "digraph ");
    quoted(o, wf->name);
    put(o, " {\n  rankdir=LR;\n  node [shape=box];\n");
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *t = &wf->tasks[i];
        const char *exec = NULL;
        sy_routes_resolve(routes, t->ns, &exec, NULL);
        put(o, "  ");
        quoted(o, t->id);
        put(o, " [label=\"");
        put(o, t->id);
        put(o, "\\n");
        put(o, exec);
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
        put(o, t->mapped ? "\", shape=box3d];\n" : "\"];\n");
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
    dot *o = sy_xmalloc(sizeof *o);
    o->len = 0;
    write_dot(o, wf, &sv.setup.cfg.routes);
    free(o);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
