/*
 * store/rates.h -- rate limits held in the store: a token bucket per key
 * ("rate:<rendered template>"), shared by every host on the store
 * (docs/flow-control.md, "Rate limits").
 *
 * A bucket is one row: its level and when it was last brought up to date.
 * A level counts tokens in units of 1/interval_ms of a token, so that a
 * refill of `rate` tokens per `interval_ms` is exact in integers: each
 * millisecond adds `rate` units, a token is `interval_ms` units, and the
 * level never passes `burst` tokens.  A bucket seen for the first time is
 * full.  So in any window of w ms, at most burst + rate * w / interval_ms
 * tokens are taken, counting every host.
 *
 * Taking is all or nothing over an attempt's buckets and happens inside
 * the open batch, in the transaction that writes the attempt's start
 * (with its slots, store/slots.h): a turn that rolls back took no token.
 * On SQLite the batch holds the file's write lock; on PostgreSQL each key
 * is first locked for the transaction (pg_try_advisory_xact_lock), and a
 * key another host's open batch is taking counts as empty for this turn
 * (never a wait).  The write is a compare-and-set on the state read, so a
 * batch replayed on a new connection (postgres/journal.c) that finds the
 * bucket moved fails rather than taking a token twice.  The take is
 * fenced by the run's claim: a host that no longer holds the run takes
 * nothing.
 *
 * Times are the callers' clocks (ms).  A bucket's time only goes forward:
 * a take at a time before the last refill (a host that read its clock
 * before another that took first) refills nothing and may not use the
 * tokens that came after its time, so the bound holds over the times the
 * takes were made at, whatever order they commit in.
 *
 * Same threading and error contract as store.h.
 */
#ifndef SY_STORE_RATES_H
#define SY_STORE_RATES_H

#include "store/store.h"

/* The most buckets one attempt takes a token of: a task's rate limits. */
#define SY_RATE_CLAIMS_MAX 16

/* One bucket an attempt takes a token of. */
typedef struct sy_rate_claim {
    const char *key;      /* borrowed: 1..SY_SLOT_KEY_MAX bytes */
    int64_t rate;         /* tokens per interval: 1..1000000 */
    int64_t interval_ms;  /* 1..86400000 */
    int64_t burst;        /* the most tokens the bucket holds: 1..1000000 */
} sy_rate_claim;

/* A bucket's state. */
typedef struct sy_rate_bucket {
    int64_t level;        /* in units of 1/interval_ms token */
    int64_t refilled;     /* when level was last brought up to date */
    int64_t interval_ms;  /* the interval level is counted in */
} sy_rate_bucket;

/* Pure: brings bucket b (NULL state: `fresh`, a bucket never seen, which
 * starts full) up to `now` under claim c and takes one token when there
 * is one: true, b updated.  Else false, b brought up to date, and
 * *wait_ms the time until the next token is due (>= 1).  A bucket last
 * counted in another interval is converted, rounding down. */
bool sy_rate_bucket_take(sy_rate_bucket *b, bool fresh, const sy_rate_claim *c, int64_t now,
                         int64_t *wait_ms);

/* Inside a batch (sy_store_begin): takes one token of each of the n
 * claims' buckets at `now` for run `run_id` under `fence` (not NULL),
 * all or none.  *taken tells which; when not, *empty is the index of a
 * claim whose bucket had no token and *wait_ms when its next one is due
 * (ms from now), or -1 when another host's batch was taking it at this
 * moment.  SY_STORE_EFENCED (nothing taken) when the fence no longer
 * holds the run.  SY_ESTATE outside a batch. */
int sy_store_take_rates(sy_store *s, const sy_store_fence *fence, int64_t run_id,
                        const sy_rate_claim *c, size_t n, int64_t now, bool *taken,
                        size_t *empty, int64_t *wait_ms);

/* Outside a batch: the stored state of key's bucket into *b; *found false
 * (b untouched) when it has none. */
int sy_store_rate_bucket(sy_store *s, const char *key, sy_rate_bucket *b, bool *found);

/* One bucket as stored, for a listing. */
typedef struct sy_rate_bucket_row {
    const char *key;      /* borrowed, valid during the callback */
    sy_rate_bucket state;
    int64_t rate;         /* its last take's claim's; 0 when a row was last */
    int64_t burst;        /* written before they were kept (then unknown) */
} sy_rate_bucket_row;

typedef int (*sy_rate_bucket_cb)(void *arg, const sy_rate_bucket_row *b);

/* Outside a batch: every bucket in the store, in key order; the callback
 * returns non-zero to stop. */
int sy_store_list_rate_buckets(sy_store *s, sy_rate_bucket_cb cb, void *arg);

/* Pure: what bucket row b holds at `now`, by the take's arithmetic
 * (sy_rate_bucket_take) without taking: *tokens whole tokens, and
 * *next_ms the time until the next one is due, -1 when the bucket is
 * full.  False (nothing set) when the row's rate or burst is unknown
 * (0). */
bool sy_rate_bucket_at(const sy_rate_bucket_row *b, int64_t now, int64_t *tokens,
                       int64_t *next_ms);

#endif
