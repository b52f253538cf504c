/*
 * store/postgres/slots.c -- flow-control slots (store/slots.h) in the
 * PostgreSQL store, where several hosts take slots at once.
 *
 * Each key is first locked for the batch's transaction with
 * pg_try_advisory_xact_lock: a key another host's open batch holds counts
 * as full for this turn, so no host ever waits on another's lock (two
 * batches taking keys in opposite orders cannot deadlock).  The count and
 * the insert are the next statement: under READ COMMITTED it takes a new
 * snapshot, after the lock, and so sees every holder committed by a batch
 * that held the lock before.  The insert is conditional in SQL (all the
 * claims or none), so a batch replayed on a new connection (postgres/
 * journal.c) that would find a key full now inserts a different number
 * of rows, and the replay fails rather than exceeding the limit.
 *
 * The take reads the key's counters (slot_counts: what its rows hold,
 * live or not, one row per host that took them) instead of counting its
 * live holders; only a key full by its counters is counted.  The
 * counters never hold less than the live rows: a row adds its n when
 * taken, in the take's statement, and takes it off when given back or
 * reaped, in the statement that deletes it; rows gone another way (with
 * their run) leave them higher, never lower.  So room by the counters is
 * room, and a key the counters call full is counted exactly.  A host
 * writes only its own counter rows (it gives back only what it took;
 * the reap, outside any batch, writes a dead host's), so batches of two
 * hosts never wait on each other's counters; the advisory lock keeps
 * the key's takes one at a time as before.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"

/* The live condition of slot row `s` at `now` (store/slots.h). */
#define LIVE(now)                                                             \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner" \
    " AND r.lease_epoch = s.epoch AND r.lease_until > " now ")"

/* Takes what the deleted rows `d` held off their hosts' counters. */
#define UNCOUNT                                                               \
    " UPDATE slot_counts k SET held = k.held - g.n FROM (SELECT key, owner,"  \
    " sum(n) AS n FROM d GROUP BY key, owner) g"                              \
    " WHERE k.key = g.key AND k.owner = g.owner"

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
    /* `counted` first; the live count (CASE evaluates it only then) when
     * the counters leave no room. */
    [SY_PG_SLOT_TAKE - SY_PG_SLOT_FIRST] =
        "WITH c AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])"
        " AS c(key, lim, n)),"
        " counted AS MATERIALIZED (SELECT c.key, c.lim, c.n, (SELECT COALESCE(sum(k.held), 0)"
        " FROM slot_counts k WHERE k.key = c.key) AS held FROM c),"
        " used AS MATERIALIZED (SELECT key, lim, n, CASE WHEN held + n <= lim THEN held"
        " ELSE (SELECT COALESCE(sum(s.n), 0) FROM slots s WHERE s.key = counted.key AND"
        LIVE("$10::bigint") ") END AS held FROM counted),"
        " ins AS (INSERT INTO slots (key, run_id, idx, elem, token, n, owner, epoch, taken)"
        " SELECT key, $4::bigint, $5::int, $6::bigint, $7::bigint, n, $8::text,"
        " $9::bigint, $10::bigint FROM used"
        " WHERE NOT EXISTS (SELECT 1 FROM used WHERE held + n > lim)"
        " ON CONFLICT (key, run_id, idx, elem, token) DO UPDATE SET n = excluded.n,"
        " owner = excluded.owner, epoch = excluded.epoch, taken = excluded.taken"
        " RETURNING key, n)"
        " INSERT INTO slot_counts (key, owner, held) SELECT key, $8::text, n FROM ins"
        " ON CONFLICT (key, owner) DO UPDATE SET held = slot_counts.held + excluded.held",
    [SY_PG_SLOT_HELD - SY_PG_SLOT_FIRST] =
        "SELECT COALESCE(sum(s.n), 0) FROM slots s WHERE s.key = $1 AND" LIVE("$2::bigint"),
    /* The holders given back: (run, idx, elem, token), token 0 for the
     * whole run. */
    [SY_PG_SLOT_RETURN - SY_PG_SLOT_FIRST] =
        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::bigint[])"
        " AS h(run_id, idx, elem, token)),"
        " d AS (DELETE FROM slots s USING h WHERE s.run_id = h.run_id AND (h.token = 0 OR"
        " (s.idx = h.idx AND s.elem = h.elem AND s.token = h.token))"
        " RETURNING s.key, s.owner, s.n)" UNCOUNT,
    [SY_PG_SLOT_REAP - SY_PG_SLOT_FIRST] =
        "WITH d AS (DELETE FROM slots s WHERE NOT" LIVE("$1::bigint")
        " RETURNING key, owner, n), u AS (" UNCOUNT ") SELECT count(*) FROM d",
    /* SKIP LOCKED: a counter another host's open batch is writing is
     * left for a later reap, never waited on (that batch may be waiting
     * to write a counter this statement has deleted: a deadlock). */
    [SY_PG_SLOT_FORGET - SY_PG_SLOT_FIRST] =
        "DELETE FROM slot_counts WHERE ctid IN (SELECT ctid FROM slot_counts"
        " WHERE held <= 0 FOR UPDATE SKIP LOCKED)",
    /* A turn's keys (after SY_PG_SLOT_LOCK): the counters, or the live
     * count where they leave no room; one row, the indices of the keys
     * that hold any and what they hold (NULL: none), so that a key
     * nobody holds costs nothing to read and a replay finds one row. */
    [SY_PG_SLOT_ROOM - SY_PG_SLOT_FIRST] =
        "WITH c AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])"
        " WITH ORDINALITY AS c(key, lim, n, i)),"
        " counted AS MATERIALIZED (SELECT c.i, c.key, c.lim, c.n, (SELECT"
        " COALESCE(sum(k.held), 0) FROM slot_counts k WHERE k.key = c.key) AS held FROM c)"
        " SELECT array_agg(i), array_agg(h) FROM (SELECT i, CASE WHEN held + n <= lim THEN"
        " held ELSE (SELECT COALESCE(sum(s.n), 0) FROM slots s WHERE s.key = counted.key AND"
        LIVE("$4::bigint") ") END AS h FROM counted) x WHERE h <> 0",
    /* A turn's takes, all or none: none when a key would hold more than
     * the largest limit named for it (a replayed batch, store/slots.h). */
    [SY_PG_SLOT_PUT - SY_PG_SLOT_FIRST] =
        "WITH p AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[],"
        " $5::int[], $6::bigint[], $7::bigint[], $8::bigint[])"
        " AS p(key, lim, n, run_id, idx, elem, token, epoch)),"
        " g AS MATERIALIZED (SELECT key, max(lim) AS lim, sum(n) AS n FROM p GROUP BY key),"
        " counted AS MATERIALIZED (SELECT g.key, g.lim, g.n, (SELECT COALESCE(sum(k.held), 0)"
        " FROM slot_counts k WHERE k.key = g.key) AS held FROM g),"
        " used AS MATERIALIZED (SELECT key, lim, n, CASE WHEN held + n <= lim THEN held"
        " ELSE (SELECT COALESCE(sum(s.n), 0) FROM slots s WHERE s.key = counted.key AND"
        LIVE("$10::bigint") ") END AS held FROM counted),"
        " ins AS (INSERT INTO slots (key, run_id, idx, elem, token, n, owner, epoch, taken)"
        " SELECT key, run_id, idx, elem, token, n, $9::text, epoch, $10::bigint FROM p"
        " WHERE NOT EXISTS (SELECT 1 FROM used WHERE held + n > lim)"
        " ON CONFLICT (key, run_id, idx, elem, token) DO UPDATE SET n = excluded.n,"
        " owner = excluded.owner, epoch = excluded.epoch, taken = excluded.taken"
        " RETURNING key, n)"
        " INSERT INTO slot_counts (key, owner, held) SELECT key, $9::text, sum(n) FROM ins"
        " GROUP BY key ON CONFLICT (key, owner) DO UPDATE SET"
        " held = slot_counts.held + excluded.held",
    /* Takes given back by their keys (primary key seeks).  When a key
     * given back has a waiter on another host, that host is woken at the
     * commit (the channel of postgres/listen.c), so the waiter first in
     * the key's order takes the slot at once, not at its next retry;
     * `woken` is read by the update's condition so that it runs. */
    [SY_PG_SLOT_RETURN_TAKES - SY_PG_SLOT_FIRST] =
        "WITH t AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[],"
        " $5::bigint[]) AS t(key, run_id, idx, elem, token)),"
        " d AS (DELETE FROM slots s USING t WHERE s.key = t.key AND s.run_id = t.run_id AND"
        " s.idx = t.idx AND s.elem = t.elem AND s.token = t.token AND s.owner = $6"
        " RETURNING s.key, s.owner, s.n),"
        " woken AS (SELECT pg_notify('switchyard', '') FROM (SELECT 1 FROM slot_waiters w"
        " JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch"
        " WHERE w.key IN (SELECT key FROM d) AND w.owner <> $6 LIMIT 1) x)"
        UNCOUNT " AND (SELECT count(*) FROM woken) >= 0",
    /* The live waiters of a turn's keys (postgres/waiters.c), asked once
     * a turn: prepared like the takes. */
    [SY_PG_SLOT_WAITERS - SY_PG_SLOT_FIRST] =
        "SELECT w.key, w.run_id, w.idx, w.elem, w.tenant, w.priority, w.since, w.n, w.owner"
        " FROM slot_waiters w WHERE w.key = ANY($1::text[]) AND EXISTS (SELECT 1 FROM runs r"
        " WHERE r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch AND"
        " r.lease_until > $2::bigint)",
    [SY_PG_SLOT_LIST - SY_PG_SLOT_FIRST] =
        "SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.n, s.owner, s.taken,"
        LIVE("$1::bigint") " FROM slots s ORDER BY s.key, s.taken, s.run_id, s.idx, s.elem",
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

/* A bigint[] literal of n values, v[i * stride] (int64_t), or NULL for
 * want of memory. */
static char *ints_of(const int64_t *v, size_t stride, size_t n)
{
    char *a = malloc(3 + n * 21), *o = a;
    if (!a)
        return NULL;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        o = sy_pg_decimal(o, v[i * stride]);
    }
    *o++ = '}';
    *o = '\0';
    return a;
}

/* A bigint[] literal of the claims' limits, or of their slot counts. */
static char *int_array(const sy_slot_claim *c, size_t n, bool limits)
{
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = limits ? c[i].limit : c[i].n;
    char *a = ints_of(v, 1, n);
    free(v);
    return a;
}

int sy_pg_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                     const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                     size_t *full, int64_t *held)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "take_slots: no batch is open");
    *taken = false;
    const char *key[SY_SLOT_CLAIMS_MAX];
    for (size_t i = 0; i < n; i++)
        key[i] = c[i].key;
    char *keys = sy_pg_text_array(key, n);
    char *limits = int_array(c, n, true), *counts = int_array(c, n, false);
    int status = keys && limits && counts ? SY_OK
                                          : sy_store_fail(s, SY_ENOMEM, "out of memory");
    size_t busy = n;
    if (status == SY_OK)
        status = sy_pg_lock_keys(q, SY_PG_SLOT_LOCK, keys, n, &busy);
    if (status == SY_OK && busy < n) {
        /* Another host is taking it this moment: full for this turn. */
        *full = busy;
        *held = -1;
    } else if (status == SY_OK) {
        sy_pg_params p = {0};
        sy_pg_text(&p, 1, keys);
        sy_pg_text(&p, 2, limits);
        sy_pg_text(&p, 3, counts);
        sy_pg_int(&p, 4, h->run_id);
        sy_pg_int(&p, 5, h->idx);
        sy_pg_int(&p, 6, h->elem);
        sy_pg_int(&p, 7, h->token);
        sy_pg_text(&p, 8, fence->owner);
        sy_pg_int(&p, 9, fence->epoch);
        sy_pg_int(&p, 10, now);
        PGresult *r;
        status = sy_pg_run(q, SY_PG_SLOT_TAKE, &p, &r, "take slots");
        *taken = status == SY_OK && sy_pg_changes(r) == (int64_t)n;
        PQclear(r);
        /* Which key was full, for the task's word on why it waits. */
        for (size_t i = 0; status == SY_OK && !*taken && i < n; i++) {
            int64_t used = 0;
            status = held_of(q, c[i].key, now, &used);
            if (status == SY_OK && (used + c[i].n > c[i].limit || i == n - 1)) {
                *full = i;
                *held = used;
                break;
            }
        }
    }
    free(keys);
    free(limits);
    free(counts);
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

int sy_pg_slot_room(sy_store *s, const sy_slot_claim *c, size_t n, int64_t now,
                    int64_t *held)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "slot_room: no batch is open");
    const char **key = malloc(n * sizeof *key);
    int64_t *lim = malloc(2 * n * sizeof *lim);
    size_t *at = malloc(n * sizeof *at);
    char *keys = NULL;
    int status = key && lim && at ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
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
    /* The keys not locked (-1 for now: none is counted). */
    const char *busy = status == SY_OK && PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
    for (int64_t k; next_int(&busy, &k);)
        if (k >= 1 && (size_t)k <= n)
            held[k - 1] = -1;
    for (size_t i = 0; status == SY_OK && i < n; i++)
        if (held[i] == 0)
            at[m++] = i; /* locked: 0 unless its count says more */
        else
            held[i] = -1;
    PQclear(r);
    r = NULL;
    if (status == SY_OK && m > 0) {
        for (size_t j = 0; j < m; j++) {
            key[j] = c[at[j]].key;
            lim[j] = c[at[j]].limit;
            lim[n + j] = c[at[j]].n;
        }
        arrays a = {0};
        arrays_add(&a, sy_pg_text_array(key, m));
        arrays_add(&a, ints_of(lim, 1, m));
        arrays_add(&a, ints_of(lim + n, 1, m));
        status = a.oom ? sy_store_fail(s, SY_ENOMEM, "out of memory") : SY_OK;
        if (status == SY_OK) {
            sy_pg_params p = {0};
            for (int i = 0; i < a.n; i++)
                sy_pg_text(&p, i + 1, a.v[i]);
            sy_pg_int(&p, 4, now);
            status = sy_pg_run(q, SY_PG_SLOT_ROOM, &p, &r, "count keys' slots");
        }
        arrays_free(&a);
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
    free(lim);
    free(at);
    return status;
}

/* The arrays of n takes: their keys, then with `limits` their limits
 * and slots, then their holders (run, idx, elem, token), then with
 * `limits` their epochs ($1 .. in that order).  False for want of
 * memory. */
static bool takes_arrays(arrays *a, const sy_slot_take *t, size_t n, bool limits)
{
    const char **key = malloc(n * sizeof *key);
    int64_t *v = malloc(7 * n * sizeof *v); /* row i: lim n run idx elem token epoch */
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
        for (size_t col = limits ? 0 : 2; col < (limits ? 7u : 6u); col++)
            arrays_add(a, ints_of(v + col, 7, n));
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
    int status = takes_arrays(&a, t, n, true) ? SY_OK
                                               : sy_store_fail(s, SY_ENOMEM, "out of memory");
    if (status == SY_OK) {
        sy_pg_params p = {0};
        for (int i = 0; i < a.n; i++)
            sy_pg_text(&p, i + 1, a.v[i]);
        sy_pg_text(&p, 9, owner);
        sy_pg_int(&p, 10, now);
        PGresult *r;
        status = sy_pg_run(q, SY_PG_SLOT_PUT, &p, &r, "take slots");
        *put = status == SY_OK && sy_pg_changes(r) > 0;
        PQclear(r);
    }
    arrays_free(&a);
    return status;
}

int sy_pg_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "return_takes: no batch is open");
    arrays a = {0};
    int status = takes_arrays(&a, t, n, false) ? SY_OK
                                                : sy_store_fail(s, SY_ENOMEM, "out of memory");
    if (status == SY_OK) {
        sy_pg_params p = {0};
        for (int i = 0; i < a.n; i++)
            sy_pg_text(&p, i + 1, a.v[i]);
        sy_pg_text(&p, 6, owner);
        status = sy_pg_run(q, SY_PG_SLOT_RETURN_TAKES, &p, NULL, "return slots");
    }
    arrays_free(&a);
    return status;
}

int sy_pg_return_slots(sy_store *s, const sy_slot_holder *h, size_t n)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "return_slots: no batch is open");
    int64_t *v = malloc(4 * n * sizeof *v);
    if (!v)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        v[4 * i] = h[i].run_id;
        v[4 * i + 1] = h[i].idx;
        v[4 * i + 2] = h[i].elem;
        v[4 * i + 3] = h[i].token;
    }
    arrays a = {0};
    for (size_t col = 0; col < 4; col++)
        arrays_add(&a, ints_of(v + col, 4, n));
    free(v);
    int status = a.oom ? sy_store_fail(s, SY_ENOMEM, "out of memory") : SY_OK;
    if (status == SY_OK) {
        sy_pg_params p = {0};
        for (int i = 0; i < a.n; i++)
            sy_pg_text(&p, i + 1, a.v[i]);
        status = sy_pg_run(q, SY_PG_SLOT_RETURN, &p, NULL, "return slots");
    }
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
    /* Keys nobody holds keep no counter row. */
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_SLOT_FORGET, &(sy_pg_params){0}, NULL, "forget counters");
    return status;
}

int sy_pg_list_slots(sy_store *s, int64_t now,
                     int (*cb)(void *arg, const sy_slot_record *r), void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, now);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_SLOT_LIST, &p, &r, "list slots");
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
