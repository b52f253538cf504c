/* `switchyard triggers`: each workflow trigger, its last firing, what is
 * pending and the last items it passed over, and why.  The data comes from
 * service/triggers.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/tz.h"
#include "base/util.h"
#include "cli/common.h"
#include "service/triggers.h"

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static void print_part(const json_t *p, size_t i, size_t n)
{
    printf("    %s", n > 1 ? "" : "on ");
    if (n > 1)
        printf("part %zu: ", i + 1);
    if (json_object_get(p, "event")) {
        printf("event %s", str(p, "event"));
        size_t conds = json_array_size(json_object_get(p, "when"));
        if (conds)
            printf(" (%zu condition%s)", conds, conds == 1 ? "" : "s");
    } else {
        printf("run of %s ending", str(p, "run"));
        size_t j;
        const json_t *s;
        json_array_foreach(json_object_get(p, "states"), j, s)
            printf("%s%s", j ? " or " : " ", json_string_value(s));
    }
    printf(": %lld pending\n", (long long)json_integer_value(json_object_get(p, "pending")));
}

static void print_one(const json_t *t)
{
    char when[40] = "never";
    const json_t *last = json_object_get(t, "last_fired");
    if (json_is_integer(last))
        sy_time_format(json_integer_value(last) / 1000, 0, when, sizeof when);
    printf("%s::%s::%s: %lld firing%s, last %s", str(t, "tenant"), str(t, "workflow"),
           str(t, "name"), (long long)json_integer_value(json_object_get(t, "firings")),
           json_integer_value(json_object_get(t, "firings")) == 1 ? "" : "s", when);
    if (json_is_integer(json_object_get(t, "last_run")))
        printf(" (run %lld)", (long long)json_integer_value(json_object_get(t, "last_run")));
    printf(", %lld in flight", (long long)json_integer_value(json_object_get(t, "in_flight")));
    if (json_is_integer(json_object_get(t, "max_in_flight")))
        printf(" of at most %lld",
               (long long)json_integer_value(json_object_get(t, "max_in_flight")));
    if (json_is_integer(json_object_get(t, "debounce_ms")))
        printf(", debounce %lld ms (%s payloads)",
               (long long)json_integer_value(json_object_get(t, "debounce_ms")),
               str(t, "payloads"));
    putchar('\n');
    const json_t *parts = json_object_get(t, "parts");
    size_t i;
    const json_t *p;
    json_array_foreach(parts, i, p)
        print_part(p, i, json_array_size(parts));
    json_array_foreach(json_object_get(t, "passed"), i, p)
        printf("    passed over %s %lld: %s\n", str(p, "source"),
               (long long)json_integer_value(json_object_get(p, "id")), str(p, "reason"));
}

int sy_cmd_triggers(const sy_cli *cli, int argc, char **argv)
{
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else
            return sy_cli_usage_error("triggers", "unexpected argument '%s'", argv[i]);
    }
    sy_service sv;
    int rc = sy_cli_open(cli, SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    json_t *list = NULL;
    char err[512];
    if (sy_triggers_list(sv.store, sv.setup.wfs, sv.setup.n_wfs, sy_clock_now_ms(), &list, err,
                         sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: triggers: %s\n", err);
        sy_service_close(&sv);
        return SY_EXIT_FAIL;
    }
    if (json) {
        char *dump = json_dumps(list, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
    } else {
        size_t i;
        const json_t *t;
        json_array_foreach(list, i, t)
            print_one(t);
        if (json_array_size(list) == 0)
            printf("(no workflow has a trigger)\n");
    }
    json_decref(list);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
