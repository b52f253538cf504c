/* A task's input: the run's initial context merged with the outputs of all
 * its ancestors in topological order (later wins, objects merge).
 *
 * Built from context trees (workflow/context_tree.h): the context after a
 * task is the merge of its direct dependencies' contexts and its own
 * output, so a dispatch costs what its dependencies' contexts hold, never
 * the size of the run or of the task's ancestry.  The context after a task
 * is kept once the task is settled: terminal, with every dependency
 * settled, so nothing behind it can still change.  An unsettled one (a
 * dependency still running under one_success, say) is worked out again
 * each time it is needed. */
#include "engine/input.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "workflow/context_tree.h"

/* Each task's place in the topological order, counted from 1 (0 is the
 * initial context). */
static const uint32_t *positions(sy_live_run *r)
{
    if (!r->position) {
        r->position = sy_xmalloc((r->wf->n_tasks ? r->wf->n_tasks : 1) * sizeof *r->position);
        for (size_t i = 0; i < r->wf->n_tasks; i++)
            r->position[r->wf->topo[i]] = (uint32_t)i + 1;
    }
    return r->position;
}

/* The context after task i, worked out this call or kept. */
static sy_context_tree *after(const sy_live_run *r, size_t i, uint32_t stamp)
{
    const sy_live_task *t = &r->t[i];
    return t->settled ? t->after : t->visit == stamp ? t->scratch : NULL;
}

static bool known(const sy_live_run *r, size_t i, uint32_t stamp)
{
    return r->t[i].settled || r->t[i].visit == stamp;
}

/* The merge of the dependencies' contexts (the initial context for a
 * task without any); a new reference, NULL when out of memory.  *settled
 * (when not NULL): every dependency is.  A context is never empty of writes (the initial
 * one is at its root), so a merge gives NULL only for want of memory. */
static sy_context_tree *merge_deps(sy_live_run *r, size_t idx, uint32_t stamp, bool *settled)
{
    const sy_task_def *d = &r->wf->tasks[idx];
    bool all = true;
    if (settled)
        *settled = true;
    if (d->n_deps == 0)
        return sy_context_tree_ref(r->initial);
    sy_context_tree *in = NULL;
    for (size_t k = 0; k < d->n_deps; k++) {
        all = all && r->t[d->deps[k]].settled;
        if (settled)
            *settled = all;
        sy_context_tree *m = sy_context_tree_merge(in, after(r, d->deps[k], stamp));
        sy_context_tree_unref(in);
        if (!(in = m))
            return NULL;
    }
    return in;
}

/* Keeps the context after task i, now final.  A dependency whose
 * dependents are all settled is needed by nobody any more (they keep their
 * own contexts), so its tree goes.  A task settles when a dependent's
 * input is worked out, so the trees of tasks whose dependents never run
 * (leaves, skipped branches) stay until the run ends. */
static void settle(sy_live_run *r, size_t i, sy_context_tree *tree)
{
    sy_live_task *t = &r->t[i];
    const sy_task_def *d = &r->wf->tasks[i];
    t->settled = true;
    t->children_left = d->n_children;
    if (d->n_children > 0)
        t->after = tree;
    else
        sy_context_tree_unref(tree);
    for (size_t k = 0; k < d->n_deps; k++) {
        sy_live_task *dep = &r->t[d->deps[k]];
        if (dep->children_left > 0 && --dep->children_left == 0) {
            sy_context_tree_unref(dep->after);
            dep->after = NULL;
        }
    }
}

/* Works out the context after task i, its dependencies known.  False
 * when out of memory. */
static bool resolve(sy_live_run *r, size_t i, uint32_t stamp, const uint32_t *pos)
{
    sy_live_task *t = &r->t[i];
    bool deps_settled;
    sy_context_tree *tree = merge_deps(r, i, stamp, &deps_settled);
    if (tree && t->output) {
        sy_context_tree *out = sy_context_tree_from_object(t->output, pos[i]);
        sy_context_tree *m = out ? sy_context_tree_merge(tree, out) : NULL;
        sy_context_tree_unref(out);
        sy_context_tree_unref(tree);
        tree = m;
    }
    if (!tree)
        return false;
    t->visit = stamp;
    if (deps_settled && sy_task_state_terminal(t->state)) {
        settle(r, i, tree);
    } else {
        t->scratch = tree;
        r->walk[r->n_scratch++] = i; /* dropped when this call ends */
    }
    return true;
}

/* Pushes task i's own step (when `expanded`), then its dependencies not
 * known yet.  False when out of memory. */
static bool push_deps(sy_live_run *r, size_t i, int expanded, uint32_t stamp, size_t *sp)
{
    const sy_task_def *d = &r->wf->tasks[i];
    size_t need = *sp + d->n_deps + 1;
    if (need > r->stack_cap) {
        size_t cap = need > 2 * r->stack_cap ? need : 2 * r->stack_cap;
        size_t *stack = realloc(r->stack, cap * sizeof *stack);
        if (!stack)
            return false;
        r->stack = stack;
        r->stack_cap = cap;
    }
    if (expanded)
        r->stack[(*sp)++] = 2 * i + 1;
    for (size_t k = 0; k < d->n_deps; k++)
        if (!known(r, d->deps[k], stamp))
            r->stack[(*sp)++] = 2 * d->deps[k];
    return true;
}

/* Makes the context after every dependency of idx known: a depth-first
 * walk that stops at settled tasks, so it reaches only what can still
 * change (nothing, once the dependencies are settled). */
static bool resolve_deps(sy_live_run *r, size_t idx, uint32_t stamp)
{
    /* walk lists the scratch trees made this call (each task is resolved
     * once a call); the stack's entries are 2 * task + (dependencies
     * pushed), and a task may be pushed by each of its dependents. */
    if (!r->walk)
        r->walk = sy_xmalloc((r->wf->n_tasks ? r->wf->n_tasks : 1) * sizeof *r->walk);
    const uint32_t *pos = positions(r);
    size_t sp = 0;
    r->n_scratch = 0;
    if (!push_deps(r, idx, 0, stamp, &sp))
        return false;
    while (sp > 0) {
        size_t top = r->stack[--sp], i = top / 2;
        if (known(r, i, stamp))
            continue;
        if (top % 2) {
            if (!resolve(r, i, stamp, pos))
                return false;
            continue;
        }
        if (!push_deps(r, i, 1, stamp, &sp))
            return false;
    }
    return true;
}

json_t *sy_engine_input_json(sy_live_run *r, size_t idx)
{
    if (r->n_with_output == 0)
        return json_deep_copy(r->context);
    if (!r->initial && !(r->initial = sy_context_tree_from_object(r->context, 0)))
        return NULL;
    uint32_t stamp = ++r->stamp;
    if (stamp == 0) { /* wrapped: reset every mark once */
        for (size_t i = 0; i < r->wf->n_tasks; i++)
            r->t[i].visit = 0;
        stamp = r->stamp = 1;
    }
    sy_context_tree *in = resolve_deps(r, idx, stamp) ? merge_deps(r, idx, stamp, NULL) : NULL;
    json_t *ctx = in ? sy_context_tree_json(in) : NULL;
    sy_context_tree_unref(in);
    for (size_t i = 0; i < r->n_scratch; i++) {
        sy_context_tree_unref(r->t[r->walk[i]].scratch);
        r->t[r->walk[i]].scratch = NULL;
    }
    return ctx;
}

static bool fits(const sy_live_run *r, size_t len, char *err, size_t err_len)
{
    size_t max = r->e->o.max_context_bytes;
    if (len > max)
        sy_errf(err, err_len, "input context is %zu bytes, more than max_context_bytes %zu",
                len, max);
    return len <= max;
}

/* An element's input: its map's input context (less the list mapped
 * over), with `item` and `map_index`. */
static char *element_input(sy_live_run *r, size_t slot, char *err, size_t err_len)
{
    const sy_live_task *t = &r->t[slot];
    const sy_live_map *m = &r->maps[t->map];
    const sy_task_def *d = &r->wf->tasks[m->idx];
    json_t *ctx = m->base ? json_copy(m->base) : NULL;
    json_t *item = ctx ? sy_map_item(d, m->list, t->elem) : NULL;
    char *text = NULL;
    if (item) {
        json_object_set_new(ctx, "item", item);
        json_object_set_new(ctx, "map_index", json_integer(t->elem));
        text = json_dumps(ctx, JSON_COMPACT);
    }
    json_decref(ctx);
    if (!text)
        sy_oom("building the input of a task of run %lld", (long long)r->id);
    if (!fits(r, strlen(text), err, err_len)) {
        free(text);
        return NULL;
    }
    return text;
}

char *sy_engine_input(sy_live_run *r, size_t idx, bool *borrowed, char *err, size_t err_len)
{
    if (sy_live_is_slot(r, idx)) {
        *borrowed = false;
        return element_input(r, idx, err, err_len);
    }
    if (r->n_with_output == 0) {
        *borrowed = true;
        return fits(r, strlen(r->context_text), err, err_len) ? r->context_text : NULL;
    }
    *borrowed = false;
    json_t *ctx = sy_engine_input_json(r, idx);
    char *text = ctx ? json_dumps(ctx, JSON_COMPACT) : NULL;
    json_decref(ctx);
    if (!text)
        sy_oom("building the input of a task of run %lld", (long long)r->id);
    if (!fits(r, strlen(text), err, err_len)) {
        free(text);
        return NULL;
    }
    return text;
}

void sy_engine_input_free(sy_live_run *r)
{
    for (size_t i = 0; r->wf && i < r->wf->n_tasks; i++)
        sy_context_tree_unref(r->t[i].after);
    sy_context_tree_unref(r->initial);
    free(r->position);
    free(r->walk);
    free(r->stack);
}
