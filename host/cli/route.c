/* `switchyard route NAMESPACE`: which instance gets a namespace, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
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

static json_t *json_names(const char *const *to, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(to[i]));
    return a;
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

/* {"namespace", "executor" (the first instance), "executors" (every
 *  instance, in the order they are tried), "rule": {"file", "line",
 *  "match"} or null, "default": {"file", "line"} or null, "tried":
 *  [{"file", "line", "match", "executor", "executors", "matched"}]}. */
static void print_json(const sy_routes *r, const char *ns, const char *exec, size_t tried,
                       const sy_route_rule *win)
{
    json_t *list = json_array();
    for (size_t i = 0; i < tried; i++) {
        const sy_route_rule *x = &r->rules[i];
        json_array_append_new(
            list, json_pack("{s:s, s:i, s:s, s:s, s:o, s:b}", "file", x->file, "line", x->line,
                            "match", x->glob.source, "executor", x->executor, "executors",
                            json_names((const char *const *)x->to, x->n_to), "matched",
                            x == win));
    }
    json_t *rule = win ? json_pack("{s:s, s:i, s:s}", "file", win->file, "line", win->line,
                                   "match", win->glob.source)
                       : json_null();
    json_t *def = !win && r->default_file ? json_pack("{s:s, s:i}", "file", r->default_file,
                                                      "line", r->default_line)
                                          : json_null();
    size_t n = 0;
    const char *const *to = sy_routes_targets(r, win, &n);
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "namespace", ns, "executor", exec,
                          "executors", json_names(to, n), "rule", rule, "default", def,
                          "tried", list);
    char *dump = json_dumps(o, JSON_INDENT(2));
    puts(dump ? dump : "null");
    free(dump);
    json_decref(o);
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
        print_json(r, ns, exec, tried, win);
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
