/*
 * store/postgres/unwritten.h -- what a host took and gave back of each
 * key within its grant without writing its count row (postgres/slots.c,
 * docs/flow-control.md "Takes not written").
 *
 * Internal to store/postgres.  A host's slot_counts row of a key says
 * what it held when the host last wrote it (`held`) and a bound
 * (`ahead`) that its takes since stay within; the host keeps the rest
 * here: per key, the slots taken less those given back since that
 * write (`n`, never more than `ahead`) and the one tenant they were
 * all for.  What the host holds is the row's `held` plus `n`.
 *
 * Unlike the key tables (postgres/key_table.h) this one forgets
 * nothing: a value lost would undercount a key.  A batch's changes are
 * staged and kept only when it commits (sy_pg_unwritten_commit); a
 * rollback or a failed commit drops them, and a failed commit ends the
 * host (engine.c), whose rows then end with its leases.  Full (a key
 * not in it and SY_PG_UNWRITTEN_MAX kept) only means the next take of
 * such a key writes its row, as every take did before.  Out of memory
 * is the store's failure (SY_ENOMEM), the batch's with it.  The
 * connection's thread only, like the store handle it is part of.
 */
#ifndef SY_STORE_POSTGRES_UNWRITTEN_H
#define SY_STORE_POSTGRES_UNWRITTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *id;       /* owned: owner, '\n', key; NULL: an empty slot */
    uint64_t hash;  /* of owner and key */
    int64_t n;      /* kept: taken less given back since the row's write */
    char *tenant;   /* owned: whose they are; NULL while n is 0 */
    int64_t staged_n;
    char *staged_tenant; /* owned */
    bool staged;    /* the open batch changed it: staged_* apply */
    bool listed;    /* in the open statement's list (sy_pg_unwritten_list) */
    char *list_tenant; /* owned: the tenant of its takes and give-backs
                          listed; NULL: none known, or more than one */
} sy_pg_unwritten_entry;

typedef struct {
    sy_pg_unwritten_entry *v; /* open addressing, cap a power of two */
    size_t n, cap;            /* entries in use (kept or staged) */
    size_t n_staged;
    /* The keys of the statement being built (sy_pg_unwritten_list), each
     * once: the key part of their entries' ids. */
    const char **list;
    size_t n_list, list_cap;
} sy_pg_unwritten;

/* Most keys with something unwritten; beyond it takes write their rows. */
#define SY_PG_UNWRITTEN_MAX 65536

/* What `owner` has not written of `key`, as the open batch left it: *n
 * (0 when none) and, unless `tenant` is NULL, *tenant (NULL when n is
 * 0; the table's). */
void sy_pg_unwritten_get(const sy_pg_unwritten *u, const char *owner, const char *key,
                         int64_t *n, const char **tenant);

/* Whether a take of `key` may go unwritten: it has an entry, or the
 * table has room for one. */
bool sy_pg_unwritten_room(const sy_pg_unwritten *u, const char *owner, const char *key);

/* Stages n and tenant (copied; NULL with n 0) for the open batch.
 * SY_OK or SY_ENOMEM. */
int sy_pg_unwritten_stage(sy_pg_unwritten *u, const char *owner, const char *key,
                          int64_t n, const char *tenant);

/* Adds `key` to the list of the statement being built, once, with an
 * entry (n 0) made for it where it has none and the table has room;
 * without room it is left out (its row is then written).  `tenant`
 * (NULL: not known) is whose take or give-back lists it: a key listed
 * for two tenants, or one not known, is written.  SY_OK or SY_ENOMEM.
 * The list's keys are the table's (sy_pg_unwritten.list): valid until
 * the list is emptied. */
int sy_pg_unwritten_list(sy_pg_unwritten *u, const char *owner, const char *key,
                         const char *tenant);

/* The tenant of all the listed takes and give-backs of `key`, or NULL. */
const char *sy_pg_unwritten_list_tenant(const sy_pg_unwritten *u, const char *owner,
                                        const char *key);

/* Empties the statement's list. */
void sy_pg_unwritten_list_clear(sy_pg_unwritten *u);

/* The batch committed: what it staged is kept.  Or it did not: dropped. */
void sy_pg_unwritten_commit(sy_pg_unwritten *u);
void sy_pg_unwritten_rollback(sy_pg_unwritten *u);

/* Forgets `owner`'s keys (its rows were deleted: sy_store_release_owner). */
void sy_pg_unwritten_forget(sy_pg_unwritten *u, const char *owner);

void sy_pg_unwritten_free(sy_pg_unwritten *u);

#endif
