/* `switchyard audit`: the audit trail, newest first, from the store or
 * over --host (GET /api/v1/audit, which needs an admin token). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <switchyard/sdk.h>

#include "base/clock.h"
#include "cli/common.h"
#include "cli/remote.h"
#include "service/audit.h"

typedef struct {
    int64_t since;      /* ms since the epoch; 0: any */
    const char *who, *action;
    uint64_t limit;
    bool json;
} audit_args;

static int parse(int argc, char **argv, audit_args *a)
{
    memset(a, 0, sizeof *a);
    a->limit = 50;
    for (int i = 0; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--json") == 0) {
            a->json = true;
        } else if (strcmp(argv[i], "--since") == 0 && v) {
            char why[256] = "must be a duration such as \"24h\"";
            int64_t ms;
            if (sy_sdk_duration_parse(v, &ms, why, sizeof why) != SY_OK || ms <= 0)
                return sy_cli_usage_error("audit", "--since '%s': %s", v, why);
            a->since = sy_clock_now_ms() - ms;
            i++;
        } else if (strcmp(argv[i], "--who") == 0 && v) {
            a->who = argv[++i];
        } else if (strcmp(argv[i], "--action") == 0 && v) {
            a->action = argv[++i];
        } else if (strcmp(argv[i], "--limit") == 0) {
            if (sy_cli_number("audit", "--limit", v, 1, 100000, &a->limit) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        } else {
            return sy_cli_usage_error("audit", "unexpected argument '%s'", argv[i]);
        }
    }
    return SY_EXIT_OK;
}

static int add_row(void *arg, const sy_audit_record *r)
{
    json_array_append_new(arg, sy_audit_json(r));
    return 0;
}

static const char *text(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "-";
}

static void print_rows(const json_t *rows)
{
    printf("%-20s %-16s %-8s %-10s %-16s %-15s %-6s %s\n", "WHEN", "WHO", "ROLE", "ACTION",
           "TARGET", "FROM", "RESULT", "DETAIL");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        time_t t = (time_t)(json_integer_value(json_object_get(r, "at")) / 1000);
        struct tm tm;
        char when[32];
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        char result[16];
        int status = (int)json_integer_value(json_object_get(r, "status"));
        if (status)
            snprintf(result, sizeof result, "%d", status);
        else
            snprintf(result, sizeof result, "%s",
                     json_is_true(json_object_get(r, "ok")) ? "ok" : "failed");
        printf("%-20s %-16s %-8s %-10s %-16s %-15s %-6s %s\n", when, text(r, "who"),
               text(r, "role"), text(r, "action"), text(r, "target"), text(r, "origin"),
               result, text(r, "detail"));
    }
}

/* Over the admin API: pages of up to 1000 rows until `limit`. */
static int remote(const sy_cli *cli, const audit_args *a, json_t *rows)
{
    long long before = 0;
    while (json_array_size(rows) < a->limit) {
        char path[1024], e1[300], e2[300];
        size_t want = a->limit - json_array_size(rows);
        snprintf(path, sizeof path, "/api/v1/audit?limit=%zu&since=%lld&before=%lld%s%s%s%s",
                 want > 1000 ? (size_t)1000 : want, (long long)a->since, before,
                 a->who ? "&who=" : "", a->who ? sy_remote_escape(a->who, e1, sizeof e1) : "",
                 a->action ? "&action=" : "",
                 a->action ? sy_remote_escape(a->action, e2, sizeof e2) : "");
        json_t *got = NULL;
        int rc = sy_remote_json(cli, "audit", "GET", path, NULL, &got);
        if (rc != SY_EXIT_OK)
            return rc;
        json_array_extend(rows, json_object_get(got, "audit"));
        json_t *next = json_object_get(got, "next_before");
        before = json_is_integer(next) ? (long long)json_integer_value(next) : 0;
        json_decref(got);
        if (!before)
            break;
    }
    return SY_EXIT_OK;
}

int sy_cmd_audit(const sy_cli *cli, int argc, char **argv)
{
    audit_args a;
    int rc = parse(argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    json_t *rows = json_array();
    if (cli->host) {
        rc = remote(cli, &a, rows);
    } else {
        sy_service sv;
        if ((rc = sy_cli_open(cli, 0, true, &sv)) != SY_EXIT_OK) {
            json_decref(rows);
            return rc;
        }
        sy_audit_filter f = {.since = a.since, .who = a.who, .action = a.action,
                             .limit = (size_t)a.limit};
        if (sy_store_list_audit(sv.store, &f, add_row, rows) != SY_OK) {
            fprintf(stderr, "switchyard: audit: %s\n", sy_store_errmsg(sv.store));
            rc = SY_EXIT_FAIL;
        }
        sy_service_close(&sv);
    }
    if (rc == SY_EXIT_OK) {
        if (a.json) {
            char *dump = json_dumps(rows, JSON_INDENT(2));
            puts(dump ? dump : "[]");
            free(dump);
        } else {
            print_rows(rows);
        }
    }
    json_decref(rows);
    return rc;
}
