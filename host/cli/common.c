/* What several commands share: opening the service, reading a --context
 * argument and a run id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/common.h"
#include "base/util.h"

int sy_cli_open(const sy_cli *cli, unsigned flags, bool store, sy_service *sv)
{
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_service_open(sv, cli->config, flags, &d);
    sy_diags_print(&d, stderr);
    sy_diags_free(&d);
    if (errors) {
        sy_service_close(sv);
        return SY_EXIT_USAGE;
    }
    char err[512];
    if (store && sy_service_open_store(sv, err, sizeof err) != SY_OK) {
        const sy_config *c = &sv->setup.cfg;
        char where[512];
        fprintf(stderr, "%s:%d: error: store \"%s\": %s\n", c->path, c->store_line,
                sy_store_redact(c->store, where, sizeof where), err);
        sy_service_close(sv);
        return SY_EXIT_USAGE;
    }
    return SY_EXIT_OK;
}

char *sy_cli_context(const char *arg, char *err, size_t err_len)
{
    if (!arg)
        return sy_xstrdup("{}");
    json_error_t je;
    json_t *v = arg[0] == '@' ? json_load_file(arg + 1, 0, &je) : json_loads(arg, 0, &je);
    if (!v) {
        sy_errf(err, err_len, "--context %s: %s (line %d, column %d)", arg, je.text, je.line,
                je.column);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        sy_errf(err, err_len, "--context must be a JSON object");
        return NULL;
    }
    char *text = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return text;
}

int64_t sy_cli_run_id(const char *cmd, const char *arg)
{
    char *end;
    long long id = arg ? strtoll(arg, &end, 10) : 0;
    if (!arg || *end || id <= 0) {
        sy_cli_usage_error(cmd, "expected a run id (a positive number), got '%s'",
                           arg ? arg : "");
        return -1;
    }
    return id;
}
