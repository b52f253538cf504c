/* `switchyard backfill WORKFLOW --from T1 --to T2 [--max-active N]
 * [--dry-run]`: one run per tick of the workflow's schedule in the range
 * that has none yet, at most N of them not finished at once.  The ticks
 * and their firing are service/backfill.h's; the pacing is here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/util.h"
#include "cli/common.h"
#include "service/backfill.h"

typedef struct {
    const char *wf;
    int64_t from, to;
    bool have_from, have_to, dry_run;
    uint64_t max_active;
} backfill_args;

/* A UTC time: 2026-11-20, 2026-11-20T06:00, 2026-11-20T06:00:00, each
 * with an optional Z.  strptime reads the fields; the rest must be empty. */
static bool parse_time(const char *text, int64_t *ms)
{
    static const char *const forms[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        const char *end = strptime(text, forms[i], &tm);
        if (!end || (strcmp(end, "") != 0 && strcmp(end, "Z") != 0))
            continue;
        *ms = (int64_t)timegm(&tm) * 1000;
        return true;
    }
    return false;
}

static int parse(int argc, char **argv, backfill_args *a)
{
    memset(a, 0, sizeof *a);
    a->max_active = 1;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        bool from = strcmp(arg, "--from") == 0;
        if (from || strcmp(arg, "--to") == 0) {
            if (i + 1 >= argc || !parse_time(argv[i + 1], from ? &a->from : &a->to))
                return sy_cli_usage_error("backfill", "%s '%s': expected a UTC time such as "
                                          "2026-11-20 or 2026-11-20T06:00:00Z", arg,
                                          i + 1 < argc ? argv[i + 1] : "");
            *(from ? &a->have_from : &a->have_to) = true;
            i++;
        } else if (strcmp(arg, "--max-active") == 0) {
            if (sy_cli_number("backfill", arg, i + 1 < argc ? argv[i + 1] : NULL, 1, 10000,
                              &a->max_active) != SY_EXIT_OK)
                return SY_EXIT_USAGE;
            i++;
        } else if (strcmp(arg, "--dry-run") == 0) {
            a->dry_run = true;
        } else if (arg[0] != '-' && !a->wf) {
            a->wf = arg;
        } else {
            return sy_cli_usage_error("backfill", "unexpected argument '%s'", arg);
        }
    }
    if (!a->wf || !a->have_from || !a->have_to)
        return sy_cli_usage_error("backfill", "usage: switchyard backfill WORKFLOW --from T1 "
                                  "--to T2 [--max-active N] [--dry-run]");
    return SY_EXIT_OK;
}

/* Runs of `ids` not finished yet, forgetting those that are (a run
 * deleted since counts as finished). */
static size_t in_flight(sy_store *st, int64_t *ids, size_t *n)
{
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        sy_run_record r;
        if (sy_store_get_run(st, ids[i], &r) != SY_OK)
            continue;
        if (!sy_run_state_terminal(r.state))
            ids[kept++] = ids[i];
        sy_run_record_clear(&r);
    }
    *n = kept;
    return kept;
}

static int dry_run(sy_service *sv, const sy_backfill *b)
{
    size_t would = 0;
    for (size_t i = 0; i < b->n; i++) {
        char when[40], err[512];
        bool fired;
        int64_t run;
        if (sy_backfill_tick_run(sv->store, b, i, &fired, &run, err, sizeof err) != SY_OK) {
            fprintf(stderr, "switchyard: backfill: %s\n", err);
            return SY_EXIT_FAIL;
        }
        sy_time_format(b->ticks[i] / 1000, 0, when, sizeof when);
        if (!fired)
            would++, printf("%s  would run\n", when);
        else if (run)
            printf("%s  has run %lld\n", when, (long long)run);
        else
            printf("%s  fired (its run deleted since)\n", when);
    }
    printf("backfill: %zu of %zu tick%s would run (dry run: nothing submitted)\n", would, b->n,
           b->n == 1 ? "" : "s");
    return SY_EXIT_OK;
}

static int fire_all(sy_service *sv, const sy_backfill *b, size_t max_active)
{
    int64_t *live = sy_xmalloc((max_active + 1) * sizeof *live);
    size_t n_live = 0, submitted = 0;
    int rc = SY_EXIT_OK;
    for (size_t i = 0; i < b->n && rc == SY_EXIT_OK; i++) {
        /* Hosts finish runs; this only watches, every 200 ms. */
        while (in_flight(sv->store, live, &n_live) >= max_active)
            usleep(200 * 1000);
        char when[40], err[512];
        bool fired;
        int64_t run;
        sy_time_format(b->ticks[i] / 1000, 0, when, sizeof when);
        if (sy_backfill_fire(sv->store, b, i, sy_clock_now_ms(), &fired, &run, err,
                             sizeof err) != SY_OK) {
            fprintf(stderr, "switchyard: backfill: tick %s: %s\n", when, err);
            rc = SY_EXIT_FAIL;
        } else if (fired) {
            live[n_live++] = run;
            submitted++;
            printf("%s  run %lld\n", when, (long long)run);
        } else {
            printf("%s  already fired (run %lld): not again\n", when, (long long)run);
        }
        fflush(stdout);
    }
    printf("backfill: %zu run%s submitted, %zu tick%s had one already\n", submitted,
           submitted == 1 ? "" : "s", b->n - submitted, b->n - submitted == 1 ? "" : "s");
    free(live);
    return rc;
}

int sy_cmd_backfill(const sy_cli *cli, int argc, char **argv)
{
    backfill_args a;
    int rc = parse(argc, argv, &a);
    if (rc != SY_EXIT_OK)
        return rc;
    sy_service sv;
    rc = sy_cli_open(cli, SY_SETUP_WORKFLOWS | SY_SETUP_SKIP_BAD_WORKFLOWS, true, &sv);
    if (rc != SY_EXIT_OK)
        return rc;
    char err[1024];
    sy_backfill b = {0};
    const sy_workflow *wf = sy_setup_workflow(sy_service_setup(&sv), a.wf, err, sizeof err);
    if (!wf || (!a.dry_run && sy_service_check_durable(&sv, err, sizeof err) != SY_OK) ||
        sy_backfill_plan(wf, a.from, a.to, sy_clock_schedule_ms(), &b, err, sizeof err) != SY_OK) {
        sy_backfill_free(&b);
        sy_service_close(&sv);
        return sy_cli_usage_error("backfill", "%s", err);
    }
    rc = a.dry_run ? dry_run(&sv, &b) : fire_all(&sv, &b, (size_t)a.max_active);
    sy_backfill_free(&b);
    sy_service_close(&sv);
    return rc;
}
