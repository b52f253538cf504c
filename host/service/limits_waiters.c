/* The waiters `switchyard limits` shows (service/limits_waiters.h). */
#include "service/limits_waiters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/grant.h"
#include "engine/priority.h"
#include "store/waiters.h"

/* A listed waiter: its grant-order entry and what is shown of it. */
typedef struct {
    sy_grant_waiter g;
    json_t *shown;
} listed;

typedef struct {
    char *key;
    listed *v;
    size_t n, cap;
} key_list;

typedef struct {
    key_list *k;
    size_t n, cap;
    const sy_flow_config *flow;
} gathered;

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

static key_list *key_of(gathered *g, const char *key)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->k[i].key, key) == 0)
            return &g->k[i];
    g->k = grow(g->k, &g->cap, g->n, sizeof *g->k);
    g->k[g->n] = (key_list){sy_xstrdup(key), NULL, 0, 0};
    return &g->k[g->n++];
}

static int on_waiter(void *arg, const sy_slot_waiter *w)
{
    if (!w->live)
        return 0;
    key_list *k = key_of(arg, w->key);
    k->v = grow(k->v, &k->cap, k->n, sizeof *k->v);
    json_t *shown = json_pack(
        "{s:I, s:I, s:o, s:s, s:I, s:I, s:s, s:I}", "run", (json_int_t)w->task.run_id, "task",
        (json_int_t)w->task.idx, "element",
        w->task.elem >= 0 ? json_integer(w->task.elem) : json_null(), "tenant",
        w->tenant ? w->tenant : "", "priority", (json_int_t)w->priority, "slots",
        (json_int_t)w->n, "host", w->owner ? w->owner : "", "since", (json_int_t)w->since);
    k->v[k->n++] = (listed){{w->task.run_id, w->task.idx, w->task.elem, w->priority,
                             w->since, w->n, 0, 0},
                            shown};
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
    listed *v;
    size_t n;
    const sy_flow_config *flow;
} sharing;

static int on_share(void *arg, const char *tenant, int64_t held)
{
    sharing *s = arg;
    for (size_t i = 0; i < s->n; i++) {
        const char *t = json_string_value(json_object_get(s->v[i].shown, "tenant"));
        if (strcmp(t, tenant) == 0)
            s->v[i].g.share = held * (SY_GRANT_SCALE / weight_of(s->flow, tenant));
    }
    return 0;
}

int sy_limits_add_waiters(json_t *keys, sy_store *s, const sy_flow_config *flow, int64_t now,
                          json_t *(*entry)(json_t *keys, const char *key, int64_t limit),
                          char *err, size_t err_len)
{
    gathered g = {.flow = flow};
    int status = sy_store_list_waiters(s, now, on_waiter, &g);
    for (size_t i = 0; i < g.n; i++) {
        key_list *k = &g.k[i];
        if (status == SY_OK) {
            sharing sh = {k->v, k->n, flow};
            status = sy_store_key_shares(s, k->key, now, on_share, &sh);
        }
        json_t *e = entry(keys, k->key, 0);
        json_t *list = json_array();
        if (status == SY_OK) {
            /* In grant order, then each shown entry found by its task
             * (a listing for people: quadratic in a key's waiters is
             * fine). */
            sy_grant_waiter *real = sy_xmalloc((k->n ? k->n : 1) * sizeof *real);
            for (size_t j = 0; j < k->n; j++)
                real[j] = k->v[j].g;
            sy_grant_order(real, k->n, now, SY_PRIORITY_AGING_MS);
            for (size_t j = 0; j < k->n; j++)
                for (size_t m = 0; m < k->n; m++) {
                    const sy_grant_waiter *x = &k->v[m].g;
                    if (x->run_id == real[j].run_id && x->idx == real[j].idx &&
                        x->elem == real[j].elem) {
                        json_object_set_new(k->v[m].shown, "position",
                                            json_integer((json_int_t)j + 1));
                        json_array_append(list, k->v[m].shown);
                        break;
                    }
                }
            free(real);
        }
        json_object_set_new(e, "waiting", json_integer((json_int_t)k->n));
        json_object_set_new(e, "waiters", list);
        for (size_t j = 0; j < k->n; j++)
            json_decref(k->v[j].shown);
        free(k->v);
        free(k->key);
    }
    free(g.k);
    if (status != SY_OK)
        snprintf(err, err_len, "%s", sy_store_errmsg(s));
    return status;
}
