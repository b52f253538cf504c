/*
 * switchyard/testhost.h -- a host for unit tests of a plugin: a complete
 * sy_host_api table, and the sy_host and sy_completion behind it, that
 * record what the plugin does instead of running a workflow.
 *
 * The conformance kit drives plugins through it, and a plugin author's
 * own tests can too:
 *
 *     sy_host h;
 *     sy_completion c;
 *     sy_sdk_test_host_init(&h, "test");
 *     const sy_params *cfg = sy_sdk_test_host_params(&h, "{\"workers\": 2}");
 *     d->create(sy_sdk_test_host_api(), &h, cfg, &inst, err, sizeof err);
 *     sy_sdk_test_completion_init(&c, &h, NULL);
 *     d->submit(inst, &task, &c, err, sizeof err);
 *     sy_sdk_test_host_wait(&h, 1, 5000);   // c.outcome, c.output now set
 *     d->destroy(inst);
 *     sy_sdk_test_completion_fini(&c);
 *     sy_sdk_test_host_fini(&h);
 *
 * What it records: every complete() call per completion (a second one is
 * counted in `doubles` and logged, as the real host logs and ignores it),
 * a NULL or too small result (counted in `malformed`; the completion then
 * ends FAILED, as with the real host), the first result's outcome, output
 * and error (copied), every wake(), and the events emitted (emit_event,
 * ABI 1.5).  log() writes "LEVEL NAME: line"
 * to stderr for levels up to `log_level`.  Parameters are JSON objects
 * read through switchyard/json_params.h.
 *
 * Threading: the table's functions may be called from any thread, as the
 * ABI promises plugins; the counters are atomics, and the first result is
 * written before `completed` counts it, under `lock`.  init and fini are
 * for one thread, with no plugin call in flight.
 *
 * Needs jansson: link with $(pkg-config --libs jansson) -pthread.
 */
#ifndef SWITCHYARD_TESTHOST_H
#define SWITCHYARD_TESTHOST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

/* Called on the plugin's thread, inside complete(), for every call: `nth`
 * is 1 for the first complete() of `c`, 2 and up for the extra ones;
 * `malformed` is NULL, or why the plugin's result was unusable (`r` is
 * then the FAILED stand-in the host would have used).  Must be short and
 * thread-safe. */
typedef void (*sy_sdk_test_complete_fn)(sy_completion *c, const sy_result *r,
                                        int nth, const char *malformed);

/* The test host's side of one instance.  Fields marked "set" may be set
 * after init and before the plugin gets the host; the rest are read-only
 * to the caller. */
struct sy_host {
    const char *name;        /* set: the tag of log lines; not owned */
    int log_level;           /* set: a sy_log_level; lines above it are
                                dropped (default SY_LOG_WARN) */
    sy_sdk_test_complete_fn on_complete; /* set: may be NULL */
    void (*on_wake)(sy_host *h);         /* set: may be NULL; any thread */
    void *data;              /* set: the caller's */
    size_t max_output;       /* set: an output longer than this is not
                                copied (the completion's output stays NULL,
                                output_len says its length), as the host
                                reads none of one over max_context_bytes;
                                0: no bound */

    atomic_long completed;   /* completions with their first complete() */
    atomic_long doubles;     /* complete() calls beyond the first */
    atomic_long malformed;   /* NULL or too small results */
    atomic_long wakes;       /* wake() calls */

    pthread_mutex_t lock;    /* guards `owned`; paired with `changed` */
    pthread_cond_t changed;  /* broadcast on every completion and wake */
    void **owned;            /* JSON objects of sy_sdk_test_host_params() */
    size_t owned_count, owned_cap;
    /* attempt_process (1.2) and attempt_process_async (1.3), for plugins
     * that run processes: each call with a valid group (pgid > 1) is
     * counted and answered `process_answer` (set: default SY_OK; e.g.
     * SY_ESTATE for an attempt taken over, SY_EIO for a store that
     * failed).  An async ask is answered from a thread of the test host
     * after `process_answer_ms` (set: 0 answers inside the call), so a
     * test can have the refusal come while the command runs, or after it
     * ended. */
    int process_answer;
    int64_t process_answer_ms;
    atomic_long processes;   /* attempt_process calls of either kind */
    /* emit_event (1.5): a call without a name, with an empty one, or with
     * a payload that is not a JSON object gets SY_EINVAL, as from the
     * host (the host's finer rules on names are its own); any other is
     * answered `emit_answer` (set: default SY_OK; e.g. SY_ESTATE for a
     * host that is stopping) and, when SY_OK, kept (copied, under `lock`)
     * for sy_sdk_test_host_events(), its event id its number from 1.
     * Each call counts in `emits` and broadcasts `changed`. */
    int emit_answer;
    atomic_long emits;
    void *events;            /* a JSON array; read it through
                                sy_sdk_test_host_events() */
};

/* One submit as the test host sees it.  Init one per submit; never reuse
 * one the plugin may still complete. */
struct sy_completion {
    sy_host *host;           /* not owned */
    void *data;              /* the caller's */
    atomic_int calls;        /* complete() calls so far */
    atomic_int outcome;      /* the first result's, or -1 before it */
    char *output;            /* owned copy of the first result's output
                                (NUL-terminated), or NULL */
    size_t output_len;
    char *error;             /* owned copy of its error (at most its first
                                SY_RESULT_ERROR_MAX bytes, as the host
                                keeps), or NULL */
};

/* The table to hand to create(): static, valid for the whole process. */
const sy_host_api *sy_sdk_test_host_api(void);

/* Prepares `h` with `name` (kept, not copied).  0, or -1 when the mutex
 * or condition cannot be made (nothing to free then). */
int sy_sdk_test_host_init(sy_host *h, const char *name);

/* Frees the parameters `h` owns.  Every instance on it must be destroyed. */
void sy_sdk_test_host_fini(sy_host *h);

/* Parses `json_text` (a JSON object) into parameters `h` keeps until its
 * fini: for create()'s settings or a task's params.  NULL when the text
 * is not a JSON object or memory ran out. */
const sy_params *sy_sdk_test_host_params(sy_host *h, const char *json_text);

/* Prepares `c` for one submit on `h`; `data` is the caller's.  `c` must
 * be zeroed memory or a completion already finished with. */
void sy_sdk_test_completion_init(sy_completion *c, sy_host *h, void *data);

/* Frees the copies in `c`; the plugin must be done with it. */
void sy_sdk_test_completion_fini(sy_completion *c);

/* The events the plugin emitted on `h` that were accepted, oldest first,
 * as JSON text: [{"name": ..., "key": ... or null, "data": {...}}, ...].
 * Caller-owned (free()); NULL when memory ran out.  Any thread. */
char *sy_sdk_test_host_events(sy_host *h);

/* Waits until at least `count` completions arrived on `h`, at most
 * `timeout_ms`.  True when they did. */
bool sy_sdk_test_host_wait(sy_host *h, long count, int64_t timeout_ms);

#endif /* SWITCHYARD_TESTHOST_H */
