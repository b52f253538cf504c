/* Flow controls held in the store at dispatch (engine/limits.h). */
#include "engine/limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/claims.h"
#include "engine/ledger.h"
#include "engine/waiters.h"
#include "engine/rates.h"
#include "engine/route.h"
#include "store/preempt.h"
#include "store/slots.h"

/* What an attempt took, kept by its task (sy_live_task.held) until given
 * back: one allocation, the keys, the owner's name and the run's tenant
 * behind the takes. */
struct sy_slot_held {
    const char *owner;
    size_t n;
    sy_slot_take t[];
};

static struct sy_slot_held *held_new(const sy_slot_claim *c, size_t n, const sy_slot_holder *h,
                                     const sy_store_fence *fence, const char *tenant)
{
    size_t len = sizeof(struct sy_slot_held) + n * sizeof(sy_slot_take) +
                 strlen(fence->owner) + 1 + (tenant ? strlen(tenant) + 1 : 0);
    for (size_t i = 0; i < n; i++)
        len += strlen(c[i].key) + 1;
    struct sy_slot_held *b = sy_xmalloc(len);
    char *o = (char *)&b->t[n];
    b->owner = strcpy(o, fence->owner);
    o += strlen(o) + 1;
    const char *t = NULL;
    if (tenant) {
        t = strcpy(o, tenant);
        o += strlen(o) + 1;
    }
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        b->t[i] = (sy_slot_take){strcpy(o, c[i].key), c[i].limit, c[i].n, *h, fence->epoch, t};
        o += strlen(o) + 1;
    }
    return b;
}

/* A named bound of the configuration: a pool's size, a tenant's
 * max_running. */
typedef struct {
    char *name;
    char *key;     /* its slots' key, "pool:NAME" or "tenant:NAME" */
    int64_t limit;
} named_bound;

struct sy_limits {
    named_bound *pools, *tenants;
    size_t n_pools, n_tenants;
    sy_rate_config *rates;   /* named rate limits, owned copies */
    size_t n_rates;
    struct sy_slot_held **returns; /* slots to give back in this turn's
                                      batch, owned */
    size_t n_returns, cap_returns;
    sy_task_ref *waiting;    /* tasks that found a key full */
    size_t n_waiting, cap_waiting;
    int64_t retry_at;        /* when the last task that could not start is
                                offered again */
    bool rate_wait;          /* it waits for a token, due at retry_at: no
                                slot given back helps it */
    sy_rate_waits rate_waits;/* the turn's times handed out per bucket */
    bool asked;              /* a cancel was requested (cancel_in_progress):
                                read the requests at the next turn */
    sy_ledger *ledger;       /* the turn's takes, decided in memory */
    sy_claims *claims;       /* the turn's tasks' keys, named once */
};

static void bounds_free(named_bound *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(b[i].name);
        free(b[i].key);
    }
    free(b);
}

void sy_limits_set(sy_engine *e, const sy_pool_config *pools, size_t n_pools,
                          const sy_tenant_config *tenants, size_t n_tenants)
{
    sy_limits *l = e->limits;
    bounds_free(l->pools, l->n_pools);
    bounds_free(l->tenants, l->n_tenants);
    l->pools = sy_xmalloc((n_pools ? n_pools : 1) * sizeof *l->pools);
    for (size_t i = 0; i < n_pools; i++)
        l->pools[i] = (named_bound){sy_xstrdup(pools[i].name),
                                    sy_xasprintf("pool:%s", pools[i].name), pools[i].size};
    l->n_pools = n_pools;
    /* Only tenants with a bound take a slot. */
    l->tenants = sy_xmalloc((n_tenants ? n_tenants : 1) * sizeof *l->tenants);
    l->n_tenants = 0;
    for (size_t i = 0; i < n_tenants; i++)
        if (tenants[i].max_running > 0)
            l->tenants[l->n_tenants++] =
                (named_bound){sy_xstrdup(tenants[i].name),
                              sy_xasprintf("tenant:%s", tenants[i].name),
                              tenants[i].max_running};
}

static void rates_free(sy_limits *l)
{
    for (size_t i = 0; i < l->n_rates; i++)
        free(l->rates[i].name);
    free(l->rates);
    l->rates = NULL;
    l->n_rates = 0;
}

void sy_limits_set_rates(sy_engine *e, const sy_rate_config *rates, size_t n)
{
    sy_limits *l = e->limits;
    rates_free(l);
    l->rates = sy_xmalloc((n ? n : 1) * sizeof *l->rates);
    for (size_t i = 0; i < n; i++) {
        l->rates[i] = rates[i];
        l->rates[i].name = sy_xstrdup(rates[i].name);
    }
    l->n_rates = n;
}

void sy_limits_init(sy_engine *e)
{
    e->limits = sy_xmalloc(sizeof *e->limits);
    *e->limits = (sy_limits){.ledger = sy_ledger_new(), .claims = sy_claims_new()};
    sy_waiters_init(e);
    sy_limits_set(e, e->o.pools, e->o.n_pools, e->o.tenants, e->o.n_tenants);
    sy_limits_set_rates(e, e->o.rates, e->o.n_rates);
}

void sy_limits_free(sy_engine *e)
{
    sy_limits *l = e->limits;
    if (!l)
        return;
    bounds_free(l->pools, l->n_pools);
    bounds_free(l->tenants, l->n_tenants);
    rates_free(l);
    for (size_t i = 0; i < l->n_returns; i++)
        free(l->returns[i]);
    free(l->returns);
    free(l->waiting);
    sy_rate_waits_free(&l->rate_waits);
    sy_ledger_free(l->ledger);
    sy_claims_free(l->claims);
    free(l);
    e->limits = NULL;
    sy_waiters_free(e);
}

static const named_bound *find(const named_bound *b, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(b[i].name, name) == 0)
            return &b[i];
    return NULL;
}

static sy_slot_holder holder_of(const sy_live_run *r, size_t idx, int64_t token)
{
    const sy_live_task *t = &r->t[idx];
    bool slot = sy_live_is_slot(r, idx);
    return (sy_slot_holder){r->id, (uint32_t)(slot ? r->maps[t->map].idx : idx),
                            slot ? (int64_t)t->elem : -1, token};
}

/* Inside the turn's batch: asks that the oldest holder of `key` be
 * cancelled for a newer task (nothing when one was asked already).  True
 * when a holder was marked. */
static bool request_cancel(sy_engine *e, const char *key, int64_t now)
{
    char why[SY_SLOT_KEY_MAX + 128];
    snprintf(why, sizeof why, "cancelled for a newer task on %s (strategy cancel_in_progress)",
             key);
    bool asked = false;
    /* The turn's takes so far written first: the holder asked to end is
     * the oldest among all of them. */
    sy_limits_write(e, now);
    if (!e->fatal && sy_store_request_slot_cancel(e->o.store, key, now, why, &asked) != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "cannot request a cancel: %s",
               sy_store_errmsg(e->o.store));
        e->fatal = true;
    }
    return asked;
}

/* The keys task idx of r takes: its limits' keys rendered from the
 * run's context, its pool and its tenant's bound, kept in the turn's
 * claims (engine/claims.h) and returned there (*n of them), or NULL with
 * why (a template naming what the context lacks, a pool too small).
 * *lost_pool names a pool a reload removed (the take warns of it, once
 * per start), else NULL. */
static const sy_slot_claim *claims_of(sy_live_run *r, size_t idx, size_t *n,
                                      const char **lost_pool, char *why, size_t why_len)
{
    sy_limits *l = r->e->limits;
    const sy_task_def *def = sy_live_def(r, idx);
    const named_bound *tenant = l->n_tenants ? find(l->tenants, l->n_tenants, r->wf->tenant)
                                             : NULL;
    *lost_pool = NULL;
    sy_claims_begin(l->claims);
    const sy_flow *f = def->flow;
    for (size_t i = 0; f && i < f->n_limits; i++) {
        const char *tmpl = f->limits[i].key;
        if (!strchr(tmpl, '{') && strlen(tmpl) <= SY_LIMIT_RENDERED_MAX) {
            /* Nothing to fill in: the key is its template, as
             * sy_limit_key_render would copy it. */
            sy_claims_add(l->claims, "key:", tmpl, f->limits[i].limit, 1);
            continue;
        }
        char err[512];
        char *key = sy_limit_key_render(tmpl, r->context, r->wf, def, err, sizeof err);
        if (!key) {
            snprintf(why, why_len, "%s", err);
            sy_claims_drop(l->claims);
            return NULL;
        }
        sy_claims_add(l->claims, "key:", key, f->limits[i].limit, 1);
        free(key);
    }
    if (f && f->pool) {
        const named_bound *p = find(l->pools, l->n_pools, f->pool);
        if (!p) {
            /* A reload removed it: nothing bounds the task by it. */
            *lost_pool = f->pool;
        } else if ((int64_t)f->pool_slots > p->limit) {
            snprintf(why, why_len, "takes %u slots of pool '%s', which has %lld",
                     f->pool_slots, f->pool, (long long)p->limit);
            sy_claims_drop(l->claims);
            return NULL;
        } else {
            sy_claims_add(l->claims, p->key, NULL, p->limit, f->pool_slots);
        }
    }
    if (tenant)
        sy_claims_add(l->claims, tenant->key, NULL, tenant->limit, 1);
    return sy_claims_end(l->claims, r, idx, *lost_pool, n);
}

/* Whether task idx of r can take any slot (a flow or a bounded tenant). */
static bool takes_slots(const sy_live_run *r, size_t idx)
{
    const sy_limits *l = r->e->limits;
    return sy_live_def(r, idx)->flow ||
           (l->n_tenants && find(l->tenants, l->n_tenants, r->wf->tenant));
}

void sy_limits_prepare(sy_engine *e, int64_t now)
{
    sy_limits *l = e->limits;
    sy_task_queue *q = &e->ready;
    /* What each instance takes this turn, read when first needed (-1). */
    int64_t *room = sy_xmalloc((e->n_instances ? e->n_instances : 1) * sizeof *room);
    for (size_t k = 0; k < e->n_instances; k++)
        room[k] = -1;
    /* The host the keys are read for: every run here has its owner. */
    const char *owner = NULL;
    for (size_t i = 0; i < q->n && !e->fatal; i++) {
        sy_task_ref ref = q->v[(q->head + i) % q->cap];
        sy_live_run *r = ref.run;
        const sy_live_task *t = &r->t[ref.idx];
        if (!sy_task_state_offerable(t->state) || r->cancelling || r->finished ||
            t->ready_at > now || !takes_slots(r, ref.idx) ||
            (!sy_live_is_slot(r, ref.idx) && r->wf->tasks[ref.idx].mapped))
            continue;
        /* Only as many tasks as the executors take this turn, in the
         * order the turn offers them (sy_dispatch_decide's, overflow
         * included): the rest stay parked, and reading their keys would
         * only lock them on PostgreSQL, where another host's take of
         * them then waits.  A task past this count that does start (one
         * before it waited for a key instead) reads its keys at its take. */
        bool fits = false;
        for (size_t k = 0; k < t->route->n && !fits; k++) {
            size_t at = (size_t)(t->route->q[k] - e->instances);
            if (room[at] < 0)
                room[at] = sy_route_room(t->route->q[k]);
            if (room[at] > 0) {
                room[at]--;
                fits = true;
            }
        }
        if (!fits)
            continue;
        size_t m = 0;
        const char *lost;
        char why[8];
        /* A task whose keys cannot be named fails at its take, saying
         * why; here it names none.  The keys named are kept for its take
         * (engine/claims.h). */
        claims_of(r, ref.idx, &m, &lost, why, sizeof why);
        owner = r->fence.owner;
    }
    size_t n = 0, m = 0;
    uint32_t *at = NULL;
    const sy_slot_claim *c = sy_claims_all(l->claims, &n, &at);
    /* The waiters of the keys the ledger read, each once: this is the
     * turn's first read of either, both emptied since the last turn, so
     * those are every key named. */
    sy_slot_claim *fresh = n > 0 ? sy_xmalloc(n * sizeof *fresh) : NULL;
    if (n > 0 && !e->fatal &&
        (sy_ledger_read(l->ledger, e->o.store, owner, c, n, now, fresh, &m, at) != SY_OK ||
         sy_waiters_prepare(e, fresh, m, now) != SY_OK)) {
        sy_log(SY_LOG_ERROR, "store", "cannot read the keys' slots: %s",
               sy_store_errmsg(e->o.store));
        e->fatal = true;
    }
    free(fresh);
    sy_claims_read(l->claims);
    free(room);
}

void sy_limits_write(sy_engine *e, int64_t now)
{
    if (e->fatal)
        return;
    int rc = sy_ledger_write(e->limits->ledger, e->o.store, now);
    if (rc == SY_ESTATE)
        sy_log(SY_LOG_ERROR, "store", "the store refused this turn's slots: a key would "
                                      "hold more than its limit");
    else if (rc != SY_OK)
        sy_log(SY_LOG_ERROR, "store", "cannot take slots: %s", sy_store_errmsg(e->o.store));
    if (rc != SY_OK)
        e->fatal = true;
}

int sy_limits_take(sy_live_run *r, size_t idx, int64_t token, int64_t now, char *why,
                   size_t why_len)
{
    sy_engine *e = r->e;
    sy_limits *l = e->limits;
    const sy_task_def *def = sy_live_def(r, idx);
    l->retry_at = now + SY_LIMITS_RETRY_MS;
    l->rate_wait = false;
    if (!takes_slots(r, idx))
        return 1;
    size_t n = 0;
    const sy_flow *f = def->flow;
    const char *lost_pool = NULL;
    /* Named already when the turn's read named it. */
    bool read = false;
    uint32_t *at = NULL; /* where the turn's read put each key, if it did */
    const sy_slot_claim *c = sy_claims_find(l->claims, r, idx, &n, &lost_pool, &read, &at);
    int result = 1;
    if (!c && !(c = claims_of(r, idx, &n, &lost_pool, why, why_len)))
        result = -1;
    if (lost_pool)
        sy_log(SY_LOG_WARN, "engine", "%s: pool '%s' is not defined any more; not held",
               def->ns, lost_pool);
    if (result == 1 && n > 0) {
        sy_slot_holder h = holder_of(r, idx, token);
        bool taken = false;
        size_t full = 0;
        int64_t held = 0;
        /* Others first in a key's order (engine/waiters.h): it waits. */
        size_t blocked = n, position = 0, count = 0;
        int rc = sy_waiters_check(r, idx, c, n, read, now, &blocked, &position, &count);
        if (rc == SY_OK && blocked < n) {
            rc = sy_waiters_register(r, idx, &c[blocked], now);
            snprintf(why, why_len, "waiting for %s (position %zu of %zu waiting)",
                     c[blocked].key, position, count);
            result = 0;
        } else if (rc == SY_OK) {
            rc = sy_ledger_take(l->ledger, e->o.store, &r->fence, r->wf->tenant, &h, c, n,
                                now, read ? at : NULL, &taken, &full, &held);
            if (rc == SY_OK && taken)
                rc = sy_waiters_taken(r, idx, c, n);
            else if (rc == SY_OK && held >= 0 && !(f && full < f->n_limits &&
                                      f->limits[full].strategy != SY_LIMIT_QUEUE &&
                                      f->limits[full].strategy != SY_LIMIT_CANCEL_IN_PROGRESS))
                rc = sy_waiters_register(r, idx, &c[full], now);
        }
        if (result == 0 && rc == SY_OK) {
            /* said why above */
        } else if (rc != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot take slots: %s", sy_store_errmsg(e->o.store));
            e->fatal = true;
            snprintf(why, why_len, "the store failed");
            result = -1;
        } else if (taken) {
            r->t[idx].holds_slots = true;
            free(r->t[idx].held);
            r->t[idx].held = held_new(c, n, &h, &r->fence, r->wf->tenant);
        } else if (held < 0) {
            /* Not found full: another host's batch is taking it, and is
             * done in a few milliseconds.  No waiter is written for it,
             * nor a reason (the task is not Waiting). */
            int64_t delay = SY_LIMITS_BUSY_RETRY_MS << r->t[idx].busy_tries;
            l->retry_at = now + (delay < SY_LIMITS_BUSY_RETRY_MAX_MS
                                     ? delay : SY_LIMITS_BUSY_RETRY_MAX_MS);
            if (delay < SY_LIMITS_BUSY_RETRY_MAX_MS)
                r->t[idx].busy_tries++;
            result = 4;
        } else if (f && full < f->n_limits && f->limits[full].strategy != SY_LIMIT_QUEUE &&
                   f->limits[full].strategy != SY_LIMIT_CANCEL_IN_PROGRESS) {
            /* cancel_newest and drop: the task that finds the key full
             * ends without running, saying why. */
            snprintf(why, why_len, "%s is full (%lld of %lld held): not run (strategy %s)",
                     c[full].key, (long long)held, (long long)c[full].limit,
                     sy_limit_strategy_name(f->limits[full].strategy));
            result = f->limits[full].strategy == SY_LIMIT_DROP ? 3 : 2;
        } else if (f && full < f->n_limits &&
                   f->limits[full].strategy == SY_LIMIT_CANCEL_IN_PROGRESS) {
            /* The oldest holder is asked to end; this task takes its slot
             * once it is given back (engine/preempt.h). */
            if (request_cancel(e, c[full].key, now)) {
                /* Read at the next turn, which this one brings about. */
                l->asked = true;
                l->retry_at = now + 1;
            }
            snprintf(why, why_len, "waiting for %s (%lld of %lld held; the oldest holder is "
                     "cancelled: strategy cancel_in_progress)", c[full].key, (long long)held,
                     (long long)c[full].limit);
            result = 0;
        } else {
            snprintf(why, why_len, "waiting for %s (%lld of %lld held)", c[full].key,
                     (long long)held, (long long)c[full].limit);
            result = 0;
        }
    }
    if (result == 1 && f && f->n_rates) {
        result = sy_rates_take(r, idx, now, l->rates, l->n_rates, &l->rate_waits, why, why_len,
                               &l->retry_at);
        l->rate_wait = result == 0;
        if (result != 1 && r->t[idx].holds_slots && !e->fatal) {
            /* All or none: the slots just taken were never taken. */
            r->t[idx].holds_slots = false;
            free(r->t[idx].held);
            r->t[idx].held = NULL;
            sy_slot_holder h = holder_of(r, idx, token);
            sy_ledger_untake(l->ledger, &h);
        }
    }
    if (result != 4)
        r->t[idx].busy_tries = 0; /* not held up by another host now */
    return result;
}

bool sy_limits_asked(sy_engine *e)
{
    bool asked = e->limits->asked;
    e->limits->asked = false;
    return asked;
}

int64_t sy_limits_retry_at(sy_engine *e)
{
    return e->limits->retry_at;
}

void sy_limits_release(sy_live_run *r, size_t idx)
{
    sy_live_task *t = &r->t[idx];
    if (!t->holds_slots)
        return;
    t->holds_slots = false;
    if (!t->held)
        return;
    sy_limits *l = r->e->limits;
    l->returns = sy_engine_grow(l->returns, &l->cap_returns, l->n_returns + 1,
                                sizeof *l->returns);
    l->returns[l->n_returns++] = t->held;
    t->held = NULL;
}

void sy_limits_wait(sy_live_run *r, size_t idx)
{
    sy_live_task *t = &r->t[idx];
    if (t->waits_slot || r->e->limits->rate_wait)
        return;
    t->waits_slot = true;
    sy_limits *l = r->e->limits;
    l->waiting = sy_engine_grow(l->waiting, &l->cap_waiting, l->n_waiting + 1,
                                sizeof *l->waiting);
    l->waiting[l->n_waiting++] = (sy_task_ref){r, idx};
}

void sy_limits_forget_run(sy_engine *e, const sy_live_run *r)
{
    sy_limits *l = e->limits;
    size_t k = 0;
    for (size_t i = 0; i < l->n_waiting; i++)
        if (l->waiting[i].run != r)
            l->waiting[k++] = l->waiting[i];
    l->n_waiting = k;
}

sy_task_ref *sy_limits_waiting(sy_engine *e, size_t *n)
{
    sy_limits *l = e->limits;
    *n = l->n_waiting;
    l->n_waiting = 0;
    for (size_t i = 0; i < *n; i++)
        l->waiting[i].run->t[l->waiting[i].idx].waits_slot = false;
    return l->waiting;
}

bool sy_limits_flush(sy_engine *e)
{
    sy_limits *l = e->limits;
    sy_rate_waits_clear(&l->rate_waits);
    sy_ledger_forget(l->ledger); /* a new turn: keys may have room again */
    sy_claims_clear(l->claims);  /* and are named again */
    /* A run another host took over holds nothing here any more: the rows
     * count for nothing and are reaped (store/slots.h).  One call per
     * owner: every run here has this host's. */
    size_t n_takes = 0;
    for (size_t i = 0; i < l->n_returns; i++)
        n_takes += l->returns[i]->n;
    sy_slot_take *t = sy_xmalloc((n_takes ? n_takes : 1) * sizeof *t);
    for (size_t i = 0, k; i < l->n_returns && !e->fatal; i = k) {
        const char *owner = l->returns[i]->owner;
        size_t m = 0;
        for (k = i; k < l->n_returns && strcmp(l->returns[k]->owner, owner) == 0; k++)
            for (size_t j = 0; j < l->returns[k]->n; j++)
                t[m++] = l->returns[k]->t[j];
        if (sy_store_return_takes(e->o.store, owner, t, m) != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot return slots: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
    }
    free(t);
    for (size_t i = 0; i < l->n_returns; i++)
        free(l->returns[i]);
    bool wake = l->n_returns > 0 && l->n_waiting > 0;
    l->n_returns = 0;
    return wake;
}
