/*
 * store/sqlite/holds.c -- a turn's takes carried by its attempts' own rows
 * (store/slots.h, docs/flow-control.md "The cost of limits").
 *
 * A slot row of its own costs a B-tree entry written at the take and
 * deleted at the give-back: 17,700 instructions an attempt, four times
 * the whole budget limits have.  So sy_store_put_slots keeps a turn's
 * takes here, per attempt, and the write that starts the attempt, later
 * in the same batch, stores them in the task's or element's `hold`
 * column; the give-back writes nothing there, because the write that
 * ends the attempt (same batch: engine/run.c) leaves its row out of
 * `slot_holders` (the view reads a hold only while its task is Running
 * under the attempt token that took it).  A take no start write carried
 * (an attempt refused before it started) becomes slot rows at the
 * commit, as every take did before.
 *
 * A hold is JSON, read only by the view (listings, cancel requests): the
 * lease epoch of the claim it was taken under and the keys,
 *   {"e":epoch,"k":[["key",n],...]}
 * The row says the rest: its attempt token (`fence`), the host that
 * started it (`host`, the claim's owner) and when (`started`).  It is
 * kept short: the task writes copy it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/sqlite/internal.h"

static size_t hold_slot(const sy_sqlite_holds *hs, int64_t run_id, uint32_t idx, int64_t elem)
{
    return (size_t)sy_holder_hash(run_id, idx, elem) & (hs->n_slots - 1);
}

/* The entry of (run, idx, elem), or NULL. */
static sy_sqlite_hold *find(const sy_sqlite_holds *hs, int64_t run_id, uint32_t idx, int64_t elem)
{
    if (hs->n == 0)
        return NULL;
    for (size_t i = hold_slot(hs, run_id, idx, elem);; i = (i + 1) & (hs->n_slots - 1)) {
        uint32_t k = hs->slots[i];
        if (k == 0)
            return NULL;
        sy_sqlite_hold *h = &hs->v[k - 1];
        if (h->run_id == run_id && h->idx == idx && h->elem == elem)
            return h;
    }
}

/* Room for one more entry, the index rebuilt at twice the entries. */
static bool grow(sy_sqlite_holds *hs)
{
    if (hs->n == hs->cap) {
        size_t cap = hs->cap ? hs->cap * 2 : 64;
        sy_sqlite_hold *v = realloc(hs->v, cap * sizeof *v);
        if (!v)
            return false;
        hs->v = v;
        hs->cap = cap;
    }
    if ((hs->n + 1) * 2 <= hs->n_slots)
        return true;
    size_t n_slots = hs->n_slots ? hs->n_slots * 2 : 128;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return false;
    free(hs->slots);
    hs->slots = slots;
    hs->n_slots = n_slots;
    for (size_t k = 0; k < hs->n; k++) {
        const sy_sqlite_hold *h = &hs->v[k];
        size_t i = hold_slot(hs, h->run_id, h->idx, h->elem);
        while (hs->slots[i])
            i = (i + 1) & (n_slots - 1);
        hs->slots[i] = (uint32_t)(k + 1);
    }
    return true;
}

/* The batch's texts are one buffer (hs->arena), each hold a part of it:
 * no allocation per attempt.  A hold appended to is at the buffer's end;
 * when another hold was appended since, it moves there first (rare: a
 * task's takes come together). */
static bool at_end(sy_sqlite_holds *hs, sy_sqlite_hold *h)
{
    if (hs->tail == h)
        return true;
    sy_sqlite_text *b = &hs->arena;
    if (!sy_sqlite_text_reserve(b, h->len))
        return false;
    /* Copied within the buffer, after any move reserving made. */
    memcpy(b->p + b->len, b->p + h->off, h->len);
    h->off = b->len;
    b->len += h->len;
    b->p[b->len] = '\0';
    hs->tail = h;
    return true;
}

/* The memo slot of take t's text (sy_sqlite_hold_memo), NULL before the
 * first is kept. */
static sy_sqlite_hold_memo *memo_of(const sy_sqlite_holds *hs, const sy_slot_take *t)
{
    if (!hs->memos)
        return NULL;
    uint64_t x = (uint64_t)(uintptr_t)t->key * 0x9e3779b97f4a7c15u ^
                 (uint64_t)t->epoch * 0xc2b2ae3d27d4eb4fu ^ (uint64_t)t->n;
    return &hs->memos[(x ^ x >> 32) & (SY_SQLITE_HOLD_MEMOS - 1)];
}

static bool memo_is(const sy_sqlite_hold_memo *m, const sy_slot_take *t)
{
    return m && m->key_at == t->key && m->epoch == t->epoch && m->n == t->n &&
           strcmp(m->key, t->key) == 0;
}

/* Keeps h's text, just begun with take t, for the next like it (not when
 * too long or out of memory: then it is built again). */
static void remember(sy_sqlite_holds *hs, const sy_sqlite_hold *h, const sy_slot_take *t)
{
    size_t key_len = strlen(t->key);
    if (!hs->memos && !(hs->memos = calloc(SY_SQLITE_HOLD_MEMOS, sizeof *hs->memos)))
        return;
    sy_sqlite_hold_memo *m = memo_of(hs, t);
    if (key_len >= sizeof m->key || h->len > sizeof m->text)
        return;
    *m = (sy_sqlite_hold_memo){.key_at = t->key, .epoch = t->epoch, .n = t->n,
                               .len = (uint8_t)h->len};
    memcpy(m->key, t->key, key_len + 1);
    memcpy(m->text, hs->arena.p + h->off, h->len);
}

/* Starts h's text for attempt t->holder's takes at `now`: with t's take,
 * copied from its memo (true in *whole), or only the opening. */
static bool start(sy_sqlite_holds *hs, sy_sqlite_hold *h, const sy_slot_take *t, int64_t now,
                  bool *whole)
{
    h->closed = h->written = false;
    h->first = true;
    h->token = t->holder.token;
    h->epoch = t->epoch;
    h->taken = now;
    h->off = hs->arena.len;
    hs->tail = h;
    sy_sqlite_text *b = &hs->arena;
    const sy_sqlite_hold_memo *m = memo_of(hs, t);
    bool ok;
    if ((*whole = memo_is(m, t))) {
        ok = sy_sqlite_text_put(b, m->text, m->len);
        h->first = false;
    } else {
        ok = sy_sqlite_text_put(b, "{\"e\":", 5) && sy_sqlite_text_int(b, t->epoch) &&
             sy_sqlite_text_put(b, ",\"k\":[", 6);
    }
    h->len = b->len - h->off;
    return ok;
}

/* The holds' copy of `owner`, added when new; NULL when out of memory. */
static const char *owner_of(sy_sqlite_holds *hs, const char *owner)
{
    for (size_t i = hs->n_owners; i-- > 0;)
        if (strcmp(hs->owners[i], owner) == 0)
            return hs->owners[i];
    char **owners = realloc(hs->owners, (hs->n_owners + 1) * sizeof *owners);
    if (!owners)
        return NULL;
    hs->owners = owners;
    if (!(owners[hs->n_owners] = strdup(owner)))
        return NULL;
    return owners[hs->n_owners++];
}

const char *sy_sqlite_owner(sy_store_sqlite *q, const char *owner)
{
    const char *copy = owner_of(&q->holds, owner);
    if (!copy)
        sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    return copy;
}

int sy_sqlite_hold_add(sy_store_sqlite *q, const char *owner, const sy_slot_take *t,
                       int64_t now)
{
    sy_sqlite_holds *hs = &q->holds;
    const sy_slot_holder *w = &t->holder;
    sy_sqlite_hold *h = find(hs, w->run_id, w->idx, w->elem);
    bool begun = false, whole = false;
    if (h && (h->token != w->token || h->epoch != t->epoch || h->owner != owner ||
              h->closed)) {
        /* Another attempt of the same task in one batch: the newer take
         * replaces the older, which its start write can no longer carry
         * (its token moved on), so the older becomes rows now. */
        int status = sy_sqlite_hold_rows(q, h);
        if (status != SY_OK)
            return status;
        if (!start(hs, h, t, now, &whole))
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        h->owner = owner;
        begun = true;
    } else if (!h) {
        if (!grow(hs))
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        h = &hs->v[hs->n];
        *h = (sy_sqlite_hold){.run_id = w->run_id, .idx = w->idx, .elem = w->elem,
                              .owner = owner};
        size_t i = hold_slot(hs, w->run_id, w->idx, w->elem);
        while (hs->slots[i])
            i = (i + 1) & (hs->n_slots - 1);
        hs->slots[i] = (uint32_t)(++hs->n);
        if (!start(hs, h, t, now, &whole))
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        begun = true;
    }
    if (whole)
        return SY_OK;
    sy_sqlite_text *b = &hs->arena;
    bool ok = at_end(hs, h) && sy_sqlite_text_put(b, h->first ? "[" : ",[", h->first ? 1 : 2) &&
              sy_sqlite_text_string(b, t->key) && sy_sqlite_text_put(b, ",", 1) &&
              sy_sqlite_text_int(b, t->n) && sy_sqlite_text_put(b, "]", 1);
    h->len = b->len - h->off;
    h->first = false;
    if (ok && begun)
        remember(hs, h, t);
    return ok ? SY_OK : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
}

/* h's text with its list and object closed (valid until the next
 * append), or NULL when out of memory. */
static const char *closed_text(sy_sqlite_holds *hs, sy_sqlite_hold *h)
{
    if (!h->closed) {
        if (!at_end(hs, h) || !sy_sqlite_text_put(&hs->arena, "]}", 2))
            return NULL;
        h->len += 2;
        h->closed = true;
    }
    return hs->arena.p + h->off;
}

int sy_sqlite_hold_for(sy_store_sqlite *q, int64_t run_id, uint32_t idx, int64_t elem,
                       int64_t token, sy_sqlite_hold **hold, const char **text)
{
    *hold = NULL;
    *text = NULL;
    sy_sqlite_hold *h = find(&q->holds, run_id, idx, elem);
    if (!h || h->written || h->token != token)
        return SY_OK;
    if (!(*text = closed_text(&q->holds, h)))
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    *hold = h;
    return SY_OK;
}

int sy_sqlite_hold_rows(sy_store_sqlite *q, sy_sqlite_hold *h)
{
    if (h->written || h->len == 0)
        return SY_OK;
    const char *text = closed_text(&q->holds, h);
    if (!text)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    sqlite3_stmt *st = q->st[SY_SQL_HOLD_ROWS];
    int rc = sqlite3_bind_int64(st, 1, h->run_id);
    keep(&rc, sqlite3_bind_int64(st, 2, h->idx));
    keep(&rc, sqlite3_bind_int64(st, 3, h->elem));
    keep(&rc, sqlite3_bind_int64(st, 4, h->token));
    keep(&rc, sqlite3_bind_text(st, 5, text, (int)h->len, SQLITE_STATIC));
    keep(&rc, bind_text(st, 6, h->owner));
    keep(&rc, sqlite3_bind_int64(st, 7, h->taken));
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "write the slots of run %lld task %u",
                                    (long long)h->run_id, h->idx);
    int status = sy_sqlite_step_done(q, st, "write slots");
    if (status == SY_OK) {
        q->slot_rows += (size_t)sqlite3_changes(q->db);
        h->written = true;
    }
    return status;
}

int sy_sqlite_holds_to_rows(sy_store_sqlite *q)
{
    int status = SY_OK;
    for (size_t i = 0; i < q->holds.n && status == SY_OK; i++)
        status = sy_sqlite_hold_rows(q, &q->holds.v[i]);
    return status;
}

int sy_sqlite_holds_flush(sy_store_sqlite *q)
{
    int status = sy_sqlite_holds_to_rows(q);
    sy_sqlite_holds_clear(q);
    return status;
}

void sy_sqlite_holds_clear(sy_store_sqlite *q)
{
    sy_sqlite_holds *hs = &q->holds;
    if (hs->n == 0)
        return;
    /* The owners and the arena's buffer stay: the next batch's takes are
     * by the same host, and about as many. */
    memset(hs->slots, 0, hs->n_slots * sizeof *hs->slots);
    hs->n = 0;
    hs->arena.len = 0;
    hs->tail = NULL;
}

void sy_sqlite_holds_free(sy_store_sqlite *q)
{
    sy_sqlite_holds_clear(q);
    for (size_t i = 0; i < q->holds.n_owners; i++)
        free(q->holds.owners[i]);
    free(q->holds.owners);
    free(q->holds.v);
    free(q->holds.slots);
    free(q->holds.arena.p);
    free(q->holds.memos);
    q->holds = (sy_sqlite_holds){0};
}
