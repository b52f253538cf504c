/*
 * store/postgres/holds.c -- a batch's flow-control takes carried by their
 * attempts' own rows (store/slots.h, docs/flow-control.md "The cost of
 * limits").
 *
 * A slot row of its own costs the server an insert at the take and a
 * delete at the give-back, with their index entries: 21 microseconds an
 * attempt measured against a PostgreSQL 15 server, a third of what a
 * whole task costs it with no limit.  So, as on SQLite
 * (sqlite/holds.c), sy_store_put_slots keeps the batch's takes here and
 * the write that starts an attempt, later in the same batch
 * (postgres/batch.c), stores them in the `hold` column of the attempt's
 * task or element row; the write that ends the attempt clears it.  What
 * a key holds is counted apart, per run (postgres/slots.c): a hold only
 * names the holder, for listings and cancel requests.  A take no start
 * write carried (an attempt refused before it started) becomes a slot
 * row at the commit.
 *
 * A hold is the JSON the SQLite store writes:
 *   {"e":epoch,"k":[["key",n],...]}
 * the row says the rest (attempt token, host, started).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/postgres/internal.h"

/* Appends s and its NUL to the holds' text; its offset, or SIZE_MAX when
 * out of memory. */
static size_t keep_text(sy_pg_holds *hs, const char *s)
{
    size_t len = strlen(s) + 1;
    if (hs->len + len > hs->text_cap) {
        char *t = sy_grow(hs->text, &hs->text_cap, hs->len + len, 1, 1024);
        if (!t)
            return SIZE_MAX;
        hs->text = t;
    }
    size_t at = hs->len;
    memcpy(hs->text + at, s, len);
    hs->len += len;
    return at;
}

static size_t holder_slot(const sy_pg_holds *hs, int64_t run_id, uint32_t idx, int64_t elem)
{
    return (size_t)sy_holder_hash(run_id, idx, elem) & (hs->n_slots - 1);
}

/* Where holder (run, idx, elem)'s first take is, or its free slot. */
static uint32_t *holder_at(const sy_pg_holds *hs, int64_t run_id, uint32_t idx, int64_t elem)
{
    for (size_t i = holder_slot(hs, run_id, idx, elem);; i = (i + 1) & (hs->n_slots - 1)) {
        uint32_t *k = &hs->slots[i];
        if (*k == 0)
            return k;
        const sy_pg_hold *h = &hs->v[*k - 1];
        if (h->run_id == run_id && h->idx == idx && h->elem == elem)
            return k;
    }
}

/* Room for `more` takes, the holders' index at least twice as large. */
static bool reserve(sy_pg_holds *hs, size_t more)
{
    if (hs->n + more > hs->cap) {
        sy_pg_hold *v = sy_grow(hs->v, &hs->cap, hs->n + more, sizeof *v, 64);
        if (!v)
            return false;
        hs->v = v;
    }
    if ((hs->n + more) * 2 <= hs->n_slots)
        return true;
    size_t n_slots = hs->n_slots ? hs->n_slots : 128;
    while ((hs->n + more) * 2 > n_slots)
        n_slots *= 2;
    uint32_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return false;
    free(hs->slots);
    hs->slots = slots;
    hs->n_slots = n_slots;
    /* A holder's first take comes first in v: the others are on its
     * chain. */
    for (size_t k = 0; k < hs->n; k++) {
        uint32_t *at = holder_at(hs, hs->v[k].run_id, hs->v[k].idx, hs->v[k].elem);
        if (*at == 0)
            *at = (uint32_t)(k + 1);
    }
    return true;
}

int sy_pg_holds_add(sy_store_pg *q, const char *owner, const sy_slot_take *t, size_t n,
                    int64_t now)
{
    sy_pg_holds *hs = &q->holds;
    if (n > UINT32_MAX - hs->n || !reserve(hs, n))
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    /* One copy of the owner per call: every take of a call has it. */
    size_t who = keep_text(hs, owner);
    for (size_t i = 0; i < n; i++) {
        size_t key = who == SIZE_MAX ? SIZE_MAX : keep_text(hs, t[i].key);
        if (key == SIZE_MAX)
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        const sy_slot_holder *w = &t[i].holder;
        hs->v[hs->n] = (sy_pg_hold){
            .run_id = w->run_id, .elem = w->elem, .token = w->token, .epoch = t[i].epoch,
            .n = t[i].n, .taken = now, .key_hash = sy_fnv1a(SY_FNV_START, t[i].key),
            .idx = w->idx, .key = key, .owner = who,
        };
        uint32_t *at = holder_at(hs, w->run_id, w->idx, w->elem);
        if (*at == 0) {
            *at = (uint32_t)(hs->n + 1);
        } else {
            sy_pg_hold *last = &hs->v[*at - 1];
            while (last->next)
                last = &hs->v[last->next - 1];
            last->next = (uint32_t)(hs->n + 1);
        }
        hs->n++;
    }
    return SY_OK;
}

/* Appends len bytes to the hold's JSON being built at *len. */
static bool json_put(sy_pg_holds *hs, size_t *len, const char *s, size_t n)
{
    if (*len + n + 1 > hs->json_cap) {
        char *j = sy_grow(hs->json, &hs->json_cap, *len + n + 1, 1, 256);
        if (!j)
            return false;
        hs->json = j;
    }
    memcpy(hs->json + *len, s, n);
    *len += n;
    hs->json[*len] = '\0';
    return true;
}

static bool json_int(sy_pg_holds *hs, size_t *len, int64_t v)
{
    char num[24];
    return json_put(hs, len, num, (size_t)(sy_pg_decimal(num, v) - num));
}

/* A key as a JSON string: quoted, with " \ and control bytes escaped. */
static bool json_string(sy_pg_holds *hs, size_t *len, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    bool ok = json_put(hs, len, "\"", 1);
    for (const char *run = s; ok; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        ok = json_put(hs, len, run, (size_t)(s - run));
        if (!c || !ok)
            break;
        char esc[6] = {'\\', (char)c, 0};
        size_t n = 2;
        if (c < 0x20) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }
        ok = json_put(hs, len, esc, n);
        run = s + 1;
    }
    return ok && json_put(hs, len, "\"", 1);
}

/* Take h in the hold being built at *len: its opening with the first. */
static bool json_take(sy_pg_holds *hs, size_t *len, const sy_pg_hold *h, bool first)
{
    return (first ? json_put(hs, len, "{\"e\":", 5) && json_int(hs, len, h->epoch) &&
                        json_put(hs, len, ",\"k\":[[", 7)
                  : json_put(hs, len, ",[", 2)) &&
           json_string(hs, len, hs->text + h->key) && json_put(hs, len, ",", 1) &&
           json_int(hs, len, h->n) && json_put(hs, len, "]", 1);
}

static size_t memo_slot(uint64_t key_hash, int64_t epoch, int64_t n)
{
    uint64_t x = key_hash ^ (uint64_t)epoch * 0x9e3779b97f4a7c15u ^
                 (uint64_t)n * 0xc2b2ae3d27d4eb4fu;
    return (size_t)(x ^ x >> 31) & (2 * SY_PG_HOLD_MEMOS - 1);
}

/* Where the memo of h's one-take hold is, or its free slot; NULL before
 * the first memo. */
static uint32_t *memo_at(const sy_pg_holds *hs, const sy_pg_hold *h)
{
    if (!hs->memo_slots)
        return NULL;
    for (size_t i = memo_slot(h->key_hash, h->epoch, h->n);;
         i = (i + 1) & (2 * SY_PG_HOLD_MEMOS - 1)) {
        uint32_t *k = &hs->memo_slots[i];
        if (*k == 0)
            return k;
        const sy_pg_hold_memo *m = &hs->memos[*k - 1];
        if (m->key_hash == h->key_hash && m->epoch == h->epoch && m->n == h->n &&
            strcmp(hs->memo_text + m->key, hs->text + h->key) == 0)
            return k;
    }
}

/* Keeps h's one-take hold, built in hs->json (len bytes), for the next
 * like it; its memo, or NULL when out of memory (then only not kept). */
static const sy_pg_hold_memo *remember(sy_pg_holds *hs, const sy_pg_hold *h, size_t len)
{
    if (!hs->memo_slots) {
        hs->memos = malloc(SY_PG_HOLD_MEMOS * sizeof *hs->memos);
        hs->memo_slots = calloc(2 * SY_PG_HOLD_MEMOS, sizeof *hs->memo_slots);
        if (!hs->memos || !hs->memo_slots) {
            free(hs->memos);
            free(hs->memo_slots);
            hs->memos = NULL;
            hs->memo_slots = NULL;
            return NULL;
        }
    }
    if (hs->n_memos == SY_PG_HOLD_MEMOS) {
        /* Full: begin again (a host whose turns hold more distinct
         * holds than this builds some of them twice). */
        memset(hs->memo_slots, 0, 2 * SY_PG_HOLD_MEMOS * sizeof *hs->memo_slots);
        hs->n_memos = 0;
        hs->memo_len = 0;
        hs->generation++;
    }
    const char *key = hs->text + h->key;
    size_t klen = strlen(key) + 1;
    if (hs->memo_len + klen + len + 1 > hs->memo_cap) {
        char *t = sy_grow(hs->memo_text, &hs->memo_cap, hs->memo_len + klen + len + 1, 1, 4096);
        if (!t)
            return NULL;
        hs->memo_text = t;
    }
    uint32_t *at = memo_at(hs, h);
    sy_pg_hold_memo *m = &hs->memos[hs->n_memos];
    *m = (sy_pg_hold_memo){h->epoch, h->n, h->key_hash, hs->memo_len, hs->memo_len + klen};
    memcpy(hs->memo_text + m->key, key, klen);
    memcpy(hs->memo_text + m->text, hs->json, len + 1);
    hs->memo_len += klen + len + 1;
    *at = (uint32_t)++hs->n_memos;
    return m;
}

const char *sy_pg_hold_text(sy_store_pg *q, int64_t run_id, uint32_t idx, int64_t elem,
                            int64_t token, bool *oom, uint64_t *id)
{
    sy_pg_holds *hs = &q->holds;
    *oom = false;
    if (id)
        *id = 0;
    if (hs->n == 0)
        return NULL;
    uint32_t first = *holder_at(hs, run_id, idx, elem);
    size_t count = 0;
    sy_pg_hold *only = NULL;
    for (uint32_t k = first; k; k = hs->v[k - 1].next) {
        sy_pg_hold *h = &hs->v[k - 1];
        if (!h->written && h->token == token) {
            only = h;
            count++;
        }
    }
    if (count == 0)
        return NULL;
    if (count == 1) {
        only->written = true;
        uint32_t *at = memo_at(hs, only);
        const sy_pg_hold_memo *m = at && *at ? &hs->memos[*at - 1] : NULL;
        if (!m) {
            size_t len = 0;
            if (!json_take(hs, &len, only, true) || !json_put(hs, &len, "]}", 2)) {
                *oom = true;
                return NULL;
            }
            if (!(m = remember(hs, only, len)))
                return hs->json;
        }
        if (id)
            *id = (uint64_t)hs->generation << 32 | (uint64_t)(m - hs->memos + 1);
        return hs->memo_text + m->text;
    }
    bool any = false, ok = true;
    size_t len = 0;
    for (uint32_t k = first; ok && k; k = hs->v[k - 1].next) {
        sy_pg_hold *h = &hs->v[k - 1];
        if (h->written || h->token != token)
            continue;
        /* One key twice for one attempt: the last take counts. */
        bool later = false;
        for (uint32_t j = h->next; j && !later; j = hs->v[j - 1].next) {
            const sy_pg_hold *g = &hs->v[j - 1];
            later = !g->written && g->token == token &&
                    strcmp(hs->text + g->key, hs->text + h->key) == 0;
        }
        h->written = true;
        if (later)
            continue;
        ok = json_take(hs, &len, h, !any);
        any = true;
    }
    ok = ok && (!any || json_put(hs, &len, "]}", 2));
    *oom = !ok;
    return any && ok ? hs->json : NULL;
}

/* Set once, never cleared: any handle, any thread (postgres/slots.c). */
static atomic_bool slot_rows_made;

bool sy_pg_slot_rows_made(void) { return atomic_load(&slot_rows_made); }

int sy_pg_holds_to_rows(sy_store_pg *q)
{
    sy_pg_holds *hs = &q->holds;
    size_t left = 0;
    for (size_t i = 0; i < hs->n; i++)
        left += !hs->v[i].written;
    if (left == 0)
        return SY_OK;
    const char **key = malloc(left * sizeof *key), **owner = malloc(left * sizeof *owner);
    int64_t *num = malloc(7 * left * sizeof *num); /* run idx elem token n epoch taken */
    int status = key && owner && num ? SY_OK : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    char *arrays[9] = {0};
    if (status == SY_OK) {
        for (size_t i = 0, k = 0; i < hs->n; i++) {
            const sy_pg_hold *h = &hs->v[i];
            if (h->written)
                continue;
            key[k] = hs->text + h->key;
            owner[k] = hs->text + h->owner;
            int64_t row[7] = {h->run_id, h->idx, h->elem, h->token, h->n, h->epoch, h->taken};
            for (int c = 0; c < 7; c++)
                num[c * left + k] = row[c];
            k++;
        }
        arrays[0] = sy_pg_text_array(key, left);
        arrays[1] = sy_pg_text_array(owner, left);
        for (int c = 0; c < 7; c++)
            arrays[2 + c] = sy_pg_int_array(num + c * left, 1, left);
        for (int c = 0; c < 9; c++)
            if (!arrays[c])
                status = sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    }
    if (status == SY_OK) {
        sy_pg_params p = {0};
        for (int c = 0; c < 9; c++)
            sy_pg_text(&p, c + 1, arrays[c]);
        atomic_store(&slot_rows_made, true); /* before: a replay makes them too */
        status = sy_pg_run(q, SY_PG_SLOT_ROWS, &p, NULL, "write slots");
    }
    for (size_t i = 0; status == SY_OK && i < hs->n; i++)
        hs->v[i].written = true;
    for (int c = 0; c < 9; c++)
        free(arrays[c]);
    free(key);
    free(owner);
    free(num);
    return status;
}

void sy_pg_holds_clear(sy_store_pg *q)
{
    sy_pg_holds *hs = &q->holds;
    /* The buffers stay: the next batch's takes are about as many.  The
     * memos stay too: the next batch's holds are mostly the same. */
    if (hs->n > 0)
        memset(hs->slots, 0, hs->n_slots * sizeof *hs->slots);
    hs->n = 0;
    hs->len = 0;
}

void sy_pg_holds_free(sy_store_pg *q)
{
    sy_pg_holds *hs = &q->holds;
    free(hs->v);
    free(hs->slots);
    free(hs->text);
    free(hs->json);
    free(hs->memos);
    free(hs->memo_slots);
    free(hs->memo_text);
    *hs = (sy_pg_holds){0};
}
