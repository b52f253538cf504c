/* The dependency graph of a workflow: task ids, `after` resolved into
 * indices, children, a stable topological order, and one cycle named when
 * there is no order.  Sized for workflows of a million tasks: ids are
 * found in a hash table, the order is a heap, the search for a cycle uses
 * its own stack. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/internal.h"

void sy_wf_after_free(sy_wf_after *a, size_t n_tasks)
{
    for (size_t i = 0; a && i < n_tasks; i++)
        free(a[i].v);
    free(a);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        sy_oom("building the task graph");
    }
    return p;
}

const char *sy_wf_task_label(const sy_task_def *t, size_t i, char *buf, size_t len)
{
    if (t->id)
        sy_concat(buf, len, "task '", t->id, "'", (char *)NULL);
    else
        snprintf(buf, len, "task %zu", i + 1);
    return buf;
}

/* --- ids --------------------------------------------------------------------------- */

/* An open-addressing table over the first task of each id: a workflow
 * whose tasks each name a hundred others resolves a few hundred thousand
 * `after` entries.  Filled in task order, so a later task that reuses an
 * id meets the first one there (a sort found those before: 0.19 s of a
 * million-task load). */
typedef struct id_index {
    const sy_task_def **slot; /* mask + 1 entries, NULL when empty */
    const sy_task_def *tasks; /* the workflow's: a slot's index is its offset */
    size_t mask;
} id_index;

/* The slot of `id`: the one holding it, or the empty one it would go in. */
static size_t id_slot(const id_index *ix, const char *id)
{
    size_t k = (size_t)sy_fnv1a(SY_FNV_START, id) & ix->mask;
    while (ix->slot[k] && strcmp(ix->slot[k]->id, id) != 0)
        k = (k + 1) & ix->mask;
    return k;
}

/* The first task called `id`, or -1. */
static long find_id(const id_index *ix, const char *id)
{
    size_t k = id_slot(ix, id);
    return ix->slot[k] ? (long)(ix->slot[k] - ix->tasks) : -1;
}

/* Indexes the ids and reports each later task that reuses one, in file
 * order. */
static int index_ids(const sy_workflow *wf, id_index *ix, const char *file,
                     sy_diags *d)
{
    size_t cap = 16;
    while (cap < 2 * wf->n_tasks)
        cap *= 2;
    ix->slot = xcalloc(cap, sizeof *ix->slot);
    ix->tasks = wf->tasks;
    ix->mask = cap - 1;
    int errors = 0;
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *t = &wf->tasks[i];
        if (!t->id)
            continue;
        size_t k = id_slot(ix, t->id);
        if (!ix->slot[k]) {
            ix->slot[k] = t;
            continue;
        }
        int at = ix->slot[k]->line;
        if (at > 0)
            sy_error(d, file, t->line, "duplicate task id '%s' (first defined at line %d)",
                     t->id, at);
        else
            sy_error(d, file, t->line, "duplicate task id '%s' (tasks %zu and %zu)",
                     t->id, (size_t)(ix->slot[k] - ix->tasks) + 1, i + 1);
        errors++;
    }
    return errors;
}

/* --- after -> deps ----------------------------------------------------------------- */

/* Task i's deps go at *next in wf->edges. */
static int resolve_task(sy_workflow *wf, size_t i, const sy_wf_after *a,
                        const id_index *ix, size_t *seen, size_t *next, const char *file,
                        sy_diags *d)
{
    sy_task_def *t = &wf->tasks[i];
    char who[160] = "";
    t->deps = wf->edges + *next;
    *next += a->n;
    int errors = 0;
    for (size_t k = 0; k < a->n; k++) {
        const sy_wf_ref *r = &a->v[k];
        long j = find_id(ix, r->id);
        if (j >= 0 && (size_t)j != i && seen[j] != i + 1) {
            seen[j] = i + 1;
            t->deps[t->n_deps++] = (size_t)j;
            continue;
        }
        if (!who[0]) /* only for a message: a million tasks need none */
            sy_wf_task_label(t, i, who, sizeof who);
        if (j < 0)
            sy_error(d, file, r->line, "%s: 'after' names unknown task '%s'", who, r->id);
        else if ((size_t)j == i)
            sy_error(d, file, r->line, "%s cannot run after itself ('after' names '%s')",
                     who, r->id);
        else
            sy_error(d, file, r->line, "%s names '%s' twice in 'after'", who, r->id);
        errors++;
    }
    return errors;
}

/* The children lists go in wf->edges from `next` on. */
static void link_children(sy_workflow *wf, size_t next)
{
    size_t n = wf->n_tasks;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < wf->tasks[i].n_deps; k++)
            wf->tasks[wf->tasks[i].deps[k]].n_children++;
    for (size_t i = 0; i < n; i++) {
        wf->tasks[i].children = wf->edges + next;
        next += wf->tasks[i].n_children;
        wf->tasks[i].n_children = 0;
    }
    /* Filling in task order keeps every children list in file order. */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < wf->tasks[i].n_deps; k++) {
            sy_task_def *p = &wf->tasks[wf->tasks[i].deps[k]];
            p->children[p->n_children++] = i;
        }
}

/* --- order: Kahn's algorithm, smallest index first ------------------------------------ */

typedef struct heap {
    size_t *v;
    size_t n;
} heap;

static void heap_push(heap *h, size_t x)
{
    size_t i = h->n++;
    while (i > 0 && h->v[(i - 1) / 2] > x) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

static size_t heap_pop(heap *h)
{
    size_t top = h->v[0], last = h->v[--h->n], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1] < h->v[c])
            c++;
        if (h->v[c] >= last)
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = last;
    return top;
}

/* Returns how many tasks got a place: fewer than n means a cycle. */
static size_t topo_order(sy_workflow *wf)
{
    size_t n = wf->n_tasks, placed = 0;
    size_t *indeg = xcalloc(n, sizeof *indeg);
    heap h = {xcalloc(n, sizeof(size_t)), 0};
    wf->topo = xcalloc(n, sizeof *wf->topo);
    for (size_t i = 0; i < n; i++)
        if ((indeg[i] = wf->tasks[i].n_deps) == 0)
            heap_push(&h, i);
    while (h.n > 0) {
        size_t u = heap_pop(&h);
        wf->topo[placed++] = u;
        const sy_task_def *t = &wf->tasks[u];
        for (size_t k = 0; k < t->n_children; k++)
            if (--indeg[t->children[k]] == 0)
                heap_push(&h, t->children[k]);
    }
    free(h.v);
    free(indeg);
    return placed;
}

/* --- one cycle, by depth-first search ----------------------------------------------- */

/* Beyond this many tasks a cycle is shown by its two ends. */
#define CYCLE_SHOWN 12

static size_t put_id(char *out, size_t off, const char *sep, const char *id)
{
    size_t n = strlen(sep) + strlen(id);
    if (out)
        sprintf(out + off, "%s%s", sep, id);
    return off + n;
}

/* "cycle: a -> b -> c -> a" for the stack path from `v` up to its top;
 * a long one as "cycle: a -> ... -> l -> ... (N more) -> w -> ... -> a". */
static size_t cycle_write(const sy_workflow *wf, const size_t *path, size_t n,
                          char *out)
{
    size_t off = put_id(out, 0, "cycle: ", wf->tasks[path[0]].id);
    for (size_t k = 1; k < n; k++) {
        if (n > 2 * CYCLE_SHOWN && k == CYCLE_SHOWN) {
            char more[48];
            snprintf(more, sizeof more, "... (%zu more)", n - 2 * CYCLE_SHOWN);
            off = put_id(out, off, " -> ", more);
            k = n - CYCLE_SHOWN;
        }
        off = put_id(out, off, " -> ", wf->tasks[path[k]].id);
    }
    return put_id(out, off, " -> ", wf->tasks[path[0]].id);
}

static char *cycle_text(const sy_workflow *wf, const size_t *stack, size_t depth,
                        size_t v)
{
    size_t from = depth;
    while (from > 0 && stack[from - 1] != v)
        from--;
    const size_t *path = stack + from - 1;
    size_t n = depth - from + 1;
    char *out = sy_xmalloc(cycle_write(wf, path, n, NULL) + 1);
    cycle_write(wf, path, n, out);
    return out;
}

/* Following children (a -> b: b runs after a) from each task in file
 * order, the first edge back into the current path closes a cycle. */
static int find_cycle(const sy_workflow *wf, const sy_wf_after *after,
                      const char *file, sy_diags *d)
{
    size_t n = wf->n_tasks;
    unsigned char *color = xcalloc(n, 1); /* 0 new, 1 on the path, 2 done */
    size_t *stack = xcalloc(n, sizeof *stack), *pos = xcalloc(n, sizeof *pos);
    int found = 0;
    for (size_t s = 0; s < n && !found; s++) {
        if (color[s])
            continue;
        size_t depth = 0;
        stack[depth++] = s;
        color[s] = 1;
        while (depth > 0 && !found) {
            size_t u = stack[depth - 1];
            const sy_task_def *t = &wf->tasks[u];
            if (pos[u] == t->n_children) {
                color[u] = 2;
                depth--;
                continue;
            }
            size_t v = t->children[pos[u]++];
            if (color[v] == 1) {
                char *text = cycle_text(wf, stack, depth, v);
                sy_error(d, file, after[v].line, "%s", text);
                free(text);
                found = 1;
            } else if (color[v] == 0) {
                color[v] = 1;
                stack[depth++] = v;
            }
        }
    }
    free(color);
    free(stack);
    free(pos);
    return found;
}

int sy_wf_graph(sy_workflow *wf, const sy_wf_after *after, const char *file,
                sy_diags *d)
{
    id_index ix;
    int errors = index_ids(wf, &ix, file, d);
    /* Every `after` entry once as a dependency at most, and each
     * dependency once as a child: twice the entries hold both. */
    size_t entries = 0;
    for (size_t i = 0; i < wf->n_tasks; i++)
        entries += after[i].n;
    wf->edges = xcalloc(2 * entries + 1, sizeof *wf->edges);
    size_t *seen = xcalloc(wf->n_tasks, sizeof *seen);
    size_t next = 0;
    for (size_t i = 0; i < wf->n_tasks; i++)
        errors += resolve_task(wf, i, &after[i], &ix, seen, &next, file, d);
    free(seen);
    free(ix.slot);
    link_children(wf, next);
    if (topo_order(wf) < wf->n_tasks)
        errors += find_cycle(wf, after, file, d);
    return errors;
}
