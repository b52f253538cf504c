/* The routing table as data, for the CLI and the admin API alike. */
#include "service/route_explain.h"

static json_t *names(const char *const *to, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(to[i]));
    return a;
}

static json_t *rule_json(const sy_route_rule *x)
{
    return json_pack("{s:s, s:i, s:s, s:s, s:o}", "file", x->file, "line", x->line, "match",
                     x->glob.source, "executor", x->executor, "executors",
                     names((const char *const *)x->to, x->n_to));
}

json_t *sy_route_explain(const sy_routes *r, const char *ns)
{
    const char *exec = NULL;
    size_t tried = 0, n = 0;
    const sy_route_rule *win = sy_routes_resolve(r, ns, &exec, &tried);
    json_t *list = json_array();
    for (size_t i = 0; i < tried; i++) {
        json_t *x = rule_json(&r->rules[i]);
        json_object_set_new(x, "matched", json_boolean(&r->rules[i] == win));
        json_array_append_new(list, x);
    }
    json_t *rule = win ? json_pack("{s:s, s:i, s:s}", "file", win->file, "line", win->line,
                                   "match", win->glob.source)
                       : json_null();
    json_t *def = !win && r->default_file ? json_pack("{s:s, s:i}", "file", r->default_file,
                                                      "line", r->default_line)
                                          : json_null();
    const char *const *to = sy_routes_targets(r, win, &n);
    return json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "namespace", ns, "executor", exec,
                     "executors", names(to, n), "rule", rule, "default", def, "tried", list);
}

json_t *sy_route_rules(const sy_routes *r)
{
    json_t *rules = json_array();
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(rules, rule_json(&r->rules[i]));
    size_t n = 0;
    const char *const *to = sy_routes_targets(r, NULL, &n);
    return json_pack("{s:o, s:s?, s:o}", "rules", rules, "default", r->default_executor,
                     "defaults", names(to, n));
}
