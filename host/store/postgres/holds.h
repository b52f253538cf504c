/*
 * store/postgres/holds.h -- the open batch's flow-control takes, as the
 * store handle keeps them until the writes that start their attempts
 * carry them (postgres/holds.c).  Internal to store/postgres; the
 * connection's thread only.
 */
#ifndef SY_STORE_POSTGRES_HOLDS_H
#define SY_STORE_POSTGRES_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One take of the open batch (postgres/holds.c), until the write that
 * starts its attempt carries it in the attempt's row. */
typedef struct sy_pg_hold {
    int64_t run_id, elem, token, epoch, n, taken;
    uint64_t key_hash; /* sy_fnv1a of its key */
    uint32_t idx;
    uint32_t next;     /* its holder's next take: its index + 1; 0: none */
    size_t key, owner; /* where its key and owner start in the holds' text */
    bool written;      /* carried by its start write, or made a slot row */
} sy_pg_hold;

/* A hold of one take, its text kept across batches (postgres/holds.c). */
typedef struct sy_pg_hold_memo {
    int64_t epoch, n;
    uint64_t key_hash;
    size_t key, text; /* where its key and its text start in `memo_text` */
} sy_pg_hold_memo;

/* The open batch's takes, in the order given; each holder's takes a
 * chain, found by holder in `slots`. */
typedef struct sy_pg_holds {
    sy_pg_hold *v;
    size_t n, cap;
    uint32_t *slots;   /* by holder (run, idx, elem): its first take's
                          index + 1; 0: free */
    size_t n_slots;    /* a power of two, at least twice n; 0 at first */
    char *text;        /* the takes' keys and owners, NUL-terminated each */
    size_t len, text_cap;
    char *json;        /* a hold of several takes, built (sy_pg_hold_text) */
    size_t json_cap;
    /* The holds of one take, kept: most attempts of a turn take one key
     * (a pool, a workflow's limit) under their run's epoch, so a turn's
     * holds are a few texts, built once each, not once an attempt.  At
     * most SY_PG_HOLD_MEMOS, all dropped when full; `generation` counts
     * the drops, so that an identity sy_pg_hold_text gives out is never
     * given to another text. */
    sy_pg_hold_memo *memos;
    uint32_t *memo_slots; /* by key hash, epoch and n: index + 1 */
    size_t n_memos;
    char *memo_text;
    size_t memo_len, memo_cap;
    uint32_t generation;
} sy_pg_holds;

enum { SY_PG_HOLD_MEMOS = 512 };

#endif
