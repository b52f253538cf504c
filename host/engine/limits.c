/* Flow controls held in the store at dispatch (engine/limits.h). */
#include "engine/limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/waiters.h"
#include "engine/rates.h"
#include "store/preempt.h"
#include "store/slots.h"

/* A named bound of the configuration: a pool's size, a tenant's
 * max_running. */
typedef struct {
    char *name;
    int64_t limit;
} named_bound;

struct sy_limits {
    named_bound *pools, *tenants;
    size_t n_pools, n_tenants;
    sy_slot_holder *returns; /* slots to give back in this turn's batch */
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
    /* Keys found full (or being taken by another host) in this turn, with
     * what was held: the turn's other tasks of the key wait without
     * asking the store again (nothing is given back until the next turn's
     * flush), so a backlog of thousands on a full key costs one take a
     * turn, not thousands of round trips. */
    struct full_key {
        char *key;
        int64_t held;
    } full[SY_LIMITS_FULL_KEYS];
    size_t n_full;
};

static void forget_full(sy_limits *l)
{
    for (size_t i = 0; i < l->n_full; i++)
        free(l->full[i].key);
    l->n_full = 0;
}

/* Whether a claim of c cannot fit a key found full this turn (what was
 * held then, plus its slots, over the limit; or the key was being taken
 * by another host, held -1): *i the claim, *held what was held.  Takes
 * only add to a key within a turn, so what did not fit then does not fit
 * now; a smaller claim may, and asks the store. */
static bool known_full(const sy_limits *l, const sy_slot_claim *c, size_t n, size_t *i,
                       int64_t *held)
{
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < l->n_full; j++)
            if (strcmp(l->full[j].key, c[k].key) == 0 &&
                (l->full[j].held < 0 || l->full[j].held + c[k].n > c[k].limit)) {
                *i = k;
                *held = l->full[j].held;
                return true;
            }
    return false;
}

static void bounds_free(named_bound *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(b[i].name);
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
        l->pools[i] = (named_bound){sy_xstrdup(pools[i].name), pools[i].size};
    l->n_pools = n_pools;
    /* Only tenants with a bound take a slot. */
    l->tenants = sy_xmalloc((n_tenants ? n_tenants : 1) * sizeof *l->tenants);
    l->n_tenants = 0;
    for (size_t i = 0; i < n_tenants; i++)
        if (tenants[i].max_running > 0)
            l->tenants[l->n_tenants++] =
                (named_bound){sy_xstrdup(tenants[i].name), tenants[i].max_running};
}

void sy_limits_init(sy_engine *e)
{
    e->limits = sy_xmalloc(sizeof *e->limits);
    *e->limits = (sy_limits){0};
    sy_waiters_init(e);
    sy_limits_set(e, e->o.pools, e->o.n_pools, e->o.tenants, e->o.n_tenants);
}

void sy_limits_free(sy_engine *e)
{
    sy_limits *l = e->limits;
    if (!l)
        return;
    bounds_free(l->pools, l->n_pools);
    bounds_free(l->tenants, l->n_tenants);
    free(l->returns);
    free(l->waiting);
    sy_rate_waits_free(&l->rate_waits);
    forget_full(l);
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
    if (sy_store_request_slot_cancel(e->o.store, key, now, why, &asked) != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "cannot request a cancel: %s",
               sy_store_errmsg(e->o.store));
        e->fatal = true;
    }
    return asked;
}

int sy_limits_take(sy_live_run *r, size_t idx, int64_t token, int64_t now, char *why,
                   size_t why_len)
{
    sy_engine *e = r->e;
    sy_limits *l = e->limits;
    const sy_task_def *def = sy_live_def(r, idx);
    const named_bound *tenant = l->n_tenants ? find(l->tenants, l->n_tenants, r->wf->tenant)
                                             : NULL;
    l->retry_at = now + SY_LIMITS_RETRY_MS;
    l->rate_wait = false;
    if (!def->flow && !tenant)
        return 1;
    char *keys[SY_SLOT_CLAIMS_MAX];
    sy_slot_claim c[SY_SLOT_CLAIMS_MAX];
    size_t n = 0;
    int result = 1;
    const sy_flow *f = def->flow;
    for (size_t i = 0; f && i < f->n_limits && result == 1; i++) {
        char err[512];
        char *key = sy_limit_key_render(f->limits[i].key, r->context, r->wf, def, err,
                                        sizeof err);
        if (!key) {
            snprintf(why, why_len, "%s", err);
            result = -1;
            break;
        }
        keys[n] = sy_xasprintf("key:%s", key);
        free(key);
        c[n] = (sy_slot_claim){keys[n], f->limits[i].limit, 1};
        n++;
    }
    if (result == 1 && f && f->pool) {
        const named_bound *p = find(l->pools, l->n_pools, f->pool);
        if (!p) {
            /* A reload removed it: nothing bounds the task by it. */
            sy_log(SY_LOG_WARN, "engine", "%s: pool '%s' is not defined any more; not held",
                   def->ns, f->pool);
        } else if ((int64_t)f->pool_slots > p->limit) {
            snprintf(why, why_len, "takes %u slots of pool '%s', which has %lld",
                     f->pool_slots, f->pool, (long long)p->limit);
            result = -1;
        } else {
            keys[n] = sy_xasprintf("pool:%s", f->pool);
            c[n] = (sy_slot_claim){keys[n], p->limit, f->pool_slots};
            n++;
        }
    }
    if (result == 1 && tenant) {
        keys[n] = sy_xasprintf("tenant:%s", tenant->name);
        c[n] = (sy_slot_claim){keys[n], tenant->limit, 1};
        n++;
    }
    if (result == 1 && n > 0) {
        sy_slot_holder h = holder_of(r, idx, token);
        bool taken = false;
        size_t full = 0;
        int64_t held = 0;
        /* Others first in a key's order (engine/waiters.h): it waits. */
        size_t blocked = n, position = 0, count = 0;
        int rc = sy_waiters_check(r, idx, c, n, now, &blocked, &position, &count);
        if (rc == SY_OK && blocked < n) {
            rc = sy_waiters_register(r, idx, &c[blocked], now);
            snprintf(why, why_len, "waiting for %s (position %zu of %zu waiting)",
                     c[blocked].key, position, count);
            result = 0;
        } else if (rc == SY_OK) {
            if (!known_full(l, c, n, &full, &held)) {
                rc = sy_store_take_slots(e->o.store, &r->fence, &h, c, n, now, &taken, &full,
                                         &held);
                if (rc == SY_OK && !taken && l->n_full < SY_LIMITS_FULL_KEYS)
                    l->full[l->n_full++] = (struct full_key){sy_xstrdup(c[full].key), held};
            }
            if (rc == SY_OK && taken)
                rc = sy_waiters_taken(r, idx, c, n);
            else if (rc == SY_OK && !(f && full < f->n_limits &&
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
        } else if (held < 0) {
            snprintf(why, why_len, "waiting for %s (being taken by another host)", c[full].key);
            result = 0;
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
        result = sy_rates_take(r, idx, now, &l->rate_waits, why, why_len, &l->retry_at);
        l->rate_wait = result == 0;
        if (result != 1 && r->t[idx].holds_slots && !e->fatal) {
            /* All or none: the slots just taken go back in this batch. */
            r->t[idx].holds_slots = false;
            sy_slot_holder h = holder_of(r, idx, token);
            if (sy_store_return_slots(e->o.store, &h) != SY_OK) {
                sy_log(SY_LOG_ERROR, "store", "cannot return slots: %s",
                       sy_store_errmsg(e->o.store));
                e->fatal = true;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
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
    sy_limits *l = r->e->limits;
    l->returns = sy_engine_grow(l->returns, &l->cap_returns, l->n_returns + 1,
                                sizeof *l->returns);
    l->returns[l->n_returns++] = holder_of(r, idx, t->token);
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
    forget_full(l); /* a new turn: keys may have room again */
    for (size_t i = 0; i < l->n_returns && !e->fatal; i++) {
        /* A run another host took over holds nothing here any more: the
         * rows count for nothing and are reaped (store/slots.h). */
        if (sy_store_return_slots(e->o.store, &l->returns[i]) != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot return slots: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
    }
    bool wake = l->n_returns > 0 && l->n_waiting > 0;
    l->n_returns = 0;
    return wake;
}
