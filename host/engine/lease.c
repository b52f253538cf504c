/* A lapsed lease: finding it before a write, stopping, coming back. */
#include "engine/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/attempt.h"
#include "engine/fenced.h"
#include "engine/load.h"

static void lapse(sy_engine *e, const sy_live_run *late, int64_t now)
{
    size_t runs = 0, attempts = 0;
    for (sy_live_run *r = e->runs; r; r = r->next)
        runs += !r->finished;
    for (sy_attempt *a = e->live; a; a = a->live_next)
        attempts++;
    char line[1024];
    snprintf(line, sizeof line,
             "this host (%s) lost its lease: its clock reads %lld ms past its "
             "lease on run %lld (the process was stopped, the clock jumped or "
             "the store stalled its renewals), so another host may hold its "
             "runs now; it takes no more work, cancels its %zu attempt%s and "
             "writes nothing more for its %zu run%s; %s",
             e->o.owner, (long long)(now - late->lease_until), (long long)late->id,
             attempts, attempts == 1 ? "" : "s", runs, runs == 1 ? "" : "s",
             e->o.serve ? "it comes back as a new host once they are back"
                        : "this command ends");
    sy_log(SY_LOG_WARN, "engine", "%s", line);
    free(e->lapse_why);
    e->lapse_why = sy_xstrdup(line);
    e->lapsed = true;
    e->counters.lapses++;
    /* Quietly: the line above says it for every run.  A finished run has
     * nothing left to drop: its last write, if still to be made, is
     * forgotten with the others (lapsed_turn in engine.c). */
    for (sy_live_run *r = e->runs; r; r = r->next)
        if (!r->finished)
            sy_live_drop(r, NULL);
    /* The attempts that outlived their task (timed out) too: the executors
     * end their process groups. */
    for (sy_attempt *a = e->live; a; a = a->live_next)
        sy_attempt_cancel(a);
}

bool sy_lease_lapsed(sy_engine *e, int64_t now)
{
    if (e->lapsed)
        return true;
    e->lease_past = false;
    const sy_live_run *late = NULL;
    for (const sy_live_run *r = e->runs; r; r = r->next)
        if (sy_fenced_lease_past(r, now) && (!late || r->lease_until < late->lease_until))
            late = r;
    if (!late)
        return false;
    lapse(e, late, now);
    return true;
}

void sy_lease_forget_writes(sy_engine *e)
{
    for (size_t i = 0; i < e->n_dirty; i++)
        e->dirty[i].run->t[e->dirty[i].idx].dirty = false;
    e->n_dirty = 0;
    for (sy_live_run *r = e->runs; r; r = r->next)
        r->dirty = false;
}

void sy_lease_reregister(sy_engine *e)
{
    const char *was = e->o.owner;
    if (!e->owner_base)
        e->owner_base = sy_xstrdup(was);
    e->owner_gen++;
    /* The base id's "HOST:PID" stays in front, so hosts on this machine
     * still tell from the pid whether the process is alive. */
    char *now = sy_asprintf("%s.%u", e->owner_base, e->owner_gen);
    if (!now)
        sy_oom("naming the host anew");
    sy_log(SY_LOG_INFO, "engine",
           "this host comes back as %s (it was %s): the runs it held are for any "
           "host to take over", now, was);
    e->o.owner = now;
    free(e->owner_own);
    e->owner_own = now;
    e->lapsed = false;
}
