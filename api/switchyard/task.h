/*
 * switchyard/task.h -- the task-function ABI, version 1.0.
 *
 * A function task names a C function in a shared library (a "task
 * library"):
 *
 *     function = "lib/libetl.so:transform";   # path relative to the
 *                                             # workflow file
 *
 * The function has the type sy_task_fn:
 *
 *     #include <switchyard/task.h>
 *
 *     SY_TASK_LIBRARY;   // optional, once per library: records the ABI
 *
 *     SY_TASK_EXPORT int transform(const sy_task_api *api, sy_task_ctx *ctx)
 *     {
 *         size_t len;
 *         const char *in = api->input(ctx, &len);    // a JSON object
 *         ...
 *         if (bad) {
 *             api->set_error(ctx, "row %d: %s", row, why);
 *             return 1;                               // failure
 *         }
 *         api->set_output(ctx, "{\"rows\":12}", 11);  // copied
 *         return 0;                                   // success
 *     }
 *
 *     cc -shared -fPIC -fvisibility=hidden etl.c -o lib/libetl.so
 *
 * It includes switchyard/executor.h (for sy_params, sy_param_type,
 * sy_log_level, SY_HAS_FIELD, the field marks and the status codes) and
 * standard C headers only; a task library links against nothing from
 * Switchyard.
 *
 * Compatibility rules, the same as executor.h's, kept for every 1.x
 * release:
 *
 *   - Every struct that crosses the boundary starts with `uint32_t size`,
 *     the size the writer compiled with, and holds only fixed-width types.
 *     Fields are only ever appended, each group marked with the minor that
 *     added it ("since 1.0").  A reader reads a field added after 1.0 only
 *     when SY_HAS_FIELD() says the writer's size covers it.
 *   - A new function is a new pointer at the end of sy_task_api, never a
 *     changed signature.  A task function calls a pointer added after 1.0
 *     only when SY_TASK_API_HAS() says the executor has it.
 *   - The minor a library exports (SY_TASK_LIBRARY) is the LOWEST executor
 *     minor it needs, SY_TASK_MIN_MINOR (default 0), not the minor of the
 *     header it was built with: rebuilt against a newer 1.x header and
 *     using nothing newer, it still loads on an older 1.x executor.
 *   - The task library does not link against host symbols: everything it
 *     may call is in the table it is handed.  Build it with
 *     -fvisibility=hidden and mark the task functions SY_TASK_EXPORT.
 *   - sy_task_ctx is opaque.
 *
 * Loading: a library is opened once per executor instance with
 * dlopen(RTLD_NOW | RTLD_LOCAL) and stays open until the instance is
 * destroyed; its constructors run in the host process.  A library that
 * exports sy_task_library_abi (SY_TASK_LIBRARY) for another major version,
 * or a newer minor than the executor's, is refused with a message saying
 * so; one without it is taken to be 1.0.  A missing library or symbol is
 * reported when the workflow is checked (`switchyard check`), not when the
 * task runs.
 *
 * Threading: the thread executor calls task functions on its worker
 * threads, several at once, so a function must be thread-safe (no
 * unguarded globals).  Each call has its own ctx.  The api table is static
 * and may be called from any thread; the ctx-taking functions are valid only
 * until the task function returns (a thread the function starts must be
 * joined before it returns).  set_output() and set_error() must not be
 * called concurrently for the same ctx; every other function may be.
 *
 * Crashes: an in-process function that crashes (a segfault, an abort, an
 * exit()) takes the whole host down with it, and every task running in it.
 * Set `isolate = true` on the task, or on the executor instance, to run the
 * function in a separate process (switchyard-task-runner) instead: a crash
 * then fails only that attempt ("isolated function crashed: signal 11
 * (Segmentation fault)"), at the cost of a process start per attempt.
 *
 * Cancellation: an in-process function cannot be stopped by force.  When
 * the host cancels the attempt (its timeout, a cancelled run, a draining
 * host) cancelled() starts returning non-zero; a long function should poll
 * it and return early.  Until it returns, its worker stays busy.  An
 * isolated function is sent SIGTERM (cancelled() turns non-zero in the
 * runner), then SIGKILL after the task's kill_grace.
 */
#ifndef SWITCHYARD_TASK_H
#define SWITCHYARD_TASK_H

#include <stddef.h>
#include <stdint.h>

#include <switchyard/executor.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_TASK_ABI_MAJOR 1
#define SY_TASK_ABI_MINOR 0

/* The lowest executor minor a task library needs, which SY_TASK_LIBRARY
 * exports.  Define it before including this header when a function calls a
 * sy_task_api function added in 1.N without a fallback. */
#ifndef SY_TASK_MIN_MINOR
#define SY_TASK_MIN_MINOR 0
#endif
#if SY_TASK_MIN_MINOR > SY_TASK_ABI_MINOR
#error "SY_TASK_MIN_MINOR is newer than this header's task ABI minor"
#endif

/* True when the executor's table `api` has the function `fn` (a
 * sy_task_api field).  Every call of a function added after 1.0 must be
 * guarded by it, unless SY_TASK_MIN_MINOR already guarantees it. */
#define SY_TASK_API_HAS(api, fn)                                              \
    (SY_HAS_FIELD(api, sy_task_api, fn) && (api)->fn != NULL)

/* Exports a task function (or sy_task_library_abi) from a library built
 * with -fvisibility=hidden.  In C++, also declare the function
 * extern "C". */
#if defined(__GNUC__) || defined(__clang__)
#define SY_TASK_EXPORT __attribute__((visibility("default")))
#else
#define SY_TASK_EXPORT
#endif

/* The name of the optional ABI marker a task library may export. */
#define SY_TASK_LIBRARY_ABI_SYMBOL "sy_task_library_abi"

/* Put `SY_TASK_LIBRARY;` once, at file scope, in one source file of a task
 * library: it exports {SY_TASK_ABI_MAJOR, SY_TASK_MIN_MINOR} (the major it
 * speaks, the lowest minor it needs) so the executor can refuse a library
 * it cannot serve with a clear message instead of calling it with the
 * wrong table.  Library-owned static data; the executor only reads it. */
#define SY_TASK_LIBRARY                                                       \
    SY_TASK_EXPORT extern const uint32_t sy_task_library_abi[2];              \
    const uint32_t sy_task_library_abi[2] = {SY_TASK_ABI_MAJOR,               \
                                             SY_TASK_MIN_MINOR}

/* One call of a task function.  Executor-owned and opaque: the function
 * never dereferences it, and uses it only during the call. */
typedef struct sy_task_ctx sy_task_ctx;

/* Who the attempt is.  Executor-owned and read-only, valid during the
 * call; every string is NUL-terminated UTF-8 and never NULL (an unknown
 * value is ""). */
typedef struct sy_task_info {
    /* since 1.0 */
    uint32_t size;        /* [read-only] sizeof(sy_task_info) as the
                             executor compiled it */
    uint32_t attempt;     /* [read-only] 1 for the first attempt, 2 for the
                             first retry, ...; with run_id, a key for
                             idempotent side effects */
    const char *ns;       /* [read-only] "tenant::workflow::task" */
    const char *run_id;   /* [read-only] the run this attempt belongs to */
    const char *task_id;  /* [read-only] the task's id in its workflow */
    const char *workflow; /* [read-only] the workflow's name (may hold
                             "::") */
    const char *base_dir; /* [read-only] the directory of the workflow
                             file */
    int64_t timeout_ms;   /* [read-only] the attempt's timeout, 0 for none */
} sy_task_info;

/* The table of functions a task function may call.  Executor-owned,
 * static and read-only: valid for as long as the library is loaded, so a
 * function may keep the pointer (but not the ctx).  Every function may be
 * called from any thread while the task function runs, except where said
 * otherwise.  The param_* getters are exactly those of sy_host_api in
 * executor.h (same signatures, same errors, the same functions when the
 * function runs in the host process). */
typedef struct sy_task_api {
    /* since 1.0 */
    uint32_t size;      /* [read-only] sizeof(sy_task_api) as the executor
                           compiled it */
    uint32_t abi_major; /* [read-only] the executor's SY_TASK_ABI_MAJOR */
    uint32_t abi_minor; /* [read-only] the executor's SY_TASK_ABI_MINOR: the
                           newest minor whose functions it has */
    uint32_t reserved;  /* [reserved] */

    /* Who this attempt is; never NULL.  Valid during the call. */
    const sy_task_info *(*info)(sy_task_ctx *ctx);

    /* The input context: a JSON object as NUL-terminated UTF-8 text (at
     * least "{}"), owned by the executor, valid during the call.  When
     * `len` is not NULL, *len receives strlen(text). */
    const char *(*input)(sy_task_ctx *ctx, size_t *len);

    /* The task's parameters (every key of its workflow entry that is not a
     * workflow key, including `function`): read them with the getters
     * below.  Never NULL, valid during the call. */
    const sy_params *(*params)(sy_task_ctx *ctx);

    /* The parameter getters of sy_host_api; see executor.h for each.
     * Strings they hand out live as long as the sy_params they came from,
     * i.e. during the call. */
    sy_param_type (*param_type)(const sy_params *p, const char *key);
    int (*param_string)(const sy_params *p, const char *key,
                        const char **out);
    int (*param_int)(const sy_params *p, const char *key, int64_t *out);
    int (*param_float)(const sy_params *p, const char *key, double *out);
    int (*param_bool)(const sy_params *p, const char *key, int *out);
    int (*param_duration_ms)(const sy_params *p, const char *key,
                             int64_t *out);
    int (*param_array_len)(const sy_params *p, const char *key, size_t *out);
    int (*param_array_string)(const sy_params *p, const char *key,
                              size_t index, const char **out);
    int (*param_array_int)(const sy_params *p, const char *key, size_t index,
                           int64_t *out);
    int (*param_group)(const sy_params *p, const char *key,
                       const sy_params **out);
    size_t (*param_count)(const sy_params *p);
    const char *(*param_name)(const sy_params *p, size_t index);

    /* Sets the task's output: `len` bytes of JSON text (no NUL needed),
     * copied before the call returns, so it may live on the stack.  It
     * should be a JSON object: the host parses it after the function
     * returns 0 and fails the attempt with a clear error if it is anything
     * else.  A later call replaces an earlier one; NULL clears it (an empty
     * object).  Ignored when the function fails.  SY_OK, or SY_ENOMEM
     * (the previous output is kept).  Not concurrently with set_error(). */
    int (*set_output)(sy_task_ctx *ctx, const char *json, size_t len);

    /* Says why the task failed, printf-style; the text is copied (one or
     * more lines, kept in the store and shown by `switchyard status`).  A
     * later call replaces an earlier one.  Used only when the function
     * returns non-zero; without it the error says which value it returned.
     * Not concurrently with set_output(). */
    void (*set_error)(sy_task_ctx *ctx, const char *fmt, ...)
        SY_PRINTF(2, 3);

    /* Non-zero once the attempt should stop: the host cancelled it or its
     * timeout passed.  Cheap (an atomic load and a clock read); poll it in
     * long loops and return early.  After a cancel the attempt ends as
     * cancelled whatever the function returns; after the timeout a
     * non-zero return ends it as timed out (a late 0 is still a success,
     * which the host may ignore if it has moved on). */
    int (*cancelled)(sy_task_ctx *ctx);

    /* Writes one line to the host's log, tagged with the executor instance
     * and the task's namespace.  `fmt` is a printf format.  From an isolated
     * function the lines reach the host's log when the attempt ends. */
    void (*log)(sy_task_ctx *ctx, sy_log_level level, const char *fmt, ...)
        SY_PRINTF(3, 4);
} sy_task_api;

/* A task function.  Returns 0 for success (the output is what set_output()
 * set, or an empty object), anything else for failure (the error is what
 * set_error() set).  Called on an executor thread; must be thread-safe;
 * must not call exit() or longjmp out. */
typedef int (*sy_task_fn)(const sy_task_api *api, sy_task_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_TASK_H */
