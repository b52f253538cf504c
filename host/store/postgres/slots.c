/*
 * store/postgres/slots.c -- flow-control slots (store/slots.h) in the
 * PostgreSQL store, where several hosts take slots at once.
 *
 * Each key is first locked for the batch's transaction with
 * pg_try_advisory_xact_lock: a key another host's open batch holds counts
 * as full for this turn, so no host ever waits on another's lock (two
 * batches taking keys in opposite orders cannot deadlock).  The count is
 * the next statement: under READ COMMITTED it takes a new snapshot,
 * after the lock, and so sees every take committed by a batch that held
 * the lock before.
 *
 * What a key holds is counted per run, as on SQLite: one slot_counts row
 * per run, the claim its takes were made under (owner, lease epoch) and
 * what they hold key by key (a jsonb object).  A key's count is the sum
 * over the rows whose claim is live, so it is exact: a dead host's takes
 * stop counting when its lease ends, and a run claimed again starts from
 * nothing.  Only the host holding a run's claim writes its row, so two
 * hosts' batches never wait on each other's counts; the advisory lock
 * keeps a key's takes one at a time.  The take's write checks the limit
 * again in SQL and writes nothing when it would be exceeded, so a batch
 * replayed on a new connection (postgres/journal.c) that would find a key
 * fuller fails rather than exceeding it.
 *
 * Who holds a key is in the attempt's own row (postgres/holds.c), or a
 * slot row for a take no start write carried; the view slot_holders
 * names both, for listings and cancel requests.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"

/* The live condition of holder `s` (slot row or slot_holders) at `now`
 * (store/slots.h). */
#define LIVE(now)                                                             \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner" \
    " AND r.lease_epoch = s.epoch AND r.lease_until > " now ")"

/* What key `key` (an SQL expression) holds at `now`: the sum over the
 * counts rows whose claim is live. */
#define HELD(key, now)                                                        \
    "(SELECT COALESCE(sum((k.counts ->> " key ")::bigint), 0) FROM slot_counts k"   \
    " JOIN runs r ON r.id = k.run_id AND r.owner = k.owner AND"               \
    " r.lease_epoch = k.epoch AND r.lease_until > " now " WHERE k.counts ? " key ")"

/* Takes `t` (run_id, epoch, key, n) added to their runs' counts rows,
 * under owner `owner`: only a run whose claim is still (owner, epoch); a
 * row of another claim is replaced. */
#define ADD_COUNTS(t, owner)                                                  \
    "INSERT INTO slot_counts (run_id, owner, epoch, counts) SELECT a.run_id, " owner \
    ", a.epoch, a.add FROM (SELECT run_id, epoch, jsonb_object_agg(key, n) AS add"  \
    " FROM (SELECT run_id, epoch, key, sum(n) AS n FROM " t " GROUP BY run_id,"     \
    " epoch, key) x GROUP BY run_id, epoch) a JOIN runs r ON r.id = a.run_id AND"   \
    " r.owner = " owner " AND r.lease_epoch = a.epoch"

#define ADD_COUNTS_CONFLICT                                                   \
    " ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner,"             \
    " epoch = excluded.epoch, counts = CASE WHEN slot_counts.owner ="         \
    " excluded.owner AND slot_counts.epoch = excluded.epoch THEN"             \
    " switchyard_counts_add(slot_counts.counts, excluded.counts)"            \
    " ELSE excluded.counts END"

/* Takes `t` (run_id, epoch, key, n) taken off their runs' counts rows
 * when these still have the takes' claim (owner): a take under a claim
 * that ended changes nothing. */
#define SUBTRACT_COUNTS(t, owner, also)                                       \
    "UPDATE slot_counts k SET counts = switchyard_counts_add(k.counts, g.sub)" \
    " FROM (SELECT run_id, epoch, jsonb_object_agg(key, -n) AS sub FROM"      \
    " (SELECT run_id, epoch, key, sum(n) AS n FROM " t " GROUP BY run_id, epoch, key) x" \
    " GROUP BY run_id, epoch) g WHERE k.run_id = g.run_id AND k.owner = " owner       \
    " AND k.epoch = g.epoch" also

const char *const sy_pg_slot_sql[SY_PG_RATE_FIRST - SY_PG_SLOT_FIRST] = {
    /* 21338: the slots' class of advisory locks (21337 is the ticks').
     * Tried in key order (the sort is below the call in the plan); one
     * row, the indices of the keys not locked (NULL: none), so that a
     * turn's keys, all locked as a rule, cost no row each, and a batch's
     * replay (postgres/journal.c) finds one row as ever. */
    [SY_PG_SLOT_LOCK - SY_PG_SLOT_FIRST] =
        "SELECT array_agg(i) FILTER (WHERE NOT got) FROM (SELECT k.i,"
        " pg_try_advisory_xact_lock(21338, hashtext(k.key)) AS got"
        " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i) ORDER BY k.key) x",
    /* Takes no start write carried, as rows (postgres/holds.c): their
     * counts were added by the take. */
    [SY_PG_SLOT_ROWS - SY_PG_SLOT_FIRST] =
        "INSERT INTO slots (key, owner, run_id, idx, elem, token, n, epoch, taken)"
        " SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[],"
        " $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[])"
        " ON CONFLICT (key, run_id, idx, elem, token) DO UPDATE SET n = excluded.n,"
        " owner = excluded.owner, epoch = excluded.epoch, taken = excluded.taken",
    [SY_PG_SLOT_HELD - SY_PG_SLOT_FIRST] = "SELECT " HELD("$1::text", "$2::bigint"),
    /* The holders given back: (run, idx, elem, token), token 0 for the
     * whole run (whose counts row goes); what they hold taken off their
     * runs' counts, their holds cleared and their rows deleted. */
    [SY_PG_SLOT_RETURN - SY_PG_SLOT_FIRST] =
        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::bigint[])"
        " AS h(run_id, idx, elem, token)),"
        " held AS MATERIALIZED (SELECT s.key, s.run_id, s.n, s.owner, s.epoch FROM"
        " slot_holders s JOIN h ON s.run_id = h.run_id AND h.token <> 0 AND s.idx = h.idx"
        " AND s.elem = h.elem AND s.token = h.token),"
        " d AS (DELETE FROM slots s USING h WHERE s.run_id = h.run_id AND (h.token = 0 OR"
        " (s.idx = h.idx AND s.elem = h.elem AND s.token = h.token)) RETURNING 1),"
        " ct AS (UPDATE tasks t SET hold = NULL FROM h WHERE t.run_id = h.run_id AND"
        " t.hold IS NOT NULL AND (h.token = 0 OR (t.idx = h.idx AND h.elem = -1 AND"
        " t.fence = h.token)) RETURNING 1),"
        " ce AS (UPDATE task_elements t SET hold = NULL FROM h WHERE t.run_id = h.run_id AND"
        " t.hold IS NOT NULL AND (h.token = 0 OR (t.idx = h.idx AND t.elem = h.elem AND"
        " t.fence = h.token)) RETURNING 1),"
        " dr AS (DELETE FROM slot_counts WHERE run_id IN (SELECT run_id FROM h WHERE"
        " token = 0) RETURNING 1)"
        " UPDATE slot_counts k SET counts = switchyard_counts_add(k.counts, g.sub) FROM"
        " (SELECT run_id, owner, epoch, jsonb_object_agg(key, -n) AS sub FROM (SELECT run_id,"
        " owner, epoch, key, sum(n) AS n FROM held GROUP BY run_id, owner, epoch, key) x"
        " GROUP BY run_id, owner, epoch) g WHERE k.run_id = g.run_id AND k.owner = g.owner"
        " AND k.epoch = g.epoch AND (SELECT count(*) FROM d) + (SELECT count(*) FROM ct) +"
        " (SELECT count(*) FROM ce) + (SELECT count(*) FROM dr) >= 0",
    /* The rows and cancel requests of holders no longer live. */
    [SY_PG_SLOT_REAP - SY_PG_SLOT_FIRST] =
        "WITH d AS (DELETE FROM slots s WHERE NOT" LIVE("$1::bigint") " RETURNING 1),"
        " c AS (DELETE FROM slot_cancels s WHERE NOT" LIVE("$1::bigint") " RETURNING 1)"
        " SELECT count(*) + 0 * (SELECT count(*) FROM c) FROM d",
    /* Counts rows that hold nothing, or whose claim is not live.  SKIP
     * LOCKED: a row another host's open batch is writing is left for a
     * later reap, never waited on. */
    [SY_PG_SLOT_FORGET - SY_PG_SLOT_FIRST] =
        "DELETE FROM slot_counts WHERE ctid IN (SELECT k.ctid FROM slot_counts k"
        " WHERE k.counts = '{}'::jsonb OR NOT EXISTS (SELECT 1 FROM runs r WHERE"
        " r.id = k.run_id AND r.owner = k.owner AND r.lease_epoch = k.epoch AND"
        " r.lease_until > $1::bigint) FOR UPDATE SKIP LOCKED)",
    /* A turn's keys (after SY_PG_SLOT_LOCK): one row, the indices of the
     * keys that hold any and what they hold (NULL: none), so that a key
     * nobody holds costs nothing to read and a replay finds one row. */
    [SY_PG_SLOT_ROOM - SY_PG_SLOT_FIRST] =
        "SELECT array_agg(i), array_agg(h) FROM (SELECT c.i, " HELD("c.key", "$2::bigint")
        " AS h FROM unnest($1::text[]) WITH ORDINALITY AS c(key, i)) x WHERE h <> 0",
    /* A turn's takes added to their runs' counts, all or none: none when
     * a key would hold more than the largest limit named for it (a
     * replayed batch, store/slots.h); then no row comes back, else one. */
    [SY_PG_SLOT_PUT - SY_PG_SLOT_FIRST] =
        "WITH p AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[],"
        " $4::bigint[], $5::bigint[]) AS p(key, lim, n, run_id, epoch)),"
        " over AS MATERIALIZED (SELECT 1 FROM (SELECT key, max(lim) AS lim, sum(n) AS n"
        " FROM p GROUP BY key) g WHERE g.n + " HELD("g.key", "$7::bigint") " > g.lim LIMIT 1),"
        " ins AS (" ADD_COUNTS("p", "$6::text") " WHERE NOT EXISTS (SELECT 1 FROM over)"
        ADD_COUNTS_CONFLICT " RETURNING 1)"
        " SELECT count(*) FROM ins HAVING NOT EXISTS (SELECT 1 FROM over)",
    /* Takes given back by their keys: their runs' counts, and any slot
     * rows (primary key seeks).  When a key given back has a waiter on
     * another host, that host is woken at the commit (the channel of
     * postgres/listen.c), so the waiter first in the key's order takes
     * the slot at once, not at its next retry; `woken` is read by the
     * update's condition so that it runs. */
    [SY_PG_SLOT_RETURN_TAKES - SY_PG_SLOT_FIRST] =
        "WITH t AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[],"
        " $5::bigint[], $6::bigint[], $7::bigint[]) AS t(key, n, run_id, idx, elem, token,"
        " epoch)),"
        " d AS (DELETE FROM slots s USING t WHERE s.key = t.key AND"
        " s.run_id = t.run_id AND s.idx = t.idx AND s.elem = t.elem AND s.token = t.token"
        " AND s.owner = $8 RETURNING 1),"
        " woken AS (SELECT pg_notify('switchyard', '') FROM (SELECT 1 FROM slot_waiters w"
        " JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch"
        " WHERE w.key IN (SELECT key FROM t) AND w.owner <> $8 LIMIT 1) x)"
        " " SUBTRACT_COUNTS("t", "$8::text", " AND (SELECT count(*) FROM woken) +"
        " (SELECT count(*) FROM d) >= 0"),
    /* The live waiters of a turn's keys (postgres/waiters.c), asked once
     * a turn: prepared like the takes. */
    [SY_PG_SLOT_WAITERS - SY_PG_SLOT_FIRST] =
        "SELECT w.key, w.run_id, w.idx, w.elem, w.tenant, w.priority, w.since, w.n, w.owner"
        " FROM slot_waiters w WHERE w.key = ANY($1::text[]) AND EXISTS (SELECT 1 FROM runs r"
        " WHERE r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch AND"
        " r.lease_until > $2::bigint)",
    [SY_PG_SLOT_LIST - SY_PG_SLOT_FIRST] =
        "SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.n, s.owner, s.taken,"
        LIVE("$1::bigint") " FROM slot_holders s ORDER BY s.key, s.taken, s.run_id, s.idx,"
        " s.elem",
};


/* The next number of a PostgreSQL bigint[] text at *p ("{1,-2,3}"; NULL
 * for none), *p moved past it; false when none is left. */
static bool next_int(const char **p, int64_t *v)
{
    const char *s = *p;
    if (!s)
        return false;
    while (*s == '{' || *s == ',')
        s++;
    bool negative = *s == '-';
    s += negative;
    if (*s < '0' || *s > '9')
        return false;
    uint64_t u = 0;
    while (*s >= '0' && *s <= '9')
        u = u * 10 + (uint64_t)(*s++ - '0');
    *v = negative ? -(int64_t)u : (int64_t)u;
    *p = s;
    return true;
}

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
        for (int64_t k; next_int(&at, &k);)
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
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, now);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_SLOT_HELD, &p, &r, "count a key's holders");
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
    int status = sy_pg_slot_room(s, c, n, now, used);
    for (size_t i = 0; status == SY_OK && i < n; i++)
        if (used[i] < 0 || used[i] + c[i].n > c[i].limit) {
            /* Full, or another host is taking it this moment. */
            *full = i;
            *held = used[i];
            return SY_OK;
        }
    sy_slot_take t[SY_SLOT_CLAIMS_MAX];
    for (size_t i = 0; i < n; i++)
        t[i] = (sy_slot_take){c[i].key, c[i].limit, c[i].n, *h, fence->epoch};
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

int sy_pg_slot_room(sy_store *s, const sy_slot_claim *c, size_t n, int64_t now,
                    int64_t *held)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "slot_room: no batch is open");
    const char **key = malloc((n ? n : 1) * sizeof *key);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    char *keys = NULL;
    int status = key && at ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
    for (size_t i = 0; status == SY_OK && i < n; i++)
        key[i] = c[i].key;
    if (status == SY_OK && !(keys = sy_pg_text_array(key, n)))
        status = sy_store_fail(s, SY_ENOMEM, "out of memory");
    /* The locks first, in a statement of their own: the count after them
     * takes its snapshot once they are held (READ COMMITTED). */
    PGresult *r = NULL;
    if (status == SY_OK) {
        sy_pg_params p = {0};
        sy_pg_text(&p, 1, keys);
        status = sy_pg_run(q, SY_PG_SLOT_LOCK, &p, &r, "lock keys");
    }
    size_t m = 0; /* the keys locked: c[at[0..m)] */
    for (size_t i = 0; status == SY_OK && i < n; i++)
        held[i] = 0;
    /* The keys not locked (-1: another host's batch is taking them). */
    const char *busy = status == SY_OK && PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
    for (int64_t k; next_int(&busy, &k);)
        if (k >= 1 && (size_t)k <= n)
            held[k - 1] = -1;
    for (size_t i = 0; status == SY_OK && i < n; i++)
        if (held[i] == 0)
            at[m++] = i; /* locked: 0 unless its count says more */
    PQclear(r);
    r = NULL;
    if (status == SY_OK && m > 0) {
        for (size_t j = 0; j < m; j++)
            key[j] = c[at[j]].key;
        char *locked = sy_pg_text_array(key, m);
        status = locked ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
        if (status == SY_OK) {
            sy_pg_params p = {0};
            sy_pg_text(&p, 1, locked);
            sy_pg_int(&p, 2, now);
            status = sy_pg_run(q, SY_PG_SLOT_ROOM, &p, &r, "count keys' slots");
        }
        free(locked);
        /* The keys that hold any, and what (the others hold 0). */
        const char *which = status == SY_OK && PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
        const char *what = which ? sy_pg_col(r, 0, 1) : NULL;
        for (int64_t j, v; next_int(&which, &j) && next_int(&what, &v);)
            if (j >= 1 && (size_t)j <= m)
                held[at[j - 1]] = v;
        PQclear(r);
    }
    free(keys);
    free(key);
    free(at);
    return status;
}

/* The arrays of n takes, $1 on: their keys, then with `limits` their
 * limits, then their slots, runs, and without `limits` their holders'
 * idx, elem and token, then their epochs.  False for want of memory. */
static bool takes_arrays(arrays *a, const sy_slot_take *t, size_t n, bool limits)
{
    const char **key = malloc((n ? n : 1) * sizeof *key);
    int64_t *v = malloc((n ? n : 1) * 7 * sizeof *v); /* row i: lim n run idx elem token epoch */
    if (key && v) {
        for (size_t i = 0; i < n; i++) {
            key[i] = t[i].key;
            int64_t *row = &v[7 * i];
            row[0] = t[i].limit;
            row[1] = t[i].n;
            row[2] = t[i].holder.run_id;
            row[3] = t[i].holder.idx;
            row[4] = t[i].holder.elem;
            row[5] = t[i].holder.token;
            row[6] = t[i].epoch;
        }
        arrays_add(a, sy_pg_text_array(key, n));
        static const int with_limits[] = {0, 1, 2, 6}, with_holders[] = {1, 2, 3, 4, 5, 6};
        const int *col = limits ? with_limits : with_holders;
        size_t cols = limits ? 4 : 6;
        for (size_t j = 0; j < cols; j++)
            arrays_add(a, sy_pg_int_array(v + col[j], 7, n));
    }
    a->oom |= !key || !v;
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
    arrays a = {0};
    takes_arrays(&a, t, n, true);
    sy_pg_params p = {0};
    sy_pg_text(&p, 6, owner);
    sy_pg_int(&p, 7, now);
    PGresult *r = NULL;
    int status = run_arrays(q, SY_PG_SLOT_PUT, &a, &p, &r, "take slots");
    *put = status == SY_OK && PQntuples(r) == 1;
    PQclear(r);
    arrays_free(&a);
    /* Kept for the writes that start the attempts (postgres/holds.c). */
    if (status == SY_OK && *put)
        status = sy_pg_holds_add(q, owner, t, n, now);
    return status;
}

int sy_pg_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "return_takes: no batch is open");
    arrays a = {0};
    takes_arrays(&a, t, n, false);
    sy_pg_params p = {0};
    sy_pg_text(&p, 8, owner);
    int status = run_arrays(q, SY_PG_SLOT_RETURN_TAKES, &a, &p, NULL, "return slots");
    arrays_free(&a);
    return status;
}

int sy_pg_return_slots(sy_store *s, const sy_slot_holder *h, size_t n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "return_slots: no batch is open");
    /* The batch's takes not written yet are holders too. */
    int status = sy_pg_holds_to_rows(q);
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
    int status = q->batch ? sy_pg_holds_to_rows(q) : SY_OK;
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
