/* Keeping named events and trigger rows to events_keep
 * (service/events_keep.h). */
#include "service/events_keep.h"

#include <stdlib.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "workflow/start_trigger.h"

static int oldest_event(void *arg, const sy_named_event *ev)
{
    *(int64_t *)arg = ev->created;
    return 0;
}

static int oldest_run(void *arg, const sy_finished_run *r)
{
    *(int64_t *)arg = r->finished;
    return 0;
}

/* What the pass needs to know: per trigger, and per event name a trigger
 * listens for, the oldest time still needed. */
typedef struct {
    sy_trigger_need *triggers;
    size_t n_triggers;
    char **keys;
    sy_event_need *needs;
    size_t n_needs;
} needs;

static void needs_free(needs *n)
{
    for (size_t i = 0; i < n->n_triggers; i++)
        free(n->keys[i]);
    free(n->keys);
    free(n->triggers);
    free(n->needs);
}

/* Trigger `t` of `wf`: its oldest unsettled item over every part, or
 * `cutoff` when that is older. */
static int need_of(sy_store *st, const sy_workflow *wf, const sy_start_trigger *t, int64_t now,
                   int64_t cutoff, needs *n)
{
    char *key = sy_start_trigger_key(wf, t);
    sy_trigger_record rec;
    int rc = sy_store_trigger_open(st, key, now, &rec);
    int64_t need = cutoff;
    for (size_t i = 0; rc == SY_OK && i < t->n_parts; i++) {
        const sy_trigger_part *p = &t->parts[i];
        int64_t oldest = INT64_MAX;
        rc = p->event ? sy_store_trigger_events(st, key, p->event, rec.since, 1, oldest_event,
                                                &oldest)
                      : sy_store_trigger_runs(st, key, wf->tenant, p->run, p->states,
                                              rec.since, 1, oldest_run, &oldest);
        if (oldest < need)
            need = oldest;
    }
    if (rc != SY_OK) {
        free(key);
        return rc;
    }
    n->keys[n->n_triggers] = key;
    n->triggers[n->n_triggers++] = (sy_trigger_need){.key = key, .since = need};
    for (size_t i = 0; i < t->n_parts; i++)
        if (t->parts[i].event)
            n->needs[n->n_needs++] = (sy_event_need){.name = t->parts[i].event, .from = need};
    return SY_OK;
}

int sy_service_events_prune(sy_service *sv, int64_t now, sy_named_pruned *pruned, char *err,
                            size_t err_len)
{
    *pruned = (sy_named_pruned){0};
    const sy_setup *s = sy_service_setup(sv);
    int64_t keep = s->cfg.events_keep_ms;
    if (!sv->store || keep <= 0)
        return SY_OK;
    int64_t cutoff = now - keep;
    size_t n_triggers = 0, n_parts = 0;
    for (size_t i = 0; i < s->n_wfs; i++)
        for (size_t j = 0; j < s->wfs[i]->n_triggers; j++) {
            n_triggers++;
            n_parts += s->wfs[i]->triggers[j].n_parts;
        }
    needs n = {.triggers = sy_xmalloc((n_triggers + 1) * sizeof *n.triggers),
               .keys = sy_xmalloc((n_triggers + 1) * sizeof *n.keys),
               .needs = sy_xmalloc((n_parts + 1) * sizeof *n.needs)};
    int rc = SY_OK;
    for (size_t i = 0; rc == SY_OK && i < s->n_wfs; i++)
        for (size_t j = 0; rc == SY_OK && j < s->wfs[i]->n_triggers; j++)
            rc = need_of(sv->store, s->wfs[i], &s->wfs[i]->triggers[j], now, cutoff, &n);
    if (rc == SY_OK)
        rc = sy_store_prune_named(sv->store, cutoff, n.triggers, n.n_triggers, n.needs,
                                  n.n_needs, pruned);
    if (rc != SY_OK)
        sy_errf(err, err_len, "%s", sy_store_errmsg(sv->store));
    needs_free(&n);
    return rc;
}

void sy_service_events_prune_logged(sy_service *sv)
{
    sy_named_pruned n;
    char err[512];
    if (sy_service_events_prune(sv, sy_clock_now_ms(), &n, err, sizeof err) != SY_OK)
        sy_log(SY_LOG_WARN, "events", "old named events not deleted: %s", err);
    else if (n.events || n.items || n.firings)
        sy_log(SY_LOG_INFO, "events",
               "older than events_keep and needed by no trigger, deleted: %zu named events, "
               "%zu settled trigger items, %zu trigger firings",
               n.events, n.items, n.firings);
}
