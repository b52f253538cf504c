/* `switchyard retry`: run again what failed in a finished run, in the same
 * run (service/retry.h says why the same run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/clock.h"
#include "base/util.h"
#include "cli/common.h"
#include "cli/remote.h"
#include "service/audit.h"
#include "service/retry.h"

typedef struct {
    int64_t id;
    const char *task;
    bool dry_run, json, detach, quiet, no_cache;
} retry_args;

static int parse(int argc, char **argv, retry_args *a)
{
    memset(a, 0, sizeof *a);
    a->id = -2;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--task") == 0) {
            if (i + 1 >= argc)
                return sy_cli_usage_error("retry", "--task needs a task id");
            a->task = argv[++i];
        } else if (strcmp(argv[i], "--dry-run") == 0) {
            a->dry_run = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            a->json = true;
        } else if (strcmp(argv[i], "--detach") == 0) {
            a->detach = true;
        } else if (strcmp(argv[i], "--no-cache") == 0) {
            a->no_cache = true;
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            a->quiet = true;
        } else if (argv[i][0] != '-' && a->id == -2) {
            if ((a->id = sy_cli_run_id("retry", argv[i])) < 0)
                return SY_EXIT_USAGE;
        } else {
            return sy_cli_usage_error("retry", "unexpected argument '%s'", argv[i]);
        }
    }
    if (a->id == -2)
        return sy_cli_usage_error("retry", "usage: switchyard retry RUN_ID [--task TASK] "
                                  "[--dry-run [--json]] [--detach] [--no-cache]");
    if (a->json && !a->dry_run)
        return sy_cli_usage_error("retry", "--json lists the plan: use it with --dry-run");
    return SY_EXIT_OK;
}

static void print_plan(const json_t *plan, bool dry_run)
{
    const json_t *rerun = json_object_get(plan, "rerun");
    const json_t *kept = json_object_get(plan, "kept");
    printf("run %lld (%s, %s): %s %zu task%s, keeping %zu\n",
           (long long)json_integer_value(json_object_get(plan, "run_id")),
           json_string_value(json_object_get(plan, "workflow")),
           json_string_value(json_object_get(plan, "status")),
           dry_run ? "would run again" : "runs again", json_array_size(rerun),
           json_array_size(rerun) == 1 ? "" : "s", json_array_size(kept));
    size_t i;
    const json_t *t;
    json_array_foreach(rerun, i, t)
        printf("  rerun  %-24s %-10s attempts %lld so far\n",
               json_string_value(json_object_get(t, "id")),
               json_string_value(json_object_get(t, "status")),
               (long long)json_integer_value(json_object_get(t, "attempts")));
    json_array_foreach(kept, i, t)
        printf("  keep   %-24s %-10s\n", json_string_value(json_object_get(t, "id")),
               json_string_value(json_object_get(t, "status")));
}

/* Over --host: the serving host reopens the run and runs it (as
 * --detach, since the run goes on there). */
static int remote_retry(const sy_cli *cli, const retry_args *a)
{
    char path[96];
    snprintf(path, sizeof path, "/api/v1/runs/%lld/retry", (long long)a->id);
    json_t *body = json_pack("{s:b}", "dry_run", a->dry_run);
    if (a->no_cache)
        json_object_set_new(body, "no_cache", json_true());
    if (a->task)
        json_object_set_new(body, "task", json_string(a->task));
    json_t *plan = NULL;
    int rc = sy_remote_json(cli, "retry", "POST", path, body, &plan);
    json_decref(body);
    if (rc != SY_EXIT_OK)
        return rc;
    if (a->json) {
        json_object_del(plan, "applied");
        char *dump = json_dumps(plan, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
    } else if (!a->quiet) {
        print_plan(plan, a->dry_run);
    }
    if (!a->dry_run)
        printf("run %lld: Pending, for the host at %s to take\n", (long long)a->id, cli->host);
    json_decref(plan);
    return SY_EXIT_OK;
}

int sy_cmd_retry(const sy_cli *cli, int argc, char **argv)
{
    retry_args a;
    int rc = parse(argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    if (cli->host)
        return remote_retry(cli, &a);
    sy_service sv;
    /* Only a run that goes on here needs the instances made. */
    unsigned flags = a.dry_run || a.detach ? 0 : SY_SETUP_CREATE | SY_SETUP_WORKFLOWS |
                                                     SY_SETUP_SKIP_BAD_WORKFLOWS;
    if ((rc = sy_cli_open(cli, flags, true, &sv)) != SY_EXIT_OK)
        return rc;
    char err[1024];
    json_t *plan = NULL;
    char target[64];
    snprintf(target, sizeof target, "run %lld", (long long)a.id);
    if (sy_retry_plan(sv.store, a.id, a.task, &plan, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: retry: %s\n", err);
        json_decref(plan);
        sy_service_close(&sv);
        return SY_EXIT_FAIL;
    }
    if (a.dry_run) {
        if (a.json) {
            char *dump = json_dumps(plan, JSON_INDENT(2));
            puts(dump ? dump : "null");
            free(dump);
        } else {
            print_plan(plan, true);
        }
        json_decref(plan);
        sy_service_close(&sv);
        return SY_EXIT_OK;
    }
    if (sy_retry_apply(sv.store, plan, a.no_cache, sy_clock_now_ms(), err, sizeof err) !=
        SY_OK) {
        fprintf(stderr, "switchyard: retry: %s\n", err);
        json_decref(plan);
        sy_service_close(&sv);
        return SY_EXIT_FAIL;
    }
    char made[320];
    snprintf(made, sizeof made, "reopened%s%s", a.task ? " from task " : "", a.task ? a.task : "");
    sy_service_audit_local(&sv, "retry", target, true, made);
    if (!a.quiet)
        print_plan(plan, false);
    json_decref(plan);
    fflush(stdout);
    if (a.detach) {
        printf("run %lld: Pending, for a host (switchyard serve) to take\n", (long long)a.id);
        rc = SY_EXIT_OK;
    } else {
        bool taken = false;
        rc = sy_cli_drive(&sv, "retry", a.id, a.quiet, 10, &taken);
        /* A serving host on the same store may claim the reopened run
         * first: it runs it, which is what was asked. */
        if (taken) {
            printf("run %lld: taken by a serving host, which runs it (switchyard logs %lld "
                   "--follow shows its attempts)\n", (long long)a.id, (long long)a.id);
            rc = SY_EXIT_OK;
        }
    }
    sy_service_close(&sv);
    return rc;
}
