/*
 * executor-1.6.h -- TEST ONLY: a simulated executor ABI 1.6, to prove that
 * a plugin rebuilt against a newer 1.x header loads on a 1.5 host when it
 * uses nothing newer, and is refused clearly when it does.  It is
 * api/switchyard/executor.h as of 1.5, with switchyard/host.h's
 * sy_host_api written in (so that this one file is the whole simulated
 * ABI), and exactly what a real 1.6 would add: the minor, one descriptor
 * field (drain) and one host function (progress), each appended under a
 * "since 1.6" mark.  No release has these; never install this file.
 *
 * switchyard/executor.h -- the executor ABI, version 1.6.
 *
 * This header is the single definition of the contract between the
 * Switchyard host and an executor plugin (a shared object loaded with
 * dlopen).  It includes only standard C headers, so a plugin needs nothing
 * else from Switchyard to build:
 *
 *     cc -shared -fPIC -fvisibility=hidden my.c -o my.so
 *
 * and declares itself with the initializer macro, which fills the ABI
 * header of the descriptor:
 *
 *     static const sy_executor desc = {
 *         SY_EXECUTOR_V1,
 *         .name = "mine", .version = "1.0.0",
 *         .create = my_create, .destroy = my_destroy, ...
 *     };
 *     SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
 *
 * Compatibility rules, kept for every 1.x release:
 *
 *   - Every struct that crosses the boundary starts with `uint32_t size`,
 *     the size the writer compiled with.  Fields are only ever appended,
 *     never moved, retyped or removed; a new function is a new pointer at
 *     the end of its table.  Each group of fields is marked with the minor
 *     that added it ("since 1.0").  A field added after 1.0 means "not
 *     used" when it is zero (NULL), so a writer that does not know it
 *     leaves it out and the reader sees the old behaviour.
 *   - A reader reads a field added after 1.0 only when SY_HAS_FIELD() says
 *     the writer's size covers it.  A plugin calls a host function added
 *     after 1.0 only when SY_HOST_HAS() says the host has it.
 *   - In structs and in function signatures, only fixed-width types: the
 *     size of a C enum is the compiler's choice (-fshort-enums), so the
 *     named values below are constants and the types that carry them
 *     (sy_param_type, sy_outcome, sy_log_level) are int32_t.
 *   - The descriptor's abi_minor is the LOWEST host minor the plugin
 *     needs, not the minor of the header it was built with: a plugin
 *     rebuilt against a newer 1.x header that uses nothing newer still
 *     loads on an older 1.x host.  SY_EXECUTOR_V1 sets it to
 *     SY_EXECUTOR_MIN_MINOR (default 0).  The host raises the requirement
 *     to the minor of the newest descriptor field the plugin sets, refuses
 *     a plugin that sets a field the host does not know, and refuses a
 *     plugin that needs a newer minor than its own.  It also refuses
 *     another abi_major, a size smaller than 1.0's, and a NULL required
 *     function, each with a one-line reason naming the file.
 *   - Handles (sy_instance, sy_host, sy_completion, sy_params) are opaque.
 *
 * Field marks, in the comment of every struct field: [public] written by
 * the side that owns the struct, read by the other (every descriptor
 * field: the plugin writes it, the host reads it); [read-only] written by
 * the host, never by the plugin; [reserved] zero when written, ignored
 * when read, for a later minor.
 *
 * Ownership: "host-owned" memory is allocated, kept valid for the stated
 * lifetime and freed by the host; the plugin never frees or writes it.
 * "Plugin-owned" memory is the plugin's, and the host copies what it keeps
 * before the call returns unless the text says otherwise.  `err` buffers
 * are caller-owned: the callee writes at most err_len bytes into them, a
 * NUL-terminated single line, truncated to fit.
 *
 * Threads: each function below says which thread may call it.  "Any
 * thread" means any thread of the process, concurrently with any other
 * call unless the text says otherwise.  Errors are negative SY_E* status
 * codes; 0 is SY_OK.
 */
#ifndef SWITCHYARD_EXECUTOR_H
#define SWITCHYARD_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes.  A host speaks exactly this major and
 * every minor up to this one. */
#define SY_EXECUTOR_ABI_MAJOR 1
#define SY_EXECUTOR_ABI_MINOR 6

/* The lowest host minor a plugin needs (SY_EXECUTOR_V1 puts it in the
 * descriptor).  Define it before including this header when the plugin sets
 * a descriptor field added in 1.N (an older host would refuse it without
 * naming the minor) or calls a host function added in 1.N without a
 * fallback; a host function newer than it is guarded with SY_HOST_HAS(). */
#ifndef SY_EXECUTOR_MIN_MINOR
#define SY_EXECUTOR_MIN_MINOR 0
#endif
#if SY_EXECUTOR_MIN_MINOR > SY_EXECUTOR_ABI_MINOR
#error "SY_EXECUTOR_MIN_MINOR is newer than this header's ABI minor"
#endif

/* The symbol every plugin exports; see sy_executor_entry() at the end. */
#define SY_EXECUTOR_ENTRY_SYMBOL "sy_executor_entry"

/* Exports the entry point even when the plugin builds hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define SY_EXPORT __attribute__((visibility("default")))
#define SY_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SY_EXPORT
#define SY_PRINTF(fmt, args)
#endif

/* True when a struct of size `(s)->size` has `field`: the only way to read
 * a field added after 1.0. */
#define SY_HAS_FIELD(s, type, field)                                          \
    ((s) != NULL &&                                                           \
     (size_t)(s)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* True when the host's table `api` has the function `fn` (a sy_host_api
 * field).  Every call of a host function added after 1.0 is guarded by it
 * unless SY_EXECUTOR_MIN_MINOR guarantees it (an older host then refuses
 * the plugin): `if (SY_HOST_HAS(api, attempt_process)) api->...(...);` */
#define SY_HOST_HAS(api, fn)                                                  \
    (SY_HAS_FIELD(api, sy_host_api, fn) && (api)->fn != NULL)

/* ---- Status codes ----------------------------------------------------- */

/* Returned as `int`.  The values are part of the ABI and never change. */
typedef enum sy_status {
    SY_OK = 0,
    SY_EINVAL = -1,   /* bad argument or bad parameters */
    SY_ENOMEM = -2,   /* allocation failed */
    SY_EBUSY = -3,    /* no capacity: the task waits Ready for wake() */
    SY_ENOENT = -4,   /* no such key or task (a cancel after completion) */
    SY_ETYPE = -5,    /* a parameter exists but has another type */
    SY_ERANGE = -6,   /* a value or index out of range */
    SY_ENOTSUP = -7,  /* the operation is not supported */
    SY_EIO = -8,      /* an operating-system or network failure */
    SY_ESTATE = -9,   /* called in the wrong state (e.g. after shutdown) */
    SY_EINTERNAL = -10
} sy_status;

/* ---- Opaque handles --------------------------------------------------- */

/* One configured executor instance.  Plugin-owned: create() makes it,
 * destroy() frees it; the host only passes it back. */
typedef struct sy_instance sy_instance;

/* The host's side of one instance: what the plugin passes to log() and
 * wake().  Host-owned; valid from the start of create() until destroy()
 * returns (a failed create() ends it when create() returns). */
typedef struct sy_host sy_host;

/* A token for one submit, minted by the host: a handle (a slot number and
 * a generation packed into the pointer's bits), not an address.  The plugin
 * never dereferences or frees it: it keeps it, compares it, and hands it
 * back to complete() exactly once (cancel() hands it to the plugin again).
 * The host checks every token handed to complete() against its own table,
 * never reading memory the value points at, and refuses a second complete()
 * for one submit, one after the submit was refused or its result applied
 * (so also after destroy()), a value it did not hand out, and NULL: the
 * call returns, reaches no task, and counts in the instance's refused
 * calls (the first logged with plugin, instance and, when known, the
 * task's namespace).  A slot is reused only under a new generation, so a
 * stale token never names a later submit.  The host cannot tell which
 * instance calls: another instance's token still in flight is taken as
 * that submit's result.  Each is a plugin bug the conformance kit fails.
 * After complete() the value is only a lookup key (cancel() may still name
 * it, and gets SY_ENOENT). */
typedef struct sy_completion sy_completion;

/* A read-only view of a settings group: an instance's settings from
 * switchyard.cfg, or a task's executor parameters from its workflow file.
 * Host-owned; read it only through the sy_host_api getters.  Its lifetime
 * is written where a view is handed out. */
typedef struct sy_params sy_params;

/* The table of functions the host lends the plugin, defined below. */
typedef struct sy_host_api sy_host_api;

/* ---- Parameters ------------------------------------------------------- */

/* The type of one parameter value (sy_param_spec.type, param_type()). */
typedef int32_t sy_param_type;
enum {
    SY_PARAM_NONE = 0,     /* absent */
    SY_PARAM_STRING = 1,
    SY_PARAM_INT = 2,      /* 64-bit signed integer */
    SY_PARAM_FLOAT = 3,
    SY_PARAM_BOOL = 4,
    SY_PARAM_ARRAY = 5,    /* ordered values: `[...]` or `(...)` */
    SY_PARAM_GROUP = 6,    /* named values: `{ ... }` */
    SY_PARAM_DURATION = 7  /* only in declarations: a string like "250ms",
                              "5s", "1m", "2h" or integer milliseconds */
};

/* Flags of a declared parameter.  Other bits are reserved (zero). */
#define SY_PARAM_REQUIRED 0x1u /* the host reports its absence as an error */

/* A parameter the plugin understands.  The host uses the declarations to
 * reject unknown keys (a typo is an error, not a silently ignored setting),
 * missing required keys and values of the wrong type, each with the file and
 * line, before the plugin sees anything.  Plugin-owned static data that
 * lives as long as the plugin is loaded; the host only reads it. */
typedef struct sy_param_spec {
    /* since 1.0 */
    uint32_t size;           /* [public] sizeof(sy_param_spec) */
    uint32_t flags;          /* [public] SY_PARAM_REQUIRED or 0 */
    const char *name;        /* [public] key, e.g. "workers" */
    sy_param_type type;      /* [public] expected SY_PARAM_*; a STRING
                                accepts nothing else, an ARRAY's elements
                                are not checked */
    const char *description; /* [public] one line, shown by `switchyard
                                plugins -v`; may be NULL */
} sy_param_spec;

/* ---- Tasks and results ------------------------------------------------ */

/* One attempt of one task, handed to submit().  Host-owned and read-only.
 * The struct and everything it points to stay valid and unchanged until
 * the plugin calls complete() for it (or submit() returns non-OK), so a
 * plugin need not copy anything; after that, none of it may be touched. */
typedef struct sy_task {
    /* since 1.0 */
    uint32_t size;             /* [read-only] sizeof(sy_task) as the host
                                  compiled it */
    uint32_t attempt;          /* [read-only] 1 for the first attempt, 2 for
                                  the first retry, ... */
    const char *ns;            /* [read-only] full namespace,
                                  "tenant::workflow::task" */
    const char *run_id;        /* [read-only] the run of this attempt */
    const char *task_id;       /* [read-only] the task's id in its workflow */
    const char *input;         /* [read-only] the input context: a JSON
                                  object, NUL-terminated UTF-8 */
    size_t input_len;          /* [read-only] strlen(input) */
    const sy_params *params;   /* [read-only] the task's executor parameters
                                  (every key of its workflow entry that is
                                  not a workflow key); never NULL, may be
                                  empty */
    int64_t timeout_ms;        /* [read-only] the attempt's timeout, 0 for
                                  none.  The host enforces it (it calls
                                  cancel() at the deadline); a plugin may
                                  use it to bound its own waits */
    const char *workflow;      /* [read-only] the workflow's name (may hold
                                  "::") */
    const char *base_dir;      /* [read-only] the directory of the workflow
                                  file: what relative paths in params are
                                  relative to (validate()'s base_dir) */
    /* since 1.4 (read it under SY_HAS_FIELD: an older host's is shorter) */
    int64_t element;           /* [read-only] an element of a mapped task:
                                  its index in the map, from 0 (all its
                                  elements share task_id); -1 otherwise.
                                  With run_id, task_id and attempt it names
                                  the attempt uniquely, as resume() needs */
} sy_task;

/* How an attempt ended (sy_result.outcome). */
typedef int32_t sy_outcome;
enum {
    SY_OUTCOME_SUCCEEDED = 0,  /* output holds a JSON object (or is NULL for
                                  an empty object) */
    SY_OUTCOME_FAILED = 1,     /* error says why; retried per policy */
    SY_OUTCOME_TIMED_OUT = 2,  /* the plugin's own limit expired */
    SY_OUTCOME_CANCELLED = 3,  /* ended because the host called cancel() */
    /* since 1.1 */
    SY_OUTCOME_DEFERRED = 4    /* not run, or stopped for a reason not the
                                  task's (the backend throttled it, its
                                  device broke): the host puts the task
                                  back Ready WITHOUT charging an attempt,
                                  and offers it again no earlier than
                                  sy_result.retry_after_ms.  error says
                                  why (recorded); output is ignored.  More
                                  than 1000 in a row fail the task, naming
                                  the plugin.  A 1.0 host fails the attempt
                                  for this unknown outcome: send it only
                                  when api->abi_minor >= 1 (or build with
                                  SY_EXECUTOR_MIN_MINOR 1) */
};

/* What the plugin hands to complete().  Plugin-owned; the host copies what
 * it needs before complete() returns, so it may live on the stack. */
typedef struct sy_result {
    /* since 1.0 */
    uint32_t size;          /* [public] sizeof(sy_result) */
    sy_outcome outcome;     /* [public] SY_OUTCOME_* */
    const char *output;     /* [public] JSON text of the task's output, or
                               NULL.  The host parses it; anything but a
                               JSON object fails the attempt */
    size_t output_len;      /* [public] length of output in bytes (no NUL
                               needed) */
    const char *error;      /* [public] why it failed, or NULL; stored and
                               shown by `switchyard status`, at most its
                               first 64 KiB (SY_RESULT_ERROR_MAX) */

    /* since 1.1 (a 1.0 host never reads them; zero means "not used") */
    int64_t retry_after_ms; /* [public] with SY_OUTCOME_DEFERRED: offer the
                               task again no sooner than this many ms after
                               complete() (a backend's Retry-After); 0: the
                               host's short backoff, growing while the task
                               keeps being deferred.  Ignored with other
                               outcomes; capped at 1 hour */
    const char *note;       /* [public] one line recorded with the attempt
                               whatever its outcome (e.g. "executed version
                               7", "GPU-5a1c... Xid 79"), shown by
                               `switchyard status`; NUL-terminated, or
                               NULL for none.  The host keeps at most its
                               first 1 KiB */

    /* since 1.2 (an older host reads only as far as its own struct goes,
     * so a plugin may always set them): what the attempt wrote, kept with
     * it (`switchyard logs`) up to the host's log_limit, head and tail */
    const char *log_stdout;    /* [public] stdout when it is not the output
                                  (a failed command), or NULL */
    size_t log_stdout_len;     /* [public] its length in bytes */
    size_t log_stdout_dropped; /* [public] bytes left out of it... */
    size_t log_stdout_cut;     /* [public] ...at this offset (0: before) */
    const char *log_stderr;    /* [public] stderr, or NULL; then the same */
    size_t log_stderr_len;
    size_t log_stderr_dropped;
    size_t log_stderr_cut;
} sy_result;

/* ---- The host's functions --------------------------------------------- */

/* Log levels for sy_host_api.log. */
typedef int32_t sy_log_level;
enum { SY_LOG_ERROR = 0, SY_LOG_WARN = 1, SY_LOG_INFO = 2, SY_LOG_DEBUG = 3 };

/* The table of functions the host lends the plugin, instead of letting it
 * link against host symbols.  Host-owned, static and read-only: valid for
 * as long as the plugin is loaded, so a plugin may keep the pointer it got
 * in create().  Every function may be called from any thread, concurrently.
 * A function added after 1.0 is called only under SY_HOST_HAS(). */
struct sy_host_api {
    /* since 1.0 */
    uint32_t size;      /* [read-only] sizeof(sy_host_api) as the host
                           compiled it */
    uint32_t abi_major; /* [read-only] the host's SY_EXECUTOR_ABI_MAJOR */
    uint32_t abi_minor; /* [read-only] the host's SY_EXECUTOR_ABI_MINOR: the
                           newest minor whose functions it has */
    uint32_t reserved;  /* [reserved] */

    /* Reports how an accepted submit ended.  Call it exactly once per
     * accepted submit, from any thread, also from inside submit() or
     * cancel(), and never after destroy() has returned.  `c` is the token
     * submit() was given; `result` is plugin-owned and copied before the
     * call returns.  Never blocks for long: the host queues the result and
     * processes it on its loop.  A NULL or unsized result fails the
     * attempt with an error that names the plugin bug.  An output_len
     * over the host's bound on contexts (max_context_bytes) fails the
     * attempt by the length alone: none of the output is read.  A second
     * call for the same token, a late one, NULL, or a value the host did
     * not hand out is refused as sy_completion says: logged once per
     * instance, counted, and without effect on any task. */
    void (*complete)(sy_completion *c, const sy_result *result);

    /* Writes one line to the host's log, tagged with the instance name.
     * `fmt` is a printf format; the text is copied.  `h` is the handle
     * create() was given, used while it is valid. */
    void (*log)(sy_host *h, sy_log_level level, const char *fmt, ...)
        SY_PRINTF(3, 4);

    /* Tells the host that capacity has freed: tasks it kept Ready after
     * SY_EBUSY or a capacity() of 0 are offered again.  Cheap, never
     * blocks, coalescing: call it every time a slot frees. */
    void (*wake)(sy_host *h);

    /* The parameter getters.  `p` is a view the host handed out, used
     * while it is valid.  Strings and views they hand out are host-owned
     * and live as long as `p`. */

    /* The type of `key` in `p` (SY_PARAM_*), or SY_PARAM_NONE when
     * absent. */
    sy_param_type (*param_type)(const sy_params *p, const char *key);

    /* Reads a string into *out.  SY_ENOENT when absent, SY_ETYPE when not a
     * string. */
    int (*param_string)(const sy_params *p, const char *key,
                        const char **out);

    /* Read an integer (a float is not one), a float (an integer
     * converts), a boolean.  SY_ENOENT, SY_ETYPE. */
    int (*param_int)(const sy_params *p, const char *key, int64_t *out);
    int (*param_float)(const sy_params *p, const char *key, double *out);
    int (*param_bool)(const sy_params *p, const char *key, int *out);

    /* Reads a duration ("250ms", "5s", "1.5m", "2h", "1d", or integer
     * milliseconds) as milliseconds.  SY_ENOENT, SY_ETYPE, SY_EINVAL for a
     * malformed string. */
    int (*param_duration_ms)(const sy_params *p, const char *key,
                             int64_t *out);

    /* The number of elements of the array `key`.  SY_ENOENT, SY_ETYPE. */
    int (*param_array_len)(const sy_params *p, const char *key, size_t *out);

    /* Reads element `index` of the array `key` as a string.  SY_ENOENT,
     * SY_ETYPE (array or element), SY_ERANGE. */
    int (*param_array_string)(const sy_params *p, const char *key,
                              size_t index, const char **out);

    int (*param_array_int)(const sy_params *p, const char *key, size_t index,
                           int64_t *out); /* ... as an integer */

    /* A view of the group `key` inside `p`.  SY_ENOENT, SY_ETYPE. */
    int (*param_group)(const sy_params *p, const char *key,
                       const sy_params **out);

    /* The number of keys in `p`, and the name of key number `index`
     * (0-based, file order; NULL when out of range), for free-form groups
     * such as a command's `env = { ... }`. */
    size_t (*param_count)(const sy_params *p);
    const char *(*param_name)(const sy_params *p, size_t index);

    /* The whole view as compact JSON text.  The string is allocated by the
     * host and owned by the caller, who frees it with free_string() (not
     * free(): the host may use another allocator).  NULL when out of
     * memory.  For plugins that forward parameters verbatim. */
    char *(*param_json)(const sy_params *p);

    /* Frees a string the host allocated for the plugin (param_json). */
    void (*free_string)(char *s);

    /* since 1.2 */

    /* Records that the attempt of `c` runs process group `pgid`, whose
     * leader started at `start_time` (clock ticks after boot, field 22 of
     * /proc/PID/stat, as switchyard/process.h reads it; 0 unknown).  Once
     * per group, right after its start, from the thread that started it
     * (never inside submit() or cancel()), before complete(c).  Blocks
     * until the record is durable: a host that dies from then on leaves
     * it to the next host on this machine, which kills the group before
     * the retry.  SY_OK: recorded.  SY_ENOTSUP: not recorded, go on.
     * SY_ESTATE: the attempt is over (timed out, cancelled, taken over):
     * kill the group, complete() as cancelled.  Other errors (SY_EIO,
     * SY_EINVAL): kill it and fail the attempt. */
    int (*attempt_process)(sy_completion *c, int64_t pgid, uint64_t start_time);

    /* since 1.3 */

    /* attempt_process without the wait.  SY_OK: asked, and answer(arg,
     * status) is called once, from a host thread (maybe before this
     * returns), with what attempt_process would have returned; it must
     * only hand the status over, never block.  Any other return: not
     * asked, never answered.  The command may run meanwhile, but complete(c)
     * must wait for the answer (the record is written before the attempt's
     * end); a refusal stops the group as for attempt_process.  Thread rules
     * as attempt_process; `arg` is the plugin's, never read by the host. */
    int (*attempt_process_async)(sy_completion *c, int64_t pgid, uint64_t start_time,
                                 void (*answer)(void *arg, int status), void *arg);

    /* since 1.5 */

    /* Emits the named event `name` (docs/events.md: letters, digits and
     * `. _ - : /`, at most 200 bytes) with the payload `data`, a JSON
     * object's text of `data_len` bytes (no NUL needed; NULL: {}), and
     * `key` (NULL: none; an event of the same name and key recorded in the
     * last 24 hours stands for this one and nothing new is stored).  `h`
     * is the handle create() was given.  Blocks until the event is
     * committed to the host's store: SY_OK means it is durable and the
     * workflows' triggers on `name` will see it; *event_id (when not NULL)
     * is its id, or the earlier one's.  Strings are plugin-owned and read
     * only during the call.  Thread: any thread of the plugin's own,
     * concurrently; never inside a call the host makes (submit(),
     * cancel(), ...), where it returns SY_ESTATE at once.  Errors, with
     * one line in err and nothing recorded: SY_EINVAL (a bad name, key or
     * payload), SY_ERANGE (a payload over max_context_bytes), SY_ESTATE
     * (the host runs no workflows now: starting, stopping, or a call from
     * inside a host call), SY_EIO (the store failed). */
    int (*emit_event)(sy_host *h, const char *name, const char *key, const char *data,
                      size_t data_len, int64_t *event_id, char *err, size_t err_len);

    /* since 1.6 */

    /* Reports how far an accepted submit has come, for `switchyard
     * status`.  Any thread, between submit() and complete() of `c`. */
    void (*progress)(sy_completion *c, int64_t done, int64_t total);
};

/* ---- Metrics ---------------------------------------------------------- */

/* Where metrics() writes its figures: call emit(sink, name, value) on the
 * thread that called metrics(), only during that call.  `sink` is
 * host-owned; `name` is plugin-owned and copied.  Names are lowercase
 * words joined by `_` and `.`; the conventional ones every plugin should
 * report are:
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

/* ---- The descriptor --------------------------------------------------- */

/* Returned by capacity() when the instance takes any number of submits. */
#define SY_CAPACITY_UNLIMITED INT64_MAX

/* Fills the ABI header of a descriptor, at the start of its initializer:
 * size, the layout this header describes (how the host knows which fields
 * the plugin has); abi_minor, the lowest host minor the plugin needs
 * (SY_EXECUTOR_MIN_MINOR), not this header's.  Fields it does not name,
 * `reserved` and those of later minors, are zero: "not used". */
#define SY_EXECUTOR_V1                                                        \
    .size = sizeof(sy_executor), .abi_major = SY_EXECUTOR_ABI_MAJOR,          \
    .abi_minor = SY_EXECUTOR_MIN_MINOR

/* What a plugin is: returned by sy_executor_entry().  Plugin-owned static
 * data, valid and unchanged while the plugin is loaded; the host only
 * reads it, and only the fields `size` covers.  Every string is UTF-8.
 * The first three fields are the same in every major version. */
typedef struct sy_executor {
    /* since 1.0: the ABI header, set by SY_EXECUTOR_V1 */
    uint32_t size;            /* [public] sizeof(sy_executor) of the header
                                 the plugin was built with */
    uint32_t abi_major;       /* [public] SY_EXECUTOR_ABI_MAJOR */
    uint32_t abi_minor;       /* [public] the lowest host minor the plugin
                                 needs (SY_EXECUTOR_MIN_MINOR) */
    uint32_t reserved;        /* [reserved] */

    /* since 1.0: identity and declarations */
    const char *name;         /* [public] the plugin's name, unique in a
                                 host: what `plugin = "..."` names.
                                 Letters, digits, `_` and `-`; not the file
                                 name */
    const char *version;      /* [public] the plugin's own version, free
                                 text, one line */
    const char *description;  /* [public] one line for `switchyard
                                 plugins`; may be NULL */

    /* [public] Settings an instance understands (keys of its group in
     * switchyard.cfg besides `plugin`), a NULL-terminated array, or NULL to
     * let create() judge every key itself. */
    const sy_param_spec *const *instance_params;

    /* [public] Parameters a task routed here understands, a NULL-terminated
     * array, or NULL to accept any key (validate() may still judge them). */
    const sy_param_spec *const *task_params;

    /* since 1.0: the functions */

    /* Required.  Makes an instance from its settings.  Thread: one host
     * thread, with no other call on this instance; may block (it is not on
     * the dispatch path).  `api` is host-owned and static; `host` lives
     * until destroy() returns; `config` only during this call (copy what
     * you keep).  On success stores the plugin-owned instance in *out and
     * returns SY_OK; on failure writes one line to err and returns a
     * negative status, having freed everything it allocated and stopped
     * every thread it started. */
    int (*create)(const sy_host_api *api, sy_host *host,
                  const sy_params *config, sy_instance **out, char *err,
                  size_t err_len);

    /* Required.  Frees the instance.  Thread: one host thread, with no other
     * call on this instance in flight.  The host calls it only after every
     * accepted submit has completed (it cancels what is left and waits for
     * the completions first), so no complete() may follow.  After it
     * returns the plugin has no thread left running for this instance and
     * keeps no pointer the host gave it for this instance. */
    void (*destroy)(sy_instance *inst);

    /* Required.  How many more submits the instance would accept now: 0 for
     * none, SY_CAPACITY_UNLIMITED for no limit.  Any host thread,
     * concurrently; must not block.  An honest answer: a submit right after
     * a positive answer, with no other in between, is accepted. */
    int64_t (*capacity)(sy_instance *inst);

    /* Required.  Starts one attempt and returns without waiting for it.
     * Thread: any host thread, concurrently with every call but create()
     * and destroy(); must not block (no network round trip, no waiting for
     * a worker, no unbounded lock hold).  `task` is host-owned (see
     * sy_task); `c` is the attempt's token; `err` is host-owned.
     * SY_OK: accepted; the plugin will call complete(c, ...) exactly once.
     * SY_EBUSY: not accepted for lack of capacity; the host calls again
     * after wake().  Any other negative status: not accepted; the host
     * fails the attempt with err's text.  After a non-OK return the plugin
     * must not call complete(c) nor keep `task` or `c`. */
    int (*submit)(sy_instance *inst, const sy_task *task, sy_completion *c,
                  char *err, size_t err_len);

    /* Required.  Asks the plugin to stop the attempt of `c` (a timeout, a
     * cancelled run, a draining host).  Thread: any host thread,
     * concurrently, also while the plugin is completing `c` on another
     * thread; must not block.  The plugin still calls complete() exactly
     * once for it, as soon as it can (also from inside cancel()), normally
     * with SY_OUTCOME_CANCELLED.  Returns SY_ENOENT when `c` already
     * completed (cancel raced with completion; nothing to do). */
    int (*cancel)(sy_instance *inst, sy_completion *c);

    /* Optional (NULL: the declarations in task_params suffice).  Judges a
     * task's parameters at load time, so a misrouted or misspelt task is a
     * config error, not a 3 a.m. failure.  Thread: one host thread, with no
     * other call on this instance in flight; may block briefly (it may open
     * a library to check a symbol).  `task_params` and `base_dir` (the
     * directory of the workflow file, for relative paths) are host-owned
     * and valid during the call.  SY_OK, or a negative status with one line
     * in err. */
    int (*validate)(sy_instance *inst, const sy_params *task_params,
                    const char *base_dir, char *err, size_t err_len);

    /* Optional.  Reports the instance's figures through emit(sink, ...);
     * any host thread, concurrently; must not block. */
    void (*metrics)(sy_instance *inst, sy_metric_fn emit, void *sink);

    /* since 1.4 */

    /* Optional (NULL: such attempts are abandoned and retried, as
     * before).  Takes over attempt task->attempt, started on an instance
     * of this name by a host that then stopped or lost the run's lease,
     * so that work running elsewhere (a cluster's job) goes on instead of
     * running twice: the plugin finds it by run_id, task_id and attempt
     * and follows it, or starts it, keyed so, when none exists.
     * task->timeout_ms is what is left of the timeout.  Otherwise as
     * submit() (threads, no blocking, complete(c) exactly once after
     * SY_OK); any other status: the host abandons the attempt and retries
     * the task, recording err.  Never called in a cancelled run, nor for
     * the attempt in whose call the host died. */
    int (*resume)(sy_instance *inst, const sy_task *task, sy_completion *c,
                  char *err, size_t err_len);

    /* since 1.6 */

    /* Optional.  Asks the instance to stop taking new work and finish what
     * it has (a host about to restart).  Thread: any host thread; must not
     * block. */
    void (*drain)(sy_instance *inst);
} sy_executor;

/* The one symbol a plugin exports: returns its static descriptor, or NULL
 * to refuse to load (the host says so).  Thread: the host's loading thread,
 * once per load, before any other call; it must not call into the host. */
SY_EXPORT const sy_executor *sy_executor_entry(void);

typedef const sy_executor *(*sy_executor_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_EXECUTOR_H */
