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

int sy_pg_holds_add(sy_store_pg *q, const char *owner, const sy_slot_take *t, size_t n,
                    int64_t now)
{
    sy_pg_holds *hs = &q->holds;
    if (hs->n + n > hs->cap) {
        sy_pg_hold *v = sy_grow(hs->v, &hs->cap, hs->n + n, sizeof *v, 64);
        if (!v)
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        hs->v = v;
    }
    /* One copy of the owner per call: every take of a call has it. */
    size_t who = keep_text(hs, owner);
    for (size_t i = 0; i < n && who != SIZE_MAX; i++) {
        size_t key = keep_text(hs, t[i].key);
        if (key == SIZE_MAX)
            break;
        hs->v[hs->n] = (sy_pg_hold){
            .run_id = t[i].holder.run_id, .elem = t[i].holder.elem,
            .token = t[i].holder.token, .epoch = t[i].epoch, .n = t[i].n, .taken = now,
            .idx = t[i].holder.idx, .key = key, .owner = who, .order = hs->n,
        };
        hs->n++;
        hs->sorted = false;
    }
    return hs->n == 0 || hs->v[hs->n - 1].order + 1 == hs->n
               ? SY_OK
               : sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
}

/* By holder, then in the order taken. */
static int by_holder(const void *a, const void *b)
{
    const sy_pg_hold *x = a, *y = b;
    if (x->run_id != y->run_id)
        return x->run_id < y->run_id ? -1 : 1;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    if (x->elem != y->elem)
        return x->elem < y->elem ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The first take of holder (run, idx, elem), or hs->n. */
static size_t first_of(sy_pg_holds *hs, int64_t run_id, uint32_t idx, int64_t elem)
{
    if (!hs->sorted) {
        qsort(hs->v, hs->n, sizeof *hs->v, by_holder);
        hs->sorted = true;
    }
    sy_pg_hold probe = {.run_id = run_id, .idx = idx, .elem = elem, .order = 0};
    size_t lo = 0, hi = hs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_holder(&hs->v[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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

/* Keeps the hold of the one take h, text json, for the next like it. */
static void remember(sy_pg_holds *hs, const sy_pg_hold *h, const char *json)
{
    const char *key = hs->text + h->key;
    size_t klen = strlen(key), jlen = strlen(json);
    if (klen + jlen + 2 > hs->memo_cap) {
        char *m = realloc(hs->memo, klen + jlen + 2);
        if (!m)
            return; /* not kept: built again next time */
        hs->memo = m;
        hs->memo_cap = klen + jlen + 2;
    }
    memcpy(hs->memo, key, klen + 1);
    memcpy(hs->memo + klen + 1, json, jlen + 1);
    hs->memo_text = klen + 1;
    hs->memo_epoch = h->epoch;
    hs->memo_n = h->n;
}

const char *sy_pg_hold_text(sy_store_pg *q, int64_t run_id, uint32_t idx, int64_t elem,
                            int64_t token, bool *oom)
{
    sy_pg_holds *hs = &q->holds;
    *oom = false;
    if (hs->n == 0)
        return NULL;
    size_t first = first_of(hs, run_id, idx, elem), i = first, len = 0, count = 0;
    sy_pg_hold *only = NULL;
    for (size_t j = first; j < hs->n; j++) {
        sy_pg_hold *h = &hs->v[j];
        if (h->run_id != run_id || h->idx != idx || h->elem != elem)
            break;
        if (!h->written && h->token == token) {
            only = h;
            count++;
        }
    }
    if (count == 0)
        return NULL;
    if (count == 1 && hs->memo && only->epoch == hs->memo_epoch && only->n == hs->memo_n &&
        strcmp(hs->memo, hs->text + only->key) == 0) {
        only->written = true;
        return hs->memo + hs->memo_text;
    }
    bool any = false, ok = true;
    for (; ok && i < hs->n; i++) {
        sy_pg_hold *h = &hs->v[i];
        if (h->run_id != run_id || h->idx != idx || h->elem != elem)
            break;
        if (h->written || h->token != token)
            continue;
        /* One key twice for one attempt: the last take counts. */
        bool later = false;
        for (size_t j = i + 1; j < hs->n && !later; j++) {
            const sy_pg_hold *g = &hs->v[j];
            if (g->run_id != run_id || g->idx != idx || g->elem != elem)
                break;
            later = !g->written && g->token == token &&
                    strcmp(hs->text + g->key, hs->text + h->key) == 0;
        }
        h->written = true;
        if (later)
            continue;
        ok = (any ? json_put(hs, &len, ",[", 2)
                  : json_put(hs, &len, "{\"e\":", 5) && json_int(hs, &len, h->epoch) &&
                        json_put(hs, &len, ",\"k\":[[", 7)) &&
             json_string(hs, &len, hs->text + h->key) && json_put(hs, &len, ",", 1) &&
             json_int(hs, &len, h->n) && json_put(hs, &len, "]", 1);
        any = true;
    }
    ok = ok && (!any || json_put(hs, &len, "]}", 2));
    *oom = !ok;
    if (ok && count == 1)
        remember(hs, only, hs->json);
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
    /* The buffers stay: the next batch's takes are about as many. */
    q->holds.n = 0;
    q->holds.len = 0;
    q->holds.sorted = true;
}

void sy_pg_holds_free(sy_store_pg *q)
{
    free(q->holds.v);
    free(q->holds.text);
    free(q->holds.json);
    free(q->holds.memo);
    q->holds = (sy_pg_holds){0};
}
