/* A schedule's past ticks fired on demand (service/backfill.h). */
#include "service/backfill.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "service/runs.h"
#include "store/keyed.h"
#include "workflow/tick.h"

void sy_backfill_free(sy_backfill *b)
{
    sy_tz_free(b->tz);
    free(b->ticks);
    memset(b, 0, sizeof *b);
}

/* The first tick strictly after `ms`, in ms; INT64_MAX when none. */
static int64_t next_tick(const sy_backfill *b, int64_t ms)
{
    int64_t sec = ms >= 0 ? ms / 1000 : -((999 - ms) / 1000);
    int64_t t = sy_cron_next(&b->cron, b->tz, sec);
    return t == INT64_MAX ? INT64_MAX : t * 1000;
}

int sy_backfill_plan(const sy_workflow *wf, int64_t from_ms, int64_t to_ms, int64_t now_ms,
                     sy_backfill *b, char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    b->wf = wf;
    if (!wf->schedule) {
        sy_errf(err, err_len, "workflow '%s' has no schedule: there are no ticks to backfill",
                wf->name);
        return SY_EINVAL;
    }
    if (from_ms > to_ms) {
        sy_errf(err, err_len, "--from is after --to: the range holds no tick");
        return SY_EINVAL;
    }
    if (to_ms > now_ms) {
        sy_errf(err, err_len, "--to is after now: the live schedule fires the ticks to come");
        return SY_EINVAL;
    }
    char why[512] = "";
    if (sy_cron_parse(wf->schedule, &b->cron, why, sizeof why) ||
        !(b->tz = sy_tz_load(wf->timezone, why, sizeof why))) {
        sy_errf(err, err_len, "workflow '%s': schedule \"%s\": %s", wf->name, wf->schedule, why);
        return SY_EINVAL;
    }
    size_t cap = 0;
    for (int64_t t = next_tick(b, from_ms - 1); t <= to_ms; t = next_tick(b, t)) {
        if (b->n == SY_BACKFILL_MAX_TICKS) {
            sy_errf(err, err_len, "the range holds more than %d ticks of \"%s\": backfill a "
                    "shorter one at a time", SY_BACKFILL_MAX_TICKS, wf->schedule);
            return SY_EINVAL;
        }
        if (b->n == cap) {
            cap = cap ? cap * 2 : 64;
            int64_t *grown = realloc(b->ticks, cap * sizeof *b->ticks);
            if (!grown)
                sy_oom("planning a backfill of %zu ticks", cap);
            b->ticks = grown;
        }
        b->ticks[b->n++] = t;
    }
    return SY_OK;
}

int sy_backfill_tick_run(sy_store *st, const sy_backfill *b, size_t i, bool *fired,
                         int64_t *run_id, char *err, size_t err_len)
{
    int rc = sy_store_tick_run(st, b->wf->tenant, b->wf->name, b->ticks[i], fired, run_id);
    if (rc != SY_OK)
        sy_errf(err, err_len, "%s", sy_store_errmsg(st));
    return rc;
}

struct fire {
    int64_t tick, now_ms;
    bool *fired;
    int64_t *run_id;
};

static int create_tick(sy_store *st, const sy_store_new_run *r, void *arg)
{
    struct fire *f = arg;
    return sy_store_backfill_tick(st, r, f->tick, f->now_ms, f->fired, f->run_id);
}

int sy_backfill_fire(sy_store *st, const sy_backfill *b, size_t i, int64_t now_ms,
                     bool *fired, int64_t *run_id, char *err, size_t err_len)
{
    char *ctx = sy_tick_context(b->wf, b->tz, b->ticks[i]);
    if (!ctx) {
        sy_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    struct fire f = {b->ticks[i], now_ms, fired, run_id};
    int rc = sy_runs_record_with(st, b->wf, ctx, create_tick, &f, err, err_len);
    free(ctx);
    return rc;
}
