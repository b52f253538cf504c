/* `switchyard --host URL plugins`: a serving host's instances, their
 * health and figures, and the plugins it found, over its admin API. */
#include "cli/plugins_remote.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/remote.h"

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "-";
}

int sy_cli_plugins_remote(const sy_cli *cli, bool verbose, bool json)
{
    json_t *got = NULL;
    int rc = sy_remote_json(cli, "plugins", "GET", "/api/v1/instances", NULL, &got);
    if (rc != SY_EXIT_OK)
        return rc;
    if (json) {
        char *dump = json_dumps(got, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
        json_decref(got);
        return SY_EXIT_OK;
    }
    size_t i;
    json_t *o;
    printf("%-16s %-12s %-10s %s\n", "INSTANCE", "PLUGIN", "VERSION", "HEALTH");
    json_array_foreach(json_object_get(got, "instances"), i, o) {
        printf("%-16s %-12s %-10s %s\n", str(o, "name"), str(o, "plugin"), str(o, "version"),
               str(o, "health"));
        if (!verbose)
            continue;
        /* Every figure the plugin reports, in its own names and order. */
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(o, "metrics"), name, v)
            printf("    %-40s %" JSON_INTEGER_FORMAT "\n", name, json_integer_value(v));
    }
    printf("\n%-12s %-10s %-5s %-8s %s\n", "PLUGIN", "VERSION", "ABI", "STATUS", "PATH");
    json_array_foreach(json_object_get(got, "plugins"), i, o) {
        printf("%-12s %-10s %-5s %-8s %s\n", str(o, "name"), str(o, "version"), str(o, "abi"),
               str(o, "status"), str(o, "path"));
        if (json_object_get(o, "reason") && json_is_string(json_object_get(o, "reason")))
            printf("    refused: %s\n", str(o, "reason"));
    }
    json_decref(got);
    return SY_EXIT_OK;
}
