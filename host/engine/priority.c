/* The order of a turn's Ready tasks (engine/priority.h). */
#include "engine/priority.h"

#include <stdlib.h>

#include "base/util.h"
#include "workflow/workflow.h"

int64_t sy_priority_base(const sy_live_run *r, size_t idx)
{
    return (int64_t)sy_live_def(r, idx)->priority + r->priority;
}

int64_t sy_priority_aged(int64_t base, uint32_t waited_ms, int64_t aging_ms)
{
    return base + (int64_t)waited_ms / (aging_ms > 0 ? aging_ms : 1);
}

bool sy_priority_any(sy_live_run *r)
{
    if (!r->prioritized) {
        bool any = r->priority != 0;
        for (size_t i = 0; !any && i < r->wf->n_tasks; i++)
            any = r->wf->tasks[i].priority != 0;
        r->prioritized = any ? 2 : 1;
    }
    return r->prioritized == 2;
}

typedef struct ranked {
    int64_t key;   /* effective priority */
    size_t seq;    /* position in the queue: readiness, for ties */
    sy_task_ref ref;
} ranked;

static int by_priority(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void sy_priority_order(sy_engine *e, size_t n, uint32_t now_ms)
{
    sy_task_queue *q = &e->ready;
    if (!q->ranked || n < 2) {
        q->ranked = 0;
        return;
    }
    q->ranked = 0;
    ranked *v = malloc(n * sizeof *v);
    if (!v)
        return; /* offered in order of readiness this turn: late, not lost */
    for (size_t i = 0; i < n; i++) {
        sy_task_ref ref = q->v[(q->head + i) % q->cap];
        const sy_live_task *t = &ref.run->t[ref.idx];
        /* Modulo 2^32 ms, as the dispatch latency: a wait under 49 days
         * comes out right. */
        v[i] = (ranked){sy_priority_aged(sy_priority_base(ref.run, ref.idx),
                                         (uint32_t)(now_ms - t->ready_ms),
                                         e->o.priority_aging_ms),
                        i, ref};
    }
    qsort(v, n, sizeof *v, by_priority);
    for (size_t i = 0; i < n; i++)
        q->v[(q->head + i) % q->cap] = v[i].ref;
    free(v);
}
