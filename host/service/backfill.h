/*
 * service/backfill.h -- a schedule's past ticks fired on demand: which
 * ticks of a workflow's schedule fall in a range, whether each has a run,
 * and firing one through the store (sy_store_backfill_tick), so that a
 * tick the live schedule or an earlier backfill fired is never fired
 * again.  How many run at once is the caller's (cli/backfill.c).
 *
 * Single-threaded, on whichever thread owns the store.
 */
#ifndef SY_BACKFILL_H
#define SY_BACKFILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/tz.h"
#include "store/store.h"
#include "workflow/cron.h"
#include "workflow/workflow.h"

/* The most ticks one backfill takes: a range that holds more is refused
 * (a typo in a year would otherwise submit millions of runs). */
#define SY_BACKFILL_MAX_TICKS 100000

typedef struct sy_backfill {
    const sy_workflow *wf; /* borrowed */
    sy_cron cron;
    sy_tz *tz;             /* owned: the schedule's zone */
    int64_t *ticks;        /* owned: ms since the epoch, oldest first */
    size_t n;
} sy_backfill;

/* The ticks of wf's schedule from `from_ms` to `to_ms`, both included,
 * into *b.  SY_EINVAL with a one-line reason in err: no schedule, an
 * empty range, a range reaching past `now_ms` (the live schedule fires
 * those), more than SY_BACKFILL_MAX_TICKS ticks.  Free *b with
 * sy_backfill_free either way. */
int sy_backfill_plan(const sy_workflow *wf, int64_t from_ms, int64_t to_ms, int64_t now_ms,
                     sy_backfill *b, char *err, size_t err_len);
void sy_backfill_free(sy_backfill *b);

/* Whether tick i was fired (live or backfilled), and its run (0: none
 * any more).  Reads only. */
int sy_backfill_tick_run(sy_store *st, const sy_backfill *b, size_t i, bool *fired,
                         int64_t *run_id, char *err, size_t err_len);

/* Fires tick i: a new Pending run with the tick's context, unless the
 * tick was fired already (*fired false, *run_id its run). */
int sy_backfill_fire(sy_store *st, const sy_backfill *b, size_t i, int64_t now_ms,
                     bool *fired, int64_t *run_id, char *err, size_t err_len);

#endif
