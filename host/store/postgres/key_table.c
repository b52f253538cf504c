/* A number per key, for one owner (postgres/key_table.h). */
#include "store/postgres/key_table.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static size_t slot_of(const sy_pg_key_table *t, const char *key)
{
    size_t i = (size_t)sy_fnv1a(SY_FNV_START, key) & (t->cap - 1);
    while (t->v[i].key && strcmp(t->v[i].key, key) != 0)
        i = (i + 1) & (t->cap - 1);
    return i;
}

bool sy_pg_key_get(const sy_pg_key_table *t, const char *owner, const char *key,
                   int64_t *value)
{
    if (!t->n || !t->owner || strcmp(t->owner, owner) != 0)
        return false;
    const sy_pg_key_entry *e = &t->v[slot_of(t, key)];
    if (!e->key)
        return false;
    *value = e->value;
    return true;
}

/* Empties the table, keeping whether keys were lost. */
static void empty(sy_pg_key_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[t->used[i]].key);
        t->v[t->used[i]].key = NULL;
    }
    t->n = 0;
    free(t->owner);
    t->owner = NULL;
}

void sy_pg_keys_clear(sy_pg_key_table *t)
{
    empty(t);
    t->dropped = false;
}

void sy_pg_keys_each(const sy_pg_key_table *t, const char *owner,
                     void (*fn)(void *arg, const char *key), void *arg)
{
    if (!t->owner || strcmp(t->owner, owner) != 0)
        return;
    for (size_t i = 0; i < t->n; i++)
        fn(arg, t->v[t->used[i]].key);
}

void sy_pg_keys_free(sy_pg_key_table *t)
{
    sy_pg_keys_clear(t);
    free(t->v);
    free(t->used);
    *t = (sy_pg_key_table){0};
}

/* The entry of `key`, made (value 0) if need be; NULL for want of memory. */
static sy_pg_key_entry *entry(sy_pg_key_table *t, const char *owner, const char *key)
{
    if ((t->owner && strcmp(t->owner, owner) != 0) || t->n >= SY_PG_KEY_TABLE_MAX) {
        t->dropped |= t->n > 0;
        empty(t);
    }
    if (!t->owner && !(t->owner = strdup(owner))) {
        t->dropped = true;
        return NULL;
    }
    if (!t->cap) {
        /* Twice the most keys kept: the probes stay short. */
        t->v = calloc(2 * SY_PG_KEY_TABLE_MAX, sizeof *t->v);
        t->used = malloc(SY_PG_KEY_TABLE_MAX * sizeof *t->used);
        if (!t->v || !t->used) {
            free(t->v);
            free(t->used);
            t->v = NULL;
            t->used = NULL;
            t->dropped = true;
            return NULL;
        }
        t->cap = 2 * SY_PG_KEY_TABLE_MAX;
    }
    size_t i = slot_of(t, key);
    sy_pg_key_entry *e = &t->v[i];
    if (!e->key) {
        if (!(e->key = strdup(key))) {
            t->dropped = true;
            return NULL;
        }
        e->value = 0;
        t->used[t->n++] = (uint32_t)i;
    }
    return e;
}

void sy_pg_key_set(sy_pg_key_table *t, const char *owner, const char *key, int64_t value)
{
    sy_pg_key_entry *e = entry(t, owner, key);
    if (e)
        e->value = value;
}

void sy_pg_key_add(sy_pg_key_table *t, const char *owner, const char *key, int64_t delta)
{
    sy_pg_key_entry *e = entry(t, owner, key);
    if (e)
        e->value += delta;
}
