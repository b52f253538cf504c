/*
 * fixture.h -- what the store suites that play two hosts share
 * (test_fencing, test_task_writes, test_element_writes, test_processes,
 * test_logs, test_ticks):
 * two handles on one store, on SQLite or, with libpq, on a throwaway
 * PostgreSQL, and optionally a run of two tasks claimed by "h1" on the
 * first.
 */
#ifndef SY_TESTS_STORE_FIXTURE_H
#define SY_TESTS_STORE_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define HASH "d1"

typedef struct fx {
    char *dir;
    sy_store *a, *b; /* two handles on one store: two hosts */
    int64_t run;     /* with a claimed run: its id */
    sy_store_fence h1;
} fx;

/* Fails the test, naming the call and the store's reason, unless SY_OK. */
#define OK(s, call)                                                           \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != SY_OK)                                                     \
            fail_msg("%s: %d %s", #call, rc_, sy_store_errmsg(s));            \
    } while (0)

/* Runs `sqlite` (n tests) then `pg` (n_pg; left out when no throwaway
 * PostgreSQL server could be started) as one cmocka group; the number
 * failed. */
struct CMUnitTest;
int fx_run_groups(const char *name, const struct CMUnitTest *sqlite, size_t n,
                  const struct CMUnitTest *pg, size_t n_pg);

/* The store the running test's handles open: set by its setup. */
extern const char *fx_store_url;

/* A handle on fx_store_url, or the test fails. */
sy_store *fx_open(const char *dir);

/* The lease epoch of `run`. */
int64_t fx_epoch(sy_store *s, int64_t run);

/* A second run, of one task "x", made on handle b and claimed there by
 * "h2" until `until` (a host beside f->h1 in the slots' tests); its id
 * in *run, its lease epoch returned. */
int64_t fx_run_of_h2(fx *f, int64_t until, int64_t *run);

/* What `key` holds at `now`, read in a batch of its own as a take of one
 * slot under `limit` reads it (sy_store_slot_room; a key that has no
 * room for it is counted exactly, store/slots.h). */
int64_t fx_room(sy_store *s, const char *key, int64_t limit, int64_t now);

void fx_assert_contains(const char *haystack, const char *needle);

/* Copies `s` (or "(null)") into dst, cut to len. */
void fx_copy(char *dst, size_t len, const char *s);

/* What a batched write's refusal callback was told (fx_note_refusal, its
 * arg): which writes, with which status, and the store's reason for each;
 * at most 8 (more fails the test).  Set `s` before the call. */
typedef struct fx_refusals {
    sy_store *s;
    size_t n;
    size_t i[8];
    int status[8];
    char why[8][256];
} fx_refusals;

void fx_note_refusal(void *arg, size_t i, int status);

/* Two handles on `url` with definition HASH; with `claimed_run`, a run of
 * tasks "x" and "y" claimed by h1 on handle a. */
int fx_setup_on(void **state, const char *url, bool claimed_run);
int fx_setup(void **state); /* SQLite, a claimed run */
#ifdef SY_HAVE_LIBPQ
int fx_setup_pg(void **state); /* PostgreSQL, reset, a claimed run */
#endif
int fx_teardown(void **state);

#endif
