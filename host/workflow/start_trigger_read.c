/* Reading a workflow's `triggers` from its file (workflow/start_trigger.h),
 * each mistake one FILE:LINE error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"
#include "workflow/start_trigger.h"

static const char *const trigger_keys[] = {"name", "event", "when", "run", "states", "all",
                                           "debounce", "payloads", "max_in_flight", NULL};
static const char *const part_keys[] = {"event", "when", "run", "states", NULL};

#define ERR(s, ...) (sy_error(d, SY_SRC_FILE(s), SY_SRC_LINE(s), __VA_ARGS__), 1)

static int read_states(const config_setting_t *s, unsigned *states, sy_diags *d)
{
    int len = config_setting_length(s);
    if (!config_setting_is_aggregate(s) || len == 0)
        return ERR(s, "'states' must be a list of run states, e.g. states = [\"Completed\", "
                      "\"Failed\"];");
    int errors = 0;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *name = config_setting_get_string(e);
        int st = name ? sy_run_state_parse(name) : -1;
        if (st < 0 || !sy_run_state_terminal((sy_run_state)st))
            errors += ERR(e, "'states': \"%s\" is not a state a run ends in: use "
                             "\"Completed\", \"Failed\" or \"Cancelled\"", name ? name : "?");
        else
            *states |= 1u << st;
    }
    return errors;
}

/* One part, from group `g` (a trigger or an entry of its `all`). */
static int read_part(const config_setting_t *g, const char *workflow, sy_trigger_part *p,
                     sy_diags *d)
{
    const config_setting_t *ev = config_setting_get_member(g, "event");
    const config_setting_t *run = config_setting_get_member(g, "run");
    const config_setting_t *when = config_setting_get_member(g, "when");
    const config_setting_t *states = config_setting_get_member(g, "states");
    if (!ev && !run)
        return ERR(g, "a trigger needs 'event' (a named event), 'run' (a workflow whose "
                      "runs' ends start this one) or 'all' (several of them)");
    if (ev && run)
        return ERR(run, "a trigger part has one of 'event' and 'run', not both (use 'all' "
                        "for both)");
    int errors = 0;
    if (ev) {
        const char *name = sy_setting_string(g, "event", "'event'", d);
        const char *why = name ? sy_event_name_problem(name) : NULL;
        if (!name)
            return 1;
        if (why)
            return ERR(ev, "'event' \"%s\": %s", name, why);
        if (states)
            errors += ERR(states, "'states' belongs with 'run', not 'event'");
        p->event = sy_xstrdup(name);
        if (when)
            errors += sy_when_read(when, &p->when, &p->n_when, d);
        return errors;
    }
    const char *name = sy_setting_string(g, "run", "'run'", d);
    if (!name)
        return 1;
    if (!sy_wf_name_valid(name, true))
        return ERR(run, "'run' \"%s\" is not a workflow name", name);
    if (strcmp(name, workflow) == 0)
        return ERR(run, "'run' names this workflow: it would start itself");
    if (when)
        errors += ERR(when, "'when' belongs with 'event': a run part fires on the run's "
                            "'states'");
    p->run = sy_xstrdup(name);
    if (states)
        errors += read_states(states, &p->states, d);
    else
        p->states = 1u << SY_RUN_COMPLETED;
    return errors;
}

static int read_all(const config_setting_t *g, const config_setting_t *all,
                    const char *workflow, sy_start_trigger *t, sy_diags *d)
{
    int len = config_setting_length(all);
    if (config_setting_type(all) != CONFIG_TYPE_LIST || len < 2 || len > SY_TRIGGER_PARTS_MAX)
        return ERR(all, "'all' must be a list of 2 to %d parts, e.g. all = ( { event = "
                        "\"a\"; }, { run = \"b\"; } );", SY_TRIGGER_PARTS_MAX);
    if (config_setting_get_member(g, "event") || config_setting_get_member(g, "run") ||
        config_setting_get_member(g, "when") || config_setting_get_member(g, "states"))
        return ERR(all, "a trigger with 'all' has its 'event', 'run', 'when' and 'states' in "
                        "the parts");
    t->all = true;
    t->parts = sy_xmalloc(sizeof *t->parts * (size_t)len);
    memset(t->parts, 0, sizeof *t->parts * (size_t)len);
    int errors = 0;
    for (int i = 0; i < len; i++) {
        const config_setting_t *e = config_setting_get_elem(all, (unsigned)i);
        if (!config_setting_is_group(e)) {
            errors += ERR(e, "'all' part %d must be a group, e.g. { event = \"a\"; }", i + 1);
            continue;
        }
        errors += sy_setting_check_keys(e, part_keys, "trigger part", d);
        errors += read_part(e, workflow, &t->parts[t->n_parts++], d);
    }
    return errors;
}

static int read_policy(const config_setting_t *g, sy_start_trigger *t, sy_diags *d)
{
    int errors = 0;
    const config_setting_t *s;
    if ((s = config_setting_get_member(g, "debounce"))) {
        errors += sy_setting_duration(s, &t->debounce_ms, d);
        if (!errors && t->debounce_ms == 0)
            errors += ERR(s, "'debounce' must be longer than 0 (leave it out for none)");
    }
    if ((s = config_setting_get_member(g, "payloads"))) {
        const char *v = sy_setting_string(g, "payloads", "'payloads'", d);
        if (!v)
            errors++;
        else if (!config_setting_get_member(g, "debounce"))
            errors += ERR(s, "'payloads' needs a 'debounce' (e.g. debounce = \"30s\";)");
        else if (strcmp(v, "all") && strcmp(v, "last"))
            errors += ERR(s, "unknown payloads \"%s\": use \"last\" or \"all\"", v);
        else
            t->all_payloads = strcmp(v, "all") == 0;
    }
    if ((s = config_setting_get_member(g, "max_in_flight"))) {
        long long n = config_setting_get_int64(s);
        bool is_int = config_setting_type(s) == CONFIG_TYPE_INT ||
                      config_setting_type(s) == CONFIG_TYPE_INT64;
        if (!is_int || n < 1 || n > SY_LIMIT_MAX)
            errors += ERR(s, "'max_in_flight' must be an integer from 1 to %d", SY_LIMIT_MAX);
        else
            t->max_in_flight = (uint32_t)n;
    }
    return errors;
}

static int read_trigger(const config_setting_t *g, int idx, const char *workflow,
                        sy_start_trigger *v, size_t n_read, sy_start_trigger *t, sy_diags *d)
{
    t->line = SY_SRC_LINE(g);
    if (!config_setting_is_group(g))
        return ERR(g, "trigger %d must be a group, e.g. { name = \"on-landed\"; event = "
                      "\"file.landed\"; }", idx);
    int errors = sy_setting_check_keys(g, trigger_keys, "trigger", d);
    const config_setting_t *ns = config_setting_get_member(g, "name");
    const char *name = sy_setting_string(g, "name", "'name'", d);
    const char *why = name ? sy_event_name_problem(name) : NULL;
    if (!ns)
        return errors + ERR(g, "trigger %d has no 'name' (e.g. name = \"on-landed\";)", idx);
    if (!name)
        return errors + 1;
    if (why)
        return errors + ERR(ns, "trigger name \"%s\": %s", name, why);
    for (size_t i = 0; i < n_read; i++)
        if (strcmp(v[i].name, name) == 0)
            return errors + ERR(ns, "trigger \"%s\" is defined twice (first at line %d)", name,
                                v[i].line);
    t->name = sy_xstrdup(name);
    const config_setting_t *all = config_setting_get_member(g, "all");
    if (all) {
        errors += read_all(g, all, workflow, t, d);
    } else {
        t->parts = sy_xmalloc(sizeof *t->parts);
        memset(t->parts, 0, sizeof *t->parts);
        t->n_parts = 1;
        errors += read_part(g, workflow, t->parts, d);
    }
    return errors + read_policy(g, t, d);
}

int sy_start_triggers_read(const config_setting_t *s, const char *workflow,
                           sy_start_trigger **out, size_t *n, sy_diags *d)
{
    *out = NULL;
    *n = 0;
    int len = config_setting_length(s);
    if (config_setting_type(s) != CONFIG_TYPE_LIST &&
        !(config_setting_type(s) == CONFIG_TYPE_ARRAY && len == 0))
        return ERR(s, "'triggers' must be a list, e.g. triggers = ( { name = \"on-landed\"; "
                      "event = \"file.landed\"; } );");
    if (len == 0)
        return 0;
    sy_start_trigger *v = sy_xmalloc(sizeof *v * (size_t)len);
    memset(v, 0, sizeof *v * (size_t)len);
    size_t k = 0;
    int errors = 0;
    for (int i = 0; i < len; i++) {
        int e = read_trigger(config_setting_get_elem(s, (unsigned)i), i + 1, workflow, v, k,
                             &v[k], d);
        errors += e;
        if (e == 0)
            k++;
        else
            sy_start_trigger_clear(&v[k]);
    }
    *out = v;
    *n = k;
    return errors;
}
