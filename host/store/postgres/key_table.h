/*
 * store/postgres/key_table.h -- a number per key, for one owner: what a
 * host keeps between statements of its grants (postgres/grants.c,
 * postgres/slots.c).
 *
 * Internal to store/postgres.  Two uses, both of which may lose entries
 * at any time without losing a slot:
 *   - what the host last saw free in each grant (a hint): a key hinted
 *     to have room is locked shared and its grant read again under the
 *     lock, and one that has none after all is then granted under the
 *     exclusive lock, as a key not hinted is; a wrong or forgotten hint
 *     costs a statement;
 *   - the slots of each key the open batch gives back and has not sent
 *     yet: added to what a read finds free, so a forgotten one only
 *     makes the read find less.
 * So the table forgets freely: another owner, a clear, too many keys or
 * no memory empty it.  The connection's thread only, like the store
 * handle it is part of.
 */
#ifndef SY_STORE_POSTGRES_KEY_TABLE_H
#define SY_STORE_POSTGRES_KEY_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *key;     /* owned; NULL: an empty slot */
    int64_t value;
} sy_pg_key_entry;

typedef struct {
    sy_pg_key_entry *v; /* open addressing, cap a power of two */
    size_t n, cap;
    uint32_t *used;     /* the slots in use, n of them, in the order made:
                           emptied and walked without reading all of v */
    char *owner;        /* whose keys (owned); another owner's empty the table */
    bool dropped;       /* keys were lost since the last sy_pg_keys_clear (too
                           many, no memory, another owner) */
} sy_pg_key_table;

/* The value of `key` for `owner`: true with *value set, false when none
 * is kept. */
bool sy_pg_key_get(const sy_pg_key_table *t, const char *owner, const char *key,
                   int64_t *value);

/* Sets it (a copy of `key`); for want of memory, or once the table holds
 * SY_PG_KEY_TABLE_MAX keys, the table is emptied first or instead. */
void sy_pg_key_set(sy_pg_key_table *t, const char *owner, const char *key, int64_t value);

/* Adds `delta` to it (0 when none is kept), as sy_pg_key_set. */
void sy_pg_key_add(sy_pg_key_table *t, const char *owner, const char *key, int64_t delta);

/* Calls fn(arg, key) for each key kept for `owner`. */
void sy_pg_keys_each(const sy_pg_key_table *t, const char *owner,
                     void (*fn)(void *arg, const char *key), void *arg);

/* Forgets every key, and that any were lost; the table stays usable. */
void sy_pg_keys_clear(sy_pg_key_table *t);

/* Frees the table's memory. */
void sy_pg_keys_free(sy_pg_key_table *t);

/* The most keys kept: a host taking many keys once each (a key per
 * customer) keeps its table small, and reads the rest as before. */
#define SY_PG_KEY_TABLE_MAX 4096

#endif
