/* `switchyard status`, `runs` and `cancel`: reading and steering runs.
 * The data comes from service/runs.h; here it is only printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <switchyard/sdk.h>

#include "cli/common.h"
#include "base/clock.h"
#include "store/store.h"
#include "service/runs.h"

static void fmt_time(int64_t ms, char *buf, size_t len)
{
    if (!ms) {
        snprintf(buf, len, "-");
        return;
    }
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A string member, or `none` when it is null or absent. */
static const char *text(const json_t *o, const char *key, const char *none)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : none;
}

static long long number(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static void time_of(const json_t *o, const char *key, char *buf, size_t len)
{
    fmt_time((int64_t)number(o, key), buf, len);
}

static void print_status(const json_t *run)
{
    char c[32], s[32], f[32];
    time_of(run, "created", c, sizeof c);
    time_of(run, "started", s, sizeof s);
    time_of(run, "finished", f, sizeof f);
    const char *error = text(run, "error", NULL);
    printf("run %lld  %s::%s  %s%s%s\n", number(run, "run_id"), text(run, "tenant", ""),
           text(run, "workflow", ""), text(run, "status", ""), error ? ": " : "",
           error ? error : "");
    printf("  created %s  started %s  finished %s  owner %s\n", c, s, f,
           text(run, "owner", "-"));
    printf("  %-24s %-10s %8s  %-12s %s\n", "TASK", "STATE", "ATTEMPTS", "EXECUTOR", "ERROR");
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(run, "tasks"), i, t)
        printf("  %-24s %-10s %8u  %-12s %s\n", text(t, "id", ""), text(t, "status", ""),
               (unsigned)number(t, "attempts"), text(t, "executor", "-"),
               text(t, "error", ""));
    /* Attempts a host lost with the run, and which host: what an operator
     * looks for after a host was stopped or cut off. */
    json_array_foreach(json_object_get(run, "tasks"), i, t) {
        size_t k;
        const json_t *a;
        json_array_foreach(json_object_get(t, "abandoned"), k, a) {
            char at[32];
            time_of(a, "at", at, sizeof at);
            printf("  abandoned: %s attempt %lld on %s (taken over %s)\n", text(t, "id", ""),
                   number(a, "attempt"), text(a, "host", "an unknown host"), at);
        }
    }
}

int sy_cmd_status(const sy_cli *cli, int argc, char **argv)
{
    const char *id_arg = NULL;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (!id_arg)
            id_arg = argv[i];
        else
            return sy_cli_usage_error("status", "unexpected argument '%s'", argv[i]);
    }
    int64_t id = sy_cli_run_id("status", id_arg);
    if (id < 0)
        return SY_EXIT_USAGE;
    sy_service sv;
    int rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    json_t *run = NULL;
    char err[512];
    if (sy_runs_status(sv.store, id, json ? 0 : SY_RUNS_DETAIL, &run, err, sizeof err) ==
        SY_OK) {
        if (json) {
            char *dump = json_dumps(run, JSON_INDENT(2));
            puts(dump);
            free(dump);
        } else {
            print_status(run);
        }
        json_decref(run);
    } else {
        fprintf(stderr, "switchyard: status: %s\n", err);
        rc = SY_EXIT_FAIL;
    }
    sy_service_close(&sv);
    return rc;
}

int sy_cmd_runs(const sy_cli *cli, int argc, char **argv)
{
    size_t limit = 50;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0)
            limit = 0;
        else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            limit = (size_t)strtoul(argv[++i], NULL, 10);
        else
            return sy_cli_usage_error("runs", "unexpected argument '%s'", argv[i]);
    }
    sy_service sv;
    int rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    printf("%-8s %-10s %-20s %-28s %5s  %s\n", "RUN", "STATE", "CREATED", "WORKFLOW", "TASKS",
           "ERROR");
    json_t *runs = NULL;
    char err[512];
    if (sy_runs_list(sv.store, limit, &runs, err, sizeof err) == SY_OK) {
        size_t i;
        const json_t *r;
        json_array_foreach(runs, i, r) {
            char c[32];
            time_of(r, "created", c, sizeof c);
            printf("%-8lld %-10s %-20s %-28s %5u  %s\n", number(r, "run_id"),
                   text(r, "status", ""), c, text(r, "workflow", ""),
                   (unsigned)number(r, "n_tasks"), text(r, "error", ""));
        }
        json_decref(runs);
    } else {
        fprintf(stderr, "switchyard: runs: %s\n", err);
        rc = SY_EXIT_FAIL;
    }
    sy_service_close(&sv);
    return rc;
}

int sy_cmd_cancel(const sy_cli *cli, int argc, char **argv)
{
    if (argc != 1)
        return sy_cli_usage_error("cancel", "usage: switchyard cancel RUN_ID");
    int64_t id = sy_cli_run_id("cancel", argv[0]);
    if (id < 0)
        return SY_EXIT_USAGE;
    sy_service sv;
    int rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    sy_run_state state;
    char err[512];
    if (sy_runs_cancel(sv.store, id, &state, err, sizeof err) == SY_OK) {
        printf("run %lld: %s\n", (long long)id,
               state == SY_RUN_CANCELLED ? "Cancelled" : "cancel requested; its host will stop it");
    } else {
        fprintf(stderr, "switchyard: cancel: run %lld: %s\n", (long long)id, err);
        rc = SY_EXIT_FAIL;
    }
    sy_service_close(&sv);
    return rc;
}

/* Opening a store creates its tables and migrates them to this build's
 * schema (under a lock on PostgreSQL); `migrate` does only that, so that
 * an operator can upgrade a shared database before starting new hosts. */
int sy_cmd_migrate(const sy_cli *cli, int argc, char **argv)
{
    if (argc != 0)
        return sy_cli_usage_error("migrate", "unexpected argument '%s'", argv[0]);
    sy_service sv;
    int rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    printf("the store's schema is this build's\n");
    sy_service_close(&sv);
    return rc;
}

/* Finished runs are deleted a few hundred at a time, each batch its own
 * short transaction, so that hosts writing meanwhile never wait long. */
int sy_cmd_gc(const sy_cli *cli, int argc, char **argv)
{
    int64_t age = -1;
    long batch = 500;
    for (int i = 0; i < argc; i++) {
        char why[256] = "must be a duration such as \"30d\"";
        if (strcmp(argv[i], "--older-than") == 0 && i + 1 < argc) {
            if (sy_sdk_duration_parse(argv[++i], &age, why, sizeof why) != SY_OK || age < 0)
                return sy_cli_usage_error("gc", "--older-than '%s': %s", argv[i], why);
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            char *end;
            batch = strtol(argv[++i], &end, 10);
            if (*end || batch < 1 || batch > 100000)
                return sy_cli_usage_error("gc", "--batch '%s': must be a number "
                                          "from 1 to 100000", argv[i]);
        } else {
            return sy_cli_usage_error("gc", "unexpected argument '%s'", argv[i]);
        }
    }
    if (age < 0)
        return sy_cli_usage_error("gc", "usage: switchyard gc --older-than DURATION "
                                  "[--batch N]");
    sy_service sv;
    int rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    int64_t before = sy_clock_now_ms() - age;
    size_t total = 0, n = 0;
    int status;
    do {
        status = sy_store_delete_finished(sv.store, before, (size_t)batch, &n);
        total += n;
    } while (status == SY_OK && n == (size_t)batch);
    if (status == SY_OK) {
        printf("removed %zu finished run%s\n", total, total == 1 ? "" : "s");
    } else {
        fprintf(stderr, "switchyard: gc: %s (%zu runs removed before it)\n",
                sy_store_errmsg(sv.store), total);
        rc = SY_EXIT_FAIL;
    }
    sy_service_close(&sv);
    return rc;
}
