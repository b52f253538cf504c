/* `switchyard limits`: every key, pool and tenant bound with the slots
 * held in the store, by which attempts, and the tasks waiting for it in
 * the order it will be granted, then every rate limit's bucket
 * (docs/flow-control.md); over
 * --host, GET /api/v1/limits. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "cli/common.h"
#include "cli/remote.h"
#include "service/limits.h"

/* One rate limit's bucket: its tokens now and when the next is due. */
static void print_bucket(const json_t *b)
{
    printf("%s: ", json_string_value(json_object_get(b, "key")));
    const json_t *rate = json_object_get(b, "rate"), *next = json_object_get(b, "next_token_ms");
    if (!json_is_integer(rate)) {
        printf("a bucket of unknown rate (no take since an upgrade)\n");
        return;
    }
    printf("%lld token(s) of %lld, %lld per %lld ms",
           (long long)json_integer_value(json_object_get(b, "tokens")),
           (long long)json_integer_value(json_object_get(b, "burst")),
           (long long)json_integer_value(rate),
           (long long)json_integer_value(json_object_get(b, "interval_ms")));
    if (json_is_integer(next))
        printf(", the next in %lld ms\n", (long long)json_integer_value(next));
    else
        printf(", full\n");
}

int sy_cmd_limits(const sy_cli *cli, int argc, char **argv)
{
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else
            return sy_cli_usage_error("limits", "unexpected argument '%s'", argv[i]);
    }
    sy_service sv;
    json_t *got = NULL;
    int rc;
    if (cli->host) {
        rc = sy_remote_json(cli, "limits", "GET", "/api/v1/limits", NULL, &got);
        if (rc != SY_EXIT_OK)
            return rc;
    } else {
        rc = sy_cli_open(cli, 0, true, &sv);
        if (rc != SY_EXIT_OK)
            return rc;
        char err[512];
        got = sy_limits_list(sv.store, &sy_service_setup(&sv)->cfg.flow, sy_clock_now_ms(), err,
                             sizeof err);
        if (!got) {
            fprintf(stderr, "switchyard: limits: %s\n", err);
            sy_service_close(&sv);
            return SY_EXIT_FAIL;
        }
    }
    if (json) {
        json_dumpf(got, stdout, JSON_COMPACT);
        putchar('\n');
    } else {
        size_t i;
        json_t *k;
        json_array_foreach(json_object_get(got, "keys"), i, k) {
            json_t *limit = json_object_get(k, "limit");
            printf("%s: %lld held", json_string_value(json_object_get(k, "key")),
                   (long long)json_integer_value(json_object_get(k, "held")));
            if (json_is_integer(limit))
                printf(" of %lld", (long long)json_integer_value(limit));
            printf(", %lld waiting\n",
                   (long long)json_integer_value(json_object_get(k, "waiting")));
            size_t j;
            json_t *h;
            json_array_foreach(json_object_get(k, "holders"), j, h)
                printf("  run %lld task %lld attempt token %lld: %lld slot(s), host %s\n",
                       (long long)json_integer_value(json_object_get(h, "run")),
                       (long long)json_integer_value(json_object_get(h, "task")),
                       (long long)json_integer_value(json_object_get(h, "token")),
                       (long long)json_integer_value(json_object_get(h, "slots")),
                       json_string_value(json_object_get(h, "host")));
            json_array_foreach(json_object_get(k, "waiters"), j, h)
                printf("  waiting #%lld: run %lld task %lld, tenant %s, priority %lld: "
                       "%lld slot(s), host %s\n",
                       (long long)json_integer_value(json_object_get(h, "position")),
                       (long long)json_integer_value(json_object_get(h, "run")),
                       (long long)json_integer_value(json_object_get(h, "task")),
                       json_string_value(json_object_get(h, "tenant")),
                       (long long)json_integer_value(json_object_get(h, "priority")),
                       (long long)json_integer_value(json_object_get(h, "slots")),
                       json_string_value(json_object_get(h, "host")));
        }
        json_array_foreach(json_object_get(got, "rates"), i, k)
            print_bucket(k);
    }
    json_decref(got);
    if (!cli->host)
        sy_service_close(&sv);
    return rc;
}
