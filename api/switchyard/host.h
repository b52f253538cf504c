/*
 * switchyard/host.h -- the host's functions lent to a plugin (sy_host_api),
 * a part of the executor ABI (version 1.5) kept in a header of its own.
 *
 * <switchyard/executor.h> includes this header, and this header includes
 * it: a plugin includes either, and gets the whole ABI.  Every rule of
 * executor.h holds here: fields are only appended, each group marked with
 * the minor that added it, and a function added after 1.0 is called only
 * under SY_HOST_HAS().
 */
#ifndef SWITCHYARD_HOST_H
#define SWITCHYARD_HOST_H

#include <switchyard/executor.h>

#ifdef __cplusplus
extern "C" {
#endif

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
};

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_HOST_H */
