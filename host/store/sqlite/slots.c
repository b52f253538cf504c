/*
 * store/sqlite/slots.c -- flow-control slots (store/slots.h) in the SQLite
 * store.  A batch holds the file's write lock (BEGIN IMMEDIATE) from its
 * start, so a key's count and the insert that follows it see every other
 * host's holders and nothing can come between them.
 *
 * A take reads the key's counters (slot_counts: what its rows hold, live
 * or not), one indexed row per host, instead of counting its live holders
 * (a pool's count grew with its holders).  The counters never hold less
 * than the live rows: a row adds its n when taken and takes it off when
 * given back or reaped; rows gone another way (with their run) leave
 * them higher, never lower.  So room by the counters is room; a key
 * full by its counters has its live holders counted, exactly, as before
 * (its dead holders' rows are the reap's, which makes the counters exact
 * again).
 */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/internal.h"

/* What the live holders of `key` hold at `now` (SY_SQL_SLOT_HELD), or
 * what its counters say its rows hold, at least as much
 * (SY_SQL_SLOT_COUNT). */
static int sum_of(sy_store_sqlite *q, int id, const char *key, int64_t now, int64_t *held)
{
    sqlite3_stmt *st = q->st[id];
    int rc = bind_text(st, 1, key);
    if (id == SY_SQL_SLOT_HELD)
        keep(&rc, sqlite3_bind_int64(st, 2, now));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW)
        return sy_sqlite_fail_reset(q, st, rc, "count the holders of '%s'", key);
    *held = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return SY_OK;
}

/* Adds n to what `owner`'s rows of `key` hold. */
static int count_in(sy_store_sqlite *q, const char *key, const char *owner, int64_t n)
{
    sqlite3_stmt *st = q->st[SY_SQL_SLOT_COUNT_ADD];
    int rc = bind_text(st, 1, key);
    keep(&rc, bind_text(st, 2, owner));
    keep(&rc, sqlite3_bind_int64(st, 3, n));
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "count a slot of '%s'", key);
    return sy_sqlite_step_done(q, st, "count a slot");
}

int sy_sqlite_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                         const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                         size_t *full, int64_t *held)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "take_slots: no batch is open");
    *taken = false;
    for (size_t i = 0; i < n; i++) {
        int64_t used = 0;
        int status = sum_of(q, SY_SQL_SLOT_COUNT, c[i].key, now, &used);
        if (status == SY_OK && used + c[i].n > c[i].limit)
            status = sum_of(q, SY_SQL_SLOT_HELD, c[i].key, now, &used);
        if (status != SY_OK)
            return status;
        if (used + c[i].n > c[i].limit) {
            *full = i;
            *held = used;
            return SY_OK;
        }
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
        int status = sy_sqlite_step_done(q, st, "take a slot");
        if (status == SY_OK)
            status = count_in(q, c[i].key, fence->owner, c[i].n);
        if (status != SY_OK)
            return status;
    }
    *taken = true;
    return SY_OK;
}

int sy_sqlite_slot_room(sy_store *s, const sy_slot_claim *c, size_t n, int64_t now,
                        int64_t *held)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "slot_room: no batch is open");
    for (size_t i = 0; i < n; i++) {
        int status = sum_of(q, SY_SQL_SLOT_COUNT, c[i].key, now, &held[i]);
        if (status == SY_OK && held[i] + c[i].n > c[i].limit)
            status = sum_of(q, SY_SQL_SLOT_HELD, c[i].key, now, &held[i]);
        if (status != SY_OK)
            return status;
    }
    return SY_OK;
}

/* What a turn adds to or takes off the counters, one entry per key and
 * owner once merged: a counter is written once per turn, not per row. */
typedef struct {
    const char *key, *owner;
    int64_t n;
} tally_entry;

/* `copied`: the entries' strings are the tally's own (rows read back,
 * whose text the next step frees); otherwise they are the caller's,
 * valid for the call, and not copied (a take's key: two allocations and
 * two frees a take saved). */
typedef struct {
    tally_entry *v;
    size_t n, cap;
    bool oom, copied;
} tally;

static void tally_add(tally *t, const char *key, const char *owner, int64_t n)
{
    if (t->oom)
        return;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        tally_entry *v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            t->oom = true;
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    if (!t->copied) {
        t->v[t->n++] = (tally_entry){key, owner, n};
        return;
    }
    char *k = strdup(key), *o = strdup(owner);
    if (!k || !o) {
        free(k);
        free(o);
        t->oom = true;
        return;
    }
    t->v[t->n++] = (tally_entry){k, o, n};
}

static int by_key_owner(const void *a, const void *b)
{
    const tally_entry *x = a, *y = b;
    /* A turn's takes of one key share its string (engine/ledger.c), and
     * one call has one owner: equal pointers spare the compare. */
    int c = x->key == y->key ? 0 : strcmp(x->key, y->key);
    return c || x->owner == y->owner ? c : strcmp(x->owner, y->owner);
}

static void tally_free(tally *t)
{
    for (size_t i = 0; t->copied && i < t->n; i++) {
        free((char *)t->v[i].key);
        free((char *)t->v[i].owner);
    }
    free(t->v);
}

/* Writes the tally's merged entries with statement `id` (key, owner, n),
 * then frees it. */
static int tally_write(sy_store_sqlite *q, tally *t, int id, const char *what)
{
    int status = t->oom ? sy_store_fail(&q->base, SY_ENOMEM, "out of memory") : SY_OK;
    if (status == SY_OK && t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, by_key_owner);
    sqlite3_stmt *st = q->st[id];
    for (size_t i = 0; i < t->n && status == SY_OK; i++) {
        int64_t n = t->v[i].n;
        while (i + 1 < t->n && by_key_owner(&t->v[i], &t->v[i + 1]) == 0)
            n += t->v[++i].n;
        int rc = bind_text(st, 1, t->v[i].key);
        keep(&rc, bind_text(st, 2, t->v[i].owner));
        keep(&rc, sqlite3_bind_int64(st, 3, n));
        status = rc == SQLITE_OK ? sy_sqlite_step_done(q, st, what)
                                 : sy_sqlite_fail_reset(q, st, rc, "%s", what);
    }
    tally_free(t);
    return status;
}

/* Binds a take's row identity: its key and holder as ?1 to ?5. */
static int bind_take(sqlite3_stmt *st, const sy_slot_take *t)
{
    int rc = bind_text(st, 1, t->key);
    keep(&rc, sqlite3_bind_int64(st, 2, t->holder.run_id));
    keep(&rc, sqlite3_bind_int64(st, 3, t->holder.idx));
    keep(&rc, sqlite3_bind_int64(st, 4, t->holder.elem));
    keep(&rc, sqlite3_bind_int64(st, 5, t->holder.token));
    return rc;
}

int sy_sqlite_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                        int64_t now, bool *put)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "put_slots: no batch is open");
    /* The batch has held the write lock since the room read the takes
     * were decided on: nothing to check again (store/slots.h). */
    *put = false;
    tally counts = {0};
    sqlite3_stmt *st = q->st[SY_SQL_SLOT_TAKE];
    int status = SY_OK;
    for (size_t i = 0; i < n && status == SY_OK; i++) {
        int rc = bind_take(st, &t[i]);
        keep(&rc, sqlite3_bind_int64(st, 6, t[i].n));
        keep(&rc, bind_text(st, 7, owner));
        keep(&rc, sqlite3_bind_int64(st, 8, t[i].epoch));
        keep(&rc, sqlite3_bind_int64(st, 9, now));
        status = rc == SQLITE_OK ? sy_sqlite_step_done(q, st, "take a slot")
                                 : sy_sqlite_fail_reset(q, st, rc, "take a slot of '%s'",
                                                        t[i].key);
        tally_add(&counts, t[i].key, owner, t[i].n);
    }
    if (status != SY_OK) {
        tally_free(&counts);
        return status;
    }
    status = tally_write(q, &counts, SY_SQL_SLOT_COUNT_ADD, "count slots");
    *put = status == SY_OK;
    return status;
}

int sy_sqlite_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "return_takes: no batch is open");
    tally counts = {0};
    sqlite3_stmt *st = q->st[SY_SQL_SLOT_RETURN_TAKE];
    int status = SY_OK;
    for (size_t i = 0; i < n && status == SY_OK; i++) {
        int rc = bind_take(st, &t[i]);
        keep(&rc, bind_text(st, 6, owner));
        status = rc == SQLITE_OK ? sy_sqlite_step_done(q, st, "return a slot")
                                 : sy_sqlite_fail_reset(q, st, rc, "return a slot of '%s'",
                                                        t[i].key);
        /* Only a row still there was counted. */
        if (status == SY_OK && sqlite3_changes(q->db) > 0)
            tally_add(&counts, t[i].key, owner, t[i].n);
    }
    if (status != SY_OK) {
        tally_free(&counts);
        return status;
    }
    return tally_write(q, &counts, SY_SQL_SLOT_UNCOUNT, "count slots given back");
}

int sy_sqlite_return_slots(sy_store *s, const sy_slot_holder *h, size_t n)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (!in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "return_slots: no batch is open");
    /* The rows deleted say what they held; their counters are written
     * once per key and owner after. */
    tally counts = {.copied = true};
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
            while (rc == SQLITE_OK || rc == SQLITE_ROW) {
                rc = sqlite3_step(st);
                if (rc == SQLITE_ROW)
                    tally_add(&counts, col_text(st, 0), col_text(st, 1),
                              sqlite3_column_int64(st, 2));
            }
            if (rc != SQLITE_DONE)
                status = sy_sqlite_fail_reset(q, st, rc, "return slots");
            else
                sqlite3_reset(st);
        }
    }
    if (status != SY_OK) {
        tally_free(&counts);
        return status;
    }
    return tally_write(q, &counts, SY_SQL_SLOT_UNCOUNT, "count slots given back");
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
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(q->db, "DELETE FROM slots AS s WHERE NOT"
                                SY_SQLITE_SLOT_LIVE("?1"), -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 1, now);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    status = rc == SQLITE_DONE ? SY_OK : sy_sqlite_fail(q, rc, "reap slots");
    size_t reaped = status == SY_OK ? (size_t)sqlite3_changes(q->db) : 0;
    sqlite3_finalize(st);
    /* The counters made exact again, from the live rows left (one writer
     * holds the file: nothing takes meanwhile); a key nobody holds keeps
     * no row. */
    if (status == SY_OK)
        status = sy_sqlite_exec(q, "DELETE FROM slot_counts;"
                                "INSERT INTO slot_counts (key, owner, held)"
                                " SELECT key, owner, SUM(n) FROM slots GROUP BY key, owner",
                                "recount slots");
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
                                " FROM slots s ORDER BY s.key, s.taken, s.run_id, s.idx, s.elem",
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
