/*
 * store/postgres/slot_sql.c -- the SQL of the PostgreSQL store's
 * flow-control statements (postgres/slots.c, postgres/grants.c,
 * postgres/waiters.c), prepared as the others are (postgres/conn.c, by
 * their number from SY_PG_SLOT_FIRST).  What they do and why is said at
 * each statement; how they keep a limit exact across hosts, at the top
 * of postgres/slots.c and postgres/grants.c.
 */
#include "store/postgres/internal.h"

/* The live condition of holder `s` (slot row or slot_holders) at `now`
 * (store/slots.h). */
#define LIVE(now)                                                             \
    " EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.owner = s.owner" \
    " AND r.lease_epoch = s.epoch AND r.lease_until > " now ")"

/* What key `key` (an SQL expression) holds at `now`: every host's
 * count, or its grant where that is more. */
#define HELD(key, now) SY_PG_USED(key, "NULL::text", now)

/* The least `ahead` a row written with room in its grant gets: a turn's
 * takes and give-backs within it go unwritten (docs/flow-control.md,
 * "Takes not written"). */
#define SY_PG_AHEAD_MIN "64"

/* The tenant of summed takes row `u` (takes_summed): its own, or where
 * the host did not know it (run_id not 0), its run's; '' for a run no
 * longer there (its count then has nothing to take off). */
#define TENANT(u)                                                             \
    "CASE WHEN " u ".run_id = 0 THEN " u ".tenant ELSE COALESCE((SELECT r.tenant" \
    " FROM runs r WHERE r.id = " u ".run_id), '') END"

/* SY_PG_SLOT_PUT's and SY_PG_SLOT_PUT_QUICK's inputs: the takes summed by
 * key and tenant ($1..$5, numbered i) and the batch's give-back not sent
 * yet ($8..$11). */
#define PUT_TAKES                                                             \
    "p AS (SELECT * FROM unnest((SELECT $1::text[]), $2::bigint[], $3::bigint[], $4::text[]," \
    " $5::bigint[]) WITH ORDINALITY AS p(key, lim, n, tenant, run_id, i))"
#define PUT_BACKS                                                             \
    "b AS (SELECT * FROM unnest((SELECT $8::text[]), $9::bigint[], $10::text[]," \
    " $11::bigint[]) AS b(key, n, tenant, run_id))"

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
     * grants, their holds cleared and their rows deleted (the arrays
     * hidden from the planner, as the batched writes': tasks is joined).
     * A count may go below 0 here: its host's takes not written yet
     * (postgres/unwritten.h) add to it, so nothing is cut off. */
    [SY_PG_SLOT_RETURN - SY_PG_SLOT_FIRST] =
        "WITH h AS (SELECT * FROM unnest(" SY_PG_ARRAY(1, "bigint") ", " SY_PG_ARRAY(2, "int")
        ", " SY_PG_ARRAY(3, "bigint") ", " SY_PG_ARRAY(4, "bigint") ") AS h(run_id, idx, elem,"
        " token)),"
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
        " UPDATE slot_counts k SET held = k.held - g.n,"
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
     * store/slots.h), and then no row comes back, else one.  The batch's
     * give-back not sent yet ($8..$11, SY_PG_SLOT_RETURN_TAKES's $1..$4)
     * comes off first, its waiters woken as there; a key only given back
     * keeps its `until`.
     *
     * What the host holds is its row's `held` and what it did not write
     * since ($12..$14: keys, slots, their tenant; $15: whether the key
     * may go unwritten this time, its takes and give-back all of that
     * tenant; postgres/unwritten.h).  A key that leaves the host within
     * its grant and within `held + ahead`, with no waiter and an extra
     * (plenty of room: the grant keeps the slots given back anyway), all
     * of one tenant, is not written (docs/flow-control.md, "Takes not
     * written"); any other is written whole, `ahead` made again (none
     * while the key has a waiter, never past the grant).
     *
     * What the grant keeps beyond what the host then holds: its extra,
     * none while the key has a waiter, never more than it had, nor than
     * the row has when written: a key only given back is written under
     * no lock of the key, and another host may have taken the grant back
     * since this statement's read.  What is held is counted by tenant
     * too.  The row: the indices of $1 naming each key and what is free
     * in its grant then; the indices of $12 and what is left unwritten
     * of each key.  `(SELECT $1::text[])`: the planner cannot count the
     * keys, so the plan is the same for any and the generic one is
     * kept; a pool's one key had every take planned again (3 of its 4 ms
     * on the server).  Each key's row by its primary key (LATERAL, OFFSET
     * 0), as in SY_PG_GRANT_READ: a join planned while the table looked
     * empty compared every key with every row. */
    [SY_PG_SLOT_PUT - SY_PG_SLOT_FIRST] =
        "WITH " PUT_TAKES ", " PUT_BACKS ","
        " d AS (SELECT * FROM unnest((SELECT $12::text[]), $13::bigint[], $14::text[],"
        " $15::boolean[]) WITH ORDINALITY AS d(key, n, tenant, may, j)),"
        " tn AS (SELECT key, count(*) AS nt, min(tenant) AS tenant, sum(n)::bigint AS n,"
        " jsonb_object_agg(tenant, n) AS plus FROM (SELECT key, tenant, sum(n)::bigint AS n"
        " FROM (SELECT p.key, p.n, " TENANT("p") " AS tenant FROM p UNION ALL SELECT b.key,"
        " -b.n, " TENANT("b") " FROM b UNION ALL SELECT d.key, d.n, d.tenant FROM d"
        " WHERE d.n <> 0) y GROUP BY key, tenant) x GROUP BY key),"
        " g AS (SELECT COALESCE(t.key, v.key) AS key, t.i, COALESCE(t.lim, 0) AS lim,"
        " COALESCE(t.n, 0) AS n, COALESCE(v.n, 0) AS back FROM (SELECT key, min(i) AS i,"
        " max(lim) AS lim, sum(n)::bigint AS n FROM p GROUP BY key) t FULL JOIN (SELECT key,"
        " sum(n)::bigint AS n FROM b GROUP BY key) v ON v.key = t.key),"
        " m0 AS MATERIALIZED (SELECT g.key, g.i, d.j, g.lim, g.n, k.key IS NOT NULL AS had,"
        " k.until AS was, k.held AS held_was, COALESCE(k.ahead, 0) AS ahead,"
        " GREATEST(0, COALESCE(k.held + COALESCE(d.n, 0), 0) - g.back) + g.n AS after,"
        " k.granted, COALESCE(k.extra, 0) AS extra, COALESCE(k.tenants, '{}'::jsonb) AS tenants,"
        " wk.key IS NOT NULL AS waited, COALESCE(d.may, false) AS listed FROM g"
        " LEFT JOIN d ON d.key = g.key LEFT JOIN LATERAL (SELECT k.* FROM slot_counts k"
        " WHERE k.key = g.key AND k.owner = $6::text AND k.until > $7::bigint OFFSET 0) k ON true"
        " LEFT JOIN (SELECT DISTINCT w.key FROM"
        " slot_waiters w JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND"
        " r.lease_epoch = w.epoch WHERE w.key IN (SELECT key FROM g)) wk ON wk.key = g.key),"
        " m AS MATERIALIZED (SELECT m0.*, m0.had AND m0.listed AND NOT m0.waited AND"
        " m0.extra > 0 AND m0.after <= m0.granted AND m0.after - m0.held_was <= m0.ahead AND"
        " COALESCE(tn.nt, 1) = 1 AS skip FROM m0 LEFT JOIN tn ON tn.key = m0.key),"
        " over AS MATERIALIZED (SELECT 1 FROM m WHERE m.n > 0 AND COALESCE(m.granted, 0) <"
        " m.after AND m.after + " SY_PG_USED("m.key", "$6::text", "$7::bigint") " > m.lim"
        " LIMIT 1),"
        " e AS MATERIALIZED (SELECT " SY_PG_LEASE_END("$6::text", "$7::bigint") " AS until),"
        " woken AS (SELECT pg_notify('switchyard', '') FROM (SELECT 1 FROM slot_waiters w"
        " JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch"
        " WHERE w.key IN (SELECT key FROM b) AND w.owner <> $6 LIMIT 1) x),"
        " w AS MATERIALIZED (SELECT m.*, GREATEST(m.after, LEAST(COALESCE(m.granted, 0),"
        " m.after + CASE WHEN m.waited THEN 0 ELSE m.extra END)) AS granted_to FROM m"
        " WHERE NOT m.skip),"
        " ins AS (INSERT INTO slot_counts (key, owner, held, granted, extra, until, tenants,"
        " ahead) SELECT w.key, $6::text, w.after, w.granted_to, w.extra,"
        " CASE WHEN w.n > 0 THEN e.until ELSE w.was END, "
        SY_PG_TENANTS_ADD("w.tenants", "tn.nt", "tn.tenant", "tn.n", "tn.plus")
        ", CASE WHEN w.waited THEN 0 ELSE LEAST(w.granted_to - w.after,"
        " GREATEST(" SY_PG_AHEAD_MIN ", 4 * w.n)) END"
        " FROM w LEFT JOIN tn ON tn.key = w.key CROSS JOIN e WHERE CASE WHEN w.n > 0 THEN"
        " e.until > $7::bigint ELSE w.had END AND NOT EXISTS (SELECT 1 FROM over) AND"
        " (SELECT count(*) FROM woken) >= 0 ON CONFLICT (key, owner) DO UPDATE SET"
        " held = excluded.held, granted = GREATEST(excluded.held, LEAST(slot_counts.granted,"
        " excluded.granted)), extra = excluded.extra, until = excluded.until,"
        " tenants = excluded.tenants, ahead = LEAST(excluded.ahead, GREATEST(excluded.held,"
        " LEAST(slot_counts.granted, excluded.granted)) - excluded.held)"
        " RETURNING key, granted - held AS free)"
        " SELECT count(*), array_agg(m.i) FILTER (WHERE m.i IS NOT NULL),"
        " array_agg(COALESCE(ins.free, m.granted - m.after)) FILTER (WHERE m.i IS NOT NULL),"
        " array_agg(m.j) FILTER (WHERE m.j IS NOT NULL), array_agg(CASE WHEN m.skip THEN"
        " m.after - m.held_was ELSE 0 END) FILTER (WHERE m.j IS NOT NULL)"
        " FROM m LEFT JOIN ins ON ins.key = m.key HAVING NOT EXISTS (SELECT 1 FROM over)",
    /* SY_PG_SLOT_PUT where it would write nothing: the same parameters
     * and, when every key of the turn is one that statement leaves
     * unwritten (its row live and within the bound, its grant with an
     * extra, no waiter, everything of one tenant), the same row; else
     * none, and nothing done (postgres/slots.c sends the whole statement
     * then).  The whole one cost the server 2 to 3 ms a turn of 100 keys
     * deciding that, through its sums by tenant, its joins and its
     * upsert's inputs; this reads each key's row once, by its primary
     * key, and sums each key's takes and give-backs in one pass. */
    [SY_PG_SLOT_PUT_QUICK - SY_PG_SLOT_FIRST] =
        "WITH " PUT_TAKES ", " PUT_BACKS ","
        " g AS (SELECT key, min(i) AS i, sum(n)::bigint AS n, sum(back)::bigint AS back,"
        " count(DISTINCT tenant) AS nt, min(tenant) AS tenant FROM (SELECT p.key, p.i, p.n,"
        " 0 AS back, " TENANT("p") " AS tenant FROM p UNION ALL SELECT b.key, NULL, 0, b.n, "
        TENANT("b") " FROM b) y GROUP BY key),"
        " m AS (SELECT g.*, d.j, d.may, d.n AS dn, d.tenant AS dt, k.held, k.granted, k.ahead,"
        " k.extra, GREATEST(0, k.held + COALESCE(d.n, 0) - g.back) + g.n AS after FROM g"
        " LEFT JOIN unnest((SELECT $12::text[]), $13::bigint[], $14::text[], $15::boolean[])"
        " WITH ORDINALITY AS d(key, n, tenant, may, j) ON d.key = g.key LEFT JOIN LATERAL"
        " (SELECT k.held, k.granted, k.ahead, k.extra FROM slot_counts k WHERE k.key = g.key"
        " AND k.owner = $6::text AND k.until > $7::bigint OFFSET 0) k ON true)"
        " SELECT count(*), array_agg(m.i) FILTER (WHERE m.i IS NOT NULL),"
        " array_agg(m.granted - m.after) FILTER (WHERE m.i IS NOT NULL),"
        " array_agg(m.j) FILTER (WHERE m.j IS NOT NULL),"
        " array_agg(m.after - m.held) FILTER (WHERE m.j IS NOT NULL) FROM m"
        " HAVING bool_and(m.held IS NOT NULL AND COALESCE(m.may, false) AND m.extra > 0 AND"
        " m.after <= m.granted AND m.after - m.held <= m.ahead AND m.nt = 1 AND"
        " (COALESCE(m.dn, 0) = 0 OR m.dt = m.tenant)) AND NOT "
        SY_PG_WAITED("ANY (SELECT key FROM g)"),
    /* Takes given back, summed by key and tenant (takes_summed): the
     * host's counts; the grant keeps what it had, the slots given back
     * free in it again, but no more beyond what the host then holds than
     * its extra, and none while the key has a waiter (postgres/grants.c).
     * When a key given back has a waiter on another host, that host is
     * woken at the commit (the channel of postgres/listen.c), so the
     * waiter first in the key's order takes the slot at once, not at its
     * next retry; `woken` is read by the update's condition so that it
     * runs.  Sent alone only when no take carried it (SY_PG_SLOT_PUT),
     * after what the host did not write of its keys (SY_PG_SLOT_SETTLE);
     * planned once, as that one is. */
    [SY_PG_SLOT_RETURN_TAKES - SY_PG_SLOT_FIRST] =
        "WITH t AS MATERIALIZED (SELECT u.key, u.n, " TENANT("u") " AS tenant FROM"
        " unnest((SELECT $1::text[]), $2::bigint[], $3::text[], $4::bigint[]) AS u(key, n, tenant,"
        " run_id)),"
        " woken AS (SELECT pg_notify('switchyard', '') FROM (SELECT 1 FROM slot_waiters w"
        " JOIN runs r ON r.id = w.run_id AND r.owner = w.owner AND r.lease_epoch = w.epoch"
        " WHERE w.key IN (SELECT key FROM t) AND w.owner <> $5 LIMIT 1) x)"
        " UPDATE slot_counts k SET held = GREATEST(0, k.held - x.n), granted = CASE WHEN"
        " $6::boolean OR x.key = ANY($7::text[]) THEN k.granted ELSE LEAST(k.granted,"
        " GREATEST(0, k.held - x.n) + CASE WHEN " SY_PG_WAITED("x.key") " THEN 0 ELSE k.extra END)"
        " END,"
        " tenants = " SY_PG_TENANTS_ADD("k.tenants", "x.nt", "x.tenant", "-x.n", "x.minus")
        ", ahead = 0 FROM (SELECT key, sum(n)::bigint AS n, count(*) AS nt, min(tenant) AS tenant,"
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
    /* What host $1 did not write of the keys $2 ($3 slots of tenant $4
     * each; postgres/unwritten.h) written into their rows, which then
     * say what it holds exactly (`ahead` 0): before a statement that
     * reads the host's own count (a grant made again, a give-back sent
     * alone). */
    [SY_PG_SLOT_SETTLE - SY_PG_SLOT_FIRST] =
        "UPDATE slot_counts k SET held = k.held + d.n, ahead = 0, tenants = "
        SY_PG_TENANTS_ADD("k.tenants", "1", "d.tenant", "d.n", "NULL::jsonb")
        " FROM unnest($2::text[], $3::bigint[], $4::text[]) AS d(key, n, tenant)"
        " WHERE k.key = d.key AND k.owner = $1::text",
    [SY_PG_SLOT_LIST - SY_PG_SLOT_FIRST] =
        "SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.n, s.owner, s.taken,"
        LIVE("$1::bigint") " FROM slot_holders s ORDER BY s.key, s.taken, s.run_id, s.idx,"
        " s.elem",
};
