/* `switchyard emit NAME [--data JSON|@FILE] [--key K]`: a named event
 * (docs/events.md), recorded in the store, or with --host sent to a
 * serving host (POST /api/v1/events). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/common.h"
#include "cli/remote.h"
#include "service/named_events.h"

typedef struct {
    const char *name, *data, *key;
} emit_args;

static int parse(int argc, char **argv, emit_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        bool has_value = i + 1 < argc;
        if (strcmp(argv[i], "--data") == 0 && has_value)
            a->data = argv[++i];
        else if (strncmp(argv[i], "--data=", 7) == 0)
            a->data = argv[i] + 7;
        else if (strcmp(argv[i], "--key") == 0 && has_value)
            a->key = argv[++i];
        else if (strncmp(argv[i], "--key=", 6) == 0)
            a->key = argv[i] + 6;
        else if (strcmp(argv[i], "--data") == 0 || strcmp(argv[i], "--key") == 0)
            return sy_cli_usage_error("emit", "%s needs a value", argv[i]);
        else if (argv[i][0] != '-' && !a->name)
            a->name = argv[i];
        else
            return sy_cli_usage_error("emit", "unexpected argument '%s'", argv[i]);
    }
    if (!a->name)
        return sy_cli_usage_error("emit", "usage: switchyard emit NAME [--data JSON|@FILE] "
                                  "[--key KEY]");
    return SY_EXIT_OK;
}

static void said(int64_t id, bool duplicate, const char *key)
{
    printf("%lld\n", (long long)id);
    if (duplicate)
        fprintf(stderr, "switchyard: emit: key \"%s\" was seen within the window: event %lld "
                "stands, nothing new recorded\n", key, (long long)id);
}

int sy_cmd_emit(const sy_cli *cli, int argc, char **argv)
{
    emit_args a;
    int rc = parse(argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    char err[1024];
    char *data = sy_cli_json_object("--data", a.data, err, sizeof err);
    if (!data)
        return sy_cli_usage_error("emit", "%s", err);
    if (cli->host) {
        json_t *body = json_pack("{s:s, s:o}", "name", a.name, "data", json_loads(data, 0, NULL));
        if (a.key)
            json_object_set_new(body, "key", json_string(a.key));
        free(data);
        json_t *got = NULL;
        rc = sy_remote_json(cli, "emit", "POST", "/api/v1/events", body, &got);
        json_decref(body);
        if (rc == SY_EXIT_OK)
            said(json_integer_value(json_object_get(got, "event_id")),
                 json_is_true(json_object_get(got, "duplicate")), a.key);
        json_decref(got);
        return rc;
    }
    sy_service sv;
    if ((rc = sy_cli_open(cli, 0, true, &sv)) != SY_EXIT_OK) {
        free(data);
        return rc;
    }
    int64_t id = 0;
    bool dup = false;
    int erc = sy_service_check_durable(&sv, err, sizeof err);
    if (erc == SY_OK)
        erc = sy_service_emit(&sv, a.name, a.key, data, &id, &dup, err, sizeof err);
    free(data);
    sy_service_close(&sv);
    if (erc == SY_EINVAL || erc == SY_ERANGE || erc == SY_ENOTSUP)
        return sy_cli_usage_error("emit", "%s", err);
    if (erc != SY_OK) {
        fprintf(stderr, "switchyard: emit: %s\n", err);
        return SY_EXIT_FAIL;
    }
    said(id, dup, a.key);
    return SY_EXIT_OK;
}
