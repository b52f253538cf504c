/* `switchyard logs`: what each attempt wrote on stdout and stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/common.h"
#include "cli/remote.h"
#include "service/logs.h"

typedef struct {
    int64_t id;
    const char *task;
    uint64_t attempt;
    bool follow, json;
} logs_args;

static int parse(int argc, char **argv, logs_args *a)
{
    memset(a, 0, sizeof *a);
    a->id = -2;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--attempt") == 0) {
            if (sy_cli_number("logs", argv[i], i + 1 < argc ? argv[i + 1] : NULL, 1,
                              UINT32_MAX, &a->attempt) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        } else if (strcmp(argv[i], "--follow") == 0 || strcmp(argv[i], "-f") == 0) {
            a->follow = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            a->json = true;
        } else if (argv[i][0] != '-' && a->id == -2) {
            if ((a->id = sy_cli_run_id("logs", argv[i])) < 0)
                return SY_EXIT_USAGE;
        } else if (argv[i][0] != '-' && !a->task) {
            a->task = argv[i];
        } else {
            return sy_cli_usage_error("logs", "unexpected argument '%s'", argv[i]);
        }
    }
    if (a->id == -2)
        return sy_cli_usage_error("logs", "usage: switchyard logs RUN_ID [TASK] [--attempt N] "
                                  "[--follow] [--json]");
    return SY_EXIT_OK;
}

static void print_log(const json_t *l)
{
    long long dropped = (long long)json_integer_value(json_object_get(l, "dropped"));
    printf("==> %s attempt %lld %s (%lld bytes%s", json_string_value(json_object_get(l, "task")),
           (long long)json_integer_value(json_object_get(l, "attempt")),
           json_string_value(json_object_get(l, "stream")),
           (long long)json_integer_value(json_object_get(l, "size")),
           dropped ? ", " : ")");
    if (dropped)
        printf("%lld dropped)", dropped);
    printf(" <==\n");
    const char *text = json_string_value(json_object_get(l, "text"));
    size_t n = strlen(text);
    fputs(text, stdout);
    if (n && text[n - 1] != '\n')
        putchar('\n');
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int follow(sy_service *sv, const logs_args *a)
{
    sy_logs_cursor cur = {0};
    char err[512];
    int rc = SY_EXIT_OK;
    for (;;) {
        json_t *fresh = NULL;
        bool over = false;
        if (sy_logs_next(sv->store, a->id, a->task, (uint32_t)a->attempt, &cur, &fresh, &over,
                         err, sizeof err) != SY_OK) {
            fprintf(stderr, "switchyard: logs: %s\n", err);
            rc = SY_EXIT_FAIL;
            break;
        }
        size_t i;
        const json_t *l;
        json_array_foreach(fresh, i, l) {
            if (a->json) {
                char *dump = json_dumps(l, JSON_COMPACT);
                puts(dump ? dump : "null");
                free(dump);
            } else {
                print_log(l);
            }
        }
        fflush(stdout);
        json_decref(fresh);
        if (over)
            break;
        sleep_ms(200);
    }
    sy_logs_cursor_clear(&cur);
    return rc;
}

static void show(const json_t *got, const logs_args *a)
{
    if (a->json) {
        char *dump = json_dumps(got, JSON_INDENT(2));
        puts(dump ? dump : "null");
        free(dump);
        return;
    }
    size_t i;
    const json_t *l;
    json_array_foreach(json_object_get(got, "logs"), i, l)
        print_log(l);
    if (json_array_size(json_object_get(got, "logs")) == 0)
        printf("run %lld: no logs%s%s\n", (long long)a->id, a->task ? " for " : "",
               a->task ? a->task : "");
}

/* A line of a followed stream from --host: one log object. */
static void remote_line(const char *text, void *arg)
{
    const logs_args *a = arg;
    if (a->json) {
        puts(text);
    } else {
        json_t *l = json_loads(text, 0, NULL);
        if (l && json_object_get(l, "text"))
            print_log(l);
        else if (l && json_object_get(l, "error"))
            fprintf(stderr, "switchyard: logs: %s\n",
                    json_string_value(json_object_get(l, "error")));
        json_decref(l);
    }
    fflush(stdout);
}

static int remote_logs(const sy_cli *cli, const logs_args *a)
{
    char path[600], esc[400];
    int n = snprintf(path, sizeof path, "/api/v1/runs/%lld/logs?follow=%s", (long long)a->id,
                     a->follow ? "true" : "false");
    if (a->task)
        n += snprintf(path + n, sizeof path - (size_t)n, "&task=%s",
                      sy_remote_escape(a->task, esc, sizeof esc));
    if (a->attempt)
        snprintf(path + n, sizeof path - (size_t)n, "&attempt=%llu",
                 (unsigned long long)a->attempt);
    if (a->follow)
        return sy_remote_lines(cli, "logs", path, remote_line, (void *)a);
    json_t *got = NULL;
    int rc = sy_remote_json(cli, "logs", "GET", path, NULL, &got);
    if (rc == SY_EXIT_OK)
        show(got, a);
    json_decref(got);
    return rc;
}

int sy_cmd_logs(const sy_cli *cli, int argc, char **argv)
{
    logs_args a;
    int rc = parse(argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    if (cli->host)
        return remote_logs(cli, &a);
    sy_service sv;
    if ((rc = sy_cli_open(cli, 0, true, &sv)) != SY_EXIT_OK)
        return rc;
    if (a.follow) {
        rc = follow(&sv, &a);
        sy_service_close(&sv);
        return rc;
    }
    char err[512];
    json_t *got = NULL;
    if (sy_logs_read(sv.store, a.id, 0, a.task, (uint32_t)a.attempt, &got, err, sizeof err) !=
        SY_OK) {
        fprintf(stderr, "switchyard: logs: %s\n", err);
        sy_service_close(&sv);
        return SY_EXIT_FAIL;
    }
    show(got, &a);
    json_decref(got);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}
