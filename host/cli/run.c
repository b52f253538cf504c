/* `switchyard run` and `switchyard submit`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "cli/common.h"
#include "cli/remote.h"
#include "service/audit.h"
#include "service/metrics.h"
#include "service/runs.h"
#include "base/log.h"
#include "base/util.h"

typedef struct {
    const char *wf;
    const char *context;
    const char *key;  /* submit --key: the run recorded under it, once */
    int32_t priority; /* --priority: added to each task's (0: none) */
    bool has_priority;
    bool quiet;
    uint64_t every_s; /* --progress-every: plain progress lines' interval */
    const char *metrics_path; /* run --metrics-file: written when it ends */
} run_args;

static int parse(const char *cmd, int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->every_s = 10;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--context") == 0 && i + 1 < argc)
            a->context = argv[++i];
        else if (strncmp(argv[i], "--context=", 10) == 0)
            a->context = argv[i] + 10;
        else if (strcmp(argv[i], "--key") == 0 && strcmp(cmd, "submit") == 0) {
            char err[256];
            if (i + 1 >= argc || sy_service_check_key(argv[i + 1], err, sizeof err) != SY_OK)
                return sy_cli_usage_error(cmd, "--key: %s",
                                          i + 1 < argc ? err : "needs a value (1 to 256 "
                                                               "printable ASCII bytes)");
            a->key = argv[++i];
        } else if (strcmp(argv[i], "--priority") == 0) {
            char err[256];
            if (i + 1 >= argc ||
                sy_service_parse_priority(argv[i + 1], &a->priority, err, sizeof err) != SY_OK)
                return sy_cli_usage_error(cmd, "--priority: %s",
                                          i + 1 < argc ? err : "needs a value (an integer "
                                                               "from -1000000 to 1000000)");
            a->has_priority = true;
            i++;
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
            a->quiet = true;
        else if (strcmp(argv[i], "--progress-every") == 0 && strcmp(cmd, "run") == 0) {
            if (sy_cli_number(cmd, argv[i], i + 1 < argc ? argv[i + 1] : NULL, 0, 86400,
                              &a->every_s) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        } else if (strcmp(argv[i], "--metrics-file") == 0 && strcmp(cmd, "run") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return sy_cli_usage_error(cmd, "--metrics-file needs a PATH");
            a->metrics_path = argv[++i];
        } else if (strcmp(argv[i], "--context") == 0)
            return sy_cli_usage_error(cmd, "--context needs a value: JSON text or @FILE");
        else if (argv[i][0] != '-' && !a->wf)
            a->wf = argv[i];
        else
            return sy_cli_usage_error(cmd, "unexpected argument '%s'", argv[i]);
    }
    if (!a->wf)
        return sy_cli_usage_error(cmd, "usage: switchyard %s WORKFLOW [--context JSON|@FILE] "
                                  "[--priority N]%s",
                                  cmd, strcmp(cmd, "submit") == 0 ? " [--key KEY]" : "");
    return SY_EXIT_OK;
}

/* On stderr: stdout has the run's id either way, for scripts. */
static void key_used(const char *cmd, const char *key, int64_t run_id)
{
    fprintf(stderr, "switchyard: %s: key '%s' names run %lld, submitted within "
            "submit_key_window: no new run\n", cmd, key, (long long)run_id);
}

/* Opens everything and records a new run of the named workflow. */
static int start(const sy_cli *cli, const char *cmd, const run_args *a, unsigned flags,
                 sy_service *sv, int64_t *run_id, const sy_workflow **wf)
{
    int rc = sy_cli_open(cli, flags | SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, true,
                         sv);
    if (rc != SY_EXIT_OK)
        return rc;
    char err[1024];
    if (strcmp(cmd, "submit") == 0 && sy_service_check_durable(sv, err, sizeof err) != SY_OK) {
        sy_service_close(sv);
        return sy_cli_usage_error(cmd, "%s", err);
    }
    char *ctx = sy_cli_context(a->context, err, sizeof err);
    char target[300], made[64];
    snprintf(target, sizeof target, "workflow %s", a->wf);
    bool created = true;
    if (!ctx || sy_service_submit_keyed(sv, a->wf, ctx, a->key, a->priority, run_id, &created,
                                        wf, err, sizeof err) != SY_OK) {
        free(ctx);
        sy_service_close(sv);
        return sy_cli_usage_error(cmd, "%s", err);
    }
    free(ctx);
    if (!created)
        key_used(cmd, a->key, *run_id);
    snprintf(made, sizeof made, created ? "run %lld" : "run %lld, under its key",
             (long long)*run_id);
    sy_service_audit_local(sv, cmd, target, true, made);
    return SY_EXIT_OK;
}

int sy_cmd_submit(const sy_cli *cli, int argc, char **argv)
{
    run_args a;
    int rc = parse("submit", argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    if (cli->host) {
        char err[1024];
        char *ctx = sy_cli_context(a.context, err, sizeof err);
        if (!ctx)
            return sy_cli_usage_error("submit", "%s", err);
        json_t *body = json_pack("{s:s, s:o}", "workflow", a.wf, "context",
                                 json_loads(ctx, 0, NULL));
        free(ctx);
        if (a.has_priority)
            json_object_set_new(body, "priority", json_integer(a.priority));
        json_t *got = NULL;
        char *header = a.key ? sy_asprintf("Idempotency-Key: %s", a.key) : NULL;
        rc = sy_remote_json_header(cli, "submit", "POST", "/api/v1/runs", header, body, &got);
        free(header);
        json_decref(body);
        json_int_t id = json_integer_value(json_object_get(got, "run_id"));
        if (rc == SY_EXIT_OK && json_is_false(json_object_get(got, "created")))
            key_used("submit", a.key, id);
        if (rc == SY_EXIT_OK)
            printf("%lld\n", (long long)id);
        json_decref(got);
        return rc;
    }
    sy_service sv;
    int64_t id;
    const sy_workflow *wf;
    if ((rc = start(cli, "submit", &a, SY_SETUP_PLUGINS, &sv, &id, &wf)) != SY_EXIT_OK)
        return rc;
    printf("%lld\n", (long long)id);
    sy_service_close(&sv);
    return SY_EXIT_OK;
}

/* --- progress ------------------------------------------------------------- */

/* On a terminal one line rewritten in place; elsewhere (a log, a pipe) a
 * plain line at most every `every_ms`, so a long run still shows it is
 * alive without flooding the log. */
typedef struct {
    bool tty, quiet;
    int64_t start, drawn, every_ms, plain;
} progress;

static double secs(const progress *p) { return (double)(sy_clock_now_ms() - p->start) / 1000.0; }

static void summary(const progress *p, const sy_engine_view *v, char *buf, size_t len)
{
    double t = secs(p);
    snprintf(buf, len, "%zu/%zu done, %zu running, %zu failed, %zu skipped, %.1f tasks/s, %.1fs",
             v->n_done, v->n_tasks, v->n_running, v->n_failed, v->n_skipped,
             t > 0 ? (double)v->n_done / t : 0.0, t);
}

static void draw(progress *p, const sy_engine_view *v, bool force)
{
    int64_t now = sy_clock_now_ms();
    if (!force && now - p->drawn < 50)
        return;
    p->drawn = now;
    char line[256];
    summary(p, v, line, sizeof line);
    fprintf(stderr, "\r\033[K  %s", line);
    fflush(stderr);
}

static void plain(progress *p, const sy_engine_view *v)
{
    int64_t now = sy_clock_now_ms();
    if (now - p->plain < p->every_ms || v->n_done == v->n_tasks)
        return;
    p->plain = now;
    char line[256];
    summary(p, v, line, sizeof line);
    printf("[%7.3fs] progress: %s\n", secs(p), line);
}

static void on_task(void *arg, const sy_engine_view *v, const char *task_id, sy_task_state st,
                    uint32_t attempt, const char *error)
{
    progress *p = arg;
    if (p->quiet)
        return;
    bool notable = st != SY_TASK_COMPLETED;
    if (p->tty && !notable) {
        draw(p, v, false);
        return;
    }
    /* Ready again: after a failure (it has an error) a retry; without one,
     * deferred by its executor (not charged: the attempt number stays). */
    const char *what = st != SY_TASK_READY ? sy_task_state_name(st)
                       : error             ? "will retry"
                                           : "deferred";
    if (st == SY_TASK_READY && !error)
        attempt++;
    char short_error[400];
    sy_cli_error_summary(error, short_error, sizeof short_error);
    if (p->tty)
        fputs("\r\033[K", stderr);
    fprintf(p->tty ? stderr : stdout, "[%7.3fs] %-24s %-10s attempt %u%s%s\n", secs(p),
            task_id, what, attempt, error ? ": " : "", short_error);
    if (p->tty)
        draw(p, v, true);
    else
        plain(p, v);
}

static void on_run(void *arg, const sy_engine_view *v)
{
    progress *p = arg;
    if (p->tty && !p->quiet) {
        draw(p, v, true);
        fputc('\n', stderr);
    }
}

int sy_cli_drive(sy_service *sv, const char *cmd, int64_t id, bool quiet, uint64_t every_s,
                 bool *taken)
{
    if (taken)
        *taken = false;
    int64_t t0 = sy_clock_now_ms();
    progress p = {isatty(STDERR_FILENO) != 0, quiet, t0, 0, (int64_t)every_s * 1000, t0};
    sy_engine_opts mode = {.on_task = on_task, .on_run = on_run, .arg = &p};
    char err[512];
    int erc = sy_service_start(sv, &mode, err, sizeof err);
    if (erc == SY_OK)
        erc = sy_engine_adopt(sv->engine, id, true, err, sizeof err);
    bool completed = false;
    if (erc == SY_OK) {
        int r = sy_service_run(sv);
        if (r == 2) /* a third signal: leave now, the store is consistent */
            sy_service_leave(sv, 130);
        json_t *run = NULL;
        if (r == SY_ENGINE_LAPSED) {
            /* Whatever the store says of the run now is another host's
             * (or nobody's yet): this process no longer knows how it ends.
             * Why is in the line the engine logged; it is repeated only
             * when the log level hid it. */
            bool logged = sy_log_get_level() >= SY_LOG_WARN;
            fprintf(stderr, "switchyard: %s: run %lld: %s; the run is left for another "
                    "host to take over\n", cmd, (long long)id,
                    logged ? "this host lost its lease (see above)"
                           : sy_engine_lapse_reason(sv->engine));
        } else if (r == -1) {
            /* The store refused a write (full disk, I/O error): the turn
             * was rolled back, so the store holds every transition up to
             * the one before, and a host resumes from there. */
            fprintf(stderr, "switchyard: %s: run %lld: stopped because the store refused a "
                    "write (see above); what it recorded is kept: `switchyard serve` resumes "
                    "the run once the store is writable\n", cmd, (long long)id);
        } else if (sy_runs_status(sv->store, id, SY_RUNS_NO_TASKS, &run, err, sizeof err) == SY_OK) {
            const char *status = json_string_value(json_object_get(run, "status"));
            const char *error = json_string_value(json_object_get(run, "error"));
            if (!status)
                sy_oom("reading how run %lld ended", (long long)id);
            completed = strcmp(status, sy_run_state_name(SY_RUN_COMPLETED)) == 0;
            printf("run %lld %s in %.3fs%s%s\n", (long long)id, status, secs(&p),
                   error ? ": " : "", error ? error : "");
            json_decref(run);
        } else {
            /* The run ended and is recorded; only reading its end failed.
             * Without this line the exit status was the only sign. */
            fprintf(stderr, "switchyard: %s: run %lld: cannot read how it ended: %s "
                    "(`switchyard status %lld` shows it)\n", cmd, (long long)id, err,
                    (long long)id);
        }
        if (r == SY_ENGINE_ABANDONED)
            sy_service_leave(sv, completed ? SY_EXIT_OK : SY_EXIT_FAIL);
        if (r == SY_ENGINE_INTERRUPTED) /* the run is recorded Cancelled */
            return 130;
    } else if (taken && erc == SY_EBUSY) {
        *taken = true;
    } else {
        fprintf(stderr, "switchyard: %s: %s\n", cmd, err);
    }
    return completed ? SY_EXIT_OK : SY_EXIT_FAIL;
}

int sy_cmd_run(const sy_cli *cli, int argc, char **argv)
{
    run_args a;
    int rc = parse("run", argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    sy_service sv;
    int64_t id;
    const sy_workflow *wf;
    if ((rc = start(cli, "run", &a, SY_SETUP_CREATE, &sv, &id, &wf)) != SY_EXIT_OK)
        return rc;
    if (!a.quiet)
        printf("run %lld: %s::%s, %zu task%s\n", (long long)id, wf->tenant, wf->name,
               wf->n_tasks, wf->n_tasks == 1 ? "" : "s");
    fflush(stdout);
    rc = sy_cli_drive(&sv, "run", id, a.quiet, a.every_s, NULL);
    if (a.metrics_path && sv.engine) {
        /* The figures of the whole run, once, as `serve --metrics-file`
         * writes them: where the command's time went (bench/cmds). */
        sy_metrics_file mf = {.sv = &sv, .path = (char *)a.metrics_path};
        char err[512];
        if (sy_metrics_file_write(&mf, err, sizeof err) != SY_OK) {
            fprintf(stderr, "switchyard: run: %s\n", err);
            rc = SY_EXIT_FAIL;
        }
    }
    sy_service_close(&sv);
    return rc;
}
