/*
 * store/postgres/slots.c -- flow-control slots (store/slots.h) in the
 * PostgreSQL store, where several hosts take slots at once.
 *
 * What a key holds is counted per host: slot_counts has a row per key and
 * host (owner), what that host's attempts hold of the key and the slots
 * granted to it ahead (postgres/grants.c), counted while its `until` is
 * after the clock.  `until` is the host's earliest lease end, renewed
 * with its leases (SY_PG_RENEW): a host that dies stops counting when
 * its leases end, exactly then and once, and a host whose leases lapsed
 * comes back under a new owner id, so its old count never counts again.
 * A key's count is the sum over hosts of the greater of what each holds
 * and what it was granted: one indexed read, whatever the holders.  Only
 * the host writes what it holds, so hosts' batches do not wait on each
 * other's counts; slots are taken within a grant, made only under the
 * key's lock (postgres/grants.c).  The take's statement checks again that
 * the host's holders stay within its grant (or the key within its limit)
 * and writes nothing otherwise: a batch replayed on a new connection
 * (postgres/journal.c) that would find a key fuller fails instead.
 *
 * Slots given back wait in the handle for the batch's take, whose
 * statement writes each key's row once for both; they go alone before
 * any statement that counts the keys otherwise, and at the commit.
 *
 * Who holds a key is in the attempt's own row (postgres/holds.c), or a
 * slot row for a take no start write carried; the view slot_holders
 * names both, for listings, tenants' shares and cancel requests.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/postgres/internal.h"

int sy_pg_lock_keys(sy_store_pg *q, int id, const char *keys, size_t n, size_t *busy)
{
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, keys);
    PGresult *r;
    int status = sy_pg_run(q, id, &p, &r, "lock keys");
    *busy = n;
    if (status == SY_OK && PQnfields(r) == 1) {
        /* One row: the indices of the keys not locked. */
        const char *at = PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
        for (int64_t k; sy_pg_next_int(&at, &k);)
            if (k >= 1 && (size_t)k - 1 < *busy)
                *busy = (size_t)k - 1;
        PQclear(r);
        return status;
    }
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        size_t k = (size_t)sy_pg_col_int(r, i, 0) - 1;
        const char *got = sy_pg_col(r, i, 1);
        if (got && got[0] != 't' && k < *busy)
            *busy = k;
    }
    PQclear(r);
    return status;
}

static int held_of(sy_store_pg *q, const char *key, int64_t now, int64_t *held)
{
    int status = sy_pg_returns_flush(q);
    if (status != SY_OK)
        return status;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, now);
    PGresult *r;
    status = sy_pg_run(q, SY_PG_SLOT_HELD, &p, &r, "count a key's holders");
    if (status == SY_OK)
        *held = sy_pg_col_int(r, 0, 0);
    PQclear(r);
    return status;
}

/* Each array parameter of a statement, built and freed together. */
typedef struct {
    char *v[10];
    int n;
    bool oom;
} arrays;

static void arrays_add(arrays *a, char *text)
{
    a->v[a->n++] = text;
    a->oom |= !text;
}

static void arrays_free(arrays *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
}

/* Runs statement `id` with the arrays as $1.. and then `extra` more
 * parameters set by the caller in *p from $(a->n + 1) on. */
static int run_arrays(sy_store_pg *q, int id, arrays *a, sy_pg_params *p, PGresult **r,
                      const char *what)
{
    if (a->oom)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    for (int i = 0; i < a->n; i++)
        sy_pg_text(p, i + 1, a->v[i]);
    return sy_pg_run(q, id, p, r, what);
}

int sy_pg_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                     const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                     size_t *full, int64_t *held)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "take_slots: no batch is open");
    *taken = false;
    int64_t used[SY_SLOT_CLAIMS_MAX];
    if (n > SY_SLOT_CLAIMS_MAX)
        return sy_store_fail(s, SY_EINVAL, "take_slots: %zu keys, at most %d", n,
                             SY_SLOT_CLAIMS_MAX);
    int status = sy_pg_slot_room(s, fence->owner, c, n, now, used);
    for (size_t i = 0; status == SY_OK && i < n; i++)
        if (used[i] < 0 || used[i] + c[i].n > c[i].limit) {
            /* Full, or another host is taking it this moment; what is
             * held (the room read says what leaves room for a grant). */
            *full = i;
            *held = used[i];
            return used[i] < 0 ? SY_OK : held_of(q, c[i].key, now, held);
        }
    sy_slot_take t[SY_SLOT_CLAIMS_MAX];
    for (size_t i = 0; i < n; i++)
        t[i] = (sy_slot_take){c[i].key, c[i].limit, c[i].n, *h, fence->epoch, NULL};
    if (status == SY_OK)
        status = sy_pg_put_slots(s, fence->owner, t, n, now, taken);
    /* One attempt's take, with no start write to carry it: rows now. */
    if (status == SY_OK && *taken)
        status = sy_pg_holds_to_rows(q);
    if (status == SY_OK && !*taken) {
        /* A key filled between the read and the write: which, for the
         * task's word on why it waits. */
        for (size_t i = 0; status == SY_OK && i < n; i++) {
            status = held_of(q, c[i].key, now, held);
            if (status == SY_OK && (*held + c[i].n > c[i].limit || i == n - 1)) {
                *full = i;
                break;
            }
        }
    }
    return status;
}

static bool same_sum(const sy_slot_take *x, const sy_slot_take *y)
{
    if (strcmp(x->key, y->key) != 0)
        return false;
    if (x->tenant && y->tenant)
        return strcmp(x->tenant, y->tenant) == 0;
    return !x->tenant && !y->tenant && x->holder.run_id == y->holder.run_id;
}

static uint64_t sum_hash(const sy_slot_take *t)
{
    uint64_t h = sy_fnv1a(SY_FNV_START, t->key);
    return t->tenant ? sy_fnv1a(h * 31, t->tenant) : h * 31 + (uint64_t)t->holder.run_id;
}

/* The arrays of n takes summed by key and tenant, $1 on: the keys, with
 * `limits` the largest limit each names, the slots, the tenants and the
 * runs (0 where the tenant is known; else the run whose tenant the
 * statement reads).  A turn's takes of a pool are one row, not one a
 * take: the statement's cost on the server was per row (a run read for
 * its tenant, the sums).  Rows are found by hash, in the order first
 * seen.  With `rows`, *rows is set to each row's first take and its
 * slots summed (in memory the caller frees), *n_rows to how many.  False
 * for want of memory. */
typedef struct {
    const sy_slot_take *first; /* its key, and its tenant or none */
    int64_t n;                 /* the slots of its takes */
} summed_row;

static bool takes_summed(arrays *a, const sy_slot_take *t, size_t n, bool limits,
                         summed_row **rows, size_t *n_rows)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof *slot); /* row + 1; 0: free */
    const sy_slot_take **first = malloc((n ? n : 1) * sizeof *first);
    const char **key = malloc((n ? 2 * n : 1) * sizeof *key), **tenant = key + n;
    int64_t *v = malloc((n ? 3 * n : 1) * sizeof *v); /* lim[], n[], run[] */
    size_t m = 0;
    if (slot && first && key && v) {
        for (size_t i = 0; i < n; i++) {
            size_t k = (size_t)sum_hash(&t[i]) & (cap - 1);
            while (slot[k] && !same_sum(first[slot[k] - 1], &t[i]))
                k = (k + 1) & (cap - 1);
            if (!slot[k]) {
                first[m] = &t[i];
                key[m] = t[i].key;
                tenant[m] = t[i].tenant ? t[i].tenant : "";
                v[m] = t[i].limit;
                v[n + m] = 0;
                v[2 * n + m] = t[i].tenant ? 0 : t[i].holder.run_id;
                slot[k] = ++m;
            }
            size_t row = slot[k] - 1;
            if (t[i].limit > v[row])
                v[row] = t[i].limit;
            v[n + row] += t[i].n;
        }
        arrays_add(a, sy_pg_text_array(key, m));
        if (limits)
            arrays_add(a, sy_pg_int_array(v, 1, m));
        arrays_add(a, sy_pg_int_array(v + n, 1, m));
        arrays_add(a, sy_pg_text_array(tenant, m));
        arrays_add(a, sy_pg_int_array(v + 2 * n, 1, m));
    }
    a->oom |= !slot || !first || !key || !v;
    summed_row *r = rows && !a->oom ? malloc((m ? m : 1) * sizeof *r) : NULL;
    a->oom |= rows && !r;
    for (size_t i = 0; r && i < m; i++)
        r[i] = (summed_row){first[i], v[n + i]};
    if (rows) {
        *rows = r; /* the caller's now */
        *n_rows = r ? m : 0;
    }
    free(slot);
    free(first);
    free(key);
    free(v);
    return !a->oom;
}

/* The listed keys (postgres/unwritten.h) as SY_PG_SLOT_PUT's $12..$15:
 * each key, what is not written of it and its tenant, and whether it
 * may go unwritten this time (its listed takes and give-backs all of
 * one tenant, the one of what is not written yet).  Each v[i] the
 * caller's to free. */
static int unwritten_arrays(sy_store_pg *q, const char *owner, char *v[4], bool *all_may)
{
    *all_may = true;
    sy_pg_unwritten *u = &q->unwritten;
    size_t n = u->n_list;
    const char **tenant = malloc((n ? n : 1) * sizeof *tenant);
    int64_t *count = malloc((n ? n : 1) * sizeof *count);
    char *may = malloc(2 * n + 3);
    if (tenant && count && may) {
        char *o = may;
        *o++ = '{';
        for (size_t i = 0; i < n; i++) {
            const char *mine, *listed = sy_pg_unwritten_list_tenant(u, owner, u->list[i]);
            sy_pg_unwritten_get(u, owner, u->list[i], &count[i], &mine);
            tenant[i] = mine ? mine : "";
            if (i)
                *o++ = ',';
            bool one = listed && (!mine || strcmp(mine, listed) == 0);
            *all_may &= one;
            *o++ = one ? 't' : 'f';
        }
        *o++ = '}';
        *o = '\0';
        v[0] = sy_pg_text_array(u->list, n);
        v[1] = sy_pg_int_array(count, 1, n);
        v[2] = sy_pg_text_array(tenant, n);
        v[3] = may;
        may = NULL;
    }
    free(tenant);
    free(count);
    free(may);
    for (int i = 0; i < 4; i++)
        if (!v[i])
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    return SY_OK;
}

int sy_pg_settle(sy_store_pg *q, const char *owner, const char *const *key, size_t n)
{
    const char **k = malloc((n ? n : 1) * sizeof *k), **tenant = malloc((n ? n : 1) * sizeof *tenant);
    int64_t *count = malloc((n ? n : 1) * sizeof *count);
    size_t m = 0; /* the keys with something not written */
    for (size_t i = 0; k && tenant && count && i < n; i++) {
        sy_pg_unwritten_get(&q->unwritten, owner, key[i], &count[m], &tenant[m]);
        if (count[m] != 0)
            k[m++] = key[i];
    }
    int status = k && tenant && count ? SY_OK : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    if (status == SY_OK && m > 0) {
        char *keys = sy_pg_text_array(k, m), *counts = sy_pg_int_array(count, 1, m),
             *tenants = sy_pg_text_array(tenant, m);
        sy_pg_params p = {0};
        sy_pg_text(&p, 1, owner);
        sy_pg_text(&p, 2, keys);
        sy_pg_text(&p, 3, counts);
        sy_pg_text(&p, 4, tenants);
        status = keys && counts && tenants
                     ? sy_pg_run(q, SY_PG_SLOT_SETTLE, &p, NULL, "write slot counts")
                     : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        free(keys);
        free(counts);
        free(tenants);
        for (size_t i = 0; status == SY_OK && i < m; i++)
            if (sy_pg_unwritten_stage(&q->unwritten, owner, k[i], 0, NULL) != SY_OK)
                status = sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    }
    free(k);
    free(tenant);
    free(count);
    return status;
}

int sy_pg_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                    int64_t now, bool *put)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "put_slots: no batch is open");
    *put = false;
    /* Another owner's give-back (tests) goes alone; this owner's with
     * the takes. */
    int status = q->back[4] && strcmp(q->back[4], owner) != 0 ? sy_pg_returns_flush(q) : SY_OK;
    if (status != SY_OK)
        return status;
    arrays a = {0};
    summed_row *rows = NULL;
    size_t m = 0;
    takes_summed(&a, t, n, true, &rows, &m);
    /* The keys' counts not written ($12..$15): the give-back's keys were
     * listed with it, the takes' now, once a row (a key and tenant). */
    for (size_t i = 0; status == SY_OK && i < m; i++)
        if (sy_pg_unwritten_list(&q->unwritten, owner, rows[i].first->key,
                                 rows[i].first->tenant) != SY_OK)
            status = sy_store_fail(s, SY_ENOMEM, "out of memory");
    char *unwritten[4] = {NULL};
    bool all_may = false;
    if (status == SY_OK)
        status = unwritten_arrays(q, owner, unwritten, &all_may);
    sy_pg_params p = {0};
    sy_pg_text(&p, 6, owner);
    sy_pg_int(&p, 7, now);
    for (int i = 0; i < 4; i++)
        sy_pg_text(&p, 8 + i, q->back[4] ? q->back[i] : "{}");
    for (int i = 0; i < 4; i++)
        sy_pg_text(&p, 12 + i, unwritten[i]);
    /* A turn that looks like it writes no key (every key of its takes
     * read under the shared lock, within a grant, and may go unwritten)
     * asks the quick statement first; one it answers with no row sends
     * the whole one, and the next 4 takes go straight to that (a key past
     * its bound or with a waiter: asking again at once would likely cost
     * a round trip for nothing). */
    bool quick = status == SY_OK && all_may && m > 0 && q->quick_rest == 0;
    for (size_t i = 0; quick && i < m; i++) {
        int64_t v;
        quick = sy_pg_key_get(&q->read_shared, owner, rows[i].first->key, &v);
    }
    PGresult *r = NULL;
    if (quick) {
        status = run_arrays(q, SY_PG_SLOT_PUT_QUICK, &a, &p, &r, "take slots");
        if (status == SY_OK && PQntuples(r) != 1) {
            PQclear(r);
            r = NULL;
            q->quick_rest = 4;
        }
    } else if (q->quick_rest > 0)
        q->quick_rest--;
    if (status == SY_OK && !r)
        status = run_arrays(q, SY_PG_SLOT_PUT, &a, &p, &r, "take slots");
    for (int i = 0; i < 4; i++)
        free(unwritten[i]);
    *put = status == SY_OK && PQntuples(r) == 1;
    /* What each listed key leaves unwritten, kept if the batch commits. */
    const char *which = *put ? sy_pg_col(r, 0, 3) : NULL, *what = *put ? sy_pg_col(r, 0, 4) : NULL;
    for (int64_t j, v; status == SY_OK && sy_pg_next_int(&which, &j) && sy_pg_next_int(&what, &v);)
        if (j >= 1 && (size_t)j <= q->unwritten.n_list) {
            const char *key = q->unwritten.list[j - 1];
            const char *tenant = sy_pg_unwritten_list_tenant(&q->unwritten, owner, key);
            if (sy_pg_unwritten_stage(&q->unwritten, owner, key, v, v ? tenant : NULL) != SY_OK)
                status = sy_store_fail(s, SY_ENOMEM, "out of memory");
        }
    sy_pg_returns_clear(q); /* sent, or the batch is lost */
    /* What each key's grant leaves free now: the next turn's hint. */
    const char *row = *put ? sy_pg_col(r, 0, 1) : NULL, *left = *put ? sy_pg_col(r, 0, 2) : NULL;
    for (int64_t i, f; sy_pg_next_int(&row, &i) && sy_pg_next_int(&left, &f);)
        if (i >= 1 && (size_t)i <= m)
            sy_pg_key_set(&q->hints, owner, rows[i - 1].first->key, f);
    free(rows);
    PQclear(r);
    arrays_free(&a);
    /* Kept for the writes that start the attempts (postgres/holds.c). */
    return status == SY_OK && *put && n > 0 ? sy_pg_holds_add(q, owner, t, n, now) : status;
}

/* The slot rows of n takes given back, by primary key, deleted. */
static int delete_takes(sy_store_pg *q, const char *owner, const sy_slot_take *t, size_t n)
{
    const char **key = malloc((n ? n : 1) * sizeof *key);
    int64_t *v = malloc((n ? n : 1) * 4 * sizeof *v); /* row i: run idx elem token */
    arrays a = {0};
    if (key && v) {
        for (size_t i = 0; i < n; i++) {
            key[i] = t[i].key;
            int64_t *row = &v[4 * i];
            row[0] = t[i].holder.run_id;
            row[1] = t[i].holder.idx;
            row[2] = t[i].holder.elem;
            row[3] = t[i].holder.token;
        }
        arrays_add(&a, sy_pg_text_array(key, n));
        for (size_t j = 0; j < 4; j++)
            arrays_add(&a, sy_pg_int_array(v + j, 4, n));
    }
    a.oom |= !key || !v;
    free(key);
    free(v);
    sy_pg_params p = {0};
    sy_pg_text(&p, 6, owner);
    int status = run_arrays(q, SY_PG_SLOT_DELETE_TAKES, &a, &p, NULL, "return slots");
    arrays_free(&a);
    return status;
}

void sy_pg_returns_clear(sy_store_pg *q)
{
    for (int i = 0; i < 5; i++) {
        free(q->back[i]);
        q->back[i] = NULL;
    }
    sy_pg_keys_clear(&q->back_by_key);
    sy_pg_unwritten_list_clear(&q->unwritten); /* its keys: the give-back's */
}

typedef struct {
    const char **key;
    size_t n;
} key_list;

static void list_key(void *arg, const char *key)
{
    key_list *l = arg;
    l->key[l->n++] = key;
}

int sy_pg_returns_flush(sy_store_pg *q)
{
    if (!q->back[4])
        return SY_OK;
    /* The keys read under their shared locks keep their grants: the turn
     * takes within what the read found there, under no grants' lock, so
     * a grant lowered before its take would have it pass its grant (all
     * keep them when some of those keys were not kept). */
    key_list l = {malloc((q->read_shared.n ? q->read_shared.n : 1) * sizeof *l.key), 0};
    if (l.key)
        sy_pg_keys_each(&q->read_shared, q->back[4], list_key, &l);
    char *kept = l.key ? sy_pg_text_array(l.key, l.n) : NULL;
    free(l.key);
    sy_pg_params p = {0};
    for (int i = 0; i < 5; i++)
        sy_pg_text(&p, i + 1, q->back[i]);
    sy_pg_text(&p, 6, q->read_shared.dropped || !kept ? "true" : "false");
    sy_pg_text(&p, 7, kept ? kept : "{}");
    /* The give-back's keys (listed with it) counted exactly first. */
    int status = sy_pg_settle(q, q->back[4], q->unwritten.list, q->unwritten.n_list);
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_SLOT_RETURN_TAKES, &p, NULL, "return slots");
    free(kept);
    sy_pg_returns_clear(q);
    return status;
}

int sy_pg_returns_commit(sy_store_pg *q)
{
    if (!q->back[4])
        return SY_OK;
    /* The take's statement with no take: its keys within their grants
     * go unwritten as a take's do, where the statement sent alone writes
     * each (it keeps the grants the turn read, which the batch takes
     * within; there is nothing left to take at the commit).  At 0 every
     * row counts as live: a give-back needs no clock. */
    char *owner = strdup(q->back[4]);
    bool put = false;
    int status = owner ? sy_pg_put_slots(&q->base, owner, NULL, 0, 0, &put)
                       : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    free(owner);
    return status;
}

int sy_pg_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "return_takes: no batch is open");
    /* One give-back waits at a time: an earlier one goes now. */
    int status = sy_pg_returns_flush(q);
    arrays a = {0};
    summed_row *rows = NULL;
    size_t m = 0;
    if (status == SY_OK && n > 0 && takes_summed(&a, t, n, false, &rows, &m)) {
        /* Kept for the batch's next take (SY_PG_SLOT_PUT), or sent alone
         * before anything else counts the keys (sy_pg_returns_flush). */
        for (int i = 0; i < 4; i++) {
            q->back[i] = a.v[i];
            a.v[i] = NULL;
        }
        if (!(q->back[4] = strdup(owner)))
            a.oom = true;
        for (size_t i = 0; !a.oom && i < m; i++) {
            const sy_slot_take *f = rows[i].first;
            sy_pg_key_add(&q->back_by_key, owner, f->key, rows[i].n);
            a.oom |= sy_pg_unwritten_list(&q->unwritten, owner, f->key, f->tenant) != SY_OK;
        }
    }
    free(rows);
    if (status == SY_OK && a.oom) {
        sy_pg_returns_clear(q);
        status = sy_store_fail(s, SY_ENOMEM, "out of memory");
    }
    arrays_free(&a);
    /* A take is a row of its own only where no start write carried it
     * (sy_pg_holds_to_rows), which the process remembers. */
    if (status == SY_OK && sy_pg_slot_rows_made())
        status = delete_takes(q, owner, t, n);
    return status;
}

int sy_pg_return_slots(sy_store *s, const sy_slot_holder *h, size_t n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "return_slots: no batch is open");
    /* The batch's takes not written yet are holders too; its give-back
     * goes first, as it went before. */
    int status = sy_pg_returns_flush(q);
    if (status == SY_OK)
        status = sy_pg_holds_to_rows(q);
    int64_t *v = malloc((n ? n : 1) * 4 * sizeof *v);
    if (status != SY_OK || !v) {
        free(v);
        return status != SY_OK ? status : sy_store_fail(s, SY_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        v[4 * i] = h[i].run_id;
        v[4 * i + 1] = h[i].idx;
        v[4 * i + 2] = h[i].elem;
        v[4 * i + 3] = h[i].token;
    }
    arrays a = {0};
    for (size_t col = 0; col < 4; col++)
        arrays_add(&a, sy_pg_int_array(v + col, 4, n));
    free(v);
    sy_pg_params p = {0};
    status = run_arrays(q, SY_PG_SLOT_RETURN, &a, &p, NULL, "return slots");
    arrays_free(&a);
    return status;
}

int sy_pg_reap_slots(sy_store *s, int64_t now, size_t *n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "reap_slots: called inside a batch; commit first");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, now);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_SLOT_REAP, &p, &r, "reap slots");
    *n = status == SY_OK ? (size_t)sy_pg_col_int(r, 0, 0) : 0;
    PQclear(r);
    /* Runs that hold nothing, or whose claim ended, keep no counts row. */
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_SLOT_FORGET, &p, NULL, "forget counts");
    return status;
}

int sy_pg_list_slots(sy_store *s, int64_t now,
                     int (*cb)(void *arg, const sy_slot_record *r), void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    /* The batch's takes not written yet are holders too. */
    int status = q->batch ? sy_pg_returns_flush(q) : SY_OK;
    if (status == SY_OK && q->batch)
        status = sy_pg_holds_to_rows(q);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, now);
    PGresult *r = NULL;
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_SLOT_LIST, &p, &r, "list slots");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_slot_record rec = {
            .key = sy_pg_col(r, i, 0),
            .holder = {sy_pg_col_int(r, i, 1), (uint32_t)sy_pg_col_int(r, i, 2),
                       sy_pg_col_int(r, i, 3), sy_pg_col_int(r, i, 4)},
            .n = sy_pg_col_int(r, i, 5),
            .owner = sy_pg_col(r, i, 6),
            .taken = sy_pg_col_int(r, i, 7),
            .live = sy_pg_col(r, i, 8) && sy_pg_col(r, i, 8)[0] == 't',
        };
        if (cb(arg, &rec) != 0)
            break;
    }
    PQclear(r);
    return status;
}
