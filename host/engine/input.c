/* A task's input: the run's initial context merged with the outputs of all
 * its ancestors in topological order (later wins, objects merge). */
#include "engine/input.h"

#include <stdlib.h>
#include <string.h>

#include "workflow/context.h"
#include "base/util.h"

/* The ancestors of idx that produced output, by a DFS stamped with a per-run
 * generation so nothing needs clearing between calls. */
static size_t ancestors_with_output(sy_live_run *r, size_t idx, size_t *out, size_t *stack)
{
    const sy_workflow *wf = r->wf;
    uint32_t stamp = ++r->stamp;
    if (stamp == 0) { /* wrapped: reset every mark once */
        for (size_t i = 0; i < wf->n_tasks; i++)
            r->t[i].visit = 0;
        stamp = r->stamp = 1;
    }
    size_t n = 0, sp = 0;
    stack[sp++] = idx;
    while (sp > 0) {
        const sy_task_def *d = &wf->tasks[stack[--sp]];
        for (size_t i = 0; i < d->n_deps; i++) {
            size_t a = d->deps[i];
            if (r->t[a].visit == stamp)
                continue;
            r->t[a].visit = stamp;
            stack[sp++] = a;
            if (r->t[a].output)
                out[n++] = a;
        }
    }
    return n;
}

static const size_t *sort_pos;

static int by_topo(const void *a, const void *b)
{
    size_t x = sort_pos[*(const size_t *)a], y = sort_pos[*(const size_t *)b];
    return x < y ? -1 : x > y;
}

json_t *sy_engine_input_json(sy_live_run *r, size_t idx)
{
    json_t *ctx = json_deep_copy(r->context);
    if (!ctx || r->n_with_output == 0)
        return ctx;
    size_t n = r->wf->n_tasks;
    size_t *list = sy_xmalloc(n * sizeof *list);
    size_t *stack = sy_xmalloc(n * sizeof *stack);
    size_t *pos = stack; /* reused once the DFS is done */
    size_t k = ancestors_with_output(r, idx, list, stack);
    for (size_t i = 0; i < n; i++)
        pos[r->wf->topo[i]] = i;
    sort_pos = pos; /* loop thread only */
    qsort(list, k, sizeof *list, by_topo);
    for (size_t i = 0; i < k && ctx; i++)
        if (sy_json_merge(ctx, r->t[list[i]].output) != 0) {
            json_decref(ctx);
            ctx = NULL;
        }
    free(list);
    free(stack);
    return ctx;
}

char *sy_engine_input(sy_live_run *r, size_t idx, bool *borrowed, char *err, size_t err_len)
{
    size_t max = r->e->o.max_context_bytes;
    if (r->n_with_output == 0) {
        *borrowed = true;
        if (strlen(r->context_text) > max) {
            sy_errf(err, err_len, "input context is %zu bytes, more than max_context_bytes %zu",
                    strlen(r->context_text), max);
            return NULL;
        }
        return r->context_text;
    }
    *borrowed = false;
    json_t *ctx = sy_engine_input_json(r, idx);
    char *text = ctx ? json_dumps(ctx, JSON_COMPACT) : NULL;
    json_decref(ctx);
    if (!text) {
        sy_errf(err, err_len, "out of memory building the input context");
        return NULL;
    }
    size_t len = strlen(text);
    if (len > max) {
        free(text);
        sy_errf(err, err_len, "input context is %zu bytes, more than max_context_bytes %zu",
                len, max);
        return NULL;
    }
    return text;
}
