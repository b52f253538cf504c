/*
 * switchyard/sdk.h -- helpers for executor authors.
 *
 * Declarations only; the code is in libswitchyard-sdk.a, a static library
 * compiled -fPIC -fvisibility=hidden, so a plugin links it in and still
 * exports nothing but sy_executor_entry:
 *
 *     cc -shared -fPIC -fvisibility=hidden \
 *        $(pkg-config --cflags switchyard-sdk) my.c -o my.so \
 *        $(pkg-config --libs switchyard-sdk) -pthread
 *
 * Nothing here is part of the executor ABI: a plugin copies what it uses
 * into itself at link time, so the helpers may improve without breaking any
 * built plugin.  This part of the library needs only the C and POSIX
 * libraries.
 *
 * What is here, each part usable on its own:
 *
 *   messages     sy_sdk_errf(): one bounded, one-line message into err.
 *   parameters   sy_sdk_param_int/_float/_bool/_string/_duration_ms():
 *                read a setting or task parameter with a default and a
 *                range, and explain a bad value in one line, e.g.
 *                "workers: must be an integer between 1 and 1024, got 0".
 *   results      sy_sdk_complete_ok(), sy_sdk_complete_fail() (printf
 *                style), _timed_out(), _cancelled(): build a sy_result and
 *                hand it to the host.
 *   in flight    sy_sdk_inflight: the attempts accepted and not yet
 *                completed, keyed by sy_completion.  Whoever takes an
 *                entry out is the one caller that completes it, so a cancel
 *                racing a worker's completion never completes twice.
 *   slots        sy_sdk_slots: an honest capacity counter; release() calls
 *                the host's wake().
 *   stats        sy_sdk_stats: the conventional metrics counters and their
 *                emission.
 *
 * Elsewhere in the library: switchyard/spawn.h (run a command to its end),
 * switchyard/json_params.h (sy_params over jansson), switchyard/testhost.h
 * (a host for unit tests), switchyard/loader.h (open and check a plugin).
 * Apart, in libswitchyard-sdk-http.a: switchyard/http.h (libcurl's multi
 * interface on a libuv loop of the plugin's own thread).
 *
 * Threading: every function may be called from any thread; the ones that
 * touch a shared object (sy_sdk_inflight, sy_sdk_slots, sy_sdk_stats) are
 * thread-safe on it, except _init and _fini, which the plugin calls where
 * nothing else uses the object (create() and destroy()).  None blocks
 * beyond a short mutex hold, so all of them are safe in submit() and
 * cancel().
 *
 * Errors: functions that can fail return a sy_status (0 or negative) and,
 * where they take (err, err_len), write one line into that caller-owned
 * buffer, truncated to fit; a NULL err or an err_len of 0 is allowed.
 *
 * Ownership: no function keeps a pointer it was given beyond the call,
 * except sy_sdk_slots_init() (api and host, which live until destroy())
 * and sy_sdk_inflight_add() (the value, which stays the plugin's).
 */
#ifndef SWITCHYARD_SDK_H
#define SWITCHYARD_SDK_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

#ifdef __cplusplus
#error "switchyard/sdk.h is C11 (it uses <stdatomic.h>); include executor.h alone from C++"
#endif

/* ======================================================================== */
/* Messages                                                                 */
/* ======================================================================== */

/* Replaces line breaks and tabs in `s` (may be NULL) by spaces, in place:
 * the host shows err next to a file and line, one per line. */
void sy_sdk_one_line(char *s);

/* Writes a formatted one-line message into err (truncated to err_len,
 * always NUL-terminated); a no-op when err is NULL or err_len is 0.  A
 * format the C library cannot expand leaves "(unformattable message)".
 * Returns err. */
char *sy_sdk_errf(char *err, size_t err_len, const char *fmt, ...)
    SY_PRINTF(3, 4);

/* vprintf-style sy_sdk_errf(); `ap` is consumed. */
char *sy_sdk_verrf(char *err, size_t err_len, const char *fmt, va_list ap);

/* How a value of type t is named in messages: "an integer", "a string",
 * ...; "nothing" for SY_PARAM_NONE or an unknown value.  Static text. */
const char *sy_sdk_type_name(sy_param_type t);

/* ======================================================================== */
/* Durations                                                                */
/* ======================================================================== */

/* Formats a millisecond count the way operators write it: "250ms", "5s",
 * "1m30s", "2h", "1d" ("0s" for 0).  Writes into the caller's buf (nothing
 * when buf is NULL or len 0), truncated to fit; returns buf. */
char *sy_sdk_format_ms(int64_t ms, char *buf, size_t len);

/* Parses a duration as operators write it ("250ms", "5s", "1.5m", "2h",
 * "1d", compounds such as "1h30m") into milliseconds, rounding a fraction
 * to the nearest one.  SY_OK, or SY_EINVAL with the reason in err (empty,
 * no unit, unknown unit, too large); *ms is then left alone. */
int sy_sdk_duration_parse(const char *s, int64_t *ms, char *err,
                          size_t err_len);

/* ======================================================================== */
/* Parameters                                                               */
/* ======================================================================== */

/*
 * Each reader takes the host's table `api`, a view `p` (an instance's
 * settings in create(), a task's parameters in submit() or validate()),
 * the key, a default and, for numbers, an inclusive range.
 *
 *   absent      *out = the default, SY_OK (range not checked: the default
 *               is the author's choice)
 *   valid       *out = the value, SY_OK
 *   wrong type  SY_ETYPE, err = "KEY: must be WHAT, got WHAT-IT-IS"
 *   out of range or malformed
 *               SY_ERANGE / SY_EINVAL with the same kind of message
 *
 * On error *out is left alone.  Strings returned through *out point into
 * the host's copy and live as long as `p` (for settings: only during
 * create(); copy what you keep).
 */

/* Reads an integer in [min, max] (INT64_MIN / INT64_MAX for no bound). */
int sy_sdk_param_int(const sy_host_api *api, const sy_params *p,
                     const char *key, int64_t def, int64_t min, int64_t max,
                     int64_t *out, char *err, size_t err_len);

/* Reads a number in [min, max]; an integer converts.  Use -HUGE_VAL /
 * HUGE_VAL (or +-DBL_MAX) for no bound. */
int sy_sdk_param_float(const sy_host_api *api, const sy_params *p,
                       const char *key, double def, double min, double max,
                       double *out, char *err, size_t err_len);

/* Reads true or false. */
int sy_sdk_param_bool(const sy_host_api *api, const sy_params *p,
                      const char *key, bool def, bool *out, char *err,
                      size_t err_len);

/* Reads a string; `def` (may be NULL) when absent. */
int sy_sdk_param_string(const sy_host_api *api, const sy_params *p,
                        const char *key, const char *def, const char **out,
                        char *err, size_t err_len);

/* SY_OK when `key` is present (any type), else SY_EINVAL with
 * "KEY: required, but not set". */
int sy_sdk_param_required(const sy_host_api *api, const sy_params *p,
                          const char *key, char *err, size_t err_len);

/* Reads a duration ("250ms", "5s", "1m", "2h", "1d", compounds such as
 * "1h30m", or integer milliseconds) in [min_ms, max_ms] as milliseconds
 * (INT64_MAX for no upper bound).  A malformed string is SY_EINVAL. */
int sy_sdk_param_duration_ms(const sy_host_api *api, const sy_params *p,
                             const char *key, int64_t def, int64_t min_ms,
                             int64_t max_ms, int64_t *out, char *err,
                             size_t err_len);

/* ======================================================================== */
/* Results                                                                  */
/* ======================================================================== */

/*
 * Each builder fills a sy_result on its own stack and calls
 * api->complete(c, ...), which copies it: nothing passed in needs to
 * outlive the call.  The rule of the ABI still holds: exactly one
 * completion per accepted submit, and none after a refused one.  After the
 * call `c` may be gone; use it only as a key you never dereference.  Any
 * thread may call them, also from inside submit() or cancel().
 */

/* Completes `c` with any outcome.  `output` (JSON object text, output_len
 * bytes, no NUL needed) and `error` (one or more lines) may be NULL. */
void sy_sdk_complete(const sy_host_api *api, sy_completion *c,
                     sy_outcome outcome, const char *output,
                     size_t output_len, const char *error);

/* Succeeds with `json_object` (NUL-terminated JSON object text; NULL for
 * an empty object). */
void sy_sdk_complete_ok(const sy_host_api *api, sy_completion *c,
                        const char *json_object);

/* Succeeds with `len` bytes of JSON object text (no NUL needed). */
void sy_sdk_complete_ok_len(const sy_host_api *api, sy_completion *c,
                            const char *json, size_t len);

/* Ends `c` with a non-success outcome and a printf-formatted error of any
 * length (a short one is formatted on the stack; a long one is malloc'd
 * and freed before returning; without memory, the first 511 bytes are
 * sent).  `ap` is consumed. */
void sy_sdk_vcomplete_error(const sy_host_api *api, sy_completion *c,
                            sy_outcome outcome, const char *fmt, va_list ap);

/* Fails the attempt (SY_OUTCOME_FAILED: retried per the task's policy). */
void sy_sdk_complete_fail(const sy_host_api *api, sy_completion *c,
                          const char *fmt, ...) SY_PRINTF(3, 4);

/* Ends the attempt as SY_OUTCOME_TIMED_OUT (the plugin's own limit). */
void sy_sdk_complete_timed_out(const sy_host_api *api, sy_completion *c,
                               const char *fmt, ...) SY_PRINTF(3, 4);

/* Ends the attempt as SY_OUTCOME_CANCELLED: the answer to cancel(). */
void sy_sdk_complete_cancelled(const sy_host_api *api, sy_completion *c,
                               const char *fmt, ...) SY_PRINTF(3, 4);

/* ======================================================================== */
/* In flight: exactly-once completion                                       */
/* ======================================================================== */

/*
 * The attempts an instance has accepted and not yet completed, each with a
 * pointer of the plugin's own (its job).  The rule that makes completion
 * exactly-once:
 *
 *   submit()   add(c, job) before anything can complete it
 *   anyone     take(c, &job) == SY_OK  ->  this caller, and no other,
 *              calls complete(c) (sy_sdk_inflight_complete() does both)
 *   cancel()   take(c, &job) == SY_ENOENT  ->  already completed (or being
 *              completed): return SY_ENOENT and do nothing
 *
 * take() removes the entry under a mutex, so when a worker finishing a job
 * and a cancel() race, exactly one of them wins the entry and completes;
 * the loser only cleans up its own resources.  Taking the entry gives the
 * right to complete, not the job's memory: who frees the job is the
 * plugin's own rule (the template frees it in whichever thread holds it
 * last, under its pool lock).
 *
 * Keys are sy_completion pointers used as numbers, never dereferenced, so
 * a take() after the completion is safe.  The table is an open-addressing
 * hash (linear probing, no tombstones): add and take are O(1) on average
 * and hold the mutex for a few hundred nanoseconds.  The fields are
 * private to sdk/inflight.c; the struct is here so a plugin can embed it.
 */
typedef struct sy_sdk_inflight_slot {
    sy_completion *key; /* NULL for an empty slot; not owned */
    void *value;        /* the plugin's; not owned by the table */
} sy_sdk_inflight_slot;

typedef struct sy_sdk_inflight {
    pthread_mutex_t lock;        /* guards every field below */
    sy_sdk_inflight_slot *slots; /* owned; `cap` slots, a power of two */
    size_t cap;
    size_t count;                /* entries in the table */
} sy_sdk_inflight;

/* Prepares an empty table.  SY_OK, or SY_ENOMEM / SY_EINTERNAL (nothing
 * to free then). */
int sy_sdk_inflight_init(sy_sdk_inflight *t);

/* Frees the table.  Entries still in it are dropped without a word: by
 * destroy() time the host has seen every completion, so a non-empty table
 * is the plugin's bug, which sy_sdk_inflight_count() can reveal first.
 * A table whose init failed, or a zeroed one init never ran on, is left
 * alone, so one destroy() can unwind a create() that failed anywhere. */
void sy_sdk_inflight_fini(sy_sdk_inflight *t);

/* Records `c` as in flight with the plugin's `value`.  SY_OK; SY_EINVAL
 * when c is NULL or already in the table (a host bug: one completion per
 * submit); SY_ENOMEM.  On error nothing changed: refuse the submit. */
int sy_sdk_inflight_add(sy_sdk_inflight *t, sy_completion *c, void *value);

/* Takes `c` out of the table.  SY_OK (and *value, when value is not NULL,
 * gets what add() stored): the caller now owns the one completion of `c`.
 * SY_ENOENT: not in the table (already taken, or never added). */
int sy_sdk_inflight_take(sy_sdk_inflight *t, sy_completion *c, void **value);

/* Takes any one entry (for a shutdown that must answer everything left).
 * SY_OK with *c and *value set, or SY_ENOENT when the table is empty. */
int sy_sdk_inflight_take_any(sy_sdk_inflight *t, sy_completion **c,
                             void **value);

/* The number of entries now (a snapshot: others may change it at once). */
size_t sy_sdk_inflight_count(sy_sdk_inflight *t);

/* take() and, when it succeeds, api->complete(c, r) outside the lock.
 * SY_OK: this call completed `c`; SY_ENOENT: someone else did (nothing was
 * sent).  `value` as for take(), may be NULL. */
int sy_sdk_inflight_complete(sy_sdk_inflight *t, const sy_host_api *api,
                             sy_completion *c, const sy_result *r,
                             void **value);

/* ======================================================================== */
/* Slots: honest capacity                                                   */
/* ======================================================================== */

/*
 * A counter of busy slots out of `limit`.  capacity() answers
 * sy_sdk_slots_available(); submit() calls try_acquire() first and returns
 * SY_EBUSY when it fails; the thread that finishes an attempt calls
 * release() after complete(), which tells the host through api->wake().
 *
 * Release after complete(), not before: the host counts an attempt as in
 * flight until its completion arrives, and the conformance kit checks that
 * what the host sees in flight never exceeds what capacity() promised.
 * Every function is lock-free; the fields are private to sdk/counters.c.
 */
typedef struct sy_sdk_slots {
    _Atomic int64_t used;   /* busy slots */
    int64_t limit;          /* total slots; SY_CAPACITY_UNLIMITED for none */
    const sy_host_api *api; /* for wake(); not owned */
    sy_host *host;          /* passed to wake(); not owned */
} sy_sdk_slots;

/* `limit` >= 0, or SY_CAPACITY_UNLIMITED (a negative one counts as 0).
 * `api` and `host` as create() got them (kept until destroy()). */
void sy_sdk_slots_init(sy_sdk_slots *s, const sy_host_api *api,
                       sy_host *host, int64_t limit);

/* Takes a slot; false when none is free.  A compare-and-swap, so racing
 * submits never take more than `limit`. */
bool sy_sdk_slots_try_acquire(sy_sdk_slots *s);

/* Gives a slot back without telling the host: for a submit() that took a
 * slot and then refused the task (the host is not waiting on it). */
void sy_sdk_slots_undo(sy_sdk_slots *s);

/* Gives a slot back and calls api->wake(host) so tasks the host kept
 * Ready after SY_EBUSY are offered again. */
void sy_sdk_slots_release(sy_sdk_slots *s);

/* What capacity() should answer: free slots, or SY_CAPACITY_UNLIMITED. */
int64_t sy_sdk_slots_available(sy_sdk_slots *s);

/* Busy slots now (a snapshot). */
int64_t sy_sdk_slots_used(sy_sdk_slots *s);

/* ======================================================================== */
/* Stats: the conventional metrics                                          */
/* ======================================================================== */

/*
 * Count each accepted submit with sy_sdk_stats_submitted() before anything
 * can complete it, and each completion with sy_sdk_stats_outcome() before
 * calling complete(): then `active` (submitted minus completions) is never
 * negative and is exact once the host has seen every completion, which is
 * when the conformance kit compares it with its own count.  Every function
 * is lock-free.
 */
typedef struct sy_sdk_stats {
    _Atomic int64_t submitted;
    _Atomic int64_t by_outcome[4]; /* indexed by sy_outcome */
} sy_sdk_stats;

/* Every counter to 0. */
void sy_sdk_stats_init(sy_sdk_stats *s);

/* Counts one accepted submit. */
void sy_sdk_stats_submitted(sy_sdk_stats *s);

/* Counts one completion; an outcome outside sy_outcome counts as failed. */
void sy_sdk_stats_outcome(sy_sdk_stats *s, sy_outcome o);

/* Accepted and not yet completed. */
int64_t sy_sdk_stats_active(sy_sdk_stats *s);

/* Emits the conventional figures through emit(sink, ...): active, queued,
 * capacity, submitted, succeeded, failed, timed_out, cancelled.  `queued`
 * and `capacity` are the plugin's own (its queue length and capacity()).
 * For metrics(); `sink` is only passed on. */
void sy_sdk_stats_emit(sy_sdk_stats *s, int64_t queued, int64_t capacity,
                       sy_metric_fn emit, void *sink);

#endif /* SWITCHYARD_SDK_H */
