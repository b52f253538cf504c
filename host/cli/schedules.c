/* `switchyard schedules`: each scheduled workflow, its last tick and its
 * next ones.  The data comes from service/schedules.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "cli/common.h"
#include "service/schedules.h"

static void print_table(const json_t *list)
{
    printf("%-30s %-16s %-16s %-7s %-25s %s\n", "TENANT::WORKFLOW", "SCHEDULE", "TIMEZONE",
           "CATCHUP", "LAST TICK", "NEXT");
    size_t i;
    const json_t *w;
    json_array_foreach(list, i, w) {
        char name[256];
        snprintf(name, sizeof name, "%s::%s", json_string_value(json_object_get(w, "tenant")),
                 json_string_value(json_object_get(w, "name")));
        const char *last = json_string_value(json_object_get(w, "last_tick"));
        const char *error = json_string_value(json_object_get(w, "error"));
        printf("%-30s %-16s %-16s %-7s %-25s", name,
               json_string_value(json_object_get(w, "schedule")),
               json_string_value(json_object_get(w, "timezone")),
               json_string_value(json_object_get(w, "catchup")), last ? last : "-");
        const json_t *next = json_object_get(w, "next");
        size_t j;
        const json_t *t;
        json_array_foreach(next, j, t)
            printf("%s%s", j ? ", " : " ", json_string_value(t));
        if (error)
            printf(" (not fired: %s)", error);
        else if (json_array_size(next) == 0)
            printf(" never");
        putchar('\n');
    }
    if (json_array_size(list) == 0)
        printf("(no workflow has a schedule)\n");
}

int sy_cmd_schedules(const sy_cli *cli, int argc, char **argv)
{
    bool json = false;
    uint64_t count = 3;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--count") == 0 || strcmp(argv[i], "-n") == 0) {
            if (sy_cli_number("schedules", argv[i], i + 1 < argc ? argv[i + 1] : NULL, 0, 1000,
                              &count) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        } else {
            return sy_cli_usage_error("schedules", "unexpected argument '%s'", argv[i]);
        }
    }
    sy_service sv;
    int rc = sy_cli_open(cli, SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    json_t *list = NULL;
    char err[512];
    if (sy_schedules_list(sv.store, sv.setup.wfs, sv.setup.n_wfs, sy_clock_schedule_ms(),
                          (size_t)count, &list, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: schedules: %s\n", err);
        sy_service_close(&sv);
        return SY_EXIT_FAIL;
    }
    if (json) {
        char *dump = json_dumps(list, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
    } else {
        print_table(list);
    }
    json_decref(list);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
