/* The grant order of a contended key (engine/grant.h). */
#include "engine/grant.h"

#include <stdlib.h>
#include <string.h>

static int64_t aged(const sy_grant_waiter *w, int64_t now, int64_t aging_ms)
{
    int64_t waited = now > w->since ? now - w->since : 0;
    return w->priority + waited / (aging_ms > 0 ? aging_ms : 1);
}

/* The order within one class of priority, and the classes by priority:
 * a total order, so that qsort may use it. */
static int by_class(const void *pa, const void *pb)
{
    const sy_grant_waiter *a = pa, *b = pb;
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->share != b->share)
        return a->share < b->share ? -1 : 1;
    if (a->since != b->since)
        return a->since < b->since ? -1 : 1;
    if (a->run_id != b->run_id)
        return a->run_id < b->run_id ? -1 : 1;
    if (a->idx != b->idx)
        return a->idx < b->idx ? -1 : 1;
    return (a->elem > b->elem) - (a->elem < b->elem);
}

bool sy_grant_before(const sy_grant_waiter *a, const sy_grant_waiter *b, int64_t now,
                     int64_t aging_ms)
{
    if (a->priority == b->priority)
        return by_class(a, b) < 0;
    int64_t x = aged(a, now, aging_ms), y = aged(b, now, aging_ms);
    if (x != y)
        return x > y;
    return a->priority > b->priority; /* the higher class on a tie */
}

bool sy_grant_order(sy_grant_waiter *v, size_t n, int64_t now, int64_t aging_ms)
{
    if (n < 2)
        return true;
    qsort(v, n, sizeof *v, by_class);
    /* The classes: [start[c], end[c]); start moves along as the merge
     * takes their heads. */
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        k += v[i].priority != v[i - 1].priority;
    if (k == 1)
        return true;
    size_t *start = malloc(k * sizeof *start), *end = malloc(k * sizeof *end);
    sy_grant_waiter *out = malloc(n * sizeof *out);
    if (!start || !end || !out) {
        free(start), free(end), free(out);
        return false;
    }
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].priority != v[i - 1].priority) {
            if (c)
                end[c - 1] = i;
            start[c++] = i;
        }
    }
    end[k - 1] = n;
    for (size_t i = 0; i < n; i++) {
        size_t best = k;
        for (c = 0; c < k; c++)
            if (start[c] < end[c] &&
                (best == k || sy_grant_before(&v[start[c]], &v[start[best]], now, aging_ms)))
                best = c;
        out[i] = v[start[best]++];
    }
    memcpy(v, out, n * sizeof *v);
    free(start), free(end), free(out);
    return true;
}

size_t sy_grant_first(const sy_grant_waiter *v, size_t n, int64_t free)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].n <= free)
            return i;
    return n;
}
