/* `switchyard workflows`: the workflows a host would know, from the
 * workflow directories. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/common.h"
#include "cli/remote.h"

int sy_cmd_workflows(const sy_cli *cli, int argc, char **argv)
{
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else
            return sy_cli_usage_error("workflows", "unexpected argument '%s'", argv[i]);
    }
    sy_service sv = {0};
    json_t *list = NULL;
    int rc = SY_EXIT_OK;
    if (cli->host) {
        /* The serving host's workflows, as it loaded them. */
        json_t *got = NULL;
        if ((rc = sy_remote_json(cli, "workflows", "GET", "/api/v1/workflows", NULL, &got)) !=
            SY_EXIT_OK)
            return rc;
        list = json_incref(json_object_get(got, "workflows"));
        json_decref(got);
        size_t i;
        json_t *w;
        json_array_foreach(list, i, w)
            json_object_del(w, "dag");
    } else {
        sy_diags d;
        sy_diags_init(&d);
        int errors = sy_service_open(&sv, cli->config,
                                     SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, &d);
        sy_diags_print(&d, stderr);
        /* A bad file was reported above and left out; the list is still
         * true of the others, but the exit status says something was
         * wrong. */
        rc = errors ? SY_EXIT_USAGE : d.errors ? SY_EXIT_FAIL : SY_EXIT_OK;
        sy_diags_free(&d);
        if (errors) {
            sy_service_close(&sv);
            return rc;
        }
        const sy_setup *s = &sv.setup;
        list = json_array();
        for (size_t i = 0; i < s->n_wfs; i++) {
            const sy_workflow *wf = s->wfs[i];
            json_array_append_new(
                list, json_pack("{s:s, s:s, s:I, s:o, s:o, s:s}", "tenant", wf->tenant, "name",
                                wf->name, "tasks", (json_int_t)wf->n_tasks, "schedule",
                                wf->schedule ? json_string(wf->schedule) : json_null(),
                                "file", wf->file ? json_string(wf->file) : json_null(),
                                "hash", wf->hash));
        }
    }
    if (json) {
        char *dump = json_dumps(list, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
    } else {
        printf("%-30s %5s  %-16s %s\n", "TENANT::WORKFLOW", "TASKS", "SCHEDULE", "FILE");
        size_t i;
        const json_t *w;
        json_array_foreach(list, i, w) {
            char name[256];
            snprintf(name, sizeof name, "%s::%s",
                     json_string_value(json_object_get(w, "tenant")),
                     json_string_value(json_object_get(w, "name")));
            const char *sched = json_string_value(json_object_get(w, "schedule"));
            const char *file = json_string_value(json_object_get(w, "file"));
            printf("%-30s %5lld  %-16s %s\n", name,
                   (long long)json_integer_value(json_object_get(w, "tasks")),
                   sched ? sched : "-", file ? file : "-");
        }
        if (json_array_size(list) == 0)
            printf("(no workflows in the workflow directories)\n");
    }
    json_decref(list);
    if (!cli->host)
        sy_service_close(&sv);
    return rc;
}
