/*
 * store/sqlite/slots.c -- flow-control slots (store/slots.h) in the SQLite
 * store.  A batch holds the file's write lock (BEGIN IMMEDIATE) from its
 * start, so a key's count and the take that follows it see every other
 * host's holders and nothing can come between them.
 *
 * Where a take is kept: in the row of the attempt that took it, set by
 * the write that starts the attempt (sqlite/holds.c), or, for a take no
 * such write carried (sy_store_take_slots, an attempt refused before it
 * started), as a slot row.  `slot_holders` names both.
 *
 * What a key holds is read from its counts (sqlite/counts.c): per run,
 * under the claim its takes were made under, counted only while that
 * claim is live; so they are exact, and a dead host's holders stop
 * counting when its lease ends, once.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/sqlite/internal.h"

int sy_sqlite_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                         const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                         size_t *full, int64_t *held)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "take_slots: no batch is open");
    *taken = false;
    int64_t used[SY_SLOT_CLAIMS_MAX];
    int status = sy_sqlite_counts_held(q, c, n, now, used);
    if (status != SY_OK)
        return status;
    for (size_t i = 0; i < n; i++)
        if (used[i] + c[i].n > c[i].limit) {
            *full = i;
            *held = used[i];
            return SY_OK;
        }
    sqlite3_stmt *st = q->st[SY_SQL_SLOT_TAKE];
    for (size_t i = 0; i < n; i++) {
        int rc = bind_text(st, 1, c[i].key);
        keep(&rc, sqlite3_bind_int64(st, 2, h->run_id));
        keep(&rc, sqlite3_bind_int64(st, 3, h->idx));
        keep(&rc, sqlite3_bind_int64(st, 4, h->elem));
        keep(&rc, sqlite3_bind_int64(st, 5, h->token));
        keep(&rc, sqlite3_bind_int64(st, 6, c[i].n));
        keep(&rc, bind_text(st, 7, fence->owner));
        keep(&rc, sqlite3_bind_int64(st, 8, fence->epoch));
        keep(&rc, sqlite3_bind_int64(st, 9, now));
        if (rc != SQLITE_OK)
            return sy_sqlite_fail_reset(q, st, rc, "take a slot of '%s'", c[i].key);
        status = sy_sqlite_step_done(q, st, "take a slot");
        const char *owner = status == SY_OK ? sy_sqlite_owner(q, fence->owner) : NULL;
        if (owner) {
            q->slot_rows++;
            status = sy_sqlite_count_add(q, h->run_id, owner, fence->epoch, c[i].key, c[i].n);
        } else if (status == SY_OK) {
            status = SY_ENOMEM;
        }
        if (status != SY_OK)
            return status;
    }
    *taken = true;
    return SY_OK;
}

int sy_sqlite_slot_room(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                        int64_t now, int64_t *held)
{
    (void)owner; /* one writer at a time: nothing is granted ahead */
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "slot_room: no batch is open");
    return sy_sqlite_counts_held(q, c, n, now, held);
}

int sy_sqlite_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                        int64_t now, bool *put)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "put_slots: no batch is open");
    /* The batch has held the write lock since the room read the takes
     * were decided on: nothing to check again (store/slots.h).  The
     * takes wait for their attempts' start writes (sqlite/holds.c). */
    *put = false;
    const char *copy = sy_sqlite_owner(q, owner);
    int status = copy ? SY_OK : SY_ENOMEM;
    for (size_t i = 0; i < n && status == SY_OK; i++) {
        status = sy_sqlite_hold_add(q, copy, &t[i], now);
        if (status == SY_OK)
            status = sy_sqlite_count_add(q, t[i].holder.run_id, copy, t[i].epoch, t[i].key,
                                         t[i].n);
    }
    *put = status == SY_OK;
    return status;
}

int sy_sqlite_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "return_takes: no batch is open");
    /* A take in its attempt's row goes with the write that ends the
     * attempt (same batch); only a take kept as a slot row is deleted. */
    sqlite3_stmt *st = q->st[SY_SQL_SLOT_RETURN_TAKE];
    const char *copy = sy_sqlite_owner(q, owner);
    int status = copy ? SY_OK : SY_ENOMEM;
    for (size_t i = 0; i < n && status == SY_OK; i++) {
        if (q->slot_rows > 0) {
            int rc = bind_text(st, 1, t[i].key);
            keep(&rc, sqlite3_bind_int64(st, 2, t[i].holder.run_id));
            keep(&rc, sqlite3_bind_int64(st, 3, t[i].holder.idx));
            keep(&rc, sqlite3_bind_int64(st, 4, t[i].holder.elem));
            keep(&rc, sqlite3_bind_int64(st, 5, t[i].holder.token));
            keep(&rc, bind_text(st, 6, owner));
            status = rc == SQLITE_OK ? sy_sqlite_step_done(q, st, "return a slot")
                                     : sy_sqlite_fail_reset(q, st, rc,
                                                            "return a slot of '%s'", t[i].key);
            if (status == SY_OK && sqlite3_changes(q->db) > 0)
                q->slot_rows--;
        }
        if (status == SY_OK)
            status = sy_sqlite_count_add(q, t[i].holder.run_id, copy, t[i].epoch, t[i].key,
                                         -t[i].n);
    }
    return status;
}

/* Clears the holds of holder h (every one of its run for token 0) in the
 * attempts' rows. */
static int clear_holds(sy_store_sqlite *q, const sy_slot_holder *h)
{
    static const char *const sql[] = {
        "UPDATE tasks SET hold = NULL WHERE run_id = ?1 AND hold IS NOT NULL AND"
        " (?4 = 0 OR (idx = ?2 AND ?3 = -1 AND fence = ?4))",
        "UPDATE task_elements SET hold = NULL WHERE run_id = ?1 AND hold IS NOT NULL AND"
        " (?4 = 0 OR (idx = ?2 AND elem = ?3 AND fence = ?4))",
    };
    int status = SY_OK;
    for (size_t i = 0; i < 2 && status == SY_OK; i++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(q->db, sql[i], -1, &st, NULL);
        keep(&rc, sqlite3_bind_int64(st, 1, h->run_id));
        keep(&rc, sqlite3_bind_int64(st, 2, h->idx));
        keep(&rc, sqlite3_bind_int64(st, 3, h->elem));
        keep(&rc, sqlite3_bind_int64(st, 4, h->token));
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            status = sy_sqlite_fail(q, rc, "return the slots of run %lld",
                                    (long long)h->run_id);
        sqlite3_finalize(st);
    }
    return status;
}

int sy_sqlite_return_slots(sy_store *s, const sy_slot_holder *h, size_t n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "return_slots: no batch is open");
    /* The holders read say what they held (slot_holders: rows and
     * attempts' holds alike), taken off their runs' counts. */
    int status = SY_OK;
    for (size_t i = 0; i < n && status == SY_OK; i++) {
        bool run = h[i].token == 0;
        for (int pass = 0; pass < 2 && status == SY_OK; pass++) {
            int id = pass == 0 ? (run ? SY_SQL_SLOT_HELD_BY_RUN : SY_SQL_SLOT_HELD_BY)
                               : (run ? SY_SQL_SLOT_RETURN_RUN : SY_SQL_SLOT_RETURN);
            sqlite3_stmt *st = q->st[id];
            int rc = sqlite3_bind_int64(st, 1, h[i].run_id);
            if (!run) {
                keep(&rc, sqlite3_bind_int64(st, 2, h[i].idx));
                keep(&rc, sqlite3_bind_int64(st, 3, h[i].elem));
                keep(&rc, sqlite3_bind_int64(st, 4, h[i].token));
            }
            while ((rc == SQLITE_OK || rc == SQLITE_ROW) && status == SY_OK) {
                rc = sqlite3_step(st);
                if (rc != SQLITE_ROW)
                    break;
                if (!col_text(st, 1))
                    continue; /* no claim: counted nowhere */
                const char *owner = sy_sqlite_owner(q, col_text(st, 1));
                status = owner ? sy_sqlite_count_add(q, sqlite3_column_int64(st, 4), owner,
                                                     sqlite3_column_int64(st, 3),
                                                     col_text(st, 0),
                                                     -sqlite3_column_int64(st, 2))
                               : SY_ENOMEM;
            }
            if (status != SY_OK) {
                sqlite3_reset(st);
                break;
            }
            if (rc != SQLITE_DONE) {
                status = sy_sqlite_fail_reset(q, st, rc, "return slots");
                break;
            }
            sqlite3_reset(st);
            if (pass == 1) {
                size_t gone = (size_t)sqlite3_changes(q->db);
                q->slot_rows -= gone < q->slot_rows ? gone : q->slot_rows;
            }
        }
        if (status == SY_OK)
            status = clear_holds(q, &h[i]);
    }
    return status;
}

int sy_sqlite_reap_slots(sy_store *s, int64_t now, size_t *n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "reap_slots: called inside a batch; commit first");
    *n = 0;
    int status = sy_sqlite_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    /* Slot rows, counts and cancel requests under claims no longer
     * live. */
    static const char *const sql[] = {
        "DELETE FROM slots AS s WHERE NOT" SY_SQLITE_SLOT_LIVE("?1"),
        "DELETE FROM slot_counts AS c WHERE NOT EXISTS (SELECT 1 FROM runs r"
        " WHERE r.id = c.run_id AND r.owner = c.owner AND r.lease_epoch = c.epoch AND"
        " r.lease_until > ?1)",
        "DELETE FROM slot_cancels AS s WHERE NOT" SY_SQLITE_SLOT_LIVE("?1")
        " OR NOT EXISTS (SELECT 1 FROM slot_holders h WHERE h.run_id = s.run_id AND"
        " h.idx = s.idx AND h.elem = s.elem AND h.token = s.token AND h.key = s.key)",
    };
    size_t reaped = 0;
    for (size_t i = 0; i < SY_ARRAY_LEN(sql) && status == SY_OK; i++) {
        sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(q->db, sql[i], -1, &st, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(st, 1, now);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "reap slots");
        if (status == SY_OK && i == 0)
            reaped = (size_t)sqlite3_changes(q->db);
        sqlite3_finalize(st);
    }
    status = sy_sqlite_transaction_end(q, false, status);
    if (status == SY_OK)
        *n = reaped;
    return status;
}

int sy_sqlite_list_slots(sy_store *s, int64_t now,
                         int (*cb)(void *arg, const sy_slot_record *r), void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db,
                                "SELECT s.key, s.run_id, s.idx, s.elem, s.token, s.n, s.owner,"
                                " s.taken," SY_SQLITE_SLOT_LIVE("?1")
                                " FROM slot_holders s"
                                " ORDER BY s.key, s.taken, s.run_id, s.idx, s.elem",
                                -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 1, now);
    int status = SY_OK;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        sy_slot_record r = {
            .key = col_text(st, 0),
            .holder = {sqlite3_column_int64(st, 1), (uint32_t)sqlite3_column_int64(st, 2),
                       sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4)},
            .n = sqlite3_column_int64(st, 5),
            .owner = col_text(st, 6),
            .taken = sqlite3_column_int64(st, 7),
            .live = sqlite3_column_int(st, 8) != 0,
        };
        if (cb(arg, &r) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE)
        status = sy_sqlite_fail(q, rc, "list slots");
    sqlite3_finalize(st);
    return status;
}
