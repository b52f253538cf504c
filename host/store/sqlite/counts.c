/*
 * store/sqlite/counts.c -- what each key holds, per run (store/slots.h).
 *
 * One row per run (slot_counts): the claim (owner, lease epoch) its takes
 * were made under and what they hold per key, as a JSON object
 * {"key":n,...}.  A key's count is the sum over the rows whose claim is
 * live, so a dead host's takes stop counting when its lease ends, and a
 * run claimed again starts from nothing, exactly and once.
 *
 * A row has one writer, the host holding the run's claim, and a batch
 * changes it in memory: the first take or give-back of a run in the batch
 * reads the run's claim and row, the batch's changes go to the copy, and
 * the commit writes each changed run's row once.  A counter row per key
 * and run instead cost a B-tree write per key a turn touched, about one
 * per take with 100 keys (docs/flow-control.md, "The cost of limits").
 * A change under a claim that is not the run's current one (a host that
 * lost the run) changes nothing, as a slot row under it would count for
 * nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/internal.h"

/* A key's hash; an entry's slot mixes its run in. */
static uint64_t key_hash(const char *key)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h ^ h >> 31;
}

static size_t count_slot(const sy_sqlite_counts *cs, int64_t run_id, uint64_t hash)
{
    uint64_t x = hash ^ (uint64_t)run_id * 0x9e3779b97f4a7c15u;
    return (size_t)(x ^ x >> 29) & (cs->n_slots - 1);
}

/* The batch's entry of key (hash `hash`) in run_id, or NULL. */
static sy_sqlite_count *find(const sy_sqlite_counts *cs, int64_t run_id, const char *key,
                             uint64_t hash)
{
    if (cs->n == 0)
        return NULL;
    for (size_t i = count_slot(cs, run_id, hash);; i = (i + 1) & (cs->n_slots - 1)) {
        uint32_t k = cs->slots[i];
        if (k == 0)
            return NULL;
        sy_sqlite_count *c = &cs->v[k - 1];
        if (c->hash == hash && cs->runs[c->run].run_id == run_id &&
            strcmp(cs->keys.p + c->key, key) == 0)
            return c;
    }
}

static void index_entry(sy_sqlite_counts *cs, size_t k)
{
    size_t i = count_slot(cs, cs->runs[cs->v[k].run].run_id, cs->v[k].hash);
    while (cs->slots[i])
        i = (i + 1) & (cs->n_slots - 1);
    cs->slots[i] = (uint32_t)(k + 1);
}

/* A new entry of key in run number `run`, holding 0; NULL when out of
 * memory. */
static sy_sqlite_count *add(sy_sqlite_counts *cs, size_t run, const char *key, uint64_t hash)
{
    if (cs->n == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 64;
        sy_sqlite_count *v = realloc(cs->v, cap * sizeof *v);
        if (!v)
            return NULL;
        cs->v = v;
        cs->cap = cap;
    }
    if ((cs->n + 1) * 2 > cs->n_slots) {
        size_t n_slots = cs->n_slots ? cs->n_slots * 2 : 128;
        uint32_t *slots = calloc(n_slots, sizeof *slots);
        if (!slots)
            return NULL;
        free(cs->slots);
        cs->slots = slots;
        cs->n_slots = n_slots;
        for (size_t k = 0; k < cs->n; k++)
            index_entry(cs, k);
    }
    /* Keys kept one after another in the batch's buffer: no allocation
     * per entry.  `key` may point into a run's row, never into it. */
    size_t off = cs->keys.len;
    if (!sy_sqlite_text_put(&cs->keys, key, strlen(key) + 1))
        return NULL;
    sy_sqlite_count *c = &cs->v[cs->n];
    *c = (sy_sqlite_count){.key = off, .hash = hash, .run = run};
    index_entry(cs, cs->n++);
    return c;
}

/* Reads run r's claim and, when it is r's, its row into the batch. */
static int load(sy_store_sqlite *q, size_t run)
{
    sy_sqlite_counts *cs = &q->counts;
    sy_sqlite_count_run *r = &cs->runs[run];
    sqlite3_stmt *st = q->st[SY_SQL_COUNT_CLAIM];
    int rc = sqlite3_bind_int64(st, 1, r->run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "read the claim of run %lld",
                                    (long long)r->run_id);
    /* A run gone, or claimed under another claim since: nothing counts. */
    r->current = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
                 strcmp(col_text(st, 0), r->owner) == 0 &&
                 sqlite3_column_int64(st, 1) == r->epoch;
    r->lease_until = rc == SQLITE_ROW ? sqlite3_column_int64(st, 2) : 0;
    sqlite3_reset(st);
    if (!r->current)
        return SY_OK;
    st = q->st[SY_SQL_COUNT_LOAD];
    rc = sqlite3_bind_int64(st, 1, r->run_id);
    keep(&rc, bind_text(st, 2, r->owner));
    keep(&rc, sqlite3_bind_int64(st, 3, r->epoch));
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "read the slot counts of run %lld",
                                    (long long)r->run_id);
    const char *p = rc == SQLITE_ROW ? col_text(st, 0) : "{}";
    int more = p ? 1 : -1;
    int64_t n = 0;
    while (more == 1 && (more = sy_sqlite_counts_next(&p, &cs->key, &n)) == 1) {
        const char *key = cs->key.p;
        sy_sqlite_count *c = add(cs, run, key, key_hash(key));
        if (!c) {
            sqlite3_reset(st);
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        }
        c->held = n;
    }
    sqlite3_reset(st);
    if (more < 0)
        return sy_store_fail(&q->base, SY_EIO, "the slot counts of run %lld are not "
                             "readable", (long long)r->run_id);
    return SY_OK;
}

/* *run: the batch's number for run_id under (owner, epoch), read in
 * when new. */
static int run_of(sy_store_sqlite *q, int64_t run_id, const char *owner, int64_t epoch,
                  size_t *run)
{
    sy_sqlite_counts *cs = &q->counts;
    /* Most changes in a row are to one run. */
    if (cs->last < cs->n_runs) {
        sy_sqlite_count_run *r = &cs->runs[cs->last];
        if (r->run_id == run_id && r->epoch == epoch && r->owner == owner) {
            *run = cs->last;
            return SY_OK;
        }
    }
    for (size_t i = cs->n_runs; i-- > 0;) {
        sy_sqlite_count_run *r = &cs->runs[i];
        if (r->run_id == run_id && r->epoch == epoch && r->owner == owner) {
            *run = cs->last = i;
            return SY_OK;
        }
    }
    if (cs->n_runs == cs->cap_runs) {
        size_t cap = cs->cap_runs ? cs->cap_runs * 2 : 16;
        sy_sqlite_count_run *runs = realloc(cs->runs, cap * sizeof *runs);
        if (!runs)
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        cs->runs = runs;
        cs->cap_runs = cap;
    }
    *run = cs->last = cs->n_runs++;
    cs->runs[*run] = (sy_sqlite_count_run){.run_id = run_id, .epoch = epoch, .owner = owner};
    return load(q, *run);
}

int sy_sqlite_count_add(sy_store_sqlite *q, int64_t run_id, const char *owner, int64_t epoch,
                        const char *key, int64_t n)
{
    sy_sqlite_counts *cs = &q->counts;
    size_t run = 0;
    int status = run_of(q, run_id, owner, epoch, &run);
    if (status != SY_OK)
        return status;
    if (!cs->runs[run].current)
        return SY_OK;
    /* A pool's takes in a row are one key of one run: the last entry
     * again, without hashing the key. */
    sy_sqlite_count *c = cs->last_entry < cs->n ? &cs->v[cs->last_entry] : NULL;
    if (!c || c->run != run || strcmp(cs->keys.p + c->key, key) != 0) {
        uint64_t hash = key_hash(key);
        c = find(cs, run_id, key, hash);
        if (!c && !(c = add(cs, run, key, hash)))
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        cs->last_entry = (size_t)(c - cs->v);
    }
    /* Never below nothing: a give-back of more than was counted (a take
     * counted under an earlier claim) leaves the key empty. */
    c->held = c->held + n > 0 ? c->held + n : 0;
    cs->runs[run].dirty = true;
    return SY_OK;
}

/* The claims by key hash, for the rows of runs the batch has not read. */
typedef struct {
    uint32_t *slots; /* claim number + 1; 0 empty */
    size_t mask;
} claim_index;

static long claim_of(const claim_index *x, const sy_slot_claim *c, const char *key)
{
    uint64_t h = key_hash(key);
    for (size_t i = (size_t)h & x->mask;; i = (i + 1) & x->mask) {
        uint32_t k = x->slots[i];
        if (k == 0)
            return -1;
        if (strcmp(c[k - 1].key, key) == 0)
            return (long)k - 1;
    }
}

static bool claim_index_make(claim_index *x, const sy_slot_claim *c, size_t n)
{
    size_t size = 16;
    while (size < 2 * n)
        size *= 2;
    if (!(x->slots = calloc(size, sizeof *x->slots)))
        return false;
    x->mask = size - 1;
    for (size_t k = 0; k < n; k++) {
        size_t i = (size_t)key_hash(c[k].key) & x->mask;
        while (x->slots[i])
            i = (i + 1) & x->mask;
        x->slots[i] = (uint32_t)(k + 1);
    }
    return true;
}

int sy_sqlite_counts_held(sy_store_sqlite *q, const sy_slot_claim *c, size_t n, int64_t now,
                          int64_t *held)
{
    sy_sqlite_counts *cs = &q->counts;
    /* The batch's runs, from its copies. */
    for (size_t i = 0; i < n; i++) {
        held[i] = 0;
        uint64_t hash = key_hash(c[i].key);
        for (size_t r = 0; r < cs->n_runs && cs->n > 0; r++) {
            const sy_sqlite_count_run *run = &cs->runs[r];
            if (!run->current || run->lease_until <= now)
                continue;
            const sy_sqlite_count *e = find(cs, run->run_id, c[i].key, hash);
            if (e)
                held[i] += e->held;
        }
    }
    /* Every other run's, from its row. */
    sqlite3_stmt *st = q->st[SY_SQL_COUNT_LIVE];
    int rc = sqlite3_bind_int64(st, 1, now);
    claim_index x = {0};
    int status = SY_OK;
    while ((rc == SQLITE_OK || rc == SQLITE_ROW) && status == SY_OK) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        int64_t run_id = sqlite3_column_int64(st, 0);
        bool copied = false;
        for (size_t i = 0; i < cs->n_runs && !copied; i++)
            copied = cs->runs[i].run_id == run_id && cs->runs[i].current;
        if (copied)
            continue;
        if (!x.slots && !claim_index_make(&x, c, n)) {
            status = sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
            break;
        }
        const char *p = col_text(st, 1);
        int more = p ? 1 : -1;
        int64_t v = 0;
        while (more == 1 && (more = sy_sqlite_counts_next(&p, &cs->key, &v)) == 1) {
            long i = claim_of(&x, c, cs->key.p);
            if (i >= 0)
                held[i] += v;
        }
        if (more < 0)
            status = sy_store_fail(&q->base, SY_EIO, "the slot counts of run %lld are "
                                   "not readable", (long long)run_id);
    }
    free(x.slots);
    if (status != SY_OK) {
        sqlite3_reset(st);
        return status;
    }
    if (rc != SQLITE_DONE)
        return sy_sqlite_fail_reset(q, st, rc, "count the slots held");
    sqlite3_reset(st);
    return SY_OK;
}

/* Writes run r's row from the batch's copy (its entries among v[0..n)):
 * its keys holding something, or no row when none does. */
static int write_run(sy_store_sqlite *q, size_t run, const sy_sqlite_count *v, size_t n)
{
    sy_sqlite_counts *cs = &q->counts;
    sy_sqlite_count_run *r = &cs->runs[run];
    sy_sqlite_text *b = &cs->text;
    b->len = 0;
    bool ok = sy_sqlite_text_put(b, "{", 1);
    for (size_t k = 0; k < n && ok; k++) {
        const sy_sqlite_count *c = &v[k];
        if (c->run != run || c->held <= 0)
            continue;
        ok = sy_sqlite_counts_put(b, cs->keys.p + c->key, c->held);
    }
    bool none = b->len == 1;
    if (!ok || !sy_sqlite_text_put(b, "}", 1))
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    sqlite3_stmt *st = q->st[none ? SY_SQL_COUNT_DELETE : SY_SQL_COUNT_PUT];
    int rc = sqlite3_bind_int64(st, 1, r->run_id);
    if (!none) {
        keep(&rc, bind_text(st, 2, r->owner));
        keep(&rc, sqlite3_bind_int64(st, 3, r->epoch));
        keep(&rc, bind_text(st, 4, b->p));
    }
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "write the slot counts of run %lld",
                                    (long long)r->run_id);
    int status = sy_sqlite_step_done(q, st, "write slot counts");
    if (status == SY_OK)
        r->dirty = false;
    return status;
}

int sy_sqlite_counts_write(sy_store_sqlite *q)
{
    sy_sqlite_counts *cs = &q->counts;
    int status = SY_OK;
    size_t dirty = 0;
    for (size_t i = 0; i < cs->n_runs; i++)
        dirty += cs->runs[i].dirty;
    if (dirty == 0)
        return SY_OK;
    if (dirty == 1 || cs->n <= 64) {
        for (size_t i = 0; i < cs->n_runs && status == SY_OK; i++)
            if (cs->runs[i].dirty)
                status = write_run(q, i, cs->v, cs->n);
        return status;
    }
    /* Many runs, many keys: each run's text walks only its own entries,
     * grouped once (a walk of every entry per run is runs x keys). */
    size_t *order = malloc(cs->n * sizeof *order), *start = calloc(cs->n_runs + 1, sizeof *start);
    if (!order || !start) {
        free(order);
        free(start);
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < cs->n; k++)
        start[cs->v[k].run + 1]++;
    for (size_t i = 0; i < cs->n_runs; i++)
        start[i + 1] += start[i];
    for (size_t k = 0; k < cs->n; k++)
        order[start[cs->v[k].run]++] = k;
    /* start[i] is now the end of run i's entries, and where run i + 1's
     * begin. */
    sy_sqlite_count *sorted = malloc(cs->n * sizeof *sorted);
    if (!sorted) {
        free(order);
        free(start);
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < cs->n; k++)
        sorted[k] = cs->v[order[k]];
    for (size_t i = 0, from = 0; i < cs->n_runs && status == SY_OK; i++) {
        if (cs->runs[i].dirty)
            status = write_run(q, i, sorted + from, start[i] - from);
        from = start[i];
    }
    free(sorted);
    free(order);
    free(start);
    return status;
}

int sy_sqlite_counts_flush(sy_store_sqlite *q)
{
    int status = sy_sqlite_counts_write(q);
    sy_sqlite_counts_clear(q);
    return status;
}

void sy_sqlite_counts_clear(sy_store_sqlite *q)
{
    sy_sqlite_counts *cs = &q->counts;
    cs->keys.len = 0;
    if (cs->n > 0)
        memset(cs->slots, 0, cs->n_slots * sizeof *cs->slots);
    cs->n = 0;
    cs->n_runs = 0;
}

void sy_sqlite_counts_free(sy_store_sqlite *q)
{
    sy_sqlite_counts_clear(q);
    free(q->counts.v);
    free(q->counts.slots);
    free(q->counts.runs);
    free(q->counts.text.p);
    free(q->counts.key.p);
    free(q->counts.keys.p);
    q->counts = (sy_sqlite_counts){0};
}
