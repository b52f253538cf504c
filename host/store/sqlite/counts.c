/*
 * store/sqlite/counts.c -- what each key holds, per run (store/slots.h).
 *
 * One row per run (slot_counts): the claim (owner, lease epoch) its takes
 * were made under and what they hold per key, as a JSON object
 * {"key":n,...}.  A key's count is the sum over the rows whose claim is
 * live, so a dead host's takes stop counting when its lease ends, and a
 * run claimed again starts from nothing, exactly and once.
 *
 * A row has one writer, the host holding the run's claim.  The handle
 * keeps a copy of each row it read or wrote, with the row's version: a
 * batch checks the run's claim and the row's version at its first take
 * or give-back of that run (one indexed read), reads the row again only
 * when another wrote it since, changes the copy, and its commit writes
 * each changed run's row once.  A counter row per key and run instead
 * cost a B-tree write per key a turn touched, about one per take with
 * 100 keys (docs/flow-control.md, "The cost of limits").  A change under
 * a claim that is not the run's current one (a host that lost the run)
 * changes nothing, as a slot row under it would count for nothing.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* The entry of key (hash `hash`) in run number `run`, or NULL. */
static sy_sqlite_count *find(const sy_sqlite_counts *cs, size_t run, const char *key,
                             uint64_t hash)
{
    if (cs->n == 0)
        return NULL;
    for (size_t i = count_slot(cs, (int64_t)run, hash);; i = (i + 1) & (cs->n_slots - 1)) {
        uint32_t k = cs->slots[i];
        if (k == 0)
            return NULL;
        sy_sqlite_count *c = &cs->v[k - 1];
        if (c->hash == hash && c->run == run && strcmp(cs->keys.p + c->key, key) == 0)
            return c;
    }
}

static void index_entry(sy_sqlite_counts *cs, size_t k)
{
    size_t i = count_slot(cs, (int64_t)cs->v[k].run, cs->v[k].hash);
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
    *c = (sy_sqlite_count){.key = off, .hash = hash, .run = run, .next = cs->runs[run].first};
    index_entry(cs, cs->n++);
    cs->runs[run].first = (uint32_t)cs->n;
    return c;
}

/* Reads run r's claim and, when it is r's, its row's version: a copy
 * of that version is used as it is, any other is read again. */
static int verify(sy_store_sqlite *q, size_t run)
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
    r->verified = true;
    /* A run gone, or claimed under another claim since: nothing counts. */
    r->current = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
                 strcmp(col_text(st, 0), r->owner) == 0 &&
                 sqlite3_column_int64(st, 1) == r->epoch;
    r->lease_until = rc == SQLITE_ROW ? sqlite3_column_int64(st, 2) : 0;
    if (!r->current) {
        sqlite3_reset(st);
        return SY_OK;
    }
    /* Another claim's row holds nothing for this one: as no row (0). */
    bool ours = sqlite3_column_type(st, 3) != SQLITE_NULL &&
                strcmp(col_text(st, 3), r->owner) == 0 && sqlite3_column_int64(st, 4) == r->epoch;
    int64_t version = ours ? sqlite3_column_int64(st, 5) : 0;
    if (r->loaded && version == r->version) {
        sqlite3_reset(st);
        return SY_OK;
    }
    /* Read again: what the copy held goes, the row's comes. */
    for (uint32_t k = r->loaded ? r->first : 0; k; k = cs->v[k - 1].next)
        cs->v[k - 1].held = 0;
    const char *p = ours ? col_text(st, 6) : "{}";
    int more = p ? 1 : -1;
    int64_t n = 0;
    while (more == 1 && (more = sy_sqlite_counts_next(&p, &cs->key, &n)) == 1) {
        const char *key = cs->key.p;
        uint64_t hash = key_hash(key);
        sy_sqlite_count *c = find(cs, run, key, hash);
        if (!c && !(c = add(cs, run, key, hash))) {
            sqlite3_reset(st);
            return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
        }
        c->held = n;
    }
    sqlite3_reset(st);
    if (more < 0)
        return sy_store_fail(&q->base, SY_EIO, "the slot counts of run %lld are not "
                             "readable", (long long)r->run_id);
    r->loaded = true;
    r->version = version;
    return SY_OK;
}

/* *run: the number of run_id under (owner, epoch) among the copies,
 * read in or checked when the batch first names it. */
static int run_of(sy_store_sqlite *q, int64_t run_id, const char *owner, int64_t epoch,
                  size_t *run)
{
    sy_sqlite_counts *cs = &q->counts;
    size_t i = cs->last;
    /* Most changes in a row are to one run. */
    if (!(i < cs->n_runs && cs->runs[i].run_id == run_id && cs->runs[i].epoch == epoch &&
          cs->runs[i].owner == owner)) {
        for (i = cs->n_runs; i-- > 0;) {
            sy_sqlite_count_run *r = &cs->runs[i];
            if (r->run_id == run_id && r->epoch == epoch && r->owner == owner)
                break;
        }
    }
    if (i == SIZE_MAX) {
        if (cs->n_runs == cs->cap_runs) {
            size_t cap = cs->cap_runs ? cs->cap_runs * 2 : 16;
            sy_sqlite_count_run *runs = realloc(cs->runs, cap * sizeof *runs);
            if (!runs)
                return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
            cs->runs = runs;
            cs->cap_runs = cap;
        }
        i = cs->n_runs++;
        cs->runs[i] = (sy_sqlite_count_run){.run_id = run_id, .epoch = epoch, .owner = owner};
    }
    *run = cs->last = i;
    return cs->runs[i].verified ? SY_OK : verify(q, i);
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
        c = find(cs, run, key, hash);
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
            if (!run->verified || !run->current || run->lease_until <= now)
                continue;
            const sy_sqlite_count *e = find(cs, r, c[i].key, hash);
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
            copied = cs->runs[i].run_id == run_id && cs->runs[i].verified &&
                     cs->runs[i].current;
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

/* Writes run r's row from its copy: its keys holding something, or no
 * row when none does. */
static int write_run(sy_store_sqlite *q, size_t run)
{
    sy_sqlite_counts *cs = &q->counts;
    sy_sqlite_count_run *r = &cs->runs[run];
    sy_sqlite_text *b = &cs->text;
    b->len = 0;
    bool ok = sy_sqlite_text_put(b, "{", 1);
    for (uint32_t k = r->first; k && ok; k = cs->v[k - 1].next) {
        const sy_sqlite_count *c = &cs->v[k - 1];
        if (c->held > 0)
            ok = sy_sqlite_counts_put(b, cs->keys.p + c->key, c->held);
    }
    bool none = b->len == 1;
    if (!ok || !sy_sqlite_text_put(b, "}", 1))
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    /* A version no other handle writes (its salt) and this one never
     * repeats: a copy whose version the row still has is the row.  0 is
     * no row; the migration's rows have -1. */
    if (cs->salt == 0)
        cs->salt = ((uint64_t)getpid() * 0x9e3779b97f4a7c15u ^ (uint64_t)time(NULL) ^
                    (uint64_t)(uintptr_t)q) % 0x7ffffffeu + 1;
    int64_t version = none ? 0 : (int64_t)(cs->salt << 32 | ++cs->writes);
    sqlite3_stmt *st = q->st[none ? SY_SQL_COUNT_DELETE : SY_SQL_COUNT_PUT];
    int rc = sqlite3_bind_int64(st, 1, r->run_id);
    if (!none) {
        keep(&rc, bind_text(st, 2, r->owner));
        keep(&rc, sqlite3_bind_int64(st, 3, r->epoch));
        keep(&rc, bind_text(st, 4, b->p));
        keep(&rc, sqlite3_bind_int64(st, 5, version));
    }
    if (rc != SQLITE_OK)
        return sy_sqlite_fail_reset(q, st, rc, "write the slot counts of run %lld",
                                    (long long)r->run_id);
    int status = sy_sqlite_step_done(q, st, "write slot counts");
    if (status == SY_OK) {
        r->dirty = false;
        r->version = version;
    }
    return status;
}

int sy_sqlite_counts_write(sy_store_sqlite *q)
{
    sy_sqlite_counts *cs = &q->counts;
    int status = SY_OK;
    for (size_t i = 0; i < cs->n_runs && status == SY_OK; i++)
        if (cs->runs[i].dirty)
            status = write_run(q, i);
    return status;
}

int sy_sqlite_counts_flush(sy_store_sqlite *q)
{
    int status = sy_sqlite_counts_write(q);
    if (status != SY_OK)
        sy_sqlite_counts_clear(q);
    return status;
}

void sy_sqlite_counts_begin(sy_store_sqlite *q)
{
    sy_sqlite_counts *cs = &q->counts;
    /* The copies outlive the batch, bounded: past this many keys they
     * are read again (a host's runs that ended leave theirs here). */
    if (cs->n > 65536 || cs->n_runs > 16384)
        sy_sqlite_counts_clear(q);
    for (size_t i = 0; i < cs->n_runs; i++)
        cs->runs[i].verified = false;
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
