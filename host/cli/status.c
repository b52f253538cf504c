/* `switchyard status`, `runs` and `cancel`: reading and steering runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "base/clock.h"
#include "cli/common.h"

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

static int add_task_json(void *arg, const sy_task_record *t)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:o, s:o}", "namespace", t->ns, "id",
                          t->task_id, "status", sy_task_state_name(t->state), "attempts",
                          (json_int_t)t->attempts, "recoveries", (json_int_t)t->recoveries,
                          "executor", t->executor ? json_string(t->executor) : json_null(),
                          "error", t->error ? json_string(t->error) : json_null());
    json_t *out = t->output ? json_loads(t->output, 0, NULL) : NULL;
    json_object_set_new(o, "output", out ? out : json_null());
    json_array_append_new(arg, o);
    return 0;
}

static int print_task(void *arg, const sy_task_record *t)
{
    (void)arg;
    printf("  %-24s %-10s %8u  %-12s %s\n", t->task_id, sy_task_state_name(t->state),
           t->attempts, t->executor ? t->executor : "-", t->error ? t->error : "");
    return 0;
}

static int status_json(sy_store *st, const sy_run_record *r)
{
    json_t *tasks = json_array();
    sy_store_list_tasks(st, r->id, add_task_json, tasks);
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o}", "run_id", (json_int_t)r->id,
                          "workflow", r->workflow, "tenant", r->tenant, "status",
                          sy_run_state_name(r->state), "error",
                          r->error ? json_string(r->error) : json_null(), "tasks", tasks);
    char *text = json_dumps(o, JSON_INDENT(2));
    puts(text);
    free(text);
    json_decref(o);
    return SY_EXIT_OK;
}

static int status_text(sy_store *st, const sy_run_record *r)
{
    char c[32], s[32], f[32];
    fmt_time(r->created, c, sizeof c);
    fmt_time(r->started, s, sizeof s);
    fmt_time(r->finished, f, sizeof f);
    printf("run %lld  %s::%s  %s%s%s\n", (long long)r->id, r->tenant, r->workflow,
           sy_run_state_name(r->state), r->error ? ": " : "", r->error ? r->error : "");
    printf("  created %s  started %s  finished %s  owner %s\n", c, s, f,
           r->owner ? r->owner : "-");
    printf("  %-24s %-10s %8s  %-12s %s\n", "TASK", "STATE", "ATTEMPTS", "EXECUTOR", "ERROR");
    sy_store_list_tasks(st, r->id, print_task, NULL);
    return SY_EXIT_OK;
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
    sy_setup s;
    sy_store *st;
    int rc = sy_cli_open(cli, 0, &s, &st);
    if (rc != SY_EXIT_OK)
        return rc;
    sy_run_record r;
    int src = sy_store_get_run(st, id, &r);
    if (src == SY_OK) {
        rc = json ? status_json(st, &r) : status_text(st, &r);
        sy_run_record_clear(&r);
    } else {
        fprintf(stderr, "switchyard: status: %s\n",
                src == SY_ENOENT ? "no such run" : sy_store_errmsg(st));
        rc = SY_EXIT_FAIL;
    }
    sy_store_close(st);
    sy_setup_close(&s);
    return rc;
}

static int print_run(void *arg, const sy_run_record *r)
{
    (void)arg;
    char c[32];
    fmt_time(r->created, c, sizeof c);
    printf("%-8lld %-10s %-20s %-28s %5u  %s\n", (long long)r->id, sy_run_state_name(r->state),
           c, r->workflow, r->n_tasks, r->error ? r->error : "");
    return 0;
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
    sy_setup s;
    sy_store *st;
    int rc = sy_cli_open(cli, 0, &s, &st);
    if (rc != SY_EXIT_OK)
        return rc;
    printf("%-8s %-10s %-20s %-28s %5s  %s\n", "RUN", "STATE", "CREATED", "WORKFLOW", "TASKS",
           "ERROR");
    sy_store_list_runs(st, limit, print_run, NULL);
    sy_store_close(st);
    sy_setup_close(&s);
    return SY_EXIT_OK;
}

int sy_cmd_cancel(const sy_cli *cli, int argc, char **argv)
{
    if (argc != 1)
        return sy_cli_usage_error("cancel", "usage: switchyard cancel RUN_ID");
    int64_t id = sy_cli_run_id("cancel", argv[0]);
    if (id < 0)
        return SY_EXIT_USAGE;
    sy_setup s;
    sy_store *st;
    int rc = sy_cli_open(cli, 0, &s, &st);
    if (rc != SY_EXIT_OK)
        return rc;
    int src = sy_store_request_cancel(st, id, sy_clock_now_ms());
    if (src == SY_OK) {
        sy_run_record r;
        if (sy_store_get_run(st, id, &r) == SY_OK) {
            printf("run %lld: %s\n", (long long)id,
                   r.state == SY_RUN_CANCELLED ? "Cancelled"
                                               : "cancel requested; its host will stop it");
            sy_run_record_clear(&r);
        }
    } else {
        fprintf(stderr, "switchyard: cancel: run %lld: %s\n", (long long)id,
                src == SY_ENOENT   ? "no such run"
                : src == SY_ESTATE ? "already ended"
                                   : sy_store_errmsg(st));
        rc = SY_EXIT_FAIL;
    }
    sy_store_close(st);
    sy_setup_close(&s);
    return rc;
}
