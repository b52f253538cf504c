/* `switchyard --host URL drain`: POST /api/v1/drain, the serving host
 * stopping as on its first SIGTERM.  A host on this machine takes the
 * signal itself; this is for one reached only through its admin API. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/common.h"
#include "cli/remote.h"

int sy_cmd_drain(const sy_cli *cli, int argc, char **argv)
{
    if (argc > 0)
        return sy_cli_usage_error("drain", "unexpected argument '%s'", argv[0]);
    if (!cli->host)
        return sy_cli_usage_error("drain", "needs --host URL (a host here drains on SIGTERM)");
    json_t *got = NULL;
    int rc = sy_remote_json(cli, "drain", "POST", "/api/v1/drain", NULL, &got);
    if (rc != SY_EXIT_OK)
        return rc;
    json_int_t running = json_integer_value(json_object_get(got, "running"));
    const char *tasks = json_string_value(json_object_get(got, "tasks"));
    if (running)
        printf("draining: waiting for %lld running task%s (%s), at most %lld s\n",
               (long long)running, running == 1 ? "" : "s", tasks ? tasks : "",
               (long long)json_integer_value(json_object_get(got, "grace_s")));
    else
        printf("draining: nothing is running; the host stops\n");
    json_decref(got);
    return SY_EXIT_OK;
}
