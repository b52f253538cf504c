/*
 * store/postgres/unwritten.c -- what a host took and gave back within
 * its grants without writing their rows (postgres/unwritten.h).
 *
 * Open addressing by the owner and key, deletion by moving the entries
 * after a freed slot back (no tombstones: a table that changes every
 * turn would fill with them).
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/postgres/unwritten.h"
#include "store/store.h"

/* By the key alone: a host's table holds one owner's keys but for a
 * moment (tests, a handle reused by another owner), and hashing the
 * owner too cost a third of each look-up; keys of two owners share a
 * probe, told apart by id_is. */
static uint64_t id_hash(const char *owner, const char *key)
{
    (void)owner;
    return sy_fnv1a(SY_FNV_START, key);
}

static bool id_is(const char *id, const char *owner, const char *key)
{
    size_t o = strlen(owner);
    return strncmp(id, owner, o) == 0 && id[o] == '\n' && strcmp(id + o + 1, key) == 0;
}

static size_t find(const sy_pg_unwritten *u, const char *owner, const char *key)
{
    if (!u->cap)
        return SIZE_MAX;
    size_t i = (size_t)id_hash(owner, key) & (u->cap - 1);
    while (u->v[i].id) {
        if (id_is(u->v[i].id, owner, key))
            return i;
        i = (i + 1) & (u->cap - 1);
    }
    return SIZE_MAX;
}

/* The key part of an entry's id. */
static const char *key_of(const char *id)
{
    return strchr(id, '\n') + 1;
}

static bool grow(sy_pg_unwritten *u)
{
    size_t cap = u->cap ? u->cap * 2 : 64;
    sy_pg_unwritten_entry *v = calloc(cap, sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < u->cap; i++) {
        if (!u->v[i].id)
            continue;
        size_t j = (size_t)u->v[i].hash & (cap - 1);
        while (v[j].id)
            j = (j + 1) & (cap - 1);
        v[j] = u->v[i];
    }
    free(u->v);
    u->v = v;
    u->cap = cap;
    return true;
}

/* Frees slot i and moves back the entries after it that hashed before. */
static void remove_at(sy_pg_unwritten *u, size_t i)
{
    free(u->v[i].id);
    free(u->v[i].tenant);
    free(u->v[i].staged_tenant);
    free(u->v[i].list_tenant);
    memset(&u->v[i], 0, sizeof u->v[i]);
    u->n--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (u->cap - 1);
        if (!u->v[j].id)
            return;
        size_t home = (size_t)u->v[j].hash & (u->cap - 1);
        /* Entry j may fill the hole at i unless its home lies in (i, j]. */
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            u->v[i] = u->v[j];
            memset(&u->v[j], 0, sizeof u->v[j]);
            i = j;
        }
    }
}

/* The entry of owner and key, made (n 0) when absent; SIZE_MAX for want
 * of memory. */
static size_t entry(sy_pg_unwritten *u, const char *owner, const char *key)
{
    size_t i = find(u, owner, key);
    if (i != SIZE_MAX)
        return i;
    if ((u->n + 1) * 2 > u->cap && !grow(u))
        return SIZE_MAX;
    size_t o = strlen(owner), k = strlen(key);
    char *id = malloc(o + k + 2);
    if (!id)
        return SIZE_MAX;
    memcpy(id, owner, o);
    id[o] = '\n';
    memcpy(id + o + 1, key, k + 1);
    uint64_t h = id_hash(owner, key);
    i = (size_t)h & (u->cap - 1);
    while (u->v[i].id)
        i = (i + 1) & (u->cap - 1);
    u->v[i] = (sy_pg_unwritten_entry){.id = id, .hash = h};
    u->n++;
    return i;
}

void sy_pg_unwritten_get(const sy_pg_unwritten *u, const char *owner, const char *key,
                         int64_t *n, const char **tenant)
{
    size_t i = find(u, owner, key);
    const sy_pg_unwritten_entry *e = i == SIZE_MAX ? NULL : &u->v[i];
    *n = !e ? 0 : e->staged ? e->staged_n : e->n;
    if (tenant)
        *tenant = !e ? NULL : e->staged ? e->staged_tenant : e->tenant;
}

bool sy_pg_unwritten_room(const sy_pg_unwritten *u, const char *owner, const char *key)
{
    return u->n < SY_PG_UNWRITTEN_MAX || find(u, owner, key) != SIZE_MAX;
}

int sy_pg_unwritten_stage(sy_pg_unwritten *u, const char *owner, const char *key,
                          int64_t n, const char *tenant)
{
    size_t i = entry(u, owner, key);
    char *t = n != 0 && tenant ? strdup(tenant) : NULL;
    if (i == SIZE_MAX || (n != 0 && tenant && !t)) {
        free(t);
        return SY_ENOMEM;
    }
    sy_pg_unwritten_entry *e = &u->v[i];
    free(e->staged_tenant);
    e->staged_tenant = t;
    e->staged_n = n;
    if (!e->staged)
        u->n_staged++;
    e->staged = true;
    return SY_OK;
}

int sy_pg_unwritten_list(sy_pg_unwritten *u, const char *owner, const char *key,
                         const char *tenant)
{
    if (!sy_pg_unwritten_room(u, owner, key))
        return SY_OK;
    if (u->n_list == u->list_cap) {
        const char **l = sy_grow(u->list, &u->list_cap, u->n_list + 1, sizeof *l, 64);
        if (!l)
            return SY_ENOMEM;
        u->list = l;
    }
    size_t i = entry(u, owner, key);
    if (i == SIZE_MAX)
        return SY_ENOMEM;
    sy_pg_unwritten_entry *e = &u->v[i];
    if (!e->listed) {
        e->listed = true;
        u->list[u->n_list++] = key_of(e->id);
        if (tenant && !(e->list_tenant = strdup(tenant)))
            return SY_ENOMEM;
    } else if (e->list_tenant && (!tenant || strcmp(e->list_tenant, tenant) != 0)) {
        free(e->list_tenant);
        e->list_tenant = NULL;
    }
    return SY_OK;
}

const char *sy_pg_unwritten_list_tenant(const sy_pg_unwritten *u, const char *owner,
                                        const char *key)
{
    size_t i = find(u, owner, key);
    return i != SIZE_MAX && u->v[i].listed ? u->v[i].list_tenant : NULL;
}

/* Entries with nothing kept or staged go. */
static void sweep(sy_pg_unwritten *u)
{
    for (size_t i = 0; i < u->cap;) {
        sy_pg_unwritten_entry *e = &u->v[i];
        if (e->id && e->n == 0 && !e->staged && !e->listed)
            remove_at(u, i); /* slot i may hold a moved entry now */
        else
            i++;
    }
}

void sy_pg_unwritten_list_clear(sy_pg_unwritten *u)
{
    for (size_t i = 0; i < u->cap && u->n_list; i++) {
        u->v[i].listed = false;
        free(u->v[i].list_tenant);
        u->v[i].list_tenant = NULL;
    }
    u->n_list = 0;
}

/* The open batch's staged values kept (`keep`) or dropped. */
static void end_batch(sy_pg_unwritten *u, bool keep)
{
    sy_pg_unwritten_list_clear(u);
    for (size_t i = 0; i < u->cap && u->n_staged; i++) {
        sy_pg_unwritten_entry *e = &u->v[i];
        if (!e->id || !e->staged)
            continue;
        if (keep) {
            free(e->tenant);
            e->n = e->staged_n;
            e->tenant = e->staged_tenant; /* NULL with n 0 (stage) */
        } else {
            free(e->staged_tenant);
        }
        e->staged_tenant = NULL;
        e->staged = false;
    }
    u->n_staged = 0;
    sweep(u);
}

void sy_pg_unwritten_commit(sy_pg_unwritten *u)
{
    end_batch(u, true);
}

void sy_pg_unwritten_rollback(sy_pg_unwritten *u)
{
    end_batch(u, false);
}

void sy_pg_unwritten_forget(sy_pg_unwritten *u, const char *owner)
{
    sy_pg_unwritten_list_clear(u);
    size_t o = strlen(owner);
    for (size_t i = 0; i < u->cap;) {
        sy_pg_unwritten_entry *e = &u->v[i];
        if (e->id && strncmp(e->id, owner, o) == 0 && e->id[o] == '\n') {
            if (e->staged)
                u->n_staged--;
            remove_at(u, i);
        } else {
            i++;
        }
    }
}

void sy_pg_unwritten_free(sy_pg_unwritten *u)
{
    for (size_t i = 0; i < u->cap; i++) {
        free(u->v[i].id);
        free(u->v[i].tenant);
        free(u->v[i].staged_tenant);
        free(u->v[i].list_tenant);
    }
    free(u->v);
    free(u->list);
    memset(u, 0, sizeof *u);
}
