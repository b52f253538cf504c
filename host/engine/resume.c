/* Taking over an earlier host's attempt (engine/resume.h). */
#include "engine/resume.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "engine/attempt.h"
#include "engine/batch.h"
#include "engine/fenced.h"
#include "engine/run.h"

/* The instance the attempt ran on, when it exists in this configuration,
 * is healthy, and its plugin resumes attempts. */
static sy_instance_queue *resuming_queue(sy_engine *e, sy_live_task *t, const char *ran_on)
{
    sy_instance_queue *q = NULL;
    if (!ran_on)
        q = t->queue;
    for (size_t k = 0; ran_on && k < e->n_instances && !q; k++)
        if (strcmp(e->instances[k].entry->name, ran_on) == 0)
            q = &e->instances[k];
    if (!q || atomic_load_explicit(&q->entry->unhealthy, memory_order_relaxed))
        return NULL;
    const sy_executor *d = q->entry->desc;
    return SY_HAS_FIELD(d, sy_executor, resume) && d->resume ? q : NULL;
}

bool sy_resume_offer(sy_live_run *r, size_t idx, const char *ran_on, const char *host)
{
    sy_engine *e = r->e;
    sy_live_task *t = &r->t[idx];
    if (t->attempts == 0)
        return false;
    sy_instance_queue *q = resuming_queue(e, t, ran_on);
    if (!q)
        return false;
    /* The timeout runs from the attempt's start, not from the take-over:
     * an attempt past it is taken over only to be stopped at once. */
    const sy_task_def *d = sy_live_def(r, idx);
    int64_t timeout = d->timeout_ms > 0 ? d->timeout_ms : q->entry->max_task_ms, left = 0;
    if (timeout > 0) {
        left = t->started + timeout - e->now();
        if (left < 1)
            left = 1;
    }
    sy_instance_queue *before = t->queue;
    const char *before_name = t->instance_name;
    t->queue = q;
    t->instance_name = q->entry->name;
    char err[256];
    sy_attempt *a = sy_attempt_new(e, r, idx, err, sizeof err);
    if (!a) {
        /* No input (it is built again for the retry, which says why). */
        t->queue = before;
        t->instance_name = before_name;
        return false;
    }
    /* The same attempt, under a new token: the row names this host from
     * the next write on, and a write of the one that lost it is refused
     * by its token as by its claim. */
    a->number = t->attempts;
    a->task.attempt = a->number;
    a->task.timeout_ms = left;
    a->resumed_from = sy_xstrdup(host ? host : "its host");
    r->inflight++;
    r->n_running++;
    t->current = a;
    sy_batch_mark_task(r, idx);
    e->submit = sy_engine_grow(e->submit, &e->cap_submit, e->n_submit + 1, sizeof *e->submit);
    e->submit[e->n_submit++] = a;
    return true;
}

void sy_resume_taken(sy_attempt *a)
{
    sy_live_run *r = a->run;
    r->e->counters.resumed++;
    sy_live_event(r, a->idx, a->number, "resumed", a->resumed_from);
}

void sy_resume_refused(sy_attempt *a, int rc, const char *err)
{
    sy_live_run *r = a->run;
    sy_engine *e = r->e;
    sy_live_task *t = &r->t[a->idx];
    char msg[1024];
    e->counters.abandoned++;
    sy_live_event(r, a->idx, t->attempts, "abandoned", a->resumed_from);
    t->recoveries++;
    if (t->recoveries > e->o.max_recoveries) {
        snprintf(msg, sizeof msg, "lost with its host %u times; not retried again",
                 t->recoveries);
        sy_live_fail_now(r, a->idx, msg);
        return;
    }
    snprintf(msg, sizeof msg,
             "recovered: attempt %u was abandoned by %s; executor '%s' could not resume it "
             "(status %d): %s",
             t->attempts, a->resumed_from, a->queue->entry->name, rc,
             err && err[0] ? err : "no reason given");
    sy_live_set_error(t, msg);
    sy_live_task_ready(r, a->idx, 0);
}
