/* The waiters of flow-control keys in grant order (service/limits_waiters.h). */
#include "service/limits_waiters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/grant.h"
#include "engine/priority.h"
#include "store/waiters.h"

/* A waiter as read: its grant-order entry and the rest that is shown. */
typedef struct {
    sy_grant_waiter g;
    char *tenant;
    char *owner; /* the host it waits on */
} queued;

typedef struct {
    char *key;
    queued *v;        /* in grant order once read */
    size_t n, cap;
    queued **by_task; /* v by (run, idx, elem), for finding a task */
    int64_t held;     /* what its live holders hold, every tenant's */
} key_queue;

struct sy_waiter_queues {
    key_queue *k; /* by key name once read */
    size_t n, cap;
};

/* Room for one more of `elem` bytes in *v of *cap (out of memory ends
 * the process, as sy_xmalloc does). */
static void *grow(void *v, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 8;
    void *got = realloc(v, *cap * elem);
    if (!got)
        sy_oom("listing waiters");
    return got;
}

static key_queue *key_of(sy_waiter_queues *q, const char *key)
{
    /* The store lists a key's rows together: its queue is the last one. */
    for (size_t i = q->n; i-- > 0;)
        if (strcmp(q->k[i].key, key) == 0)
            return &q->k[i];
    q->k = grow(q->k, &q->cap, q->n, sizeof *q->k);
    q->k[q->n] = (key_queue){sy_xstrdup(key), NULL, 0, 0, NULL, 0};
    return &q->k[q->n++];
}

static int on_waiter(void *arg, const sy_slot_waiter *w)
{
    if (!w->live)
        return 0;
    key_queue *k = key_of(arg, w->key);
    k->v = grow(k->v, &k->cap, k->n, sizeof *k->v);
    k->v[k->n++] = (queued){{w->task.run_id, w->task.idx, w->task.elem, w->priority, w->since,
                             w->n, 0, 0},
                            sy_xstrdup(w->tenant ? w->tenant : ""),
                            sy_xstrdup(w->owner ? w->owner : "")};
    return 0;
}

/* A tenant's weight in `flow`, 1 when not named. */
static int64_t weight_of(const sy_flow_config *flow, const char *tenant)
{
    for (size_t i = 0; flow && i < flow->n_tenants; i++)
        if (strcmp(flow->tenants[i].name, tenant) == 0 && flow->tenants[i].weight > 0)
            return flow->tenants[i].weight;
    return 1;
}

typedef struct {
    key_queue *k;
    const sy_flow_config *flow;
} sharing;

static int on_share(void *arg, const char *tenant, int64_t held)
{
    sharing *s = arg;
    s->k->held += held;
    for (size_t i = 0; i < s->k->n; i++)
        if (strcmp(s->k->v[i].tenant, tenant) == 0)
            s->k->v[i].g.share = held * (SY_GRANT_SCALE / weight_of(s->flow, tenant));
    return 0;
}

static int by_task(const void *pa, const void *pb)
{
    const sy_grant_waiter *a = &(*(queued *const *)pa)->g, *b = &(*(queued *const *)pb)->g;
    if (a->run_id != b->run_id)
        return a->run_id < b->run_id ? -1 : 1;
    if (a->idx != b->idx)
        return a->idx < b->idx ? -1 : 1;
    return (a->elem > b->elem) - (a->elem < b->elem);
}

/* k's waiters in grant order at `now`, by their tenants' shares of it. */
static int order(sy_store *s, const sy_flow_config *flow, int64_t now, key_queue *k)
{
    sharing sh = {k, flow};
    int status = sy_store_key_shares(s, k->key, now, on_share, &sh);
    if (status != SY_OK)
        return status;
    /* Sorted as grant entries, each remembering (in the group the order
     * ignores) which waiter it is. */
    size_t room = k->n ? k->n : 1;
    sy_grant_waiter *g = sy_xmalloc(room * sizeof *g);
    for (size_t j = 0; j < k->n; j++) {
        g[j] = k->v[j].g;
        g[j].group = (uint32_t)j;
    }
    sy_grant_order(g, k->n, now, SY_PRIORITY_AGING_MS);
    queued *v = sy_xmalloc(room * sizeof *v);
    for (size_t j = 0; j < k->n; j++)
        v[j] = k->v[g[j].group];
    free(g);
    free(k->v);
    k->v = v;
    k->cap = room;
    k->by_task = sy_xmalloc(room * sizeof *k->by_task);
    for (size_t j = 0; j < k->n; j++)
        k->by_task[j] = &k->v[j];
    qsort(k->by_task, k->n, sizeof *k->by_task, by_task);
    return SY_OK;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const key_queue *)a)->key, ((const key_queue *)b)->key);
}

void sy_waiter_queues_free(sy_waiter_queues *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->n; i++) {
        key_queue *k = &q->k[i];
        for (size_t j = 0; j < k->n; j++) {
            free(k->v[j].tenant);
            free(k->v[j].owner);
        }
        free(k->v);
        free(k->by_task);
        free(k->key);
    }
    free(q->k);
    free(q);
}

int sy_waiter_queues_read(sy_store *s, const sy_flow_config *flow, int64_t now,
                          const char *const *keys, size_t n, sy_waiter_queues **out,
                          char *err, size_t err_len)
{
    sy_waiter_queues *q = sy_xmalloc(sizeof *q);
    *q = (sy_waiter_queues){0};
    int status = !keys  ? sy_store_list_waiters(s, now, on_waiter, q)
                 : n > 0 ? sy_store_key_waiters(s, keys, n, now, on_waiter, q)
                         : SY_OK;
    for (size_t i = 0; i < q->n && status == SY_OK; i++)
        status = order(s, flow, now, &q->k[i]);
    if (status != SY_OK) {
        snprintf(err, err_len, "%s", sy_store_errmsg(s));
        sy_waiter_queues_free(q);
        *out = NULL;
        return status;
    }
    /* qsort and bsearch take no NULL array, not even of none (C11
     * 7.22.5): a store with no waiter leaves q->k NULL. */
    if (q->n > 1)
        qsort(q->k, q->n, sizeof *q->k, by_key);
    *out = q;
    return SY_OK;
}

static const key_queue *find_key(const sy_waiter_queues *q, const char *key)
{
    key_queue probe = {.key = (char *)key};
    return q && q->n ? bsearch(&probe, q->k, q->n, sizeof *q->k, by_key) : NULL;
}

bool sy_waiter_queues_held(const sy_waiter_queues *q, const char *key, int64_t *held)
{
    const key_queue *k = find_key(q, key);
    if (!k || k->n == 0)
        return false;
    *held = k->held;
    return true;
}

bool sy_waiter_queues_position(const sy_waiter_queues *q, const char *key, int64_t run_id,
                               uint32_t idx, int64_t elem, size_t *position, size_t *count)
{
    const key_queue *k = find_key(q, key);
    if (!k || k->n == 0)
        return false;
    queued me = {.g = {.run_id = run_id, .idx = idx, .elem = elem}};
    const queued *mine = &me;
    queued *const *at = bsearch(&mine, k->by_task, k->n, sizeof *k->by_task, by_task);
    if (!at)
        return false;
    *position = (size_t)(*at - k->v) + 1;
    *count = k->n;
    return true;
}

int sy_limits_add_waiters(json_t *keys, sy_store *s, const sy_flow_config *flow, int64_t now,
                          json_t *(*entry)(json_t *keys, const char *key, int64_t limit),
                          char *err, size_t err_len)
{
    sy_waiter_queues *q = NULL;
    int status = sy_waiter_queues_read(s, flow, now, NULL, 0, &q, err, err_len);
    if (status != SY_OK)
        return status;
    for (size_t i = 0; i < q->n; i++) {
        const key_queue *k = &q->k[i];
        json_t *list = json_array();
        for (size_t j = 0; j < k->n; j++) {
            const queued *w = &k->v[j];
            json_t *shown = json_pack(
                "{s:I, s:I, s:o, s:s, s:I, s:I, s:s, s:I, s:I}", "run",
                (json_int_t)w->g.run_id, "task", (json_int_t)w->g.idx, "element",
                w->g.elem >= 0 ? json_integer(w->g.elem) : json_null(), "tenant", w->tenant,
                "priority", (json_int_t)w->g.priority, "slots", (json_int_t)w->g.n, "host",
                w->owner, "since", (json_int_t)w->g.since, "position", (json_int_t)j + 1);
            json_array_append_new(list, shown);
        }
        json_t *e = entry(keys, k->key, 0);
        json_object_set_new(e, "waiting", json_integer((json_int_t)k->n));
        json_object_set_new(e, "waiters", list);
    }
    sy_waiter_queues_free(q);
    return SY_OK;
}
