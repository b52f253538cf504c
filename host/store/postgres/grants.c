/*
 * store/postgres/grants.c -- a turn's keys read for the host that takes
 * them (store/slots.h, sy_store_slot_room_as), with slots granted to a
 * host ahead so that hosts taking one key do not take it in turn.
 *
 * A key's takes must be decided one at a time across hosts, or two hosts
 * could pass its limit together.  Held for a whole batch, the key's lock
 * made two hosts taking one key (a pool every task takes) write their
 * turns one after the other, the one that found it locked waiting a
 * retry (bench/limits, 2 hosts: a pool took 1.5 to 1.6 s where no limit
 * took 0.7 to 1.0).
 *
 * So a host is granted slots of a key ahead (its slot_counts row of the
 * key: held, granted, extra, until) and takes within its grant under the
 * key's advisory lock taken shared, which other hosts taking within
 * theirs share.  Every host counts another's grant as held (SY_PG_USED:
 * per host, the greater of what it holds and its grant), so grants and
 * holders together never pass the limit: a grant is made or raised, and
 * a take beyond a grant made, only under the key's grants' lock (class
 * 21340) taken exclusive, against everything else held or granted; and
 * a take within a grant (checked again by the take's statement,
 * SY_PG_SLOT_PUT) leaves the host's holders within it, so it moves no
 * other host's count of the key and needs no grants' lock: a host
 * making its grant waits for no host taking within its own.  Taking a
 * grant back, which counts the other hosts' holders, needs those
 * settled: it is done only under the slots' lock (class 21338) taken
 * exclusive as well, which the takes within a grant take shared.  With
 * one lock for both, a host whose grant had room kept the key shared
 * in batch after batch, and the other, needing it exclusive for its
 * first grant, found it busy turn after turn (bench/limits with a pool
 * on 2 hosts: 29,000 to 49,000 tasks a run put off so).  Lowering
 * one's own grant needs no lock: it only makes room.
 *
 * How much: what the turn may take of the key (the engine sums its
 * claims) and, only while the key has plenty of room (at least four
 * times the extra free beyond it, and 64) and no waiter, an extra of
 * four times as many (at least 1,024, at most a quarter of that free)
 * for the next turns.  The take's statement lowers the grant to what the
 * host then holds and its extra (none while the key has a waiter); a
 * give-back frees its slots in the grant again, up to the same bound.
 * A host that finds a key too full for what its turn may take, under
 * both locks, takes back what the others' grants hold beyond their
 * holders (no batch of theirs is taking within them then): a grant
 * made for a turn that took nothing (its tasks were behind another
 * host's waiter) never keeps a slot from the host whose waiter comes
 * first; it takes the slots' lock only where the key looks that full
 * (SY_PG_GRANT_LOCK), so a grant made or raised with room to spare
 * makes no taker busy.  So a key near its limit is granted what each
 * take needs and no more: it is locked exclusive each turn, as without
 * grants.
 *
 * Which keys a turn locks shared: those the host last saw room for in
 * its grants (postgres/key_table.h), from its own statements' answers,
 * not from a read of its own before the lock; the read under the lock
 * says what is free, the slots its batch gives back and has not sent
 * yet counted free (its take sends them first, postgres/slots.c).
 *
 * A grant lives in the host's row and ends with it, at the host's
 * earliest lease end, renewed with its leases (SY_PG_RENEW): a dead
 * host's grants end when its leases do, exactly then.  A host takes
 * within a grant only while it has SY_PG_GRANT_MARGIN_MS left, so the
 * batch commits before it could end.
 */
#include <stdlib.h>
#include <string.h>

#include "store/postgres/internal.h"

/* A grant with less than this left is not taken within: the key is
 * locked and the grant made again. */
#define SY_PG_GRANT_MARGIN_MS 5000

/* The keys $1 locked in shared mode (the slots' class of advisory locks,
 * postgres/slots.c), in key order: one row, the indices of those not
 * locked (another host is granting their slots: busy for this turn). */
const char sy_pg_grant_share_sql[] =
    "SELECT array_agg(i) FILTER (WHERE NOT got) FROM (SELECT k.i,"
    " pg_try_advisory_xact_lock_shared(21338, hashtext(k.key)) AS got"
    " FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i) ORDER BY k.key) x";

/* After SY_PG_GRANT_SHARE (its own statement, so that this one's snapshot
 * is taken under the locks): the grants of host $2 for the keys $1 with
 * at least $3 left: one row, the indices of the keys it has one of and
 * what is free in it (granted less held), with the slots $4 of each the
 * batch gives back and has not sent yet (postgres/slots.c) free too:
 * its take sends them first, and keeps the grant; what the host holds
 * is its row's count and what it did not write, $5 (postgres/unwritten.h).
 * Each key's row is found by its primary key: LATERAL with OFFSET 0, so
 * that the planner cannot make it a join.  The generic plan, made while
 * slot_counts looked empty (no statistics yet), joined every key to every
 * row in a nested loop: 2 ms a read of 100 keys, 0.4 by the index, and
 * 72 to 85 ms of the server's CPU a run of bench/limits 100 10 against 26
 * (the backend's time on the CPU around each statement). */
const char sy_pg_grant_read_sql[] =
    "SELECT array_agg(c.i), array_agg(k.granted - GREATEST(0, k.held + c.unwritten - c.back))"
    " FROM unnest($1::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS c(key, back,"
    " unwritten, i) CROSS JOIN LATERAL (SELECT k.granted, k.held FROM slot_counts k"
    " WHERE k.key = c.key AND k.owner = $2::text AND k.until > $3::bigint OFFSET 0) k";

/* The keys $1 (limits $2, what the turn may take $3) of host $4 at $5
 * locked for making grants: the grants' class exclusive (21340), which
 * takes within a grant do not take, and, only where the key looks too
 * full without taking other hosts' unused grants back, the slots' class
 * exclusive too (which they share), without which nothing is taken
 * back.  In key order.  One row: the indices of the keys whose grants'
 * lock another host holds (busy), and of those locked for taking back. */
const char sy_pg_grant_lock_sql[] =
    "SELECT array_agg(i) FILTER (WHERE NOT got), array_agg(i) FILTER (WHERE back) FROM"
    " (SELECT y.i, y.got, y.got AND y.lim - y.others - y.mine < y.n AND"
    " y.others > y.others_held AND pg_try_advisory_xact_lock(21338, hashtext(y.key)) AS back"
    " FROM (SELECT c.i, c.key, c.lim, c.n, pg_try_advisory_xact_lock(21340, hashtext(c.key))"
    " AS got, " SY_PG_USED("c.key", "$4::text", "$5::bigint") " AS others, "
    SY_PG_HELD_BY_OTHERS("c.key", "$4::text", "$5::bigint") " AS others_held,"
    " COALESCE((SELECT k.held FROM slot_counts k WHERE k.key = c.key AND k.owner = $4::text"
    " AND k.until > $5::bigint), 0) AS mine FROM unnest($1::text[], $2::bigint[],"
    " $3::bigint[]) WITH ORDINALITY AS c(key, lim, n, i) ORDER BY c.key OFFSET 0) y) x";

/* After SY_PG_GRANT_LOCK of the keys $1 (limits $2, what the turn may
 * take $3; $6: 1 where the key is locked for taking back), for host $4
 * at $5: each key's grant made again against what the others hold or
 * were granted (what their grants hold beyond their holders taken back,
 * where locked for it, when that leaves too little), what the turn may
 * take if there is room for it, and the extra while the key has plenty
 * and no waiter.  One row: per key, what leaves the room of its grant
 * (the limit less the grant's free), or what is held where no grant
 * could be made (a host with no live run). */
const char sy_pg_grant_topup_sql[] =
    "WITH m AS MATERIALIZED (SELECT c.*, COALESCE(k.held, 0) AS mine,"
    " COALESCE(k.tenants, '{}'::jsonb) AS tenants, "
    SY_PG_USED("c.key", "$4::text", "$5::bigint") " AS others, "
    SY_PG_HELD_BY_OTHERS("c.key", "$4::text", "$5::bigint") " AS others_held, "
    SY_PG_WAITED("c.key") " AS waited FROM unnest($1::text[], $2::bigint[], $3::bigint[],"
    " $6::bigint[]) WITH ORDINALITY AS c(key, lim, n, back_ok, i) LEFT JOIN slot_counts k ON"
    " k.key = c.key AND k.owner = $4::text AND k.until > $5::bigint),"
    " t AS MATERIALIZED (SELECT m.*, m.back_ok = 1 AND m.lim - m.others - m.mine < m.n AND"
    " m.others > m.others_held AS take_back FROM m),"
    " f AS MATERIALIZED (SELECT t.*, GREATEST(0, t.lim - t.mine - CASE WHEN t.take_back"
    " THEN t.others_held ELSE t.others END) AS free FROM t),"
    " x AS MATERIALIZED (SELECT f.*, LEAST(f.n, f.free) AS give, CASE WHEN NOT f.waited AND"
    " (f.free - LEAST(f.n, f.free)) / 4 >= 64 THEN LEAST(GREATEST(4 * f.n, 1024),"
    " (f.free - LEAST(f.n, f.free)) / 4) ELSE 0 END AS extra FROM f),"
    " back AS (UPDATE slot_counts k SET granted = k.held + k.ahead FROM x WHERE x.take_back AND"
    " k.key = x.key AND k.owner <> $4::text AND k.granted > k.held + k.ahead RETURNING 1),"
    " e AS MATERIALIZED (SELECT " SY_PG_LEASE_END("$4::text", "$5::bigint") " AS until),"
    " w AS (INSERT INTO slot_counts (key, owner, held, granted, extra, until, tenants, ahead)"
    " SELECT x.key, $4::text, x.mine, x.mine + x.give + x.extra, x.extra, e.until,"
    " x.tenants, 0 FROM x, e WHERE e.until > $5::bigint ON CONFLICT (key, owner) DO UPDATE"
    " SET held = excluded.held, granted = excluded.granted, extra = excluded.extra,"
    " until = excluded.until, tenants = excluded.tenants, ahead = 0 RETURNING key)"
    " SELECT array_agg(x.i), array_agg(CASE WHEN x.key IN (SELECT key FROM w) THEN"
    " x.lim - x.give - x.extra ELSE x.others + x.mine END) FROM x"
    " WHERE (SELECT count(*) FROM back) >= 0";

/* At the commit, the keys $2 (a text[] literal per grant made, joined)
 * of host $1, never below the count and the bound of what the host did
 * not write (postgres/unwritten.h); rows (key, what is free in its
 * grant beside the count). */
const char sy_pg_grant_trim_sql[] =
    "UPDATE slot_counts k SET granted = LEAST(k.granted, k.held + k.ahead + CASE WHEN "
    SY_PG_WAITED("k.key") " THEN 0 ELSE k.extra END) WHERE k.owner = $1::text AND"
    " k.key = ANY($2::text[]) AND k.granted > k.held + k.ahead RETURNING k.key,"
    " k.granted - k.held";

/* Notes the keys of text[] literal `keys` (n of them, "{...}") as granted
 * in this batch by `owner`. */
static int note_granted(sy_store_pg *q, const char *owner, const char *keys)
{
    size_t len = strlen(keys);
    if (len <= 2)
        return SY_OK; /* "{}" */
    if (q->granted_owner && strcmp(q->granted_owner, owner) != 0) {
        /* Another owner in one batch (tests): its grants now. */
        int status = sy_pg_grants_trim(q);
        if (status != SY_OK)
            return status;
    }
    if (!q->granted_owner && !(q->granted_owner = strdup(owner)))
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    if (q->granted_len + len + 1 > q->granted_cap) {
        size_t cap = q->granted_cap ? q->granted_cap * 2 : 256;
        while (q->granted_len + len + 1 > cap)
            cap *= 2;
        char *g = realloc(q->granted_keys, cap);
        if (!g)
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        q->granted_keys = g;
        q->granted_cap = cap;
    }
    /* "{a,b}" then "{c}" joined as "{a,b,c}". */
    if (q->granted_len == 0) {
        memcpy(q->granted_keys, keys, len + 1);
        q->granted_len = len;
    } else {
        q->granted_keys[q->granted_len - 1] = ',';
        memcpy(q->granted_keys + q->granted_len, keys + 1, len);
        q->granted_len += len - 1;
    }
    return SY_OK;
}

int sy_pg_grants_trim(sy_store_pg *q)
{
    if (!q->granted_len)
        return SY_OK;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, q->granted_owner);
    sy_pg_text(&p, 2, q->granted_keys);
    PGresult *r = NULL;
    int status = sy_pg_run(q, SY_PG_GRANT_TRIM, &p, &r, "trim slot grants");
    /* What each trimmed grant leaves free: the next turn's hint. */
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++)
        if (sy_pg_col(r, i, 0) && sy_pg_col(r, i, 1)) {
            int64_t unwritten;
            sy_pg_unwritten_get(&q->unwritten, q->granted_owner, sy_pg_col(r, i, 0),
                                &unwritten, NULL);
            sy_pg_key_set(&q->hints, q->granted_owner, sy_pg_col(r, i, 0),
                          sy_pg_col_int(r, i, 1) - unwritten);
        }
    PQclear(r);
    sy_pg_grants_clear(q);
    return status;
}

void sy_pg_grants_clear(sy_store_pg *q)
{
    q->granted_len = 0;
    free(q->granted_owner);
    q->granted_owner = NULL;
}

bool sy_pg_next_int(const char **p, int64_t *v)
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

/* The pairs (1-based index, value) of a one-row answer of two arrays
 * into v[index - 1]; indices outside 1..n are ignored. */
static void pairs_into(const PGresult *r, int64_t *v, size_t n)
{
    const char *which = PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
    const char *what = which ? sy_pg_col(r, 0, 1) : NULL;
    for (int64_t j, x; sy_pg_next_int(&which, &j) && sy_pg_next_int(&what, &x);)
        if (j >= 1 && (size_t)j <= n)
            v[j - 1] = x;
}

/* The keys' locks for a turn's read under them: for an owner, the
 * grants' (SY_PG_GRANT_LOCK: back[i] set where locked for taking back
 * too), else the slots' and the grants' both (SY_PG_SLOT_LOCK); held[i]
 * -1 where another host holds one, else 0. */
static int lock_keys(sy_store_pg *q, const char *owner, const sy_slot_claim *c, size_t n,
                     int64_t now, int64_t *held, const char **key, int64_t *back)
{
    for (size_t i = 0; i < n; i++) {
        key[i] = c[i].key;
        held[i] = back[i] = 0;
    }
    int64_t *v = malloc((n ? 2 * n : 1) * sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        v[i] = c[i].limit;
        v[n + i] = c[i].n;
    }
    char *keys = sy_pg_text_array(key, n), *limits = v ? sy_pg_int_array(v, 1, n) : NULL,
         *wants = v ? sy_pg_int_array(v + n, 1, n) : NULL;
    int status = keys && limits && wants ? SY_OK
                                         : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    PGresult *r = NULL;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, keys);
    if (status == SY_OK && owner) {
        sy_pg_text(&p, 2, limits);
        sy_pg_text(&p, 3, wants);
        sy_pg_text(&p, 4, owner);
        sy_pg_int(&p, 5, now);
        status = sy_pg_run(q, SY_PG_GRANT_LOCK, &p, &r, "lock keys");
    } else if (status == SY_OK) {
        status = sy_pg_run(q, SY_PG_SLOT_LOCK, &p, &r, "lock keys");
    }
    free(keys);
    free(limits);
    free(wants);
    free(v);
    /* The keys not locked (-1: another host's batch is granting them). */
    const char *busy = status == SY_OK && PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
    for (int64_t k; sy_pg_next_int(&busy, &k);)
        if (k >= 1 && (size_t)k <= n)
            held[k - 1] = -1;
    const char *locked =
        owner && status == SY_OK && PQntuples(r) == 1 ? sy_pg_col(r, 0, 1) : NULL;
    for (int64_t k; sy_pg_next_int(&locked, &k);)
        if (k >= 1 && (size_t)k <= n)
            back[k - 1] = 1;
    PQclear(r);
    return status;
}

/* A turn's read under the keys' locks (lock_keys), what each holds or,
 * for an owner, leaves of its grant made again. */
static int room_locked(sy_store_pg *q, const char *owner, const sy_slot_claim *c, size_t n,
                       int64_t now, int64_t *held, const char **key, size_t *at)
{
    /* The locks first, in a statement of their own: the count after them
     * takes its snapshot once they are held (READ COMMITTED). */
    int64_t *v = malloc((n ? 3 * n : 1) * sizeof *v), *back = v ? v + 2 * n : NULL;
    if (!v)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    int status = lock_keys(q, owner, c, n, now, held, key, back);
    size_t m = 0; /* the keys locked: c[at[0..m)] */
    for (size_t i = 0; status == SY_OK && i < n; i++)
        if (held[i] == 0)
            at[m++] = i;
    if (status != SY_OK || m == 0) {
        free(v);
        return status;
    }
    for (size_t j = 0; j < m; j++) {
        key[j] = c[at[j]].key;
        v[j] = c[at[j]].limit;
        v[m + j] = c[at[j]].n;
        back[j] = back[at[j]]; /* at[j] >= j: read before written */
    }
    char *locked = sy_pg_text_array(key, m), *limits = sy_pg_int_array(v, 1, m),
         *wants = sy_pg_int_array(v + m, 1, m), *backs = sy_pg_int_array(back, 1, m);
    status = locked && limits && wants && backs
                 ? SY_OK
                 : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    PGresult *r = NULL;
    if (status == SY_OK) {
        sy_pg_params t = {0};
        sy_pg_text(&t, 1, locked);
        if (owner) {
            sy_pg_text(&t, 2, limits);
            sy_pg_text(&t, 3, wants);
            sy_pg_text(&t, 4, owner);
            sy_pg_int(&t, 5, now);
            sy_pg_text(&t, 6, backs);
            status = sy_pg_run(q, SY_PG_GRANT_TOPUP, &t, &r, "grant slots");
            if (status == SY_OK)
                status = note_granted(q, owner, locked);
        } else {
            sy_pg_int(&t, 2, now);
            status = sy_pg_run(q, SY_PG_SLOT_ROOM, &t, &r, "count keys' slots");
        }
    }
    /* What each key holds (or leaves of its grant); absent: 0. */
    for (size_t j = 0; j < m; j++)
        v[j] = 0;
    if (status == SY_OK)
        pairs_into(r, v, m);
    for (size_t j = 0; status == SY_OK && j < m; j++)
        held[at[j]] = v[j];
    PQclear(r);
    free(locked);
    free(limits);
    free(wants);
    free(backs);
    free(v);
    return status;
}

/* The slots of `key` the open batch gives back for `owner` and has not
 * sent yet (sy_pg_return_takes): free in its grant for this turn. */
static int64_t given_back(const sy_store_pg *q, const char *owner, const char *key)
{
    int64_t n = 0;
    if (q->back[4] && strcmp(q->back[4], owner) == 0)
        sy_pg_key_get(&q->back_by_key, owner, key, &n);
    return n;
}

/* The owner's grants of the *k keys c[at[0..*k)] (key[] scratch): those
 * with room for their claim's n kept, in order, with what is free in
 * their grants (free_in[0..*k)). */
static int grants_read(sy_store_pg *q, const char *owner, const sy_slot_claim *c, size_t *at,
                       size_t *k, const char **key, int64_t *free_in, int64_t now)
{
    for (size_t j = 0; j < *k; j++) {
        key[j] = c[at[j]].key;
        free_in[j] = given_back(q, owner, key[j]); /* until read */
    }
    char *keys = sy_pg_text_array(key, *k), *backs = sy_pg_int_array(free_in, 1, *k);
    for (size_t j = 0; j < *k; j++)
        sy_pg_unwritten_get(&q->unwritten, owner, key[j], &free_in[j], NULL);
    char *unwritten = sy_pg_int_array(free_in, 1, *k);
    if (!keys || !backs || !unwritten) {
        free(keys);
        free(backs);
        free(unwritten);
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < *k; j++)
        free_in[j] = -1;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, keys);
    sy_pg_text(&p, 2, owner);
    sy_pg_int(&p, 3, now + SY_PG_GRANT_MARGIN_MS);
    sy_pg_text(&p, 4, backs);
    sy_pg_text(&p, 5, unwritten);
    PGresult *r = NULL;
    int status = sy_pg_run(q, SY_PG_GRANT_READ, &p, &r, "read slot grants");
    free(keys);
    free(backs);
    free(unwritten);
    if (status == SY_OK)
        pairs_into(r, free_in, *k);
    PQclear(r);
    /* What the read found is the next turn's hint too (none: no room);
     * and the turn may take it all, so nothing lowers these grants before
     * the take (sy_pg_returns_flush). */
    for (size_t j = 0; status == SY_OK && j < *k; j++) {
        sy_pg_key_set(&q->hints, owner, key[j], free_in[j] > 0 ? free_in[j] : 0);
        sy_pg_key_set(&q->read_shared, owner, key[j], 1);
    }
    size_t kept = 0;
    for (size_t j = 0; status == SY_OK && j < *k; j++) {
        const sy_slot_claim *ci = &c[at[j]];
        if (free_in[j] >= ci->n && free_in[j] <= ci->limit) {
            free_in[kept] = free_in[j];
            at[kept++] = at[j];
        }
    }
    *k = kept;
    return status;
}

/* The *k keys c[at[0..*k)] locked shared; those another host is granting
 * (locked exclusive) are busy (held -1) and left out. */
static int lock_shared(sy_store_pg *q, const sy_slot_claim *c, size_t *at, size_t *k,
                       const char **key, int64_t *held)
{
    for (size_t j = 0; j < *k; j++)
        key[j] = c[at[j]].key;
    char *keys = sy_pg_text_array(key, *k);
    if (!keys)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, keys);
    PGresult *r = NULL;
    int status = sy_pg_run(q, SY_PG_GRANT_SHARE, &p, &r, "lock keys");
    free(keys);
    const char *busy = status == SY_OK && PQntuples(r) == 1 ? sy_pg_col(r, 0, 0) : NULL;
    for (int64_t b; sy_pg_next_int(&busy, &b);)
        if (b >= 1 && (size_t)b <= *k)
            held[at[b - 1]] = -1;
    PQclear(r);
    size_t kept = 0;
    for (size_t j = 0; status == SY_OK && j < *k; j++)
        if (held[at[j]] >= 0)
            at[kept++] = at[j];
    *k = kept;
    return status;
}

int sy_pg_slot_room(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                    int64_t now, int64_t *held)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "slot_room: no batch is open");
    const char **key = malloc((n ? n : 1) * sizeof *key);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    int64_t *free_in = malloc((n ? n : 1) * sizeof *free_in);
    int status = key && at && free_in ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
    size_t m = n; /* the keys to lock: c[at[0..m)] */
    for (size_t i = 0; i < n; i++)
        at[i] = i;
    if (status == SY_OK && owner) {
        /* The owner's grants first: a key whose grant has room for what
         * the turn may take is read without its exclusive lock.  The
         * keys the host last saw room for in its grants, with what its
         * batch gives back (postgres/key_table.h), locked shared, then
         * read (a statement of its own, so that its snapshot sees any
         * grant taken back before the lock).  Only those: a key locked
         * shared by two hosts that both need it exclusive would be busy
         * for both.  Finding them by a read before the lock was one
         * statement a turn more. */
        size_t k = 0; /* the keys with room in their grants: c[at[0..k)] */
        for (size_t i = 0; i < n; i++) {
            held[i] = 0;
            int64_t hint;
            if (sy_pg_key_get(&q->hints, owner, c[i].key, &hint) &&
                hint + given_back(q, owner, c[i].key) >= c[i].n)
                at[k++] = i;
        }
        if (k > 0)
            status = lock_shared(q, c, at, &k, key, held);
        if (status == SY_OK && k > 0)
            status = grants_read(q, owner, c, at, &k, key, free_in, now);
        for (size_t j = 0; status == SY_OK && j < k; j++)
            held[at[j]] = c[at[j]].limit - free_in[j];
        /* The rest: locked exclusive, their grants made again. */
        bool *granted = calloc(n ? n : 1, sizeof *granted);
        status = status == SY_OK && !granted ? sy_store_fail(s, SY_ENOMEM, "out of memory")
                                             : status;
        for (size_t j = 0; status == SY_OK && j < k; j++)
            granted[at[j]] = true;
        m = 0;
        for (size_t i = 0; status == SY_OK && i < n; i++)
            if (!granted[i] && held[i] >= 0)
                at[m++] = i;
        free(granted);
    }
    /* The keys read under their exclusive locks are counted, and their
     * grants made, from what the host holds after its give-back, with
     * what it did not write written first. */
    for (size_t j = 0; owner && status == SY_OK && j < m; j++)
        key[j] = c[at[j]].key;
    if (owner && status == SY_OK && m > 0)
        status = sy_pg_settle(q, owner, key, m);
    if (status == SY_OK && m > 0)
        status = sy_pg_returns_flush(q);
    if (status == SY_OK && m > 0) {
        sy_slot_claim *rest = malloc(m * sizeof *rest);
        int64_t *got = malloc(m * sizeof *got);
        size_t *where = malloc(m * sizeof *where);
        status = rest && got && where ? SY_OK : sy_store_fail(s, SY_ENOMEM, "out of memory");
        for (size_t j = 0; status == SY_OK && j < m; j++)
            rest[j] = c[at[j]];
        if (status == SY_OK)
            status = room_locked(q, owner, rest, m, now, got, key, where);
        for (size_t j = 0; status == SY_OK && j < m; j++)
            held[at[j]] = got[j];
        free(rest);
        free(got);
        free(where);
    }
    free(key);
    free(at);
    free(free_in);
    return status;
}
