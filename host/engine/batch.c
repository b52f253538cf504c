/* One loop turn's changes: the dirty lists, their write, the Ready queue. */
#include "engine/batch.h"

#include <stdlib.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/cache_put.h"
#include "engine/fenced.h"
#include "engine/observe.h"
#include "engine/priority.h"

void *sy_engine_grow(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return v;
    void *nv = sy_grow(v, cap, need, elem, 64);
    if (!nv)
        sy_oom("growing the engine's lists");
    return nv;
}

void sy_batch_mark_task(sy_live_run *r, size_t idx)
{
    sy_engine *e = r->e;
    if (r->t[idx].dirty)
        return;
    r->t[idx].dirty = true;
    e->dirty = sy_engine_grow(e->dirty, &e->cap_dirty, e->n_dirty + 1, sizeof *e->dirty);
    e->dirty[e->n_dirty++] = (sy_task_ref){r, idx};
}

void sy_batch_mark_run(sy_live_run *r) { r->dirty = true; }

bool sy_batch_any_run_dirty(const sy_engine *e)
{
    for (const sy_live_run *r = e->runs; r; r = r->next)
        if (r->dirty)
            return true;
    return false;
}

/* An element written terminal is done with: its slot is free for the
 * map's next element, given by the next turn (engine/map.c). */
static void free_slot(sy_live_run *r, sy_live_task *t)
{
    sy_live_map *m = &r->maps[t->map];
    if (t->state == SY_TASK_FAILED && !m->first_error)
        m->first_error = sy_asprintf("[%lld] %s", (long long)t->elem,
                                     t->error ? t->error : "failed");
    else if (t->state != SY_TASK_FAILED && t->state != SY_TASK_COMPLETED && !r->cancelling &&
             !m->first_cancel)
        m->first_cancel = sy_asprintf("[%lld] %s", (long long)t->elem,
                                      t->error ? t->error : sy_task_state_name(t->state));
    free(t->error);
    t->error = NULL;
    free(t->waiting_for);
    t->waiting_for = NULL;
    json_decref(t->output);
    t->output = NULL;
    free(t->output_text);
    t->output_text = NULL;
    t->elem = -1;
    m->busy--;
    m->pending = true;
    r->maps_pending = true;
    r->e->maps_pending = true;
}

/* The turn's task-row writes, sent together (store.h,
 * sy_store_update_tasks), and its element-row writes, sent together
 * (sy_store_update_elements). */
typedef struct {
    sy_engine *e;
    sy_task_ref *ref;
    bool *refused;
} task_writes;

/* A refused write leaves the batch usable for the other runs; nothing
 * more is tried for its run, dropped after the commit (engine.c) with the
 * store's reason in its one log line. */
static void refused_write(void *arg, size_t i, int status)
{
    task_writes *w = arg;
    w->refused[i] = true;
    if (!sy_fenced_refused(w->ref[i].run, status)) {
        sy_log(SY_LOG_ERROR, "store", "cannot record task: %s",
               sy_store_errmsg(w->e->o.store));
        w->e->fatal = true;
    }
}

static sy_task_record record_of(const sy_live_task *t, size_t idx)
{
    return (sy_task_record){
        .idx = (uint32_t)idx,
        .state = t->state,
        .attempts = t->attempts,
        .failures = t->failures,
        .recoveries = t->recoveries,
        .executor = (char *)t->instance_name,
        .error = t->error,
        .output = t->output_text,
        .ready_at = t->ready_at,
        .started = t->started,
        .finished = t->finished,
        .fence = t->token,
        .waiting_for = t->waiting_for,
    };
}

/* Room for a turn's writes of one kind: task rows (`w`) or element rows
 * (`ew`), each with its record and the live slot it came from. */
typedef struct {
    size_t n;
    sy_store_task_write *w;
    sy_store_element_write *ew;
    sy_task_record *rec;
    task_writes tw;
} writes;

static void writes_init(writes *x, sy_engine *e, size_t m, bool elements)
{
    size_t k = m ? m : 1;
    *x = (writes){0};
    if (elements)
        x->ew = sy_xmalloc(k * sizeof *x->ew);
    else
        x->w = sy_xmalloc(k * sizeof *x->w);
    x->rec = sy_xmalloc(k * sizeof *x->rec);
    x->tw = (task_writes){e, sy_xmalloc(k * sizeof *x->tw.ref), sy_xmalloc(k * sizeof(bool))};
}

static void writes_free(writes *x)
{
    free(x->w);
    free(x->ew);
    free(x->rec);
    free(x->tw.ref);
    free(x->tw.refused);
}

/* What follows a write that landed: its token is the stored one, its
 * observers are told, and an element written terminal frees its slot
 * (told before the slot forgets its element and error). */
static void landed(sy_engine *e, sy_task_ref ref)
{
    sy_live_task *t = &ref.run->t[ref.idx];
    t->token_stored = t->token;
    sy_observe_task(e, ref.run, ref.idx);
    if (sy_live_is_slot(ref.run, ref.idx) && sy_task_state_terminal(t->state))
        free_slot(ref.run, t);
}

static size_t write_tasks(sy_engine *e, int64_t now)
{
    size_t m = e->n_dirty;
    writes tasks, elems;
    writes_init(&tasks, e, m, false);
    writes_init(&elems, e, m, true);
    for (size_t i = 0; i < m; i++) {
        sy_live_run *r = e->dirty[i].run;
        size_t idx = e->dirty[i].idx;
        sy_live_task *t = &r->t[idx];
        t->dirty = false;
        if (r->fenced || r->lost)
            continue;
        bool slot = sy_live_is_slot(r, idx);
        writes *x = slot ? &elems : &tasks;
        size_t n = x->n++;
        x->rec[n] = record_of(t, slot ? (size_t)r->maps[t->map].idx : idx);
        if (slot)
            x->ew[n] = (sy_store_element_write){r->id, &r->fence, t->token_stored, t->elem,
                                                &x->rec[n]};
        else
            x->w[n] = (sy_store_task_write){r->id, &r->fence, t->token_stored, &x->rec[n]};
        x->tw.ref[n] = e->dirty[i];
        x->tw.refused[n] = false;
    }
    int rc = sy_store_update_elements(e->o.store, elems.ew, elems.n, refused_write, &elems.tw);
    if (rc == SY_OK)
        rc = sy_store_update_tasks(e->o.store, tasks.w, tasks.n, refused_write, &tasks.tw);
    if (rc != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "cannot record tasks: %s", sy_store_errmsg(e->o.store));
        e->fatal = true;
    } else {
        for (size_t i = 0; i < elems.n; i++)
            if (!elems.tw.refused[i])
                landed(e, elems.tw.ref[i]);
        for (size_t i = 0; i < tasks.n; i++) {
            if (tasks.tw.refused[i])
                continue;
            sy_task_ref ref = tasks.tw.ref[i];
            if (ref.run->cache_keys && ref.run->t[ref.idx].state == SY_TASK_COMPLETED)
                sy_cache_put_completed(ref.run, ref.idx, now);
            landed(e, ref);
        }
    }
    size_t rows = elems.n + tasks.n;
    writes_free(&tasks);
    writes_free(&elems);
    return rows;
}

size_t sy_batch_write(sy_engine *e, int64_t now)
{
    size_t rows = write_tasks(e, now);
    e->n_dirty = 0;
    for (sy_live_run *r = e->runs; r; r = r->next) {
        if (!r->dirty)
            continue;
        /* A refused write rolled the batch back: what follows in it would
         * only be refused for "no batch is open", each with a line. */
        if (e->fatal)
            break;
        r->dirty = false;
        if (r->fenced || r->lost)
            continue;
        int rc = sy_store_update_run(e->o.store, r->id, &r->fence, r->state, r->error, now);
        rows++;
        if (rc == SY_OK)
            sy_observe_run(e, r);
        else if (!sy_fenced_refused(r, rc)) {
            sy_log(SY_LOG_ERROR, "store", "cannot record run: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
    }
    return rows;
}

void sy_ready_push(sy_engine *e, sy_live_run *r, size_t idx)
{
    sy_task_queue *q = &e->ready;
    if (q->n == q->cap) {
        /* Unwrap into a doubled array. */
        size_t nc = q->cap ? q->cap * 2 : 256;
        sy_task_ref *nv = sy_xmalloc(nc * sizeof *nv);
        for (size_t i = 0; i < q->n; i++)
            nv[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = nv;
        q->head = 0;
        q->cap = nc;
    }
    q->v[(q->head + q->n) % q->cap] = (sy_task_ref){r, idx};
    q->n++;
    q->ranked += sy_priority_any(r) || e->n_fair;
}

sy_task_ref sy_ready_pop(sy_engine *e)
{
    sy_task_queue *q = &e->ready;
    sy_task_ref t = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    return t;
}

void sy_ready_forget_run(sy_engine *e, const sy_live_run *r)
{
    sy_task_queue *q = &e->ready;
    size_t keep = 0;
    for (size_t i = 0; i < q->n; i++) {
        sy_task_ref t = q->v[(q->head + i) % q->cap];
        if (t.run != r)
            q->v[(q->head + keep++) % q->cap] = t;
    }
    q->n = keep;
}
