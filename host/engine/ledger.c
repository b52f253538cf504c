/* A turn's flow-control slots, decided in memory (engine/ledger.h). */
#include "engine/ledger.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "engine/batch.h"
#include "engine/key_index.h"

typedef struct {
    char *key;
    int64_t held;  /* as read this turn; -1: another host is taking it */
    int64_t added; /* what this turn took of it since */
    bool exact;    /* held is its live holders counted, not its counters */
} ledger_key;

typedef struct {
    sy_slot_take take;   /* take.key borrows its ledger_key's, take.tenant
                            the run's workflow's */
    size_t key;          /* index in keys */
    const char *owner;   /* the run's fence's, borrowed */
} pending;

struct sy_ledger {
    ledger_key *keys;
    size_t n_keys, cap_keys;
    sy_key_index index;  /* of keys */
    pending *p;
    size_t n_p, cap_p;
    size_t written;      /* p[0..written) are in the store */
};

sy_ledger *sy_ledger_new(void)
{
    sy_ledger *l = sy_xmalloc(sizeof *l);
    *l = (sy_ledger){0};
    return l;
}

void sy_ledger_forget(sy_ledger *l)
{
    for (size_t i = 0; i < l->n_keys; i++)
        free(l->keys[i].key);
    l->n_keys = 0;
    sy_key_index_clear(&l->index);
    l->n_p = l->written = 0;
}

void sy_ledger_free(sy_ledger *l)
{
    if (!l)
        return;
    sy_ledger_forget(l);
    free(l->keys);
    sy_key_index_free(&l->index);
    free(l->p);
    free(l);
}

static const char *key_at(const void *arg, size_t i)
{
    return ((const sy_ledger *)arg)->keys[i].key;
}

static ledger_key *find(sy_ledger *l, const char *key)
{
    ptrdiff_t i = sy_key_index_find_again(&l->index, key, key_at, l);
    return i < 0 ? NULL : &l->keys[i];
}

int sy_ledger_read(sy_ledger *l, sy_store *s, const char *owner, const sy_slot_claim *c,
                   size_t n, int64_t now, sy_slot_claim *fresh, size_t *n_fresh, uint32_t *at)
{
    if (n_fresh)
        *n_fresh = 0;
    /* The keys not read yet, each once: entered first (unread), then
     * given what the store says. */
    size_t first = l->n_keys;
    sy_slot_claim *ask = NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        ledger_key *known = find(l, c[i].key);
        if (at)
            at[i] = (uint32_t)(known ? (size_t)(known - l->keys) : l->n_keys) + 1;
        if (known) {
            /* Asked in this read: what the turn may take of it grows. */
            size_t k = (size_t)(known - l->keys);
            if (ask && k >= first) {
                sy_slot_claim *a = &ask[k - first];
                a->n = a->n + c[i].n < a->limit ? a->n + c[i].n : a->limit;
            }
            continue;
        }
        if (!ask)
            ask = sy_xmalloc(n * sizeof *ask);
        l->keys = sy_engine_grow(l->keys, &l->cap_keys, l->n_keys + 1, sizeof *l->keys);
        l->keys[l->n_keys] = (ledger_key){sy_xstrdup(c[i].key), -1, 0, false};
        sy_key_index_add(&l->index, key_at, l);
        l->n_keys++;
        ask[m++] = c[i];
    }
    if (m == 0)
        return SY_OK; /* every key read already this turn */
    if (fresh) {
        memcpy(fresh, ask, m * sizeof *ask);
        *n_fresh = m;
    }
    int64_t *held = sy_xmalloc(m * sizeof *held);
    int status = sy_store_slot_room_as(s, owner, ask, m, now, held);
    for (size_t i = 0; i < m; i++) {
        ledger_key *k = &l->keys[first + i];
        k->held = status == SY_OK ? held[i] : -1; /* failed: the turn is lost */
        /* The store counts the live holders when the counters leave no
         * room for the claim (store/slots.h); none held is exact too. */
        k->exact = k->held == 0 || k->held + ask[i].n > ask[i].limit;
    }
    free(held);
    free(ask);
    return status;
}

int sy_ledger_take(sy_ledger *l, sy_store *s, const sy_store_fence *fence,
                   const char *tenant, const sy_slot_holder *h, const sy_slot_claim *c,
                   size_t n, int64_t now, const uint32_t *at, bool *taken, size_t *full,
                   int64_t *held)
{
    *taken = false;
    int status = SY_OK;
    ledger_key *k[SY_SLOT_CLAIMS_MAX];
    bool missing = false;
    for (size_t i = 0; i < n; i++)
        missing |= !(k[i] = at && at[i] && at[i] <= l->n_keys ? &l->keys[at[i] - 1]
                                                               : find(l, c[i].key));
    if (missing) {
        /* Keys the turn's read (sy_limits_prepare) did not name: a task
         * that became Ready since.  Read together, then found. */
        status = sy_ledger_read(l, s, fence->owner, c, n, now, NULL, NULL, NULL);
        if (status != SY_OK)
            return status;
        for (size_t i = 0; i < n; i++)
            k[i] = find(l, c[i].key);
    }
    for (size_t i = 0; i < n; i++) {
        if (k[i]->held >= 0 && !k[i]->exact &&
            k[i]->held + k[i]->added + c[i].n > c[i].limit) {
            /* Full by the counters, which may count holders no longer
             * live (a dead host's, not reaped yet): before a task waits,
             * or is dropped by its strategy, count the live ones.  A
             * claim of the whole limit makes the store count them. */
            sy_slot_claim whole = {c[i].key, c[i].limit, c[i].limit};
            status = sy_store_slot_room_as(s, fence->owner, &whole, 1, now, &k[i]->held);
            if (status != SY_OK)
                return status;
            k[i]->exact = true;
        }
        if (k[i]->held < 0 || k[i]->held + k[i]->added + c[i].n > c[i].limit) {
            *full = i;
            *held = k[i]->held < 0 ? -1 : k[i]->held + k[i]->added;
            return SY_OK;
        }
    }
    l->p = sy_engine_grow(l->p, &l->cap_p, l->n_p + n, sizeof *l->p);
    for (size_t i = 0; i < n; i++) {
        k[i]->added += c[i].n;
        l->p[l->n_p++] = (pending){{k[i]->key, c[i].limit, c[i].n, *h, fence->epoch, tenant},
                                   (size_t)(k[i] - l->keys), fence->owner};
    }
    *taken = true;
    return SY_OK;
}

void sy_ledger_untake(sy_ledger *l, const sy_slot_holder *h)
{
    while (l->n_p > l->written) {
        pending *p = &l->p[l->n_p - 1];
        if (p->take.holder.run_id != h->run_id || p->take.holder.idx != h->idx ||
            p->take.holder.elem != h->elem || p->take.holder.token != h->token)
            break;
        l->keys[p->key].added -= p->take.n;
        l->n_p--;
    }
}

int sy_ledger_write(sy_ledger *l, sy_store *s, int64_t now)
{
    int status = SY_OK;
    /* One call per owner: every run of a host has the same, so one. */
    while (status == SY_OK && l->written < l->n_p) {
        const char *owner = l->p[l->written].owner;
        size_t n = 0;
        for (size_t i = l->written; i < l->n_p && strcmp(l->p[i].owner, owner) == 0; i++)
            n++;
        sy_slot_take *t = sy_xmalloc(n * sizeof *t);
        for (size_t i = 0; i < n; i++)
            t[i] = l->p[l->written + i].take;
        bool put = false;
        status = sy_store_put_slots(s, owner, t, n, now, &put);
        free(t);
        if (status == SY_OK && !put)
            status = SY_ESTATE;
        l->written += n;
    }
    return status;
}
