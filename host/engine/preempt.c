/* The strategy cancel_in_progress at dispatch (engine/preempt.h). */
#include "engine/preempt.h"

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

/* Cancels the attempt request r names, when it is still this host's
 * current attempt of a plain task (an element's is left to end: its slot
 * goes back with it). */
static int on_request(void *arg, const sy_cancel_request *req)
{
    poll_arg *p = arg;
    sy_live_run *r = p->e->runs;
    while (r && r->id != req->holder.run_id)
        r = r->next;
    if (!r || r->lost || r->fenced || r->finished || req->holder.elem >= 0 ||
        req->holder.idx >= r->wf->n_tasks)
        return 0;
    size_t idx = req->holder.idx;
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
