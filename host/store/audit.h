/*
 * store/audit.h -- the audit trail: one row for every change made
 * through the admin API or the command line (who, in which role, what, to
 * what, from where, when, and how it ended), kept until retention deletes
 * it (audit_keep, docs/admin-api.md).
 *
 * Rows are only ever added and, past their retention, deleted: nothing
 * rewrites one.  Same threading and error rules as store.h.
 */
#ifndef SY_STORE_AUDIT_H
#define SY_STORE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* One change.  Strings are the caller's when adding; borrowed (valid
 * during the callback only) when listed.  Every string is at most
 * SY_AUDIT_TEXT_MAX bytes (longer ones are cut when added). */
typedef struct sy_audit_record {
    int64_t id;          /* set by the store, increasing; ignored when
                            adding */
    int64_t at;          /* when, ms since the epoch */
    const char *who;     /* the token's name, the local user's name, or
                            "-" when no token was accepted */
    const char *role;    /* the token's role ("read", "operate",
                            "admin"), or "local" for the command line
                            and signals */
    const char *action;  /* "submit", "cancel", "retry", "reload", "run",
                            "token new", "gc", ... */
    const char *target;  /* what it touched ("run 17", "workflow etl"),
                            or NULL */
    const char *origin;  /* the client's address ("192.0.2.7", "unix"),
                            "cli" or "signal" */
    bool ok;             /* whether the change was made */
    int status;          /* the HTTP status answered; 0 off the API */
    const char *detail;  /* the error, or what was made; may be NULL */
} sy_audit_record;

#define SY_AUDIT_TEXT_MAX 1024

/* Which rows sy_store_list_audit gives: every set field must match. */
typedef struct sy_audit_filter {
    int64_t since;      /* at >= since (0: any) */
    int64_t until;      /* at < until (0: any) */
    int64_t before;     /* id < before (0: any): the next page */
    const char *who;    /* exactly; NULL: any */
    const char *action; /* exactly; NULL: any */
    size_t limit;       /* 1 to 100000 rows, newest first */
} sy_audit_filter;

/* Adds one row (r->at set by the caller). */
int sy_store_add_audit(sy_store *s, const sy_audit_record *r);

/* Calls cb for each row `f` selects, newest first; a non-zero return
 * stops the listing (not an error). */
int sy_store_list_audit(sy_store *s, const sy_audit_filter *f,
                        int (*cb)(void *arg, const sy_audit_record *r), void *arg);

/* Deletes the rows older than `before` (ms); *deleted how many. */
int sy_store_delete_audit(sy_store *s, int64_t before, size_t *deleted);

#endif
