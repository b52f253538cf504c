/*
 * store/postgres/map_sql.c -- the SQL of the PostgreSQL store's statements
 * for mapped tasks (postgres/elements.c, postgres/batch.c), prepared as
 * the others are (postgres/conn.c, by their number from SY_PG_MAP_FIRST).
 */
#include "store/postgres/internal.h"

const char *const sy_pg_map_sql[SY_PG_KEYED_FIRST - SY_PG_MAP_FIRST] = {
    [SY_PG_PUT_MAP - SY_PG_MAP_FIRST] = "INSERT INTO task_maps (run_id, idx, size)"
                      " SELECT $1, $2, $3 WHERE" SY_PG_FENCE("$1", "$4", "$5")
                      " ON CONFLICT DO NOTHING",
    /* An element row's write (postgres/elements.c): as UPDATE_TASK with
     * the element's own token; a row not there yet is inserted by the
     * next. */
    [SY_PG_UPDATE_ELEMENT - SY_PG_MAP_FIRST] =
        "UPDATE task_elements SET state = $4, attempts = $5, failures = $6,"
        " recoveries = $7, executor = $8, error = $9, output = $10,"
        " ready_at = $11, started = $12, finished = $13,"
        " host = CASE WHEN $16 <> fence THEN $14::text ELSE host END, fence = $16,"
        " waiting_for = $18::text, hold = COALESCE($19::text, "
        SY_PG_HOLD_KEPT("$4::smallint", "$16", "fence", "hold") ")"
        " WHERE run_id = $1 AND idx = $2 AND elem = $3"
        " AND ($14::text IS NULL OR fence = $17) AND" SY_PG_FENCE("$1", "$14", "$15"),
    [SY_PG_INSERT_ELEMENT - SY_PG_MAP_FIRST] =
        "INSERT INTO task_elements (run_id, idx, elem, state, attempts, failures,"
        " recoveries, executor, error, output, ready_at, started, finished, host,"
        " fence, waiting_for, hold) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
        " $12, $13, CASE WHEN $16::bigint <> 0 THEN $14::text END, $16, $18::text,"
        " $19::text"
        " WHERE (SELECT size FROM task_maps WHERE run_id = $1 AND idx = $2) > $3"
        " AND $17::bigint = 0 AND" SY_PG_FENCE("$1", "$14", "$15")
        " ON CONFLICT DO NOTHING",
    /* Many element rows, each written and fenced as by UPDATE_ELEMENT
     * and INSERT_ELEMENT together (postgres/batch.c): one array per
     * column, the claim of each run checked once on its share-locked row
     * as UPDATE_TASKS does; a row there is updated under its token, a row
     * not there yet (token 0, within its map) inserted.  Both see the
     * statement's one snapshot, so each write takes one of the two paths;
     * the positions of the writes that landed come back.  Holds as in
     * UPDATE_TASKS: an index per row into $20. */
    [SY_PG_UPDATE_ELEMENTS - SY_PG_MAP_FIRST] =
        "WITH u AS (SELECT * FROM unnest(" SY_PG_ARRAY(1, "bigint") ", "
        SY_PG_ARRAY(2, "int") ", " SY_PG_ARRAY(3, "bigint") ", " SY_PG_ARRAY(4, "int") ", "
        SY_PG_ARRAY(5, "int") ", " SY_PG_ARRAY(6, "int") ", " SY_PG_ARRAY(7, "int") ", "
        SY_PG_ARRAY(8, "text") ", " SY_PG_ARRAY(9, "text") ", " SY_PG_ARRAY(10, "text") ", "
        SY_PG_ARRAY(11, "bigint") ", " SY_PG_ARRAY(12, "bigint") ", " SY_PG_ARRAY(13, "bigint")
        ", " SY_PG_ARRAY(14, "text") ", " SY_PG_ARRAY(15, "bigint") ", " SY_PG_ARRAY(16, "bigint")
        ", " SY_PG_ARRAY(17, "bigint") ", " SY_PG_ARRAY(18, "text") ", " SY_PG_ARRAY(19, "int") ")"
        " WITH ORDINALITY AS u(run, i, el, st, att, fail, rec, ex, err, out, ra, sa, fi,"
        " ow, ep, fe, tok, wf, hd, n)),"
        " held AS MATERIALIZED (SELECT id, owner, lease_epoch FROM runs"
        " WHERE id IN (SELECT run FROM u WHERE ow IS NOT NULL) FOR SHARE),"
        " ok AS MATERIALIZED (SELECT u.* FROM u LEFT JOIN held h ON h.id = u.run"
        " WHERE u.ow IS NULL OR (h.owner = u.ow AND h.lease_epoch = u.ep)),"
        " upd AS (UPDATE task_elements AS t SET state = u.st, attempts = u.att,"
        " failures = u.fail, recoveries = u.rec, executor = u.ex, error = u.err,"
        " output = u.out, ready_at = u.ra, started = u.sa, finished = u.fi,"
        " host = CASE WHEN u.fe <> t.fence THEN u.ow ELSE t.host END,"
        " fence = u.fe, waiting_for = u.wf, hold = COALESCE(($20::text[])[u.hd], "
        SY_PG_HOLD_KEPT("u.st", "u.fe", "t.fence", "t.hold") ") FROM ok u WHERE t.run_id = u.run"
        " AND t.idx = u.i"
        " AND t.elem = u.el AND (u.ow IS NULL OR t.fence = u.tok) RETURNING u.n),"
        " ins AS (INSERT INTO task_elements (run_id, idx, elem, state, attempts,"
        " failures, recoveries, executor, error, output, ready_at, started,"
        " finished, host, fence, waiting_for, hold) SELECT u.run, u.i, u.el, u.st,"
        " u.att, u.fail, u.rec, u.ex, u.err, u.out, u.ra, u.sa, u.fi,"
        " CASE WHEN u.fe <> 0 THEN u.ow END, u.fe, u.wf, ($20::text[])[u.hd] FROM ok u"
        " JOIN task_maps m"
        " ON m.run_id = u.run AND m.idx = u.i WHERE u.tok = 0 AND m.size > u.el"
        " AND NOT EXISTS (SELECT 1 FROM task_elements t WHERE t.run_id = u.run"
        " AND t.idx = u.i AND t.elem = u.el) ON CONFLICT DO NOTHING"
        " RETURNING run_id, idx, elem)"
        " SELECT n FROM upd UNION ALL SELECT u.n FROM ins JOIN u"
        " ON u.run = ins.run_id AND u.i = ins.idx AND u.el = ins.elem",
    [SY_PG_LIST_MAPS - SY_PG_MAP_FIRST] =
        "SELECT m.idx, m.size, e.state, count(e.elem) FROM task_maps m"
        " LEFT JOIN task_elements e ON e.run_id = m.run_id AND e.idx = m.idx"
        " WHERE m.run_id = $1 GROUP BY m.idx, m.size, e.state ORDER BY m.idx",
    [SY_PG_LIST_ELEMENTS - SY_PG_MAP_FIRST] =
        "SELECT elem, state, attempts, failures, recoveries, executor, error,"
        " output, ready_at, started, finished, fence, host, waiting_for"
        " FROM task_elements WHERE run_id = $1 AND idx = $2"
        " AND ($3::int = 0 OR state < 3 OR state = 7)"
        " ORDER BY elem",
};
