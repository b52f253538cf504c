/*
 * workflow.h -- workflow definitions: read from libconfig files, validated
 * with FILE:LINE, turned into a canonical JSON definition with a SHA-256
 * content hash (so a run keeps the definition it started with), and read
 * back from that JSON.
 *
 * A loaded sy_workflow is immutable: any thread may read it.
 */
#ifndef SY_WORKFLOW_H
#define SY_WORKFLOW_H

#include <jansson.h>
#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/diagnostics.h"
#include "config/flow.h"

typedef enum sy_trigger {
    SY_TRIGGER_ALL_SUCCESS = 0, /* default: every dependency Completed */
    SY_TRIGGER_ALL_DONE,        /* every dependency terminal, any outcome */
    SY_TRIGGER_ALL_FAILED,      /* every dependency Failed */
    SY_TRIGGER_ONE_SUCCESS,     /* at least one Completed */
    SY_TRIGGER_ONE_FAILED,      /* at least one Failed */
    SY_TRIGGER_NONE_FAILED,     /* none Failed (Completed or Skipped) */
    SY_TRIGGER_ALWAYS           /* runs whatever happened */
} sy_trigger;

/* "all_success", ... ; -1 when unknown. */
const char *sy_trigger_name(sy_trigger t);
int sy_trigger_parse(const char *name);

typedef enum sy_cond_op {
    SY_COND_EXISTS = 0,   /* value: JSON true (must exist) or false (must not) */
    SY_COND_EQUALS,       /* JSON equality */
    SY_COND_NOT_EQUALS,
    SY_COND_GREATER_THAN, /* numbers; strings compare bytewise */
    SY_COND_LESS_THAN,
    SY_COND_CONTAINS      /* substring of a string, element of an array, key
                             of an object */
} sy_cond_op;

/* One `when` condition on the task's input context. */
typedef struct sy_cond {
    char *path;     /* owned: dotted path into the context, "a.b.0.c"; a
                       leading "$." is accepted and dropped */
    sy_cond_op op;
    json_t *value;  /* owned reference: the operand */
} sy_cond;

/* Whether every condition holds on `context` (a JSON object).  Pure. */
bool sy_conds_hold(const sy_cond *conds, size_t n, const json_t *context);

/* The name of an operator as written in files ("equals", ...). */
const char *sy_cond_op_name(sy_cond_op op);

/* Looks `path` up in `context`; NULL when absent.  Borrowed reference. */
const json_t *sy_json_path(const json_t *context, const char *path);

#define SY_RETRY_ON_FAILED 0x1u
#define SY_RETRY_ON_TIMEOUT 0x2u

typedef struct sy_retry {
    uint32_t attempts;     /* total attempts including the first; >= 1 */
    int64_t delay_ms;      /* before the first retry */
    double backoff;        /* factor applied per further retry; >= 1 */
    int64_t max_delay_ms;  /* cap; 0 for none */
    bool jitter;           /* uniform in [delay/2, delay] */
    unsigned retry_on;     /* SY_RETRY_ON_* (default both) */
} sy_retry;

/* The delay before attempt number `next_attempt` (2 for the first retry).
 * `rnd` is a uniform number in [0,1), used only with jitter.  Pure. */
int64_t sy_retry_delay_ms(const sy_retry *r, uint32_t next_attempt, double rnd);

/* Flow control (docs/flow-control.md): what a task needs besides an
 * executor's capacity before it may start, and its place in the order. */
#define SY_PRIORITY_MIN (-1000000)
#define SY_PRIORITY_MAX 1000000
#define SY_LIMIT_MAX 1000000       /* a key's slots, a pool's size */
#define SY_LIMIT_KEY_MAX 256       /* bytes of a key's template */
#define SY_LIMITS_PER_TASK 16

/* What a task does when a key it names has no free slot. */
typedef enum sy_limit_strategy {
    SY_LIMIT_QUEUE = 0,         /* waits (state Waiting) for a slot: the
                                   default */
    SY_LIMIT_CANCEL_NEWEST,     /* "cancel_newest": the task that finds the
                                   key full ends, the holders go on */
    SY_LIMIT_CANCEL_IN_PROGRESS,/* "cancel_in_progress": the holder that
                                   started first is cancelled and the new
                                   task takes its slot */
    SY_LIMIT_DROP               /* "drop": the task ends, with why, in a
                                   state of its own */
} sy_limit_strategy;

/* "queue", ...; -1 when unknown. */
const char *sy_limit_strategy_name(sy_limit_strategy s);
int sy_limit_strategy_parse(const char *name);

/* One concurrency limit: at most `limit` tasks hold the key at once. */
typedef struct sy_limit {
    char *key;                   /* owned: the key's template, text with
                                    {path} (a dotted path into the run's
                                    context) and {@tenant}, {@workflow},
                                    {@task} (the task's namespace) */
    uint32_t limit;              /* 1..SY_LIMIT_MAX */
    sy_limit_strategy strategy;
} sy_limit;

/* One rate limit: a token bucket per rendered key, `rate` tokens per
 * `interval_ms`, holding at most `burst`; a start takes one token.  Or
 * one that names a rate limit of switchyard.cfg (config/flow.h), whose
 * rate, interval and burst apply, read at each take. */
typedef struct sy_rate_limit {
    char *key;                   /* owned: the key's template, as a
                                    limit's (sy_limit_key_problem); NULL
                                    for a named one without a key (one
                                    bucket, "rate:@NAME") */
    uint32_t rate;               /* tokens per interval: 1..SY_LIMIT_MAX;
                                    0 for a named one */
    int64_t interval_ms;         /* 1..SY_RATE_INTERVAL_MAX_MS; 0 named */
    uint32_t burst;              /* 1..SY_LIMIT_MAX; `rate` unless set; 0
                                    named */
    char *name;                  /* owned: the rate limit of switchyard.cfg
                                    it names (buckets "rate:@NAME" and
                                    "rate:@NAME:KEY"); NULL: its own */
    int line;                    /* where it was written; 0 when read
                                    from JSON */
} sy_rate_limit;

/* A task's limits and pool: the task's own, else its workflow's. */
typedef struct sy_flow {
    sy_limit *limits;    /* owned; n_limits of them, keys distinct */
    size_t n_limits;
    sy_rate_limit *rates;/* owned; n_rates of them (`rate_limits`), keys
                            distinct; a task's own replace its workflow's */
    size_t n_rates;
    char *pool;          /* owned: a pool of switchyard.cfg; NULL for none */
    uint32_t pool_slots; /* the pool's slots the task takes (1..SY_LIMIT_MAX;
                            1 unless set); 0 without a pool */
    int pool_line;       /* where `pool` was written (the task's or the
                            workflow's); 0 when read from JSON */
} sy_flow;

/* NULL when `tmpl` is a usable key template, else why not (static text):
 * empty, longer than SY_LIMIT_KEY_MAX, not UTF-8, a brace not closed or
 * not opened, an empty `{}`, a path with an empty segment, or an unknown
 * {@name}. */
const char *sy_limit_key_problem(const char *tmpl);

void sy_flow_free(sy_flow *f);

/* A task's cache (docs/caching-and-backfill.md): an attempt whose key,
 * the template filled in from its input, matches one of a completed
 * attempt of the same task within `lifetime_ms` completes with that
 * attempt's output instead of running. */
typedef struct sy_task_cache {
    char *key;           /* owned: the key's template, as a limit's
                            (sy_limit_key_problem, sy_limit_key_render) */
    int64_t lifetime_ms; /* > 0 */
} sy_task_cache;

typedef struct sy_task_def {
    char *id;           /* owned: the task's id */
    char *ns;           /* owned: tenant::workflow::id */
    size_t *deps;       /* indices of the `after` tasks: owned, or in the
                           workflow's edges */
    size_t n_deps;
    size_t *children;   /* indices of the tasks that depend on it: owned,
                           or in the workflow's edges */
    size_t n_children;
    sy_trigger trigger;
    int32_t priority;   /* SY_PRIORITY_MIN..MAX, higher starts first: the
                           task's `priority`, else its workflow's, else 0 */
    sy_flow *flow;      /* owned: its limits and pool; NULL for none */
    sy_task_cache *cache; /* owned: its cache; NULL for none */
    sy_cond *when;      /* owned */
    size_t n_when;
    sy_retry retry;     /* the task's, over the workflow's, over defaults */
    int64_t timeout_ms; /* per attempt; 0 for none */
    json_t *params;     /* owned: every key that is not a workflow key,
                           untouched, for the executor */
    /* Dynamic fan-out (workflow/map.c): one element per item of the
     * array at `map` in the task's input context, or per integer of
     * [range_from, range_to); at most max_map of them. */
    bool mapped;
    char *map;          /* owned: dotted path into the input; NULL for a
                           range or an unmapped task */
    int64_t range_from, range_to;
    int64_t max_map;    /* 0 when not mapped */
    int line;           /* where it was written; 0 when read from JSON */
} sy_task_def;

/* What a host that starts after missing ticks of a schedule fires. */
typedef enum sy_catchup {
    SY_CATCHUP_NONE = 0, /* nothing: the next tick to come (the default) */
    SY_CATCHUP_LATEST,   /* the latest tick missed, once */
    SY_CATCHUP_ALL       /* every tick missed, up to catchup_max (the latest) */
} sy_catchup;

/* "none", "latest", "all"; -1 when unknown. */
const char *sy_catchup_name(sy_catchup c);
int sy_catchup_parse(const char *name);

#define SY_CATCHUP_MAX_DEFAULT 100u
#define SY_CATCHUP_MAX_LIMIT 100000u

typedef struct sy_workflow {
    char *name;          /* owned: may hold "::" */
    char *tenant;        /* owned: default "public" */
    char *description;   /* owned; may be NULL */
    char *schedule;      /* owned cron text; may be NULL */
    char *timezone;      /* owned: the zone `schedule` is read in ("Europe/
                            Berlin"); NULL: UTC */
    sy_catchup catchup;  /* with a schedule: missed ticks on start */
    uint32_t catchup_max; /* bound on SY_CATCHUP_ALL's ticks */
    char *file;          /* owned: the file it came from; NULL from JSON */
    char *base_dir;      /* owned: the file's directory (kept in JSON) */
    sy_task_def *tasks;  /* owned, in file order */
    size_t n_tasks;
    size_t *topo;        /* owned: task indices in a topological order
                            (stable: file order among equals) */
    char *definition;    /* owned: canonical JSON text (sorted keys); NULL
                            for a workflow read from the parse cache, which
                            keeps only its hash: sy_workflow_definition() */
    char hash[65];       /* lowercase hex SHA-256 of the definition */
    struct sy_start_trigger *triggers; /* owned: what starts a run of it by
                            itself (workflow/start_trigger.h); NULL */
    size_t n_triggers;
    size_t *edges;       /* owned: every task's deps and children in one
                            block, when the graph laid them out (a million
                            tasks' two million allocations); NULL when
                            each task owns its own */
} sy_workflow;

/* Keys of a task entry that belong to Switchyard; every other key is an
 * executor parameter.  NULL-terminated. */
extern const char *const sy_workflow_task_keys[];

/* Called for each task while its libconfig setting is alive, so the routed
 * plugin's declarations and validate() can report with FILE:LINE.  Returns
 * the number of errors it added.  For a workflow read from the parse cache
 * `setting` is NULL (the parameters are in task->params): then any problem
 * found, error or warning, sends the loader back to the file, whose full
 * parse reports it with its own line. */
typedef int (*sy_task_check_fn)(void *arg, const sy_workflow *wf,
                                const sy_task_def *task,
                                const config_setting_t *setting,
                                sy_diags *d);

/* Reads and validates a workflow file.  Errors with FILE:LINE: parse
 * errors, unknown keys, a missing or invalid name/id, duplicate task ids,
 * `after` naming an unknown task (or itself), a cycle (printed
 * "a -> b -> c -> a"), bad durations, bad trigger names, bad `when`
 * conditions, bad retry values; then `check` (may be NULL) per task.
 * Returns the number of errors; *out is set only when there are none. */
int sy_workflow_load_file(const char *path, sy_task_check_fn check,
                          void *arg, sy_workflow **out, sy_diags *d);

/* The canonical definition of wf: wf->definition, or (for a workflow
 * from the parse cache) the text written now into *built, which the caller
 * frees (*built is NULL otherwise).  `hash` gets the text's SHA-256: the
 * one to store it under.  NULL when out of memory. */
const char *sy_workflow_definition(const sy_workflow *wf, char **built, char hash[65]);

/* Rebuilds a workflow from its canonical definition (as stored with a
 * run).  NULL with a reason in err on malformed input. */
sy_workflow *sy_workflow_from_json(const char *definition, char *err,
                                   size_t err_len);

void sy_workflow_free(sy_workflow *wf);

/* The task called `id`, or -1. */
long sy_workflow_task_index(const sy_workflow *wf, const char *id);

/* The default of `max_map` (workflow and task key), and the largest
 * allowed. */
#define SY_MAP_DEFAULT_MAX 10000
#define SY_MAP_LIMIT 100000000

/* How many elements mapped task `d` has with input context `ctx`: sets
 * *n and, for a `map` over a list, *list (borrowed from ctx).  False with
 * a one-line reason (naming the task; over max_map: the count and the
 * limit) when the key is missing or not an array, or too long. */
bool sy_map_size(const sy_task_def *d, const json_t *ctx, const json_t **list,
                 int64_t *n, char *err, size_t err_len);

/* The item of element k (a new reference): the list's k-th entry, or the
 * integer range_from + k. */
json_t *sy_map_item(const sy_task_def *d, const json_t *list, int64_t k);

/* The most bytes of a key once its template is filled in. */
#define SY_LIMIT_RENDERED_MAX 1024

/* Fills in template `tmpl` (valid: sy_limit_key_problem) for task t of wf
 * with the run's context `ctx`: a {path} by the value there (a string as
 * it is, a number or boolean as JSON writes it), {@tenant}, {@workflow},
 * {@task} by the task's namespace.  A new string, or NULL with a one-line
 * reason in err (naming the key and the path): a path absent from the
 * context, a value that is null, an object or an array, a key longer than
 * SY_LIMIT_RENDERED_MAX. */
char *sy_limit_key_render(const char *tmpl, const json_t *ctx, const sy_workflow *wf,
                          const sy_task_def *t, char *err, size_t err_len);

/* Reads every `*.cfg` of `dir` (name order) into `out` (appending,
 * growing *n); a missing directory is a warning.  Two workflows with the
 * same tenant and name are an error naming both files.  Returns the number
 * of errors. */
int sy_workflow_load_dir(const char *dir, sy_task_check_fn check, void *arg,
                         sy_workflow ***out, size_t *n, sy_diags *d);

/* The same, with the parse cache in `cache_dir` (NULL or "": none): a file
 * of 64 KiB or more whose exact bytes were loaded before without a
 * diagnostic is read back from its entry instead of parsed (the checks
 * still run on it); one loaded now without a diagnostic gets an entry.
 * A stale, cut short or corrupt entry is a miss and is rewritten. */
int sy_workflow_load_dir_cached(const char *dir, const char *cache_dir,
                                sy_task_check_fn check, void *arg,
                                sy_workflow ***out, size_t *n, sy_diags *d);

#endif
