/*
 * switchyard/executor.h -- the executor ABI, version 1.0.
 *
 * This header is the single definition of the contract between the
 * Switchyard host and an executor plugin (a shared object loaded with
 * dlopen).  It includes only standard C headers, so a plugin needs nothing
 * else from Switchyard to build:
 *
 *     cc -shared -fPIC -fvisibility=hidden my.c -o my.so
 *
 * Compatibility rules, kept for every 1.x release:
 *
 *   - Every struct that crosses the boundary starts with `uint32_t size`,
 *     the size the writer compiled with.  Fields are only ever appended.  A
 *     reader reads a field only when SY_HAS_FIELD() says the writer's size
 *     covers it.
 *   - A new function is a new pointer at the end of its table, never a
 *     changed signature.
 *   - The host refuses a plugin whose abi_major differs from its own, or
 *     whose abi_minor is newer than its own (the plugin might call host
 *     functions this host does not have).  A plugin built against 1.0 loads
 *     on every later 1.x host.
 *   - Handles (sy_instance, sy_host, sy_completion, sy_params) are opaque.
 *
 * Threading, in one paragraph: the host calls create() and destroy() with no
 * other call on the same instance in flight.  submit(), cancel(), capacity()
 * and metrics() may be called from any host thread, concurrently, so they
 * must be thread-safe; submit() and cancel() must not block (no network
 * round trip, no waiting for a worker, no unbounded lock hold).  The plugin
 * calls host->complete() exactly once for every accepted submit, from any
 * thread it likes (its own workers, a curl multi loop, a timer), including
 * from inside submit() itself.  Every host function may be called from any
 * thread.
 *
 * Errors are negative sy_status codes; 0 is success.  Functions that can
 * describe an error take a caller-owned buffer (err, err_len) and write a
 * NUL-terminated, single-line message into it, truncated to fit.
 */
#ifndef SWITCHYARD_EXECUTOR_H
#define SWITCHYARD_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_EXECUTOR_ABI_MAJOR 1
#define SY_EXECUTOR_ABI_MINOR 0

/* The symbol every plugin exports; see sy_executor_entry() at the end. */
#define SY_EXECUTOR_ENTRY_SYMBOL "sy_executor_entry"

/* Exports the entry point even when the plugin builds with
 * -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define SY_EXPORT __attribute__((visibility("default")))
#define SY_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SY_EXPORT
#define SY_PRINTF(fmt, args)
#endif

/* True when a struct written with size `(s)->size` contains `field`.  The
 * only correct way to read a field added after 1.0. */
#define SY_HAS_FIELD(s, type, field)                                          \
    ((s) != NULL &&                                                           \
     (size_t)(s)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

/* The values are part of the ABI and never change. */
typedef enum sy_status {
    SY_OK = 0,
    SY_EINVAL = -1,   /* bad argument or bad parameters */
    SY_ENOMEM = -2,   /* allocation failed */
    SY_EBUSY = -3,    /* no capacity now: the host keeps the task Ready and
                         tries again after host->wake() */
    SY_ENOENT = -4,   /* no such key / no such task (e.g. cancel of a task
                         that already completed) */
    SY_ETYPE = -5,    /* a parameter exists but has another type */
    SY_ERANGE = -6,   /* a value or index out of range */
    SY_ENOTSUP = -7,  /* the operation is not supported */
    SY_EIO = -8,      /* an operating-system or network failure */
    SY_ESTATE = -9,   /* called in the wrong state (e.g. after shutdown) */
    SY_EINTERNAL = -10
} sy_status;

/* ------------------------------------------------------------------------ */
/* Opaque handles                                                           */
/* ------------------------------------------------------------------------ */

/* One configured executor instance.  Allocated and owned by the plugin
 * (create() makes it, destroy() frees it); the host only passes it back. */
typedef struct sy_instance sy_instance;

/* The host's side of one instance: what the plugin passes to log() and
 * wake().  Owned by the host; valid from create() until destroy() returns. */
typedef struct sy_host sy_host;

/* One accepted submit.  Owned by the host.  Valid from submit() until the
 * host has processed the plugin's complete() call; the plugin must not use it
 * after calling complete(), except as a lookup key it never dereferences. */
typedef struct sy_completion sy_completion;

/* A read-only view of a settings group: an instance's settings from
 * switchyard.cfg, or a task's executor parameters from its workflow file.
 * Owned by the host; read it only through the sy_host_api getters.  Its
 * lifetime is written where a view is handed out. */
typedef struct sy_params sy_params;

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */

/* The type of one parameter value.  Values are part of the ABI. */
typedef enum sy_param_type {
    SY_PARAM_NONE = 0,     /* absent */
    SY_PARAM_STRING = 1,
    SY_PARAM_INT = 2,      /* 64-bit signed integer */
    SY_PARAM_FLOAT = 3,
    SY_PARAM_BOOL = 4,
    SY_PARAM_ARRAY = 5,    /* ordered values: `[...]` or `(...)` */
    SY_PARAM_GROUP = 6,    /* named values: `{ ... }` */
    SY_PARAM_DURATION = 7  /* only in declarations: a string like "250ms",
                              "5s", "1m", "2h" or integer milliseconds */
} sy_param_type;

/* Flags of a declared parameter. */
#define SY_PARAM_REQUIRED 0x1u /* the host reports its absence as an error */

/* A parameter the plugin understands.  The host uses the declarations to
 * reject unknown keys (a typo is an error, not a silently ignored setting),
 * missing required keys and values of the wrong type, each with the file and
 * line, before the plugin sees anything.  Declared by the plugin as static
 * data that lives as long as the plugin is loaded. */
typedef struct sy_param_spec {
    uint32_t size;           /* sizeof(sy_param_spec) */
    uint32_t flags;          /* SY_PARAM_REQUIRED or 0 */
    const char *name;        /* key, e.g. "workers" */
    sy_param_type type;      /* expected type; a STRING also accepts nothing
                                else, an ARRAY's elements are not checked */
    const char *description; /* one line, shown by `switchyard plugins -v`;
                                may be NULL */
} sy_param_spec;

/* ------------------------------------------------------------------------ */
/* Tasks and results                                                        */
/* ------------------------------------------------------------------------ */

/* One attempt of one task, handed to submit().  Written by the host.  The
 * struct and everything it points to stay valid and unchanged until the
 * plugin calls complete() for it, so a plugin need not copy anything. */
typedef struct sy_task {
    uint32_t size;             /* sizeof(sy_task) as the host compiled it */
    uint32_t attempt;          /* 1 for the first attempt, 2 for the first
                                  retry, ... */
    const char *ns;            /* full namespace, "tenant::workflow::task" */
    const char *run_id;        /* the run this attempt belongs to */
    const char *task_id;       /* the task's id inside its workflow */
    const char *input;         /* the input context: a JSON object,
                                  NUL-terminated UTF-8 */
    size_t input_len;          /* strlen(input) */
    const sy_params *params;   /* the task's executor parameters (every key
                                  of its workflow entry that is not a
                                  workflow key); never NULL, may be empty */
    int64_t timeout_ms;        /* the attempt's timeout, 0 for none.  The
                                  host enforces it (it calls cancel() at the
                                  deadline); a plugin may use it to bound its
                                  own waits */
    const char *workflow;      /* the workflow's name (may hold "::") */
    const char *base_dir;      /* the directory of the workflow file: what
                                  relative paths in params are relative to
                                  (the same as validate()'s base_dir) */
} sy_task;

/* How an attempt ended.  Values are part of the ABI. */
typedef enum sy_outcome {
    SY_OUTCOME_SUCCEEDED = 0,  /* output holds a JSON object (or is NULL for
                                  an empty object) */
    SY_OUTCOME_FAILED = 1,     /* error says why; retried per policy */
    SY_OUTCOME_TIMED_OUT = 2,  /* the plugin's own limit expired */
    SY_OUTCOME_CANCELLED = 3   /* ended because the host called cancel() */
} sy_outcome;

/* What the plugin hands to complete().  Owned by the plugin; the host copies
 * what it needs before complete() returns, so it may live on the stack. */
typedef struct sy_result {
    uint32_t size;          /* sizeof(sy_result) */
    sy_outcome outcome;
    const char *output;     /* JSON text of the task's output, or NULL.  The
                               host parses it; anything but a JSON object
                               fails the attempt with a clear error */
    size_t output_len;      /* length of output in bytes (no NUL needed) */
    const char *error;      /* one or more lines saying why it failed, or
                               NULL.  Kept in the store and shown by
                               `switchyard status` */
} sy_result;

/* ------------------------------------------------------------------------ */
/* The host's functions                                                     */
/* ------------------------------------------------------------------------ */

/* Log levels for sy_host_api.log. */
typedef enum sy_log_level {
    SY_LOG_ERROR = 0,
    SY_LOG_WARN = 1,
    SY_LOG_INFO = 2,
    SY_LOG_DEBUG = 3
} sy_log_level;

/* The table of functions the host lends the plugin.  Owned by the host,
 * static: valid for as long as the plugin is loaded, so a plugin may keep
 * the pointer it got in create().  Every function may be called from any
 * thread.  A plugin built against a later 1.x header checks SY_HAS_FIELD()
 * before calling a function added after 1.0 (it cannot load on an older host
 * anyway, but the rule keeps code honest). */
typedef struct sy_host_api {
    uint32_t size;      /* sizeof(sy_host_api) as the host compiled it */
    uint32_t abi_major; /* the host's SY_EXECUTOR_ABI_MAJOR */
    uint32_t abi_minor; /* the host's SY_EXECUTOR_ABI_MINOR */

    /* Reports how an accepted submit ended.  Call it exactly once per
     * accepted submit, from any thread, also from inside submit() or
     * cancel().  Never blocks for long: the host queues the result and
     * processes it on its loop.  `result` is copied before the call
     * returns.  A NULL result, or a second call for the same completion,
     * is a plugin bug: the host logs it and ignores the call. */
    void (*complete)(sy_completion *c, const sy_result *result);

    /* Writes one line to the host's log, tagged with the instance name.
     * `fmt` is a printf format. */
    void (*log)(sy_host *h, sy_log_level level, const char *fmt, ...)
        SY_PRINTF(3, 4);

    /* Tells the host that capacity has freed: tasks it kept Ready after
     * SY_EBUSY or a capacity() of 0 are offered again.  Cheap and
     * coalescing: call it every time a slot frees. */
    void (*wake)(sy_host *h);

    /* The type of `key` in `p`, or SY_PARAM_NONE when absent. */
    sy_param_type (*param_type)(const sy_params *p, const char *key);

    /* Reads a string.  *out points into the host's copy and lives as long
     * as `p`.  SY_ENOENT when absent, SY_ETYPE when not a string. */
    int (*param_string)(const sy_params *p, const char *key,
                        const char **out);

    /* Reads an integer.  SY_ENOENT, SY_ETYPE (a float is not an int). */
    int (*param_int)(const sy_params *p, const char *key, int64_t *out);

    /* Reads a float; an integer converts.  SY_ENOENT, SY_ETYPE. */
    int (*param_float)(const sy_params *p, const char *key, double *out);

    /* Reads a boolean.  SY_ENOENT, SY_ETYPE. */
    int (*param_bool)(const sy_params *p, const char *key, int *out);

    /* Reads a duration ("250ms", "5s", "1.5m", "2h", "1d", or integer
     * milliseconds) as milliseconds.  SY_ENOENT, SY_ETYPE, SY_EINVAL for a
     * malformed string. */
    int (*param_duration_ms)(const sy_params *p, const char *key,
                             int64_t *out);

    /* The number of elements of the array `key`.  SY_ENOENT, SY_ETYPE. */
    int (*param_array_len)(const sy_params *p, const char *key, size_t *out);

    /* Reads element `index` of the array `key` as a string; lives as long
     * as `p`.  SY_ENOENT, SY_ETYPE (array or element), SY_ERANGE. */
    int (*param_array_string)(const sy_params *p, const char *key,
                              size_t index, const char **out);

    /* Reads element `index` of the array `key` as an integer. */
    int (*param_array_int)(const sy_params *p, const char *key, size_t index,
                           int64_t *out);

    /* A view of the group `key` inside `p`; lives as long as `p`.
     * SY_ENOENT, SY_ETYPE. */
    int (*param_group)(const sy_params *p, const char *key,
                       const sy_params **out);

    /* The number of keys in `p`, in file order (for free-form groups such
     * as a command's `env = { ... }`). */
    size_t (*param_count)(const sy_params *p);

    /* The name of key number `index` (0-based, file order); lives as long as
     * `p`.  NULL when out of range. */
    const char *(*param_name)(const sy_params *p, size_t index);

    /* The whole view as compact JSON text, allocated with malloc; the caller
     * frees it with free_string().  NULL when out of memory.  For plugins
     * that forward parameters verbatim (to an HTTP endpoint, say). */
    char *(*param_json)(const sy_params *p);

    /* Frees a string the host allocated for the plugin (param_json). */
    void (*free_string)(char *s);
} sy_host_api;

/* ------------------------------------------------------------------------ */
/* Metrics                                                                  */
/* ------------------------------------------------------------------------ */

/* Where metrics() writes its figures.  `sink` is the host's and is valid only
 * during the metrics() call.  Names are lowercase words joined by `_` and
 * `.`; the conventional ones every plugin should report are:
 *
 *   active      attempts accepted and not yet completed (gauge)
 *   queued      of those, the ones waiting for a worker (gauge)
 *   capacity    what capacity() would answer now (gauge)
 *   submitted   attempts accepted since create() (counter)
 *   succeeded, failed, timed_out, cancelled
 *               completions by outcome since create() (counters); their
 *               sum plus `active` equals `submitted`
 *
 * Plugins with several pools add `POOL.NAME`, e.g. `blocking.active`. */
typedef void (*sy_metric_fn)(void *sink, const char *name, int64_t value);

/* ------------------------------------------------------------------------ */
/* The descriptor                                                           */
/* ------------------------------------------------------------------------ */

/* Returned by capacity() when the instance takes any number of submits. */
#define SY_CAPACITY_UNLIMITED INT64_MAX

/* What a plugin is: returned by sy_executor_entry(), static data owned by the
 * plugin, valid while it is loaded.  The host reads only the fields that
 * `size` covers, refuses a different abi_major, a newer abi_minor, a size
 * smaller than 1.0's, and a NULL required function. */
typedef struct sy_executor {
    uint32_t abi_major;       /* SY_EXECUTOR_ABI_MAJOR the plugin built with */
    uint32_t abi_minor;       /* SY_EXECUTOR_ABI_MINOR the plugin built with */
    uint32_t size;            /* sizeof(sy_executor) the plugin built with */
    const char *name;         /* the plugin's name, unique in a host: what
                                 `plugin = "..."` names.  Letters, digits,
                                 `_` and `-`; not the file name */
    const char *version;      /* the plugin's own version, free text */
    const char *description;  /* one line for `switchyard plugins`; may be
                                 NULL */

    /* Settings an instance understands (keys of its group in
     * switchyard.cfg besides `plugin`), a NULL-terminated array, or NULL to
     * let create() judge every key itself. */
    const sy_param_spec *const *instance_params;

    /* Parameters a task routed here understands, a NULL-terminated array,
     * or NULL to accept any key (validate() may still judge them). */
    const sy_param_spec *const *task_params;

    /* Required.  Makes an instance from its settings.  `api` and `host`
     * live until destroy() returns; `config` only during this call (copy
     * what you keep).  On success stores the instance in *out and returns
     * SY_OK; on failure writes one line to err and returns a negative
     * status, having freed everything it allocated.  Called from one host
     * thread; may block (it is not on the dispatch path). */
    int (*create)(const sy_host_api *api, sy_host *host,
                  const sy_params *config, sy_instance **out, char *err,
                  size_t err_len);

    /* Required.  Frees the instance.  The host calls it only after every
     * accepted submit has completed (it cancels what is left and waits for
     * the completions first), so no complete() may follow.  After it
     * returns the plugin has no thread left running for this instance. */
    void (*destroy)(sy_instance *inst);

    /* Required.  How many more submits the instance would accept now:
     * 0 for none, SY_CAPACITY_UNLIMITED for no limit.  An honest answer:
     * a submit made right after a positive answer, with no other submit in
     * between, is accepted. */
    int64_t (*capacity)(sy_instance *inst);

    /* Required.  Starts one attempt and returns without waiting for it.
     * SY_OK: accepted; the plugin will call complete(c, ...) exactly once.
     * SY_EBUSY: not accepted for lack of capacity; the host calls again
     * after wake().  Any other negative status: not accepted; the host
     * fails the attempt with err's text.  After a non-OK return the plugin
     * must not call complete(c).  Must not block. */
    int (*submit)(sy_instance *inst, const sy_task *task, sy_completion *c,
                  char *err, size_t err_len);

    /* Required.  Asks the plugin to stop the attempt of `c` (a timeout, a
     * cancelled run, a draining host).  The plugin still calls complete()
     * exactly once for it, as soon as it can, normally with
     * SY_OUTCOME_CANCELLED.  Returns SY_ENOENT when `c` already completed
     * (cancel raced with completion; nothing to do).  Must not block. */
    int (*cancel)(sy_instance *inst, sy_completion *c);

    /* Optional (NULL: the declarations in task_params suffice).  Judges a
     * task's parameters at load time, so a misrouted or misspelt task is a
     * config error, not a 3 a.m. failure.  `base_dir` is the directory of
     * the workflow file, for resolving relative paths.  SY_OK, or a
     * negative status with one line in err.  Called from one host thread;
     * may block briefly (it may open a library to check a symbol). */
    int (*validate)(sy_instance *inst, const sy_params *task_params,
                    const char *base_dir, char *err, size_t err_len);

    /* Optional.  Reports the instance's figures through emit(sink, ...).
     * Must not block. */
    void (*metrics)(sy_instance *inst, sy_metric_fn emit, void *sink);
} sy_executor;

/* The one symbol a plugin exports.  Returns the plugin's static descriptor;
 * called once per load, from one thread, before anything else.  May return
 * NULL to refuse to load (the host says so). */
SY_EXPORT const sy_executor *sy_executor_entry(void);

typedef const sy_executor *(*sy_executor_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_EXECUTOR_H */
