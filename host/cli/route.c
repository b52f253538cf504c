/* `switchyard route NAMESPACE`: which instance gets a namespace, and why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/remote.h"
#include "service/setup.h"

static void print_trace(const sy_routes *r, size_t tried, const sy_route_rule *win)
{
    if (r->n == 0) {
        printf("  no rules\n");
        return;
    }
    printf("  tried:\n");
    for (size_t i = 0; i < tried; i++) {
        const sy_route_rule *x = &r->rules[i];
        printf("    %s:%d: \"%s\" -> %s: %s\n", x->file, x->line, x->glob.source,
               x->executor, x == win ? "match" : "no match");
    }
    if (tried < r->n)
        printf("    (%zu later rule%s not tried)\n", r->n - tried,
               r->n - tried == 1 ? "" : "s");
}

/* {"namespace", "executor", "rule": {"file", "line", "match"} or null,
 *  "default": {"file", "line"} or null, "tried": [{"file", "line",
 *  "match", "executor", "matched"}]}. */
static void print_json(const sy_routes *r, const char *ns, const char *exec, size_t tried,
                       const sy_route_rule *win)
{
    json_t *list = json_array();
    for (size_t i = 0; i < tried; i++) {
        const sy_route_rule *x = &r->rules[i];
        json_array_append_new(list, json_pack("{s:s, s:i, s:s, s:s, s:b}", "file", x->file,
                                              "line", x->line, "match", x->glob.source,
                                              "executor", x->executor, "matched", x == win));
    }
    json_t *rule = win ? json_pack("{s:s, s:i, s:s}", "file", win->file, "line", win->line,
                                   "match", win->glob.source)
                       : json_null();
    json_t *def = !win && r->default_file ? json_pack("{s:s, s:i}", "file", r->default_file,
                                                      "line", r->default_line)
                                          : json_null();
    json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:o}", "namespace", ns, "executor", exec,
                          "rule", rule, "default", def, "tried", list);
    char *dump = json_dumps(o, JSON_INDENT(2));
    puts(dump ? dump : "null");
    free(dump);
    json_decref(o);
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
    const char *exec = json_string_value(json_object_get(o, "executor"));
    if (quiet) {
        printf("%s\n", exec ? exec : "");
    } else if (json) {
        char *dump = json_dumps(o, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
    } else {
        printf("%s -> %s\n", ns, exec ? exec : "");
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
        const json_t *tried = json_object_get(o, "tried");
        printf(json_array_size(tried) ? "  tried:\n" : "  no rule tried\n");
        size_t i;
        const json_t *x;
        json_array_foreach(tried, i, x)
            printf("    %s:%lld: \"%s\" -> %s: %s\n", json_string_value(json_object_get(x, "file")),
                   (long long)json_integer_value(json_object_get(x, "line")),
                   json_string_value(json_object_get(x, "match")),
                   json_string_value(json_object_get(x, "executor")),
                   json_is_true(json_object_get(x, "matched")) ? "match" : "no match");
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
    if (quiet) {
        printf("%s\n", exec);
        goto out;
    }
    if (json) {
        print_json(r, ns, exec, tried, win);
        goto out;
    }
    printf("%s -> %s\n", ns, exec);
    if (win)
        printf("  rule: %s:%d: match = \"%s\"\n", win->file, win->line, win->glob.source);
    else if (r->default_file)
        printf("  rule: default (%s:%d), no rule matched\n", r->default_file,
               r->default_line);
    else
        printf("  rule: default (implicit), no rule matched\n");
    print_trace(r, tried, win);
out:
    sy_setup_close(&s);
    sy_diags_free(&d);
    return rc;
}
