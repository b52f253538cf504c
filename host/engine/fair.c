/* Weighted fair share between tenants by stride scheduling (engine/fair.h). */
#include "engine/fair.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/grant.h"

/* A tenant's stride is this over its weight: integers, so that passes
 * tie exactly where the shares say they should (doubles summing thirds
 * did not), divisible by every weight up to 16 and by 100 and 1000.
 * Passes grow by at most this per start: int64 holds 10^10 starts.  The
 * grant order of a contended key compares holdings with the same
 * strides (engine/grant.h). */
#define FAIR_SCALE SY_GRANT_SCALE

/* One tenant: its weight's stride and its pass. */
struct sy_fair_tenant {
    char *name;     /* owned */
    int64_t stride; /* FAIR_SCALE / weight */
    int64_t pass;
};

void sy_fair_init(sy_engine *e)
{
    e->fair = NULL;
    e->n_fair = 0;
    if (!e->o.n_tenants)
        return;
    e->fair = sy_xmalloc(e->o.n_tenants * sizeof *e->fair);
    for (size_t i = 0; i < e->o.n_tenants; i++) {
        const sy_tenant_config *c = &e->o.tenants[i];
        int64_t weight = c->weight > 0 ? c->weight : 1;
        e->fair[i] = (sy_fair_tenant){sy_xstrdup(c->name), FAIR_SCALE / weight, 0};
    }
    e->n_fair = e->cap_fair = e->o.n_tenants;
    e->fair_vtime = 0;
    /* Copied: the configuration they came from may go with a reload. */
    e->o.tenants = NULL;
    e->o.n_tenants = 0;
}

void sy_fair_free(sy_engine *e)
{
    for (size_t i = 0; i < e->n_fair; i++)
        free(e->fair[i].name);
    free(e->fair);
    e->fair = NULL;
    e->n_fair = e->cap_fair = 0;
}

bool sy_fair_active(const sy_engine *e) { return e->n_fair > 0; }

int64_t sy_fair_stride(const sy_engine *e, const char *tenant)
{
    for (size_t i = 0; i < e->n_fair; i++)
        if (strcmp(e->fair[i].name, tenant) == 0)
            return e->fair[i].stride;
    return FAIR_SCALE;
}

/* A tenant of weight 1 at the virtual time; its index. */
static size_t add_tenant(sy_engine *e, const char *name)
{
    /* Its own growth, not batch.c's: batch.c calls this file's caller. */
    if (e->n_fair == e->cap_fair) {
        e->cap_fair = e->cap_fair ? e->cap_fair * 2 : 8;
        e->fair = realloc(e->fair, e->cap_fair * sizeof *e->fair);
        if (!e->fair)
            sy_oom("adding tenant %s", name);
    }
    e->fair[e->n_fair] = (sy_fair_tenant){sy_xstrdup(name), FAIR_SCALE, e->fair_vtime};
    return e->n_fair++;
}

/* r's tenant in the table, added (weight 1) when the configuration does
 * not name it; looked up once per run. */
static size_t tenant_of(sy_engine *e, sy_live_run *r)
{
    if (r->tenant_ix > 0)
        return (size_t)r->tenant_ix - 1;
    const char *name = r->wf->tenant;
    size_t i = 0;
    while (i < e->n_fair && strcmp(e->fair[i].name, name) != 0)
        i++;
    if (i == e->n_fair)
        i = add_tenant(e, name);
    r->tenant_ix = (int32_t)i + 1;
    return i;
}

void sy_fair_started(sy_engine *e, sy_live_run *r)
{
    if (!e->n_fair)
        return;
    sy_fair_tenant *t = &e->fair[tenant_of(e, r)];
    e->fair_vtime = t->pass;
    t->pass += t->stride;
}

void sy_fair_interleave(sy_engine *e, sy_task_ref *v, size_t n)
{
    if (!e->n_fair || n < 2)
        return;
    size_t *tn = malloc(n * sizeof *tn);
    size_t *next = malloc(n * sizeof *next);  /* each task's successor of its tenant */
    size_t nt = 0, *head = NULL;
    int64_t *pass = NULL;
    sy_task_ref *out = malloc(n * sizeof *out);
    if (tn && next && out) {
        for (size_t i = 0; i < n; i++)
            tn[i] = tenant_of(e, v[i].run);
        nt = e->n_fair;
        head = malloc(nt * sizeof *head);
        pass = malloc(nt * sizeof *pass);
    }
    if (!head || !pass) {
        free(tn), free(next), free(out), free(head), free(pass);
        return; /* readiness order this turn: late, not lost */
    }
    for (size_t k = 0; k < nt; k++)
        head[k] = SIZE_MAX;
    /* Each tenant's tasks as a list in their order, built back to front. */
    for (size_t i = n; i-- > 0;) {
        next[i] = head[tn[i]];
        head[tn[i]] = i;
    }
    for (size_t k = 0; k < nt; k++) {
        /* A tenant with work rejoins at the virtual time. */
        if (head[k] != SIZE_MAX && e->fair[k].pass < e->fair_vtime)
            e->fair[k].pass = e->fair_vtime;
        pass[k] = e->fair[k].pass;
    }
    for (size_t i = 0; i < n; i++) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < nt; k++)
            /* Ties to the tenant listed first: a fixed order, so that
             * one turn's ties go the way the last turn's did. */
            if (head[k] != SIZE_MAX && (best == SIZE_MAX || pass[k] < pass[best]))
                best = k;
        out[i] = v[head[best]];
        head[best] = next[head[best]];
        pass[best] += e->fair[best].stride;
    }
    memcpy(v, out, n * sizeof *v);
    free(tn), free(next), free(out), free(head), free(pass);
}

void sy_engine_set_tenants(sy_engine *e, const sy_tenant_config *tenants, size_t n)
{
    if (n == 0) {
        /* No tenants any more: order of readiness, as without them; the
         * runs look their tenant up again should some come back. */
        sy_fair_free(e);
        for (sy_live_run *r = e->runs; r; r = r->next)
            r->tenant_ix = 0;
        return;
    }
    for (size_t k = 0; k < e->n_fair; k++)
        e->fair[k].stride = FAIR_SCALE;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < e->n_fair && strcmp(e->fair[k].name, tenants[i].name) != 0)
            k++;
        if (k == e->n_fair)
            k = add_tenant(e, tenants[i].name);
        e->fair[k].stride = FAIR_SCALE / (tenants[i].weight > 0 ? tenants[i].weight : 1);
    }
}
