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
 * the host itself writes what it holds, so two hosts' batches do not
 * wait on each other's counts; slots are taken within a grant, and a
 * grant made only under the key's lock (postgres/grants.c).  The take's
 * statement checks again that the host's holders stay within its grant
 * (or, with none, the key within its limit) and writes nothing
 * otherwise, so a batch replayed on a new connection (postgres/journal.c)
 * that would find a key fuller fails rather than exceeding it.
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

/* The live condition of holder `s` (slot row or slot_holders) at `now`
 * (store/slots.h). */
#define LIVE(now)                                                             \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner" \
    " AND r.lease_epoch = s.epoch AND r.lease_until > " now ")"

/* What key `key` (an SQL expression) holds at `now`: every host's
 * count, or its grant where that is more. */
#define HELD(key, now) SY_PG_USED(key, "NULL::text", now)

/* The tenant of summed takes row `u` (takes_summed): its own, or where
 * the host did not know it (run_id not 0), its run's; '' for a run no
 * longer there (its count then has nothing to take off). */
#define TENANT(u)                                                             \
    "CASE WHEN " u ".run_id = 0 THEN " u ".tenant ELSE COALESCE((SELECT r.tenant" \
    " FROM runs r WHERE r.id = " u ".run_id), '') END"

const char *const sy_pg_slot_sql[SY_PG_RATE_FIRST - SY_PG_SLOT_FIRST] = {
    /* 21338: the slots' class of advisory locks (21337 is the ticks'),
     * and 21340 the grants' (postgres/grants.c): both exclusive, for a
     * count no grant or take moves.  In key order; one row, the indices
     * of the keys not locked (NULL: none), so that a replay
     * (postgres/journal.c) finds one row as ever. */
    [SY_PG_SLOT_LOCK - SY_PG_SLOT_FIRST] =
        "SELECT array_agg(i) FILTER (WHERE NOT got) FROM (SELECT k.i,"
        " pg_try_advisory_xact_lock(21340, hashtext(k.key)) AND"
        " pg_try_advisory_xact_lock(21338, hashtext(k.key)) AS got"
        " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i) ORDER BY k.key) x",
    /* Takes no start write carried, as rows (postgres/holds.c). */
    [SY_PG_SLOT_ROWS - SY_PG_SLOT_FIRST] =
        "INSERT INTO slots (key, owner, run_id, idx, elem, token, n, epoch, taken)"
        " SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[],"
        " $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])"
        " ON CONFLICT (key, run_id, idx, elem, token) DO UPDATE SET n = excluded.n,"
        " owner = excluded.owner, epoch = excluded.epoch, taken = excluded.taken",
    [SY_PG_SLOT_HELD - SY_PG_SLOT_FIRST] = "SELECT " HELD("$1::text", "$2::bigint"),
    /* The holders given back: (run, idx, elem, token), token 0 for the
     * whole run; what they hold taken off their hosts' counts and
     * grants, their holds cleared and their rows deleted. */
    [SY_PG_SLOT_RETURN - SY_PG_SLOT_FIRST] =
        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::bigint[])"
        " AS h(run_id, idx, elem, token)),"
        " held AS MATERIALIZED (SELECT s.key, s.n, s.owner, s.run_id FROM slot_holders s JOIN h ON"
        " s.run_id = h.run_id AND (h.token = 0 OR (s.idx = h.idx AND s.elem = h.elem AND"
        " s.token = h.token))),"
        " d AS (DELETE FROM slots s USING h WHERE s.run_id = h.run_id AND (h.token = 0 OR"
        " (s.idx = h.idx AND s.elem = h.elem AND s.token = h.token)) RETURNING 1),"
        " ct AS (UPDATE tasks t SET hold = NULL FROM h WHERE t.run_id = h.run_id AND"
        " t.hold IS NOT NULL AND (h.token = 0 OR (t.idx = h.idx AND h.elem = -1 AND"
        " t.fence = h.token)) RETURNING 1),"
        " ce AS (UPDATE task_elements t SET hold = NULL FROM h WHERE t.run_id = h.run_id AND"
        " t.hold IS NOT NULL AND (h.token = 0 OR (t.idx = h.idx AND t.elem = h.elem AND"
        " t.fence = h.token)) RETURNING 1)"
        " UPDATE slot_counts k SET held = GREATEST(0, k.held - g.n),"
        " granted = GREATEST(0, k.granted - g.n), tenants = switchyard_counts_add(k.tenants,"
        " g.minus) FROM (SELECT key, owner, sum(n)::bigint AS n, jsonb_object_agg(tenant, -n)"
        " AS minus FROM (SELECT held.key, held.owner, r.tenant, sum(held.n)::bigint AS n FROM"
        " held JOIN runs r ON r.id = held.run_id GROUP BY held.key, held.owner, r.tenant) y"
        " GROUP BY key, owner) g WHERE k.key = g.key AND k.owner = g.owner AND"
        " (SELECT count(*) FROM d) + (SELECT count(*) FROM ct) + (SELECT count(*) FROM ce)"
        " >= 0",
    /* The rows and cancel requests of holders no longer live. */
    [SY_PG_SLOT_REAP - SY_PG_SLOT_FIRST] =
        "WITH d AS (DELETE FROM slots s WHERE NOT" LIVE("$1::bigint") " RETURNING 1),"
        " c AS (DELETE FROM slot_cancels s WHERE NOT" LIVE("$1::bigint") " RETURNING 1)"
        " SELECT count(*) + 0 * (SELECT count(*) FROM c) FROM d",
    /* Counts that ended, or hold and grant nothing.  SKIP LOCKED: a row
     * another host's open batch is writing is left for a later reap,
     * never waited on. */
    [SY_PG_SLOT_FORGET - SY_PG_SLOT_FIRST] =
        "DELETE FROM slot_counts WHERE ctid IN (SELECT ctid FROM slot_counts WHERE"
        " until <= $1::bigint OR (held = 0 AND granted = 0) FOR UPDATE SKIP LOCKED)",
    /* A turn's keys for no host in particular (after SY_PG_SLOT_LOCK):
     * one row, the indices of the keys that hold any and what they hold
     * (NULL: none), so that a key nobody holds costs nothing to read and
     * a replay finds one row. */
    [SY_PG_SLOT_ROOM - SY_PG_SLOT_FIRST] =
        "SELECT array_agg(i), array_agg(h) FROM (SELECT c.i, " HELD("c.key", "$2::bigint")
        " AS h FROM unnest($1::text[]) WITH ORDINALITY AS c(key, i)) x WHERE h <> 0",
    /* A turn's takes by host $6 at $7 ($1..$5, takes_summed), all or
     * none: each key's within the host's grant or, with none (or too
     * small), within its limit (the largest named for it) counting every
     * other host; none when one would not be (a replayed batch,
     * store/slots.h), and then no row comes back, else one: the rows of
     * $1 first naming each key and what is free in its grant then.  The
     * batch's give-back not sent yet ($8..$11, SY_PG_SLOT_RETURN_TAKES's
     * $1..$4) comes off first, its waiters woken as there; a key only
     * given back keeps its `until`.  What the grant keeps beyond what
     * the host then holds: its extra, none while the key has a waiter,
     * never more than it had.  What is held is counted by tenant too.
     * `(SELECT $1::text[])`: the planner cannot count the keys, so the
     * plan is the same for any and the generic one is kept; a pool's one
     * key had every take planned again (3 of its 4 ms on the server). */
    [SY_PG_SLOT_PUT - SY_PG_SLOT_FIRST] =
        "WITH p AS (SELECT * FROM unnest((SELECT $1::text[]), $2::bigint[], $3::bigint[], $4::text[],"
        " $5::bigint[]) WITH ORDINALITY AS p(key, lim, n, tenant, run_id, i)),"
        " b AS (SELECT * FROM unnest((SELECT $8::text[]), $9::bigint[], $10::text[],"
        " $11::bigint[]) AS b(key, n, tenant, run_id)),"
        " tn AS (SELECT key, count(*) AS nt, min(tenant) AS tenant, sum(n)::bigint AS n,"
        " jsonb_object_agg(tenant, n) AS plus FROM (SELECT key, tenant, sum(n)::bigint AS n"
        " FROM (SELECT p.key, p.n, " TENANT("p") " AS tenant FROM p UNION ALL SELECT b.key,"
        " -b.n, " TENANT("b") " FROM b) y GROUP BY key, tenant) x GROUP BY key),"
        " g AS (SELECT COALESCE(t.key, v.key) AS key, t.i, COALESCE(t.lim, 0) AS lim,"
        " COALESCE(t.n, 0) AS n, COALESCE(v.n, 0) AS back FROM (SELECT key, min(i) AS i,"
        " max(lim) AS lim, sum(n)::bigint AS n FROM p GROUP BY key) t FULL JOIN (SELECT key,"
        " sum(n)::bigint AS n FROM b GROUP BY key) v ON v.key = t.key),"
        " m AS MATERIALIZED (SELECT g.key, g.i, g.lim, g.n, k.key IS NOT NULL AS had,"
        " k.until AS was, GREATEST(0, COALESCE(k.held, 0) - g.back) + g.n AS after, k.granted,"
        " COALESCE(k.extra, 0) AS extra, COALESCE(k.tenants, '{}'::jsonb) AS tenants FROM g"
        " LEFT JOIN slot_counts k ON k.key = g.key AND k.owner = $6::text AND"
        " k.until > $7::bigint),"
        " over AS MATERIALIZED (SELECT 1 FROM m WHERE m.n > 0 AND COALESCE(m.granted, 0) <"
        " m.after AND m.after + " SY_PG_USED("m.key", "$6::text", "$7::bigint") " > m.lim"
        " LIMIT 1),"
        " e AS MATERIALIZED (SELECT " SY_PG_LEASE_END("$6::text", "$7::bigint") " AS until),"
        " woken AS (SELECT pg_notify('switchyard', '') FROM (SELECT 1 FROM slot_waiters w"
        " JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch"
        " WHERE w.key IN (SELECT key FROM b) AND w.owner <> $6 LIMIT 1) x),"
        " ins AS (INSERT INTO slot_counts (key, owner, held, granted, extra, until, tenants)"
        " SELECT m.key, $6::text, m.after, GREATEST(m.after, LEAST(COALESCE(m.granted, 0),"
        " m.after + CASE WHEN " SY_PG_WAITED("m.key") " THEN 0 ELSE m.extra END)), m.extra,"
        " CASE WHEN m.n > 0 THEN e.until ELSE m.was END, "
        SY_PG_TENANTS_ADD("m.tenants", "tn.nt", "tn.tenant", "tn.n", "tn.plus")
        " FROM m LEFT JOIN tn ON tn.key = m.key CROSS JOIN e WHERE CASE WHEN m.n > 0 THEN"
        " e.until > $7::bigint ELSE m.had END AND NOT EXISTS (SELECT 1 FROM over) AND"
        " (SELECT count(*) FROM woken) >= 0 ON CONFLICT (key, owner) DO UPDATE SET"
        " held = excluded.held, granted = excluded.granted, extra = excluded.extra,"
        " until = excluded.until, tenants = excluded.tenants RETURNING key,"
        " granted - held AS free)"
        " SELECT count(*), array_agg(m.i) FILTER (WHERE m.i IS NOT NULL), array_agg(ins.free)"
        " FILTER (WHERE m.i IS NOT NULL) FROM ins JOIN m ON m.key = ins.key"
        " HAVING NOT EXISTS (SELECT 1 FROM over)",
    /* Takes given back, summed by key and tenant (takes_summed): the
     * host's counts; the grant keeps what it had, the slots given back
     * free in it again, but no more beyond what the host then holds than
     * its extra, and none while the key has a waiter (postgres/grants.c).
     * When a key given back has a waiter on another host, that host is
     * woken at the commit (the channel of postgres/listen.c), so the
     * waiter first in the key's order takes the slot at once, not at its
     * next retry; `woken` is read by the update's condition so that it
     * runs.  Sent alone only when no take carried it (SY_PG_SLOT_PUT);
     * planned once, as that one is. */
    [SY_PG_SLOT_RETURN_TAKES - SY_PG_SLOT_FIRST] =
        "WITH t AS MATERIALIZED (SELECT u.key, u.n, " TENANT("u") " AS tenant FROM"
        " unnest((SELECT $1::text[]), $2::bigint[], $3::text[], $4::bigint[]) AS u(key, n, tenant,"
        " run_id)),"
        " woken AS (SELECT pg_notify('switchyard', '') FROM (SELECT 1 FROM slot_waiters w"
        " JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch"
        " WHERE w.key IN (SELECT key FROM t) AND w.owner <> $5 LIMIT 1) x)"
        " UPDATE slot_counts k SET held = GREATEST(0, k.held - x.n), granted = LEAST(k.granted,"
        " GREATEST(0, k.held - x.n) + CASE WHEN " SY_PG_WAITED("x.key") " THEN 0 ELSE k.extra END),"
        " tenants = " SY_PG_TENANTS_ADD("k.tenants", "x.nt", "x.tenant", "-x.n", "x.minus")
        " FROM (SELECT key, sum(n)::bigint AS n, count(*) AS nt, min(tenant) AS tenant,"
        " jsonb_object_agg(tenant, -n) AS minus FROM (SELECT key, tenant, sum(n)::bigint AS n"
        " FROM t GROUP BY key, tenant) y GROUP BY key) x WHERE k.key = x.key AND"
        " k.owner = $5::text AND (SELECT count(*) FROM woken) >= 0",
    /* The slot rows of takes given back (sy_pg_holds_to_rows made them),
     * by primary key: only in a process that made any (sy_pg_slot_rows_made). */
    [SY_PG_SLOT_DELETE_TAKES - SY_PG_SLOT_FIRST] =
        "DELETE FROM slots s USING unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[],"
        " $5::bigint[]) AS t(key, run_id, idx, elem, token) WHERE s.key = t.key AND"
        " s.run_id = t.run_id AND s.idx = t.idx AND s.elem = t.elem AND s.token = t.token"
        " AND s.owner = $6",
    /* The live waiters of a turn's keys (postgres/waiters.c), asked once
     * a turn: prepared like the takes. */
    [SY_PG_SLOT_WAITERS - SY_PG_SLOT_FIRST] =
        "SELECT w.key, w.run_id, w.idx, w.elem, w.tenant, w.priority, w.since, w.n, w.owner"
        " FROM slot_waiters w WHERE w.key = ANY($1::text[]) AND EXISTS (SELECT 1 FROM runs r"
        " WHERE r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch AND"
        " r.lease_until > $2::bigint)",
    [SY_PG_GRANT_SHARE - SY_PG_SLOT_FIRST] = sy_pg_grant_share_sql,
    [SY_PG_GRANT_READ - SY_PG_SLOT_FIRST] = sy_pg_grant_read_sql,
    [SY_PG_GRANT_TOPUP - SY_PG_SLOT_FIRST] = sy_pg_grant_topup_sql,
    [SY_PG_GRANT_LOCK - SY_PG_SLOT_FIRST] = sy_pg_grant_lock_sql,
    [SY_PG_GRANT_TRIM - SY_PG_SLOT_FIRST] = sy_pg_grant_trim_sql,
    [SY_PG_SLOT_LIST - SY_PG_SLOT_FIRST] =
        "SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.n, s.owner, s.taken,"
        LIVE("$1::bigint") " FROM slot_holders s ORDER BY s.key, s.taken, s.run_id, s.idx,"
        " s.elem",
};


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
 * seen.  With `row_keys`, *row_keys is set to the rows' keys (t's, in
 * memory the caller frees).  False for want of memory. */
static bool takes_summed(arrays *a, const sy_slot_take *t, size_t n, bool limits,
                         const char ***row_keys)
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
    free(slot);
    free(first);
    if (row_keys && !a->oom)
        *row_keys = key; /* the caller's now */
    else
        free(key);
    free(v);
    return !a->oom;
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
    const char **row_key = NULL;
    takes_summed(&a, t, n, true, &row_key);
    sy_pg_params p = {0};
    sy_pg_text(&p, 6, owner);
    sy_pg_int(&p, 7, now);
    for (int i = 0; i < 4; i++)
        sy_pg_text(&p, 8 + i, q->back[4] ? q->back[i] : "{}");
    PGresult *r = NULL;
    status = run_arrays(q, SY_PG_SLOT_PUT, &a, &p, &r, "take slots");
    *put = status == SY_OK && PQntuples(r) == 1;
    sy_pg_returns_clear(q); /* sent, or the batch is lost */
    /* What each key's grant leaves free now: the next turn's hint. */
    const char *row = *put ? sy_pg_col(r, 0, 1) : NULL, *left = *put ? sy_pg_col(r, 0, 2) : NULL;
    for (int64_t i, f; sy_pg_next_int(&row, &i) && sy_pg_next_int(&left, &f);)
        if (i >= 1 && (size_t)i <= n)
            sy_pg_key_set(&q->hints, owner, row_key[i - 1], f);
    free(row_key);
    PQclear(r);
    arrays_free(&a);
    /* Kept for the writes that start the attempts (postgres/holds.c). */
    return status == SY_OK && *put ? sy_pg_holds_add(q, owner, t, n, now) : status;
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
}

int sy_pg_returns_flush(sy_store_pg *q)
{
    if (!q->back[4])
        return SY_OK;
    sy_pg_params p = {0};
    for (int i = 0; i < 5; i++)
        sy_pg_text(&p, i + 1, q->back[i]);
    int status = sy_pg_run(q, SY_PG_SLOT_RETURN_TAKES, &p, NULL, "return slots");
    sy_pg_returns_clear(q);
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
    if (status == SY_OK && n > 0 && takes_summed(&a, t, n, false, NULL)) {
        /* Kept for the batch's next take (SY_PG_SLOT_PUT), or sent alone
         * before anything else counts the keys (sy_pg_returns_flush). */
        for (int i = 0; i < 4; i++) {
            q->back[i] = a.v[i];
            a.v[i] = NULL;
        }
        if (!(q->back[4] = strdup(owner)))
            a.oom = true;
        for (size_t i = 0; !a.oom && i < n; i++)
            sy_pg_key_add(&q->back_by_key, owner, t[i].key, t[i].n);
    }
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
