/* `switchyard status`, `runs` and `cancel`: reading and steering runs.
 * The data comes from service/runs.h; here it is only printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <switchyard/sdk.h>

#include "cli/common.h"
#include "cli/remote.h"
#include "base/clock.h"
#include "store/store.h"
#include "service/audit.h"
#include "service/events_keep.h"
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

/* A map's counts by state ("990 Completed, 10 Running"), or "-". */
static void fmt_counts(const json_t *by_state, char *buf, size_t len);

/* A mapped task's summary line, then (when listed) its elements. */
static void print_map(const json_t *t)
{
    const json_t *map = json_object_get(t, "map");
    if (!map)
        return;
    char counts[256];
    fmt_counts(json_object_get(map, "elements"), counts, sizeof counts);
    printf("  map %s: %lld element%s: %s (%lld made)\n", text(t, "id", ""), number(map, "size"),
           number(map, "size") == 1 ? "" : "s", counts[0] ? counts : "none yet",
           number(map, "created"));
    size_t i;
    const json_t *el;
    json_array_foreach(json_object_get(map, "list"), i, el) {
        char name[96], err[400];
        snprintf(name, sizeof name, "%s[%lld]", text(t, "id", ""), number(el, "index"));
        sy_cli_error_summary(text(el, "waiting_for", text(el, "error", "")), err, sizeof err);
        printf("    %-22s %-10s %8u  %-12s %s\n", name, text(el, "status", ""),
               (unsigned)number(el, "attempts"), text(el, "executor", "-"), err);
    }
}

/* Tasks the table lists unless told otherwise: a run of a million tasks
 * is summed up by state, and paged. */
#define STATUS_LIMIT 1000

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
    printf("  created %s  started %s  finished %s  owner %s", c, s, f, text(run, "owner", "-"));
    /* Only a run submitted with one: most have none. */
    if (number(run, "priority"))
        printf("  priority %lld", number(run, "priority"));
    putchar('\n');
    printf("  %-24s %-10s %8s  %-12s %s\n", "TASK", "STATE", "ATTEMPTS", "EXECUTOR", "ERROR");
    size_t i;
    const json_t *t;
    bool cut = false, failed = false;
    json_array_foreach(json_object_get(run, "tasks"), i, t) {
        char err[400];
        /* A Waiting task says what it waits for where an error would be. */
        const char *full = text(t, "waiting_for", text(t, "error", ""));
        sy_cli_error_summary(full, err, sizeof err);
        /* Completed without running: its output is an earlier run's. */
        if (!*full && json_is_true(json_object_get(t, "cached")))
            snprintf(err, sizeof err, "(cached)");
        cut = cut || strcmp(err, full) != 0;
        failed = failed || strcmp(text(t, "status", ""), "Failed") == 0;
        printf("  %-24s %-10s %8u  %-12s %s\n", text(t, "id", ""), text(t, "status", ""),
               (unsigned)number(t, "attempts"), text(t, "executor", "-"), err);
    }
    /* A map is summed up (counts by state), its elements listed only when
     * asked (--task, --all): a map may have a million. */
    json_array_foreach(json_object_get(run, "tasks"), i, t)
        print_map(t);
    /* Attempts a host lost with the run, and which host: what an operator
     * looks for after a host was stopped or cut off. */
    json_array_foreach(json_object_get(run, "tasks"), i, t) {
        size_t k;
        const json_t *a;
        json_array_foreach(json_object_get(t, "abandoned"), k, a) {
            char at[32], name[96];
            time_of(a, "at", at, sizeof at);
            if (json_object_get(a, "element"))
                snprintf(name, sizeof name, "%s[%lld]", text(t, "id", ""), number(a, "element"));
            else
                snprintf(name, sizeof name, "%s", text(t, "id", ""));
            printf("  abandoned: %s attempt %lld on %s (taken over %s)\n", name,
                   number(a, "attempt"), text(a, "host", "an unknown host"), at);
        }
        /* Taken over by its plugin (a cluster's job went on): no retry. */
        json_array_foreach(json_object_get(t, "resumed"), k, a) {
            char at[32];
            time_of(a, "at", at, sizeof at);
            printf("  resumed: %s attempt %lld from %s (taken over %s)\n", text(t, "id", ""),
                   number(a, "attempt"), text(a, "host", "an unknown host"), at);
        }
    }
    size_t shown = json_array_size(json_object_get(run, "tasks"));
    long long total = number(run, "n_tasks"), from = number(run, "tasks_offset");
    if ((long long)shown < total) {
        char counts[256];
        fmt_counts(json_object_get(run, "task_counts"), counts, sizeof counts);
        printf("  %lld tasks: %s\n", total, counts);
        if (shown)
            printf("  (tasks %lld-%lld of %lld listed: --offset N --limit N for others, "
                   "--limit 0 for every one)\n", from + 1, from + (long long)shown, total);
        else
            printf("  (no tasks listed from --offset %lld: the run has %lld)\n", from, total);
    }
    if (cut)
        printf("  (errors shortened: switchyard status %lld --task TASK shows one in full, "
               "switchyard logs %lld TASK what its attempts wrote)\n",
               number(run, "run_id"), number(run, "run_id"));
    else if (failed)
        printf("  (switchyard logs %lld TASK shows what a task's attempts wrote)\n",
               number(run, "run_id"));
}

static void print_json(const json_t *v);

/* One task in full: the whole error and the output (and a map's
 * elements); with `json`, its object. */
static int print_task(const json_t *run, const char *task_id, bool json)
{
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(run, "tasks"), i, t) {
        if (strcmp(text(t, "id", ""), task_id) != 0)
            continue;
        if (json) {
            print_json(t);
            return SY_EXIT_OK;
        }
        printf("task %s  (run %lld, %s)\n", text(t, "namespace", ""), number(run, "run_id"),
               text(run, "status", ""));
        printf("  state      %s\n  attempts   %lld (recovered %lld)\n  executor   %s\n"
               "  host       %s\n", text(t, "status", ""), number(t, "attempts"),
               number(t, "recoveries"), text(t, "executor", "-"), text(t, "host", "-"));
        const char *waiting = text(t, "waiting_for", NULL);
        if (waiting)
            printf("  waiting    %s\n", waiting + (strncmp(waiting, "waiting ", 8) ? 0 : 8));
        const char *error = text(t, "error", NULL);
        printf("  error%s\n", error ? ":" : "      none");
        if (error) {
            for (const char *p = error; *p;) {
                size_t n = strcspn(p, "\n");
                printf("    %.*s\n", (int)n, p);
                p += n + (p[n] == '\n');
            }
        }
        const json_t *output = json_object_get(t, "output");
        if (output && !json_is_null(output)) {
            char *dump = json_dumps(output, JSON_INDENT(2) | JSON_SORT_KEYS);
            printf("  output:\n");
            for (const char *p = dump ? dump : ""; *p;) {
                size_t n = strcspn(p, "\n");
                printf("    %.*s\n", (int)n, p);
                p += n + (p[n] == '\n');
            }
            free(dump);
        } else {
            printf("  output     none\n");
        }
        print_map(t);
        return SY_EXIT_OK;
    }
    fprintf(stderr, "switchyard: status: run %lld has no task '%s'\n", number(run, "run_id"),
            task_id);
    return SY_EXIT_FAIL;
}

static void print_json(const json_t *v)
{
    char *dump = json_dumps(v, JSON_INDENT(2));
    puts(dump ? dump : "null");
    free(dump);
}

int sy_cmd_status(const sy_cli *cli, int argc, char **argv)
{
    const char *id_arg = NULL, *task = NULL;
    bool json = false, all = false;
    uint64_t limit = UINT64_MAX, offset = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--limit") == 0 || strcmp(argv[i], "--offset") == 0) {
            if (sy_cli_number("status", argv[i], i + 1 < argc ? argv[i + 1] : NULL, 0,
                              1000000000, argv[i][2] == 'l' ? &limit : &offset) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        }
        else if (strcmp(argv[i], "--all") == 0)
            all = true;
        else if (strcmp(argv[i], "--task") == 0 || strcmp(argv[i], "-t") == 0) {
            if (i + 1 >= argc)
                return sy_cli_usage_error("status", "%s needs a task id", argv[i]);
            task = argv[++i];
        } else if (!id_arg)
            id_arg = argv[i];
        else
            return sy_cli_usage_error("status", "unexpected argument '%s'", argv[i]);
    }
    int64_t id = sy_cli_run_id("status", id_arg);
    if (id < 0)
        return SY_EXIT_USAGE;
    json_t *run = NULL;
    int rc;
    if (cli->host) {
        char path[600], esc[400];
        snprintf(path, sizeof path, "/api/v1/runs/%lld%s%s", (long long)id,
                 task || all ? "?elements=" : "",
                 task || all ? sy_remote_escape(task ? task : "*", esc, sizeof esc) : "");
        if ((rc = sy_remote_json(cli, "status", "GET", path, NULL, &run)) != SY_EXIT_OK)
            return rc;
        rc = task ? print_task(run, task, json) : SY_EXIT_OK;
        if (!task && json)
            print_json(run);
        else if (!task)
            print_status(run);
        json_decref(run);
        return rc;
    }
    sy_service sv;
    rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    char err[512];
    /* JSON is read by programs that expect every task unless they page. */
    if (limit == UINT64_MAX)
        limit = json ? 0 : STATUS_LIMIT;
    sy_runs_page page = {(size_t)offset, (size_t)limit, task};
    /* The table prints no output; --task prints its task's. */
    unsigned flags = json ? 0 : task ? SY_RUNS_DETAIL : SY_RUNS_DETAIL | SY_RUNS_NO_OUTPUT;
    if (sy_runs_status_page(sv.store, id, flags, &page, &run, err, sizeof err) == SY_OK &&
        sy_runs_add_maps(sv.store, id, json_object_get(run, "tasks"),
                         task ? task : all ? "*" : NULL, err, sizeof err) == SY_OK &&
        sy_runs_add_waiting(sv.store, &sy_service_setup(&sv)->cfg.flow, sy_clock_now_ms(), id,
                            json_object_get(run, "tasks"), err, sizeof err) == SY_OK) {
        if (task)
            rc = print_task(run, task, json);
        else if (json)
            print_json(run);
        else
            print_status(run);
        json_decref(run);
    } else {
        json_decref(run);
        fprintf(stderr, "switchyard: status: %s\n", err);
        rc = SY_EXIT_FAIL;
    }
    sy_service_close(&sv);
    return rc;
}

/* "1.5s", "2m03s", "1h02m": a duration at a glance; "-" when none. */
static void fmt_duration(const json_t *ms, char *buf, size_t len)
{
    if (!json_is_integer(ms)) {
        snprintf(buf, len, "-");
        return;
    }
    long long v = (long long)json_integer_value(ms);
    if (v < 60000)
        snprintf(buf, len, "%.1fs", (double)v / 1000.0);
    else if (v < 3600000)
        snprintf(buf, len, "%lldm%02llds", v / 60000, v / 1000 % 60);
    else
        snprintf(buf, len, "%lldh%02lldm", v / 3600000, v / 60000 % 60);
}

/* "3 Completed, 1 Failed": the task counts by state, in the order of the
 * state table. */
static void fmt_counts(const json_t *by_state, char *buf, size_t len)
{
    static const char *const order[] = {"Completed", "Running",   "Waiting", "Ready",
                                        "NotStarted", "Failed",   "Skipped", "Dropped",
                                        "Cancelled", NULL};
    size_t used = 0;
    buf[0] = '\0';
    for (const char *const *s = order; *s && used < len; s++) {
        long long n = (long long)json_integer_value(json_object_get(by_state, *s));
        if (n)
            used += (size_t)snprintf(buf + used, len - used, "%s%lld %s", used ? ", " : "", n,
                                     *s);
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)by_state, key, v) { /* a state added later */
        bool known = false;
        for (const char *const *s = order; *s; s++)
            known = known || strcmp(*s, key) == 0;
        if (!known && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%lld %s", used ? ", " : "",
                                     (long long)json_integer_value(v), key);
    }
}

/* The newest `limit` runs (0: all) from --host, a page of at most 1000
 * at a time. */
static int remote_runs(const sy_cli *cli, uint64_t limit, json_t **out)
{
    json_t *all = json_array();
    long long after = 0;
    for (;;) {
        uint64_t left = limit ? limit - json_array_size(all) : 1000;
        char path[128];
        snprintf(path, sizeof path, "/api/v1/runs?limit=%llu%s%lld",
                 (unsigned long long)(left < 1000 ? left : 1000), after ? "&after=" : "",
                 after);
        if (!after)
            path[strcspn(path, "&")] = '\0';
        json_t *page = NULL;
        int rc = sy_remote_json(cli, "runs", "GET", path, NULL, &page);
        if (rc != SY_EXIT_OK) {
            json_decref(all);
            return rc;
        }
        json_array_extend(all, json_object_get(page, "runs"));
        const json_t *next = json_object_get(page, "next_after");
        after = json_is_integer(next) ? (long long)json_integer_value(next) : 0;
        json_decref(page);
        if (!after || (limit && json_array_size(all) >= limit))
            break;
    }
    *out = all;
    return SY_EXIT_OK;
}

int sy_cmd_runs(const sy_cli *cli, int argc, char **argv)
{
    uint64_t limit = 50;
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0)
            limit = 0;
        else if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (strcmp(argv[i], "--limit") == 0 || strcmp(argv[i], "-n") == 0) {
            if (sy_cli_number("runs", argv[i], i + 1 < argc ? argv[i + 1] : NULL, 1,
                              1000000000, &limit) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        } else if (strncmp(argv[i], "--limit=", 8) == 0) {
            if (sy_cli_number("runs", "--limit", argv[i] + 8, 1, 1000000000, &limit) !=
                SY_EXIT_OK)
                return SY_EXIT_USAGE;
        } else
            return sy_cli_usage_error("runs", "unexpected argument '%s'", argv[i]);
    }
    sy_service sv = {0};
    json_t *runs = NULL;
    int rc = SY_EXIT_OK;
    if (cli->host) {
        if ((rc = remote_runs(cli, limit, &runs)) != SY_EXIT_OK)
            return rc;
    } else {
        if ((rc = sy_cli_open(cli, 0, true, &sv)) != SY_EXIT_OK)
            return rc;
        char err[512];
        if (sy_runs_list(sv.store, (size_t)limit, &runs, err, sizeof err) != SY_OK) {
            fprintf(stderr, "switchyard: runs: %s\n", err);
            sy_service_close(&sv);
            return SY_EXIT_FAIL;
        }
    }
    if (json) {
        print_json(runs);
    } else {
        printf("%-7s %-10s %-20s %-9s %-30s %-34s %s\n", "RUN", "STATE", "CREATED",
               "DURATION", "TENANT::WORKFLOW", "TASKS", "ERROR");
        size_t i;
        const json_t *r;
        json_array_foreach(runs, i, r) {
            char c[32], dur[32], counts[160], name[256], e[400];
            time_of(r, "created", c, sizeof c);
            fmt_duration(json_object_get(r, "duration_ms"), dur, sizeof dur);
            fmt_counts(json_object_get(r, "tasks"), counts, sizeof counts);
            snprintf(name, sizeof name, "%s::%s", text(r, "tenant", ""), text(r, "workflow", ""));
            sy_cli_error_summary(text(r, "error", ""), e, sizeof e);
            printf("%-7lld %-10s %-20s %-9s %-30s %-34s %s\n", number(r, "run_id"),
                   text(r, "status", ""), c, dur, name, counts[0] ? counts : "-", e);
        }
    }
    json_decref(runs);
    if (!cli->host)
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
    if (cli->host) {
        char path[96];
        snprintf(path, sizeof path, "/api/v1/runs/%lld/cancel", (long long)id);
        json_t *got = NULL;
        int rc = sy_remote_json(cli, "cancel", "POST", path, NULL, &got);
        if (rc == SY_EXIT_OK)
            printf("run %lld: %s\n", (long long)id,
                   strcmp(text(got, "status", ""), "Cancelled") == 0
                       ? "Cancelled"
                       : "cancel requested; its host will stop it");
        json_decref(got);
        return rc;
    }
    sy_service sv;
    int rc = sy_cli_open(cli, 0, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    sy_run_state state;
    char err[512];
    char target[64];
    snprintf(target, sizeof target, "run %lld", (long long)id);
    if (sy_service_cancel(&sv, id, &state, err, sizeof err) == SY_OK) {
        const char *done = state == SY_RUN_CANCELLED ? "Cancelled"
                                                     : "cancel requested; its host will stop it";
        printf("run %lld: %s\n", (long long)id, done);
        sy_service_audit_local(&sv, "cancel", target, true, done);
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
    const char *age_arg = "";
    long batch = 500;
    for (int i = 0; i < argc; i++) {
        char why[256] = "must be a duration such as \"30d\"";
        if (strcmp(argv[i], "--older-than") == 0 && i + 1 < argc) {
            age_arg = argv[i + 1];
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
    /* The workflows' triggers say which events are still needed. */
    int rc = sy_cli_open(cli, SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    int64_t before = sy_clock_now_ms() - age;
    size_t total = 0, n = 0;
    int status;
    do {
        status = sy_store_delete_finished(sv.store, before, (size_t)batch, &n);
        total += n;
    } while (status == SY_OK && n == (size_t)batch);
    size_t pruned = 0;
    char err[512] = "";
    if (status == SY_OK &&
        sy_service_audit_prune(&sv, sy_clock_now_ms(), &pruned, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: gc: %s\n", err);
        rc = SY_EXIT_FAIL;
    }
    sy_named_pruned events = {0};
    if (status == SY_OK && rc == SY_EXIT_OK &&
        sy_service_events_prune(&sv, sy_clock_now_ms(), &events, err, sizeof err) != SY_OK) {
        fprintf(stderr, "switchyard: gc: %s\n", err);
        rc = SY_EXIT_FAIL;
    }
    char what[128];
    snprintf(what, sizeof what, "%zu finished run%s older than %s removed", total,
             total == 1 ? "" : "s", age_arg);
    if (status == SY_OK) {
        printf("removed %zu finished run%s\n", total, total == 1 ? "" : "s");
        if (pruned)
            printf("removed %zu audit row%s older than audit_keep\n", pruned,
                   pruned == 1 ? "" : "s");
        if (events.events || events.items || events.firings)
            printf("removed %zu named event%s, %zu trigger item%s and %zu trigger firing%s "
                   "older than events_keep\n", events.events, events.events == 1 ? "" : "s",
                   events.items, events.items == 1 ? "" : "s", events.firings,
                   events.firings == 1 ? "" : "s");
        sy_service_audit_local(&sv, "gc", NULL, true, what);
    } else {
        fprintf(stderr, "switchyard: gc: %s (%zu runs removed before it)\n",
                sy_store_errmsg(sv.store), total);
        rc = SY_EXIT_FAIL;
    }
    sy_service_close(&sv);
    return rc;
}
