/* The strategy cancel_in_progress at dispatch (engine/preempt.h). */
#include "engine/preempt.h"

#include <stdint.h>
#include <stdio.h>

#include "base/log.h"
#include "engine/attempt.h"
#include "engine/fenced.h"
#include "engine/run.h"
#include "store/preempt.h"

typedef struct {
    sy_engine *e;
    size_t n;
} poll_arg;

/* The live index of the task or element `h` names in run r, or SIZE_MAX
 * when it is not live here: an element is found in its map's slots
 * (engine/map.c), which one holds it being known only here. */
static size_t live_index(const sy_live_run *r, const sy_slot_holder *h)
{
    if (h->idx >= r->wf->n_tasks)
        return SIZE_MAX;
    if (h->elem < 0)
        return h->idx;
    for (size_t k = 0; k < r->n_maps; k++) {
        const sy_live_map *m = &r->maps[k];
        if (m->idx != h->idx)
            continue;
        for (size_t i = 0; i < m->n_slots; i++)
            if (r->t[m->first_slot + i].elem == h->elem)
                return m->first_slot + i;
    }
    return SIZE_MAX;
}

/* Cancels the attempt request r names, when it is still this host's
 * current attempt of a plain task or of a map's element.  An element
 * cancelled counts in its map as a cancelled element does (engine/map.c):
 * the others run on, and the map ends Cancelled, or Failed when one
 * failed. */
static int on_request(void *arg, const sy_cancel_request *req)
{
    poll_arg *p = arg;
    sy_live_run *r = p->e->runs;
    while (r && r->id != req->holder.run_id)
        r = r->next;
    if (!r || r->lost || r->fenced || r->finished)
        return 0;
    size_t idx = live_index(r, &req->holder);
    if (idx == SIZE_MAX)
        return 0;
    sy_live_task *t = &r->t[idx];
    sy_attempt *a = t->current;
    if (t->state != SY_TASK_RUNNING || !a || t->token != req->holder.token)
        return 0;
    t->current = NULL;
    r->n_running--;
    sy_live_event(r, idx, a->number, "cancelled", req->why);
    sy_attempt_cancel(a);
    if (sy_live_set_state(r, idx, SY_TASK_CANCELLED)) {
        sy_live_set_error(t, req->why);
        sy_live_task_terminal(r, idx);
    }
    p->n++;
    return 0;
}

size_t sy_preempt_poll(sy_engine *e, int64_t now)
{
    poll_arg p = {e, 0};
    if (sy_store_list_cancel_requests(e->o.store, e->o.owner, now, on_request, &p) != SY_OK)
        sy_log(SY_LOG_WARN, "store", "cannot read cancel requests: %s",
               sy_store_errmsg(e->o.store));
    return p.n;
}
