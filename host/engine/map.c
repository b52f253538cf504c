/* Dynamic fan-out: a mapped task's map, its slots and elements, its end. */
#include "engine/map.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/fenced.h"
#include "engine/input.h"
#include "engine/route.h"
#include "engine/run.h"

static sy_live_map *map_of(sy_live_run *r, size_t idx)
{
    for (size_t i = 0; i < r->n_maps; i++)
        if (r->maps[i].idx == idx)
            return &r->maps[i];
    return NULL;
}

static void mark_pending(sy_live_run *r, sy_live_map *m)
{
    m->pending = true;
    r->maps_pending = true;
    r->e->maps_pending = true;
}

/* Takes the list (or range) out of the map's input context `ctx` (a new
 * reference, consumed): the elements get `item` instead, so that an
 * element's input does not hold the whole list.  False with a reason. */
static bool bind_list(sy_live_run *r, sy_live_map *m, json_t *ctx, char *err, size_t len)
{
    const sy_task_def *d = &r->wf->tasks[m->idx];
    const json_t *list;
    int64_t n;
    if (!ctx) {
        sy_errf(err, len, "out of memory building the input context");
        return false;
    }
    if (!sy_map_size(d, ctx, &list, &n, err, len)) {
        json_decref(ctx);
        return false;
    }
    if (m->started && n != m->size) {
        sy_errf(err, len, "task '%s' maps over %" PRId64 " elements now, %" PRId64
                " when its map started: its input changed", d->id, n, m->size);
        json_decref(ctx);
        return false;
    }
    m->size = n;
    m->list = list ? json_incref((json_t *)list) : NULL;
    if (d->map) {
        /* The objects of a built context are its own (only arrays and
         * scalars are shared with the outputs), so the list can be taken
         * out of its parent. */
        const char *leaf = strrchr(d->map, '.');
        json_t *parent = ctx;
        if (leaf) {
            char *up = strndup(d->map, (size_t)(leaf - d->map));
            parent = up ? (json_t *)sy_json_path(ctx, up) : NULL;
            free(up);
            leaf++;
        } else {
            leaf = d->map;
        }
        if (json_is_object(parent))
            json_object_del(parent, leaf);
    }
    m->base = ctx;
    return true;
}

/* Gives a free slot element m->next. */
static void fill_slot(sy_live_run *r, sy_live_map *m, size_t slot)
{
    sy_live_task *t = &r->t[slot];
    uint32_t which = t->map;
    memset(t, 0, sizeof *t);
    t->map = which;
    t->elem = (int32_t)m->next++;
    sy_route_copy(r, slot, m->idx);
    m->busy++;
    sy_live_task_ready(r, slot, 0);
}

static void fill(sy_live_run *r, sy_live_map *m)
{
    if (r->cancelling || m->stopped || r->e->drain || r->e->winding_down)
        return;
    for (size_t i = 0; i < m->n_slots && m->next < m->size; i++)
        if (r->t[m->first_slot + i].elem < 0)
            fill_slot(r, m, m->first_slot + i);
}

void sy_map_start(sy_live_run *r, size_t idx, int64_t now)
{
    sy_live_map *m = map_of(r, idx);
    sy_live_task *t = &r->t[idx];
    char err[512];
    if (!m || !bind_list(r, m, sy_engine_input_json(r, idx), err, sizeof err)) {
        if (!m)
            snprintf(err, sizeof err, "bug: task '%s' has no map", r->wf->tasks[idx].id);
        sy_live_fail_now(r, idx, err);
        return;
    }
    if (m->size == 0) {
        /* As Airflow does: nothing to run is no failure, and its
         * dependents decide by their trigger rules. */
        if (sy_live_set_state(r, idx, SY_TASK_SKIPPED)) {
            sy_live_set_error(t, "maps over an empty list: no element to run");
            sy_live_task_terminal(r, idx);
        }
        return;
    }
    int rc = sy_store_put_map(r->e->o.store, r->id, &r->fence, (uint32_t)idx, m->size);
    if (rc != SY_OK) {
        if (!sy_fenced_refused(r, rc)) {
            sy_log(SY_LOG_ERROR, "store", "cannot record a map: %s",
                   sy_store_errmsg(r->e->o.store));
            r->e->fatal = true;
        }
        return;
    }
    if (!sy_live_set_state(r, idx, SY_TASK_RUNNING))
        return;
    t->attempts++;
    t->started = now;
    m->started = true;
    /* Its elements are made by the next turn, this one's write (the
     * map's row) done. */
    mark_pending(r, m);
}

struct reduce {
    json_t *list;
    int64_t expect;
    bool bad;
};

static int reduce_one(void *arg, int64_t elem, const sy_task_record *row)
{
    struct reduce *c = arg;
    json_t *out = row->output ? json_loads(row->output, 0, NULL) : json_object();
    if (elem != c->expect++ || !out) {
        json_decref(out);
        c->bad = true;
        return 1;
    }
    json_array_append_new(c->list, out);
    return 0;
}

/* The outputs of every element, in order, read back from the store. */
static bool reduce(sy_live_run *r, sy_live_map *m, char *err, size_t len)
{
    sy_live_task *t = &r->t[m->idx];
    struct reduce c = {json_array(), 0, false};
    int rc = sy_store_list_elements(r->e->o.store, r->id, (uint32_t)m->idx, false, reduce_one,
                                    &c);
    if (rc != SY_OK || c.bad || c.expect != m->size) {
        sy_errf(err, len, "cannot read back the outputs of its %" PRId64 " elements: %s",
                m->size, rc != SY_OK ? sy_store_errmsg(r->e->o.store) : "rows missing");
        json_decref(c.list);
        return false;
    }
    json_t *out = json_object();
    json_object_set_new(out, r->wf->tasks[m->idx].id, c.list);
    char *text = json_dumps(out, JSON_COMPACT);
    if (!text || strlen(text) > r->e->o.max_context_bytes) {
        sy_errf(err, len, "the outputs of its %" PRId64 " elements are %zu bytes, more than "
                "max_context_bytes %zu", m->size, text ? strlen(text) : 0,
                r->e->o.max_context_bytes);
        free(text);
        json_decref(out);
        return false;
    }
    t->output = out;
    t->output_text = text;
    r->n_with_output++;
    return true;
}

static void finish(sy_live_run *r, sy_live_map *m)
{
    size_t idx = m->idx;
    sy_live_task *t = &r->t[idx];
    char msg[1024];
    if (t->state != SY_TASK_RUNNING)
        return;
    if (r->cancelling && (m->ended < m->size || m->cancelled > 0)) {
        /* Cancelled before every element was made, or some were. */
        if (sy_live_set_state(r, idx, SY_TASK_CANCELLED))
            sy_live_set_error(t, "cancelled with its run");
    } else if (m->failed > 0 || m->ended < m->size) {
        snprintf(msg, sizeof msg, "%" PRId64 " of %" PRId64 " elements failed; the first: %s",
                 m->failed, m->size, m->first_error ? m->first_error : "?");
        if (sy_live_set_state(r, idx, SY_TASK_FAILED))
            sy_live_set_error(t, msg);
    } else if (m->cancelled > 0) {
        /* Its run was not cancelled: an element was, or was dropped
         * (a limit's strategy), and says why. */
        snprintf(msg, sizeof msg, "%" PRId64 " of %" PRId64 " elements did not run to their end;"
                 " the first: %s", m->cancelled, m->size,
                 m->first_cancel ? m->first_cancel : "?");
        if (sy_live_set_state(r, idx, SY_TASK_CANCELLED))
            sy_live_set_error(t, msg);
    } else if (!reduce(r, m, msg, sizeof msg)) {
        if (sy_live_set_state(r, idx, SY_TASK_FAILED))
            sy_live_set_error(t, msg);
    } else if (sy_live_set_state(r, idx, SY_TASK_COMPLETED)) {
        sy_live_set_error(t, NULL);
    }
    json_decref(m->base);
    json_decref(m->list);
    m->base = m->list = NULL;
    sy_live_task_terminal(r, idx);
}

void sy_map_turn(sy_engine *e)
{
    if (!e->maps_pending)
        return;
    e->maps_pending = false;
    for (sy_live_run *r = e->runs; r; r = r->next) {
        if (!r->maps_pending || r->lost || r->fenced)
            continue;
        r->maps_pending = false;
        for (size_t i = 0; i < r->n_maps; i++) {
            sy_live_map *m = &r->maps[i];
            if (!m->pending || !m->started)
                continue;
            m->pending = false;
            fill(r, m);
            /* Over when every element has ended, or no more will be made
             * (a cancelled run, a map whose list is gone) and those made
             * have. */
            bool over = m->ended == m->size ||
                        ((r->cancelling || m->stopped) && m->next == m->ended);
            if (over && m->busy == 0)
                finish(r, m);
        }
    }
}

/* --- loading ----------------------------------------------------------------- */

struct load {
    sy_live_run *r;
    sy_live_map *m;
    size_t next_slot;
    bool overflow;
    char **hosts; /* r->n_t entries */
};

static int load_map(void *arg, const sy_map_record *rec)
{
    struct load *c = arg;
    sy_live_map *m = map_of(c->r, rec->idx);
    if (!m)
        return 0;
    m->started = true;
    m->size = rec->size;
    m->next = rec->created;
    m->failed = rec->count[SY_TASK_FAILED];
    m->cancelled = rec->count[SY_TASK_SKIPPED] + rec->count[SY_TASK_CANCELLED] +
                   rec->count[SY_TASK_DROPPED];
    m->ended = rec->count[SY_TASK_COMPLETED] + m->failed + m->cancelled;
    /* Slots for what was open, however many that was. */
    int64_t open = rec->created - m->ended;
    if (open > (int64_t)m->n_slots)
        m->n_slots = (size_t)open;
    return 0;
}

static int load_element(void *arg, int64_t elem, const sy_task_record *row)
{
    struct load *c = arg;
    sy_live_map *m = c->m;
    if (c->next_slot >= m->first_slot + m->n_slots) {
        c->overflow = true;
        return 1;
    }
    sy_live_task *t = &c->r->t[c->next_slot++];
    t->elem = (int32_t)elem;
    t->state = row->state;
    t->attempts = row->attempts;
    t->failures = row->failures;
    t->recoveries = row->recoveries;
    t->ready_at = row->ready_at;
    t->started = row->started;
    t->token = t->token_stored = row->fence;
    t->error = row->error ? sy_xstrdup(row->error) : NULL;
    t->waiting_for = row->state == SY_TASK_WAITING && row->waiting_for
                         ? sy_xstrdup(row->waiting_for)
                         : NULL;
    if (row->state == SY_TASK_RUNNING && row->host)
        c->hosts[t - c->r->t] = sy_xstrdup(row->host);
    m->busy++;
    return 0;
}

/* The list of a map started before, from the input context again. */
static void rebind(sy_live_run *r, sy_live_map *m)
{
    char err[512];
    if (bind_list(r, m, sy_engine_input_json(r, m->idx), err, sizeof err))
        return;
    /* Its elements cannot be given their items: what runs fails, no more
     * are made, and the map fails. */
    m->stopped = true;
    if (!m->first_error)
        m->first_error = sy_xstrdup(err);
    for (size_t i = 0; i < m->n_slots; i++) {
        size_t slot = m->first_slot + i;
        sy_live_task *t = &r->t[slot];
        if (t->elem >= 0 && !sy_task_state_terminal(t->state))
            sy_live_fail_now(r, slot, err);
    }
}

int sy_map_load(sy_live_run *r, char ***hosts, char *err, size_t err_len)
{
    const sy_workflow *wf = r->wf;
    r->n_t = wf->n_tasks;
    for (size_t i = 0; i < wf->n_tasks; i++)
        r->n_maps += wf->tasks[i].mapped;
    if (r->n_maps == 0)
        return 0;
    r->maps = calloc(r->n_maps, sizeof *r->maps);
    if (!r->maps)
        sy_oom("loading a run's maps");
    for (size_t i = 0, k = 0; i < wf->n_tasks; i++) {
        if (!wf->tasks[i].mapped)
            continue;
        r->maps[k].idx = i;
        /* A map that ended needs no slots. */
        r->maps[k++].n_slots =
            sy_task_state_terminal(r->t[i].state) ? 0 : r->e->o.map_window;
    }
    struct load c = {r, NULL, 0, false, NULL};
    int rc = sy_store_list_maps(r->e->o.store, r->id, load_map, &c);
    if (rc != SY_OK) {
        sy_errf(err, err_len, "%s", sy_store_errmsg(r->e->o.store));
        return rc;
    }
    size_t total = wf->n_tasks;
    for (size_t k = 0; k < r->n_maps; k++) {
        r->maps[k].first_slot = total;
        total += r->maps[k].n_slots;
    }
    sy_live_task *t = realloc(r->t, total * sizeof *t);
    if (!t)
        sy_oom("loading a run's maps");
    memset(t + wf->n_tasks, 0, (total - wf->n_tasks) * sizeof *t);
    r->t = t;
    r->n_t = total;
    char **h = realloc(*hosts, total * sizeof *h);
    if (!h)
        sy_oom("loading a run's maps");
    if (!*hosts)
        memset(h, 0, wf->n_tasks * sizeof *h);
    memset(h + wf->n_tasks, 0, (total - wf->n_tasks) * sizeof *h);
    *hosts = c.hosts = h;
    for (size_t k = 0; k < r->n_maps; k++) {
        sy_live_map *m = &r->maps[k];
        for (size_t i = 0; i < m->n_slots; i++) {
            r->t[m->first_slot + i].elem = -1;
            r->t[m->first_slot + i].map = (uint32_t)k;
        }
        if (!m->started || sy_task_state_terminal(r->t[m->idx].state))
            continue;
        c.m = m;
        c.next_slot = m->first_slot;
        rc = sy_store_list_elements(r->e->o.store, r->id, (uint32_t)m->idx, true,
                                    load_element, &c);
        if (rc != SY_OK || c.overflow) {
            sy_errf(err, err_len, "%s", rc != SY_OK ? sy_store_errmsg(r->e->o.store)
                                                    : "more open elements than slots");
            return rc != SY_OK ? rc : SY_EINVAL;
        }
    }
    return 0;
}

/* Called once the run is linked and routed: binds the lists of maps that
 * had started and makes them pending, so the next turn goes on with
 * them. */
void sy_map_resume(sy_live_run *r)
{
    for (size_t k = 0; k < r->n_maps; k++) {
        sy_live_map *m = &r->maps[k];
        if (r->t[m->idx].state != SY_TASK_RUNNING)
            continue;
        if (!m->started) {
            /* Running, its map not recorded: it starts again. */
            sy_live_set_state(r, m->idx, SY_TASK_READY);
            continue;
        }
        for (size_t i = 0; i < m->n_slots; i++) {
            sy_live_task *t = &r->t[m->first_slot + i];
            if (t->elem >= 0)
                sy_route_copy(r, m->first_slot + i, m->idx);
        }
        rebind(r, m);
        mark_pending(r, m);
    }
}

void sy_map_free(sy_live_run *r)
{
    for (size_t k = 0; k < r->n_maps; k++) {
        json_decref(r->maps[k].base);
        json_decref(r->maps[k].list);
        free(r->maps[k].first_error);
        free(r->maps[k].first_cancel);
    }
    free(r->maps);
}
