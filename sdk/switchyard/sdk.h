/*
 * switchyard/sdk.h -- helpers for executor authors, header only.
 *
 * Everything here is `static inline`, built from executor.h and the C and
 * POSIX libraries alone, so a plugin's whole build stays
 *
 *     cc -shared -fPIC -fvisibility=hidden \
 *        $(pkg-config --cflags switchyard-sdk) my.c -o my.so
 *
 * with no library to link and nothing exported by accident.  Nothing here
 * is part of the executor ABI: a plugin copies what it uses into itself at
 * build time, so the helpers may improve without breaking any built plugin.
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
 */
#ifndef SWITCHYARD_SDK_H
#define SWITCHYARD_SDK_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/executor.h>

#ifdef __cplusplus
#error "switchyard/sdk.h is C11 (it uses <stdatomic.h>); include executor.h alone from C++"
#endif

/* ======================================================================== */
/* Messages                                                                 */
/* ======================================================================== */

/* Replaces line breaks and tabs by spaces: the host shows err next to a
 * file and line, one per line. */
static inline void sy_sdk_one_line(char *s)
{
    for (; s && *s; s++)
        if (*s == '\n' || *s == '\r' || *s == '\t')
            *s = ' ';
}

/* vprintf-style sy_sdk_errf(). */
static inline char *sy_sdk_verrf(char *err, size_t err_len, const char *fmt,
                                 va_list ap)
{
    static const char failed[] = "(unformattable message)";
    if (!err || err_len == 0)
        return err;
    if (vsnprintf(err, err_len, fmt, ap) < 0) {
        size_t n = sizeof failed - 1 < err_len - 1 ? sizeof failed - 1
                                                   : err_len - 1;
        memcpy(err, failed, n);
        err[n] = '\0';
    }
    sy_sdk_one_line(err);
    return err;
}

/* Writes a formatted one-line message into err (truncated to err_len,
 * always NUL-terminated); a no-op when err is NULL or err_len is 0.
 * Returns err. */
static inline char *sy_sdk_errf(char *err, size_t err_len, const char *fmt,
                                ...) SY_PRINTF(3, 4);
static inline char *sy_sdk_errf(char *err, size_t err_len, const char *fmt,
                                ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_verrf(err, err_len, fmt, ap);
    va_end(ap);
    return err;
}

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

/* How a value of type t is named in messages: "an integer", ... */
static inline const char *sy_sdk_type_name(sy_param_type t)
{
    switch (t) {
    case SY_PARAM_STRING: return "a string";
    case SY_PARAM_INT: return "an integer";
    case SY_PARAM_FLOAT: return "a number";
    case SY_PARAM_BOOL: return "a boolean";
    case SY_PARAM_ARRAY: return "an array";
    case SY_PARAM_GROUP: return "a group";
    case SY_PARAM_DURATION: return "a duration";
    default: return "nothing";
    }
}

/* Formats a millisecond count the way operators write it: "250ms", "5s",
 * "1m30s", "2h", "1d". */
static inline char *sy_sdk_format_ms(int64_t ms, char *buf, size_t len)
{
    static const struct { int64_t ms; const char *unit; } units[] = {
        {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"},
        {1, "ms"}};
    size_t used = 0;
    if (!buf || len == 0)
        return buf;
    buf[0] = '\0';
    if (ms <= 0) {
        snprintf(buf, len, ms == 0 ? "0s" : "%lldms", (long long)ms);
        return buf;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        int64_t n = ms / units[i].ms;
        if (n == 0)
            continue;
        ms -= n * units[i].ms;
        int w = snprintf(buf + used, len - used, "%lld%s", (long long)n,
                         units[i].unit);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    return buf;
}

/* Describes the value at `key` for a "got ..." clause: a short quoted
 * string, a number, true/false, or its kind. */
static inline char *sy_sdk_priv_describe(const sy_host_api *api,
                                         const sy_params *p, const char *key,
                                         char *buf, size_t len)
{
    const char *s;
    int64_t i;
    double f;
    int b;
    switch (api->param_type(p, key)) {
    case SY_PARAM_STRING:
        if (api->param_string(p, key, &s) == SY_OK)
            snprintf(buf, len, "\"%.40s%s\"", s, strlen(s) > 40 ? "..." : "");
        break;
    case SY_PARAM_INT:
        if (api->param_int(p, key, &i) == SY_OK)
            snprintf(buf, len, "%lld", (long long)i);
        break;
    case SY_PARAM_FLOAT:
        if (api->param_float(p, key, &f) == SY_OK)
            snprintf(buf, len, "%g", f);
        break;
    case SY_PARAM_BOOL:
        if (api->param_bool(p, key, &b) == SY_OK)
            snprintf(buf, len, "%s", b ? "true" : "false");
        break;
    default:
        snprintf(buf, len, "%s", sy_sdk_type_name(api->param_type(p, key)));
        break;
    }
    sy_sdk_one_line(buf);
    return buf;
}

/* "an integer", "an integer between 1 and 1024", "an integer of at least
 * 1", ... */
static inline char *sy_sdk_priv_int_range(int64_t min, int64_t max,
                                          char *buf, size_t len)
{
    if (min > INT64_MIN && max < INT64_MAX)
        snprintf(buf, len, "an integer between %lld and %lld",
                 (long long)min, (long long)max);
    else if (min > INT64_MIN)
        snprintf(buf, len, "an integer of at least %lld", (long long)min);
    else if (max < INT64_MAX)
        snprintf(buf, len, "an integer of at most %lld", (long long)max);
    else
        snprintf(buf, len, "an integer");
    return buf;
}

/* Reads an integer in [min, max] (INT64_MIN / INT64_MAX for no bound). */
static inline int sy_sdk_param_int(const sy_host_api *api, const sy_params *p,
                                   const char *key, int64_t def, int64_t min,
                                   int64_t max, int64_t *out, char *err,
                                   size_t err_len)
{
    char want[96], got[64];
    int64_t v = 0;
    int rc = api->param_int(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK && v >= min && v <= max) {
        *out = v;
        return SY_OK;
    }
    sy_sdk_priv_int_range(min, max, want, sizeof want);
    if (rc == SY_OK)
        snprintf(got, sizeof got, "%lld", (long long)v);
    else
        sy_sdk_priv_describe(api, p, key, got, sizeof got);
    sy_sdk_errf(err, err_len, "%s: must be %s, got %s", key, want, got);
    return rc == SY_OK ? SY_ERANGE : SY_ETYPE;
}

/* Reads a number in [min, max]; an integer converts.  Use -HUGE_VAL /
 * HUGE_VAL (or +-DBL_MAX) for no bound. */
static inline int sy_sdk_param_float(const sy_host_api *api,
                                     const sy_params *p, const char *key,
                                     double def, double min, double max,
                                     double *out, char *err, size_t err_len)
{
    char got[64];
    double v = 0;
    int rc = api->param_float(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK && v >= min && v <= max) {
        *out = v;
        return SY_OK;
    }
    if (rc == SY_OK)
        snprintf(got, sizeof got, "%g", v);
    else
        sy_sdk_priv_describe(api, p, key, got, sizeof got);
    sy_sdk_errf(err, err_len, "%s: must be a number between %g and %g, got %s",
                key, min, max, got);
    return rc == SY_OK ? SY_ERANGE : SY_ETYPE;
}

/* Reads true or false. */
static inline int sy_sdk_param_bool(const sy_host_api *api,
                                    const sy_params *p, const char *key,
                                    bool def, bool *out, char *err,
                                    size_t err_len)
{
    char got[64];
    int v = 0;
    int rc = api->param_bool(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK) {
        *out = v != 0;
        return SY_OK;
    }
    sy_sdk_errf(err, err_len, "%s: must be true or false, got %s", key,
                sy_sdk_priv_describe(api, p, key, got, sizeof got));
    return SY_ETYPE;
}

/* Reads a string; `def` (may be NULL) when absent. */
static inline int sy_sdk_param_string(const sy_host_api *api,
                                      const sy_params *p, const char *key,
                                      const char *def, const char **out,
                                      char *err, size_t err_len)
{
    char got[64];
    const char *v = NULL;
    int rc = api->param_string(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK) {
        *out = v;
        return SY_OK;
    }
    sy_sdk_errf(err, err_len, "%s: must be a string, got %s", key,
                sy_sdk_priv_describe(api, p, key, got, sizeof got));
    return SY_ETYPE;
}

/* SY_OK when `key` is present (any type), else SY_EINVAL with
 * "KEY: required, but not set". */
static inline int sy_sdk_param_required(const sy_host_api *api,
                                        const sy_params *p, const char *key,
                                        char *err, size_t err_len)
{
    if (api->param_type(p, key) != SY_PARAM_NONE)
        return SY_OK;
    sy_sdk_errf(err, err_len, "%s: required, but not set", key);
    return SY_EINVAL;
}

/* Reads a duration ("250ms", "5s", "1m", "2h", "1d", compounds such as
 * "1h30m", or integer milliseconds) in [min_ms, max_ms] as milliseconds. */
static inline int sy_sdk_param_duration_ms(const sy_host_api *api,
                                           const sy_params *p,
                                           const char *key, int64_t def,
                                           int64_t min_ms, int64_t max_ms,
                                           int64_t *out, char *err,
                                           size_t err_len)
{
    char got[64], lo[48], hi[48];
    int64_t v = 0;
    int rc = api->param_duration_ms(p, key, &v);
    if (rc == SY_ENOENT) {
        *out = def;
        return SY_OK;
    }
    if (rc == SY_OK && v >= min_ms && v <= max_ms) {
        *out = v;
        return SY_OK;
    }
    if (rc != SY_OK) {
        sy_sdk_errf(err, err_len, "%s: must be a duration such as \"250ms\", "
                    "\"5s\", \"1m\" or \"2h\" (or integer milliseconds), "
                    "got %s",
                    key, sy_sdk_priv_describe(api, p, key, got, sizeof got));
        return rc == SY_ETYPE ? SY_ETYPE : SY_EINVAL;
    }
    sy_sdk_format_ms(v, got, sizeof got);
    sy_sdk_format_ms(min_ms, lo, sizeof lo);
    sy_sdk_format_ms(max_ms, hi, sizeof hi);
    if (max_ms == INT64_MAX)
        sy_sdk_errf(err, err_len, "%s: must be a duration of at least %s, "
                    "got %s", key, lo, got);
    else
        sy_sdk_errf(err, err_len, "%s: must be a duration between %s and %s, "
                    "got %s", key, lo, hi, got);
    return SY_ERANGE;
}

/* ======================================================================== */
/* Results                                                                  */
/* ======================================================================== */

/*
 * Each builder fills a sy_result on its own stack and calls
 * api->complete(c, ...), which copies it: nothing passed in needs to
 * outlive the call.  The rule of the ABI still holds: exactly one
 * completion per accepted submit, and none after a refused one.  After the
 * call `c` may be gone; use it only as a key you never dereference.
 */

/* Completes `c` with any outcome.  `output` (JSON object text, output_len
 * bytes, no NUL needed) and `error` (one or more lines) may be NULL. */
static inline void sy_sdk_complete(const sy_host_api *api, sy_completion *c,
                                   sy_outcome outcome, const char *output,
                                   size_t output_len, const char *error)
{
    sy_result r;
    memset(&r, 0, sizeof r);
    r.size = (uint32_t)sizeof r;
    r.outcome = outcome;
    r.output = output;
    r.output_len = output ? output_len : 0;
    r.error = error;
    api->complete(c, &r);
}

/* Succeeds with `json_object` (NUL-terminated JSON object text; NULL for
 * an empty object). */
static inline void sy_sdk_complete_ok(const sy_host_api *api,
                                      sy_completion *c,
                                      const char *json_object)
{
    sy_sdk_complete(api, c, SY_OUTCOME_SUCCEEDED, json_object,
                    json_object ? strlen(json_object) : 0, NULL);
}

/* Succeeds with `len` bytes of JSON object text (no NUL needed). */
static inline void sy_sdk_complete_ok_len(const sy_host_api *api,
                                          sy_completion *c, const char *json,
                                          size_t len)
{
    sy_sdk_complete(api, c, SY_OUTCOME_SUCCEEDED, json, len, NULL);
}

/* Ends `c` with a non-success outcome and a printf-formatted error of any
 * length (a short one is formatted on the stack; a long one is malloc'd
 * and freed before returning). */
static inline void sy_sdk_vcomplete_error(const sy_host_api *api,
                                          sy_completion *c,
                                          sy_outcome outcome, const char *fmt,
                                          va_list ap)
{
    char small[512];
    char *msg = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        snprintf(small, sizeof small, "(unformattable error message)");
    } else if ((size_t)n >= sizeof small) {
        char *big = malloc((size_t)n + 1);
        if (big) { /* else the truncated text is still worth sending */
            vsnprintf(big, (size_t)n + 1, fmt, again);
            msg = big;
        }
    }
    va_end(again);
    sy_sdk_complete(api, c, outcome, NULL, 0, msg);
    if (msg != small)
        free(msg);
}

/* Fails the attempt (SY_OUTCOME_FAILED: retried per the task's policy). */
static inline void sy_sdk_complete_fail(const sy_host_api *api,
                                        sy_completion *c, const char *fmt, ...)
    SY_PRINTF(3, 4);
static inline void sy_sdk_complete_fail(const sy_host_api *api,
                                        sy_completion *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_vcomplete_error(api, c, SY_OUTCOME_FAILED, fmt, ap);
    va_end(ap);
}

/* Ends the attempt as SY_OUTCOME_TIMED_OUT (the plugin's own limit). */
static inline void sy_sdk_complete_timed_out(const sy_host_api *api,
                                             sy_completion *c,
                                             const char *fmt, ...)
    SY_PRINTF(3, 4);
static inline void sy_sdk_complete_timed_out(const sy_host_api *api,
                                             sy_completion *c,
                                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_vcomplete_error(api, c, SY_OUTCOME_TIMED_OUT, fmt, ap);
    va_end(ap);
}

/* Ends the attempt as SY_OUTCOME_CANCELLED: the answer to cancel(). */
static inline void sy_sdk_complete_cancelled(const sy_host_api *api,
                                             sy_completion *c,
                                             const char *fmt, ...)
    SY_PRINTF(3, 4);
static inline void sy_sdk_complete_cancelled(const sy_host_api *api,
                                             sy_completion *c,
                                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_sdk_vcomplete_error(api, c, SY_OUTCOME_CANCELLED, fmt, ap);
    va_end(ap);
}

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
 * and hold the mutex for a few hundred nanoseconds.
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

/* Prepares an empty table.  SY_OK, or SY_ENOMEM / SY_EINTERNAL. */
static inline int sy_sdk_inflight_init(sy_sdk_inflight *t)
{
    memset(t, 0, sizeof *t);
    if (pthread_mutex_init(&t->lock, NULL) != 0)
        return SY_EINTERNAL;
    t->cap = 64;
    t->slots = (sy_sdk_inflight_slot *)calloc(t->cap, sizeof *t->slots);
    if (!t->slots) {
        pthread_mutex_destroy(&t->lock);
        return SY_ENOMEM;
    }
    return SY_OK;
}

/* Frees the table.  Entries still in it are dropped without a word: by
 * destroy() time the host has seen every completion, so a non-empty table
 * is the plugin's bug, which sy_sdk_inflight_count() can reveal first. */
static inline void sy_sdk_inflight_fini(sy_sdk_inflight *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
    pthread_mutex_destroy(&t->lock);
}

static inline size_t sy_sdk_priv_home(const sy_sdk_inflight *t,
                                      const sy_completion *c)
{
    /* Fibonacci hashing: pointers are aligned, so low bits carry little. */
    uint64_t h = (uint64_t)(uintptr_t)c * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (t->cap - 1);
}

/* The slot holding `c`, or the empty slot where it would go. */
static inline size_t sy_sdk_priv_find(const sy_sdk_inflight *t,
                                      const sy_completion *c)
{
    size_t i = sy_sdk_priv_home(t, c);
    while (t->slots[i].key && t->slots[i].key != c)
        i = (i + 1) & (t->cap - 1);
    return i;
}

static inline int sy_sdk_priv_grow(sy_sdk_inflight *t)
{
    sy_sdk_inflight_slot *old = t->slots;
    size_t old_cap = t->cap;
    sy_sdk_inflight_slot *v =
        (sy_sdk_inflight_slot *)calloc(old_cap * 2, sizeof *v);
    if (!v)
        return SY_ENOMEM;
    t->slots = v;
    t->cap = old_cap * 2;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            t->slots[sy_sdk_priv_find(t, old[i].key)] = old[i];
    free(old);
    return SY_OK;
}

/* Records `c` as in flight with the plugin's `value`.  SY_OK; SY_EINVAL
 * when c is NULL or already in the table (a host bug: one completion per
 * submit); SY_ENOMEM.  On error nothing changed: refuse the submit. */
static inline int sy_sdk_inflight_add(sy_sdk_inflight *t, sy_completion *c,
                                      void *value)
{
    int rc = SY_OK;
    if (!c)
        return SY_EINVAL;
    pthread_mutex_lock(&t->lock);
    /* Grow at half full: probes stay short. */
    if ((t->count + 1) * 2 > t->cap)
        rc = sy_sdk_priv_grow(t);
    if (rc == SY_OK) {
        size_t i = sy_sdk_priv_find(t, c);
        if (t->slots[i].key) {
            rc = SY_EINVAL;
        } else {
            t->slots[i].key = c;
            t->slots[i].value = value;
            t->count++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* Removes slot i, shifting later entries of the same probe run back so no
 * lookup ever stops at a hole too early. */
static inline void sy_sdk_priv_remove(sy_sdk_inflight *t, size_t i)
{
    size_t mask = t->cap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->slots[j].key)
            break;
        size_t k = sy_sdk_priv_home(t, t->slots[j].key);
        /* Entry j may stay when its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        t->slots[i] = t->slots[j];
        i = j;
    }
    t->slots[i].key = NULL;
    t->slots[i].value = NULL;
    t->count--;
}

/* Takes `c` out of the table.  SY_OK (and *value, when value is not NULL,
 * gets what add() stored): the caller now owns the one completion of `c`.
 * SY_ENOENT: not in the table (already taken, or never added). */
static inline int sy_sdk_inflight_take(sy_sdk_inflight *t, sy_completion *c,
                                       void **value)
{
    int rc = SY_ENOENT;
    if (!c)
        return SY_ENOENT;
    pthread_mutex_lock(&t->lock);
    size_t i = sy_sdk_priv_find(t, c);
    if (t->slots[i].key) {
        if (value)
            *value = t->slots[i].value;
        sy_sdk_priv_remove(t, i);
        rc = SY_OK;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* Takes any one entry (for a shutdown that must answer everything left).
 * SY_OK with *c and *value set, or SY_ENOENT when the table is empty. */
static inline int sy_sdk_inflight_take_any(sy_sdk_inflight *t,
                                           sy_completion **c, void **value)
{
    int rc = SY_ENOENT;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; t->count > 0 && i < t->cap; i++) {
        if (!t->slots[i].key)
            continue;
        *c = t->slots[i].key;
        if (value)
            *value = t->slots[i].value;
        sy_sdk_priv_remove(t, i);
        rc = SY_OK;
        break;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* The number of entries now (a snapshot: others may change it at once). */
static inline size_t sy_sdk_inflight_count(sy_sdk_inflight *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* take() and, when it succeeds, api->complete(c, r) outside the lock.
 * SY_OK: this call completed `c`; SY_ENOENT: someone else did (nothing was
 * sent).  `value` as for take(), may be NULL. */
static inline int sy_sdk_inflight_complete(sy_sdk_inflight *t,
                                           const sy_host_api *api,
                                           sy_completion *c,
                                           const sy_result *r, void **value)
{
    int rc = sy_sdk_inflight_take(t, c, value);
    if (rc == SY_OK)
        api->complete(c, r);
    return rc;
}

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
 */
typedef struct sy_sdk_slots {
    _Atomic int64_t used;   /* busy slots */
    int64_t limit;          /* total slots; SY_CAPACITY_UNLIMITED for none */
    const sy_host_api *api; /* for wake(); not owned */
    sy_host *host;          /* passed to wake(); not owned */
} sy_sdk_slots;

/* `limit` >= 0, or SY_CAPACITY_UNLIMITED.  `api` and `host` as create()
 * got them. */
static inline void sy_sdk_slots_init(sy_sdk_slots *s, const sy_host_api *api,
                                     sy_host *host, int64_t limit)
{
    atomic_init(&s->used, 0);
    s->limit = limit < 0 ? 0 : limit;
    s->api = api;
    s->host = host;
}

/* Takes a slot; false when none is free.  A compare-and-swap, so racing
 * submits never take more than `limit`. */
static inline bool sy_sdk_slots_try_acquire(sy_sdk_slots *s)
{
    int64_t cur = atomic_load(&s->used);
    do {
        if (s->limit != SY_CAPACITY_UNLIMITED && cur >= s->limit)
            return false;
    } while (!atomic_compare_exchange_weak(&s->used, &cur, cur + 1));
    return true;
}

/* Gives a slot back without telling the host: for a submit() that took a
 * slot and then refused the task (the host is not waiting on it). */
static inline void sy_sdk_slots_undo(sy_sdk_slots *s)
{
    atomic_fetch_sub(&s->used, 1);
}

/* Gives a slot back and calls api->wake(host) so tasks the host kept
 * Ready after SY_EBUSY are offered again. */
static inline void sy_sdk_slots_release(sy_sdk_slots *s)
{
    atomic_fetch_sub(&s->used, 1);
    if (s->api && s->api->wake)
        s->api->wake(s->host);
}

/* What capacity() should answer: free slots, or SY_CAPACITY_UNLIMITED. */
static inline int64_t sy_sdk_slots_available(sy_sdk_slots *s)
{
    if (s->limit == SY_CAPACITY_UNLIMITED)
        return SY_CAPACITY_UNLIMITED;
    int64_t left = s->limit - atomic_load(&s->used);
    return left > 0 ? left : 0;
}

static inline int64_t sy_sdk_slots_used(sy_sdk_slots *s)
{
    return atomic_load(&s->used);
}

/* ======================================================================== */
/* Stats: the conventional metrics                                          */
/* ======================================================================== */

/*
 * Count each accepted submit with sy_sdk_stats_submitted() before anything
 * can complete it, and each completion with sy_sdk_stats_outcome() before
 * calling complete(): then `active` (submitted minus completions) is never
 * negative and is exact once the host has seen every completion, which is
 * when the conformance kit compares it with its own count.
 */
typedef struct sy_sdk_stats {
    _Atomic int64_t submitted;
    _Atomic int64_t by_outcome[4]; /* indexed by sy_outcome */
} sy_sdk_stats;

static inline void sy_sdk_stats_init(sy_sdk_stats *s)
{
    atomic_init(&s->submitted, 0);
    for (int i = 0; i < 4; i++)
        atomic_init(&s->by_outcome[i], 0);
}

static inline void sy_sdk_stats_submitted(sy_sdk_stats *s)
{
    atomic_fetch_add(&s->submitted, 1);
}

/* Counts one completion; an outcome outside sy_outcome counts as failed. */
static inline void sy_sdk_stats_outcome(sy_sdk_stats *s, sy_outcome o)
{
    unsigned i = (unsigned)o;
    atomic_fetch_add(&s->by_outcome[i < 4 ? i : SY_OUTCOME_FAILED], 1);
}

/* Accepted and not yet completed. */
static inline int64_t sy_sdk_stats_active(sy_sdk_stats *s)
{
    /* Completions first: `submitted` only grows, so a racing submit can
     * only make the answer larger, never negative. */
    int64_t done = 0;
    for (int i = 0; i < 4; i++)
        done += atomic_load(&s->by_outcome[i]);
    return atomic_load(&s->submitted) - done;
}

/* Emits the conventional figures: active, queued, capacity, submitted,
 * succeeded, failed, timed_out, cancelled.  `queued` and `capacity` are
 * the plugin's own (its queue length and capacity()). */
static inline void sy_sdk_stats_emit(sy_sdk_stats *s, int64_t queued,
                                     int64_t capacity, sy_metric_fn emit,
                                     void *sink)
{
    int64_t by[4], submitted;
    for (int i = 0; i < 4; i++)
        by[i] = atomic_load(&s->by_outcome[i]);
    submitted = atomic_load(&s->submitted);
    emit(sink, "active", submitted - by[0] - by[1] - by[2] - by[3]);
    emit(sink, "queued", queued);
    emit(sink, "capacity", capacity);
    emit(sink, "submitted", submitted);
    emit(sink, "succeeded", by[SY_OUTCOME_SUCCEEDED]);
    emit(sink, "failed", by[SY_OUTCOME_FAILED]);
    emit(sink, "timed_out", by[SY_OUTCOME_TIMED_OUT]);
    emit(sink, "cancelled", by[SY_OUTCOME_CANCELLED]);
}

#endif /* SWITCHYARD_SDK_H */
