/* The order of a turn's Ready tasks (engine/priority.h). */
#include "engine/priority.h"

#include <stdlib.h>

#include "base/util.h"
#include "engine/fair.h"
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
    int64_t base;  /* priority before aging: its class */
    size_t seq;    /* position in the queue: readiness, for ties */
    sy_task_ref ref;
} ranked;

static int by_class(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->base != y->base)
        return x->base > y->base ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int64_t effective(const sy_engine *e, sy_task_ref ref, uint32_t now_ms)
{
    /* Modulo 2^32 ms, as the dispatch latency: a wait under 49 days comes
     * out right. */
    return sy_priority_aged(sy_priority_base(ref.run, ref.idx),
                            (uint32_t)(now_ms - ref.run->t[ref.idx].ready_ms),
                            e->o.priority_aging_ms);
}

/* The tasks in classes of equal priority, each class in order of
 * readiness, or with tenants taking turns by weight (fair.h); then the
 * classes merged, the head with the highest aged priority first (the
 * higher class on a tie).  Within a class aging changes nothing (the
 * older task is the further aged); across classes it lets a task that
 * has waited long enough overtake newer ones of a higher priority. */
void sy_priority_order(sy_engine *e, size_t n, uint32_t now_ms)
{
    sy_task_queue *q = &e->ready;
    if (!q->ranked || n < 2) {
        q->ranked = 0;
        return;
    }
    q->ranked = 0;
    ranked *v = malloc(n * sizeof *v);
    sy_task_ref *refs = malloc(n * sizeof *refs);
    size_t *start = malloc((n + 1) * sizeof *start);
    if (!v || !refs || !start) {
        free(v), free(refs), free(start);
        return; /* offered in order of readiness this turn: late, not lost */
    }
    for (size_t i = 0; i < n; i++) {
        sy_task_ref ref = q->v[(q->head + i) % q->cap];
        v[i] = (ranked){sy_priority_base(ref.run, ref.idx), i, ref};
    }
    qsort(v, n, sizeof *v, by_class);
    size_t k = 0; /* classes: [start[c], start[c + 1]) of refs */
    for (size_t i = 0; i < n; i++) {
        refs[i] = v[i].ref;
        if (i == 0 || v[i].base != v[i - 1].base)
            start[k++] = i;
    }
    start[k] = n;
    for (size_t c = 0; c < k; c++)
        sy_fair_interleave(e, refs + start[c], start[c + 1] - start[c]);
    /* The merge: start[c] moves along class c. */
    size_t *end = malloc(k * sizeof *end);
    if (!end) {
        for (size_t i = 0; i < n; i++)
            q->v[(q->head + i) % q->cap] = refs[i];
        free(v), free(refs), free(start);
        return;
    }
    for (size_t c = 0; c < k; c++)
        end[c] = start[c + 1];
    for (size_t i = 0; i < n; i++) {
        size_t best = k;
        int64_t top = 0;
        for (size_t c = 0; c < k; c++) {
            if (start[c] == end[c])
                continue;
            int64_t eff = effective(e, refs[start[c]], now_ms);
            if (best == k || eff > top) {
                best = c;
                top = eff;
            }
        }
        q->v[(q->head + i) % q->cap] = refs[start[best]++];
    }
    free(end), free(v), free(refs), free(start);
}
