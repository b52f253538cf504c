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
    uint32_t idx;
    size_t key, owner; /* where its key and owner start in the holds' text */
    size_t order;      /* its place among the batch's takes */
    bool written;      /* carried by its start write, or made a slot row */
} sy_pg_hold;

/* The open batch's takes, in the order given, sorted by holder at the
 * first look-up after an add. */
typedef struct sy_pg_holds {
    sy_pg_hold *v;
    size_t n, cap;
    bool sorted;
    char *text; /* the takes' keys and owners, NUL-terminated each */
    size_t len, text_cap;
    char *json; /* the last hold's text (sy_pg_hold_text) */
    size_t json_cap;
    /* The last hold of one take, kept: most attempts of a turn take the
     * same key (a pool, a workflow's limit) under one epoch, and their
     * holds are the same text. */
    char *memo;     /* its key, NUL, then its text; NULL before the first */
    size_t memo_cap, memo_text;
    int64_t memo_epoch, memo_n;
} sy_pg_holds;

#endif
