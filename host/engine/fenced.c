/* Fenced writes: refusals, and events under the claim and the token. */
#include "engine/fenced.h"

#include <stdlib.h>

#include "base/log.h"
#include "base/util.h"

bool sy_fenced_refused(sy_live_run *r, int rc)
{
    if (rc != SY_STORE_EFENCED)
        return false;
    sy_engine *e = r->e;
    e->counters.writes_refused++;
    /* The first refusal of a turn gives the reason; the run is dropped
     * (and logged) once, after the commit (engine.c). */
    if (!r->fenced) {
        r->fenced = true;
        free(r->fenced_why);
        r->fenced_why = sy_xstrdup(sy_store_errmsg(e->o.store));
    }
    return true;
}

bool sy_fenced_lease_past(const sy_live_run *r, int64_t now)
{
    if (r->lost || (r->finished && !r->dirty))
        return false;
    /* At the deadline itself another host may claim it already. */
    return now >= r->lease_until;
}

void sy_live_event(sy_live_run *r, size_t idx, uint32_t attempt,
                   const char *kind, const char *detail)
{
    sy_engine *e = r->e;
    if (r->lost || r->fenced)
        return;
    int64_t now = e->now();
    if (sy_fenced_lease_past(r, now)) {
        e->lease_past = true;
        return;
    }
    /* An element's events go to its map's task, saying which element. */
    char *text = NULL;
    if (sy_live_is_slot(r, idx)) {
        const sy_live_task *t = &r->t[idx];
        text = sy_asprintf("[%lld] %s", (long long)t->elem, detail ? detail : "");
        detail = text;
        idx = r->maps[t->map].idx;
    }
    int rc = sy_store_add_event(e->o.store, r->id, &r->fence,
                                r->t[idx].token_stored, (uint32_t)idx, attempt,
                                kind, detail, now);
    free(text);
    if (rc != SY_OK && !sy_fenced_refused(r, rc))
        sy_log(SY_LOG_WARN, "store", "run %lld: cannot record a %s event: %s",
               (long long)r->id, kind, sy_store_errmsg(e->o.store));
}
