/* The order across hosts of a contended key (engine/waiters.h). */
#include "engine/waiters.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/fair.h"
#include "engine/grant.h"
#include "engine/key_index.h"
#include "engine/priority.h"
#include "store/waiters.h"

/* One tenant's holdings of a key, as read this turn and granted since. */
typedef struct {
    char *tenant;
    int64_t held;
    int64_t stride; /* its weight's (engine/fair.h) */
} holding;

/* The turn's view of one key. */
typedef struct {
    char *key;
    sy_grant_waiter *v; /* its live waiters in grant order */
    size_t n, cap;
    holding *h;         /* its holders' slots by tenant (only when n > 0) */
    size_t n_h, cap_h;
    int64_t free;       /* its free slots (only when n > 0) */
    int64_t read_at;    /* the clock when read: the order's `now` */
} key_view;

struct sy_waiters {
    key_view *keys; /* read this turn */
    size_t n_keys, cap_keys;
    sy_key_index index; /* of keys */
    size_t contended; /* views read this turn with waiters (a view's
                         waiters never come from 0 within the turn) */
    sy_slot_holder *ended; /* rows to delete at the end of the turn */
    size_t n_ended, cap_ended;
};

void sy_waiters_init(sy_engine *e)
{
    e->waiters = sy_xmalloc(sizeof *e->waiters);
    *e->waiters = (struct sy_waiters){0};
}

static void forget_view(struct sy_waiters *w)
{
    for (size_t i = 0; i < w->n_keys; i++) {
        key_view *k = &w->keys[i];
        free(k->key);
        free(k->v);
        for (size_t j = 0; j < k->n_h; j++)
            free(k->h[j].tenant);
        free(k->h);
    }
    w->n_keys = 0;
    w->contended = 0;
    sy_key_index_clear(&w->index);
}

void sy_waiters_free(sy_engine *e)
{
    struct sy_waiters *w = e->waiters;
    if (!w)
        return;
    forget_view(w);
    free(w->keys);
    sy_key_index_free(&w->index);
    free(w->ended);
    free(w);
    e->waiters = NULL;
}

static const char *key_at(const void *arg, size_t i)
{
    return ((const struct sy_waiters *)arg)->keys[i].key;
}

static key_view *find(struct sy_waiters *w, const char *key)
{
    ptrdiff_t i = sy_key_index_find_again(&w->index, key, key_at, w);
    return i < 0 ? NULL : &w->keys[i];
}

/* A task's row identity, as the store keeps it (a map's element under
 * its mapped task's index). */
static sy_slot_holder task_of(const sy_live_run *r, size_t idx)
{
    const sy_live_task *t = &r->t[idx];
    bool slot = sy_live_is_slot(r, idx);
    return (sy_slot_holder){r->id, (uint32_t)(slot ? r->maps[t->map].idx : idx),
                            slot ? (int64_t)t->elem : -1, 0};
}

/* `tenant`'s entry in k's holdings, added (holding nothing) when new. */
static uint32_t group_of(sy_engine *e, key_view *k, const char *tenant)
{
    for (size_t i = 0; i < k->n_h; i++)
        if (strcmp(k->h[i].tenant, tenant) == 0)
            return (uint32_t)i;
    k->h = sy_engine_grow(k->h, &k->cap_h, k->n_h + 1, sizeof *k->h);
    k->h[k->n_h] = (holding){sy_xstrdup(tenant), 0, sy_fair_stride(e, tenant)};
    return (uint32_t)k->n_h++;
}

/* The grant-order entry of task idx of r asking for `n` slots of k. */
static sy_grant_waiter entry_of(const sy_live_run *r, size_t idx, key_view *k, int64_t n,
                                int64_t since)
{
    sy_slot_holder t = task_of(r, idx);
    uint32_t g = group_of(r->e, k, r->wf->tenant);
    return (sy_grant_waiter){t.run_id, t.idx, t.elem, sy_priority_base(r, idx), since, n,
                             k->h[g].held * k->h[g].stride, g};
}

/* Every waiter's share from its tenant's holdings, and the order again:
 * after a grant of this turn, the next goes by the holdings with it. */
static void reorder(sy_engine *e, key_view *k)
{
    for (size_t i = 0; i < k->n; i++)
        k->v[i].share = k->h[k->v[i].group].held * k->h[k->v[i].group].stride;
    sy_grant_order(k->v, k->n, k->read_at, e->o.priority_aging_ms);
}

typedef struct {
    sy_engine *e;
    struct sy_waiters *w;
    size_t first; /* the views being read: keys[first..n_keys) */
    /* Each waiter's tenant, parallel to its view's v, until the shares
     * are known: one list per view being read. */
    char ***tenants;
} reading;

static int on_waiter(void *arg, const sy_slot_waiter *sw)
{
    reading *rd = arg;
    ptrdiff_t at = sy_key_index_find(&rd->w->index, sw->key, key_at, rd->w);
    if (at < 0 || (size_t)at < rd->first)
        return 0; /* not a key being read */
    key_view *k = &rd->w->keys[at];
    size_t j = (size_t)at - rd->first, cap = k->cap;
    k->v = sy_engine_grow(k->v, &k->cap, k->n + 1, sizeof *k->v);
    if (k->cap != cap) {
        rd->tenants[j] = realloc(rd->tenants[j], k->cap * sizeof *rd->tenants[j]);
        if (!rd->tenants[j])
            sy_oom("reading a key's waiters");
    }
    rd->tenants[j][k->n] = sy_xstrdup(sw->tenant);
    k->v[k->n++] = (sy_grant_waiter){sw->task.run_id, sw->task.idx, sw->task.elem,
                                     sw->priority, sw->since, sw->n, 0, 0};
    return 0;
}

typedef struct {
    sy_engine *e;
    key_view *k;
} share_arg;

static int on_share(void *arg, const char *tenant, int64_t held)
{
    share_arg *a = arg;
    uint32_t g = group_of(a->e, a->k, tenant); /* may move h */
    a->k->h[g].held = held;
    return 0;
}

/* Reads the views of the claims' keys not read yet this turn: one read
 * of their waiters, then, for each that has any, its holders. */
static int read_views(sy_engine *e, const sy_slot_claim *c, size_t n, int64_t now)
{
    struct sy_waiters *w = e->waiters;
    reading rd = {.e = e, .w = w, .first = w->n_keys};
    const char **keys = sy_xmalloc((n ? n : 1) * sizeof *keys);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (find(w, c[i].key))
            continue;
        w->keys = sy_engine_grow(w->keys, &w->cap_keys, w->n_keys + 1, sizeof *w->keys);
        w->keys[w->n_keys] =
            (key_view){.key = sy_xstrdup(c[i].key), .free = c[i].limit, .read_at = now};
        sy_key_index_add(&w->index, key_at, w);
        w->n_keys++;
        keys[m++] = c[i].key;
    }
    if (m == 0) {
        free(keys);
        return SY_OK;
    }
    rd.tenants = sy_xmalloc(m * sizeof *rd.tenants);
    memset(rd.tenants, 0, m * sizeof *rd.tenants);
    int status = sy_store_key_waiters(e->o.store, keys, m, now, on_waiter, &rd);
    for (size_t j = 0; j < m; j++) {
        key_view *k = &w->keys[rd.first + j];
        w->contended += k->n > 0;
        if (status == SY_OK && k->n > 0) {
            share_arg sa = {e, k};
            status = sy_store_key_shares(e->o.store, k->key, now, on_share, &sa);
            for (size_t i = 0; i < k->n_h; i++)
                k->free -= k->h[i].held;
            for (size_t i = 0; i < k->n; i++)
                k->v[i].group = group_of(e, k, rd.tenants[j][i]);
            reorder(e, k);
        }
        for (size_t i = 0; i < k->n; i++)
            free(rd.tenants[j][i]);
        free(rd.tenants[j]);
    }
    free(rd.tenants);
    free(keys);
    return status;
}

int sy_waiters_prepare(sy_engine *e, const sy_slot_claim *c, size_t n, int64_t now)
{
    return read_views(e, c, n, now);
}

/* Where task t is in k's waiters, or k->n. */
static size_t index_of(const key_view *k, sy_slot_holder t)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->v[i].run_id == t.run_id && k->v[i].idx == t.idx && k->v[i].elem == t.elem)
            return i;
    return k->n;
}

int sy_waiters_check(sy_live_run *r, size_t idx, const sy_slot_claim *c, size_t n, bool read,
                     int64_t now, size_t *blocked, size_t *position, size_t *count)
{
    sy_engine *e = r->e;
    *blocked = n;
    if (read && e->waiters->contended == 0)
        return SY_OK; /* nobody waits for any key read: the take decides */
    key_view *views[SY_SLOT_CLAIMS_MAX];
    bool missing = false;
    for (size_t i = 0; i < n; i++)
        missing |= !(views[i] = find(e->waiters, c[i].key));
    if (missing) {
        /* A key the turn's read (sy_waiters_prepare) did not name. */
        int status = read_views(e, c, n, now);
        if (status != SY_OK)
            return status;
        for (size_t i = 0; i < n; i++)
            views[i] = find(e->waiters, c[i].key);
    }
    sy_slot_holder t = task_of(r, idx);
    for (size_t i = 0; i < n; i++) {
        key_view *k = views[i];
        if (!k || k->n == 0)
            continue; /* nobody waits: the take decides, as ever */
        size_t at = index_of(k, t), first = sy_grant_first(k->v, k->n, k->free);
        if (at < k->n && at == first)
            continue;
        /* Asking for the first time: a waiter since now. */
        sy_grant_waiter me = entry_of(r, idx, k, c[i].n, now);
        int64_t aging = e->o.priority_aging_ms;
        if (at == k->n && c[i].n <= k->free &&
            (first == k->n || sy_grant_before(&me, &k->v[first], now, aging)))
            continue;
        *blocked = i;
        *position = at + 1;
        *count = k->n;
        if (at == k->n) {
            /* Its place among them, as it will be once registered. */
            *position = 1;
            for (size_t j = 0; j < k->n; j++)
                *position += sy_grant_before(&k->v[j], &me, now, aging);
            *count = k->n + 1;
        }
        return SY_OK;
    }
    return SY_OK;
}

int sy_waiters_taken(sy_live_run *r, size_t idx, const sy_slot_claim *c, size_t n)
{
    sy_engine *e = r->e;
    sy_slot_holder t = task_of(r, idx);
    /* No view with waiters: none to update. */
    for (size_t i = 0; i < n && e->waiters->contended > 0; i++) {
        key_view *k = find(e->waiters, c[i].key);
        if (!k || k->n == 0)
            continue;
        k->free -= c[i].n;
        size_t at = index_of(k, t);
        if (at < k->n) {
            memmove(&k->v[at], &k->v[at + 1], (k->n - at - 1) * sizeof *k->v);
            k->n--;
        }
        uint32_t g = group_of(e, k, r->wf->tenant); /* may move h */
        k->h[g].held += c[i].n;
        reorder(e, k);
    }
    sy_live_task *task = &r->t[idx];
    if (!task->waiter_key)
        return SY_OK;
    task->waiter_key = 0;
    return sy_store_unwait_slot(e->o.store, &t, false);
}

/* Never 0 (0 says "no row"). */
static uint32_t key_hash(const char *key)
{
    uint32_t h = (uint32_t)sy_fnv1a(SY_FNV_START, key);
    return h ? h : 1;
}

int sy_waiters_register(sy_live_run *r, size_t idx, const sy_slot_claim *claim,
                        int64_t now)
{
    sy_engine *e = r->e;
    sy_live_task *task = &r->t[idx];
    uint32_t h = key_hash(claim->key);
    if (task->waiter_key == h)
        return SY_OK;
    sy_slot_waiter sw = {.key = claim->key, .task = task_of(r, idx),
                         .tenant = r->wf->tenant, .priority = sy_priority_base(r, idx),
                         .since = now, .n = claim->n};
    int status = sy_store_wait_slot(e->o.store, &r->fence, &sw);
    if (status != SY_OK)
        return status;
    task->waiter_key = h;
    key_view *k = find(e->waiters, claim->key);
    if (k && k->n > 0 && index_of(k, sw.task) == k->n) {
        /* In its place in the turn's view: before the first it goes
         * before. */
        sy_grant_waiter me = entry_of(r, idx, k, claim->n, now);
        size_t at = 0;
        while (at < k->n && !sy_grant_before(&me, &k->v[at], now, e->o.priority_aging_ms))
            at++;
        k->v = sy_engine_grow(k->v, &k->cap, k->n + 1, sizeof *k->v);
        memmove(&k->v[at + 1], &k->v[at], (k->n - at) * sizeof *k->v);
        k->v[at] = me;
        k->n++;
    }
    return SY_OK;
}

void sy_waiters_ended(sy_live_run *r, size_t idx)
{
    sy_live_task *task = &r->t[idx];
    if (!task->waiter_key)
        return;
    task->waiter_key = 0;
    struct sy_waiters *w = r->e->waiters;
    w->ended = sy_engine_grow(w->ended, &w->cap_ended, w->n_ended + 1, sizeof *w->ended);
    w->ended[w->n_ended++] = task_of(r, idx);
}

bool sy_waiters_end_turn(sy_engine *e)
{
    struct sy_waiters *w = e->waiters;
    forget_view(w);
    for (size_t i = 0; i < w->n_ended && !e->fatal; i++) {
        if (sy_store_unwait_slot(e->o.store, &w->ended[i], false) != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot forget a waiter: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
    }
    w->n_ended = 0;
    return !e->fatal;
}
