/* `switchyard route NAMESPACE`: which instance gets a namespace, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "service/route_explain.h"
#include "service/setup.h"

/* "a" or "a, b, c": the instances of a route in the order they are tried. */
static const char *join(const char *const *to, size_t n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", to[i]);
    return buf;
}

static void print_trace(const sy_routes *r, size_t tried, const sy_route_rule *win)
{
    if (r->n == 0) {
        printf("  no rules\n");
        return;
    }
    printf("  tried:\n");
    for (size_t i = 0; i < tried; i++) {
        const sy_route_rule *x = &r->rules[i];
        char names[1024];
        printf("    %s:%d: \"%s\" -> %s: %s\n", x->file, x->line, x->glob.source,
               join((const char *const *)x->to, x->n_to, names, sizeof names),
               x == win ? "match" : "no match");
    }
    if (tried < r->n)
        printf("    (%zu later rule%s not tried)\n", r->n - tried,
               r->n - tried == 1 ? "" : "s");
}

static void print_json(json_t *o)
{
    char *dump = json_dumps(o, JSON_INDENT(2));
    puts(dump ? dump : "null");
    free(dump);
}

/* The names of a route as explained: "executors", else "executor". */
static size_t explained_names(const json_t *o, const char **to, size_t max)
{
    const json_t *list = json_object_get(o, "executors");
    size_t n = 0, i;
    const json_t *x;
    json_array_foreach(list, i, x)
        if (n < max && json_is_string(x))
            to[n++] = json_string_value(x);
    if (n == 0 && json_is_string(json_object_get(o, "executor")))
        to[n++] = json_string_value(json_object_get(o, "executor"));
    return n;
}

/* Over --host: the serving host's routes, as it loaded them. */
static int remote_route(const sy_cli *cli, const char *ns, int quiet, bool json)
{
    char path[1200], esc[1024];
    snprintf(path, sizeof path, "/api/v1/routes?namespace=%s",
             sy_remote_escape(ns, esc, sizeof esc));
    json_t *o = NULL;
    int rc = sy_remote_json(cli, "route", "GET", path, NULL, &o);
    if (rc != SY_EXIT_OK)
        return rc;
    const char *to[64];
    size_t n_to = explained_names(o, to, 64);
    char names[1024];
    join(to, n_to, names, sizeof names);
    if (quiet) {
        for (size_t k = 0; k < n_to; k++)
            printf("%s\n", to[k]);
    } else if (json) {
        print_json(o);
    } else {
        printf("%s -> %s\n", ns, names);
        const json_t *win = json_object_get(o, "rule"), *def = json_object_get(o, "default");
        if (json_is_object(win))
            printf("  rule: %s:%lld: match = \"%s\"\n",
                   json_string_value(json_object_get(win, "file")),
                   (long long)json_integer_value(json_object_get(win, "line")),
                   json_string_value(json_object_get(win, "match")));
        else if (json_is_object(def))
            printf("  rule: default (%s:%lld), no rule matched\n",
                   json_string_value(json_object_get(def, "file")),
                   (long long)json_integer_value(json_object_get(def, "line")));
        else
            printf("  rule: default (implicit), no rule matched\n");
        if (n_to > 1)
            printf("  overflow: a task goes to the first of %s with capacity; when all are "
                   "full it waits for whichever frees a slot first\n",
                   names);
        const json_t *tried = json_object_get(o, "tried");
        printf(json_array_size(tried) ? "  tried:\n" : "  no rule tried\n");
        size_t i;
        const json_t *x;
        json_array_foreach(tried, i, x) {
            const char *rt[64];
            char rnames[1024];
            join(rt, explained_names(x, rt, 64), rnames, sizeof rnames);
            printf("    %s:%lld: \"%s\" -> %s: %s\n", json_string_value(json_object_get(x, "file")),
                   (long long)json_integer_value(json_object_get(x, "line")),
                   json_string_value(json_object_get(x, "match")), rnames,
                   json_is_true(json_object_get(x, "matched")) ? "match" : "no match");
        }
    }
    json_decref(o);
    return SY_EXIT_OK;
}

int sy_cmd_route(const sy_cli *cli, int argc, char **argv)
{
    const char *ns = NULL;
    int quiet = 0;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (!ns && argv[i][0] != '-')
            ns = argv[i];
        else
            return sy_cli_usage_error("route", "unexpected argument '%s'", argv[i]);
    }
    if (!ns)
        return sy_cli_usage_error("route", "usage: switchyard route NAMESPACE [--quiet]");
    char why[256];
    if (sy_ns_validate(ns, why, sizeof why) != 0)
        return sy_cli_usage_error("route", "invalid namespace \"%s\": %s", ns, why);
    if (cli->host)
        return remote_route(cli, ns, quiet, json);

    sy_diags d;
    sy_diags_init(&d);
    sy_setup s;
    int rc = SY_EXIT_OK;
    if (sy_setup_open(&s, cli->config, 0, &d) != 0) {
        sy_diags_print(&d, stderr);
        rc = SY_EXIT_USAGE;
        goto out;
    }
    const char *exec = NULL;
    size_t tried = 0;
    const sy_routes *r = &s.cfg.routes;
    const sy_route_rule *win = sy_routes_resolve(r, ns, &exec, &tried);
    size_t n_to = 0;
    const char *const *to = sy_routes_targets(r, win, &n_to);
    if (quiet) {
        /* One name a line, in the order they are tried. */
        for (size_t i = 0; i < n_to; i++)
            printf("%s\n", to[i]);
        goto out;
    }
    if (json) {
        json_t *o = sy_route_explain(r, ns);
        print_json(o);
        json_decref(o);
        goto out;
    }
    char names[1024];
    printf("%s -> %s\n", ns, join(to, n_to, names, sizeof names));
    if (win)
        printf("  rule: %s:%d: match = \"%s\"\n", win->file, win->line, win->glob.source);
    else if (r->default_file)
        printf("  rule: default (%s:%d), no rule matched\n", r->default_file,
               r->default_line);
    else
        printf("  rule: default (implicit), no rule matched\n");
    if (n_to > 1)
        printf("  overflow: a task goes to the first of %s with capacity; when all are "
               "full it waits for whichever frees a slot first\n",
               names);
    print_trace(r, tried, win);
out:
    sy_setup_close(&s);
    sy_diags_free(&d);
    return rc;
}
