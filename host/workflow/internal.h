/*
 * workflow/internal.h -- what the pieces of the workflow module share.
 * Other modules use workflow.h only.
 *
 * The files, from the bottom up; each calls only files above it in this
 * list (and trigger.c, state.c), never one below:
 *   names.c             names, tenants, task ids; text jansson will hold
 *   cron.c              `schedule` expressions, catch-up names
 *   cron_next.c         when a schedule fires next (workflow/cron.h)
 *   settings.c          libconfig durations, unknown keys, strings
 *   graph.c             dependencies, order, cycles
 *   retry.c             `retry` groups, delays before a retry
 *   condition.c         `when` conditions: reading, JSON paths, evaluating
 *   map.c               `map`, `map_range`, `max_map`; a map's size, items
 *   key_template.c      key templates: checked, read; flow control's integers
 *   rate.c              `rate_limits`: reading, JSON
 *   flow.c              `priority`, `limits`, `pool`: reading, JSON, keys
 *   task_cache.c        a task's `cache`: reading, JSON
 *   model.c             freeing a workflow, finding a task
 *   definition_write.c  the canonical definition and its hash
 *   definition_read.c   a canonical definition read back
 *   parse_task.c        a file's `tasks` list, each task's keys
 *   cache_write.c       the parse cache's entry for a loaded workflow
 *   cache_read.c        an entry read back, checked as strictly as a file
 *   cache_file.c        entries on disk: keys, slots, atomic replacement
 *   workflow.c          a file's workflow keys, whole files, directories
 *
 * Loading is single-threaded; every function that takes a sy_diags adds
 * its errors there with the setting's FILE:LINE (or no file and line 0
 * when the input is JSON) and returns how many it added.
 */
#ifndef SY_WORKFLOW_INT_H
#define SY_WORKFLOW_INT_H

#include <jansson.h>
#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/diagnostics.h"
#include "workflow/workflow.h"

#define SY_RETRY_MAX_ATTEMPTS 1000u

#define SY_SRC_FILE(s) config_setting_source_file(s)
#define SY_SRC_LINE(s) ((int)config_setting_source_line(s))

/* --- names.c ------------------------------------------------------------ */

/* Whether `name` is one segment of [A-Za-z0-9_.-]+, or with `multi`,
 * several joined by "::"; each segment at most SY_WF_SEGMENT_MAX
 * characters (the router's SY_NS_SEGMENT_MAX), at most
 * SY_WF_NAME_SEGMENTS_MAX segments.  sy_wf_name_problem() says why not
 * (static text), or NULL. */
#define SY_WF_SEGMENT_MAX 255
#define SY_WF_NAME_SEGMENTS_MAX 16
bool sy_wf_name_valid(const char *name, bool multi);
const char *sy_wf_name_problem(const char *name, bool multi);

/* `s` quoted for a one-line message: bytes outside printable ASCII as
 * \xNN, cut after 60 characters with "...".  Returns buf. */
const char *sy_wf_quote(const char *s, char *buf, size_t len);

/* Whether jansson will hold `s` as a JSON string (valid UTF-8). */
bool sy_wf_utf8_valid(const char *s);

/* --- cron.c ------------------------------------------------------------- */

/* NULL when `expr` is a valid five-field cron expression, else the reason
 * written into buf. */
const char *sy_cron_problem(const char *expr, char *buf, size_t len);

/* --- settings.c --------------------------------------------------------- */

/* Reads a duration setting (string such as "5s", or integer ms >= 0). */
int sy_setting_duration(const config_setting_t *s, int64_t *ms, sy_diags *d);

/* Reports every member of group `g` not in `keys` (NULL-terminated),
 * naming `where` ("workflow", "retry") and the known keys. */
int sy_setting_check_keys(const config_setting_t *g, const char *const *keys,
                          const char *where, sy_diags *d);

/* A string member of group `g`, or NULL: absent, or reported as `what`
 * ("'schedule'") when of another type or not UTF-8. */
const char *sy_setting_string(const config_setting_t *g, const char *key,
                              const char *what, sy_diags *d);

/* --- graph.c ------------------------------------------------------------ */

/* One name in a task's `after`, as written. */
typedef struct sy_wf_ref {
    const char *id;  /* borrowed from the parsed file (or definition), which
                        outlives the list */
    int line;  /* where; 0 when unknown */
} sy_wf_ref;

/* A task's `after` list before it is resolved into indices. */
typedef struct sy_wf_after {
    sy_wf_ref *v; /* owned */
    size_t n;
    int line;     /* the `after` setting's line (the task's when absent) */
} sy_wf_after;

void sy_wf_after_free(sy_wf_after *a, size_t n_tasks);

/* "task 'load'", or "task 3" (1-based) while it has no valid id. */
const char *sy_wf_task_label(const sy_task_def *t, size_t i, char *buf, size_t len);

/* Checks the task ids (duplicates), resolves `after[i]` into
 * wf->tasks[i].deps (unknown ids, itself, twice), fills children and topo,
 * and reports one cycle ("cycle: a -> b -> c -> a").  Tasks whose id is
 * NULL were already reported and are never matched.  `file` may be NULL. */
int sy_wf_graph(sy_workflow *wf, const sy_wf_after *after, const char *file,
                sy_diags *d);

/* --- retry.c ------------------------------------------------------------ */

/* attempts 1, delay 1s, backoff 2.0, no cap, no jitter, retry_on both. */
extern const sy_retry sy_retry_default;

/* SY_RETRY_ON_* for "failed" / "timeout"; 0 when unknown. */
unsigned sy_retry_on_parse(const char *word);
const char *sy_retry_on_name(unsigned bit);

/* Reads a `retry` group over *r, field by field. */
int sy_retry_read(const config_setting_t *g, sy_retry *r, sy_diags *d);

/* --- condition.c -------------------------------------------------------- */

int sy_cond_op_parse(const char *name);     /* -1 when unknown */

/* NULL when `path` is usable in a condition, else why not (static text). */
const char *sy_cond_path_problem(const char *path);

/* NULL when `value` suits `op`, else why not (static text). */
const char *sy_cond_value_problem(sy_cond_op op, const json_t *value);

/* Reads a `when` list into a new array (*out, *n; both untouched when the
 * list is empty).  Bad entries are reported and left out. */
int sy_when_read(const config_setting_t *s, sy_cond **out, size_t *n,
                 sy_diags *d);

void sy_conds_free(sy_cond *c, size_t n);

/* --- map.c -------------------------------------------------------------- */

/* A `max_map` setting into *max (1..SY_MAP_LIMIT). */
int sy_map_max_read(const config_setting_t *s, int64_t *max, const char *who,
                    sy_diags *d);

/* A task's `map`, `map_range` and `max_map` keys into t (its max_map
 * defaulting to `wf_max`, the workflow's). */
int sy_map_read(const config_setting_t *g, sy_task_def *t, int64_t wf_max,
                const char *who, sy_diags *d);

/* --- key_template.c: key templates and flow control's integers, shared
 * with flow.c, rate.c and task_cache.c ----------------------------------- */

/* An integer setting in [lo, hi] into *out; an error naming `what` when
 * it is not one (who: the group, in the message). */
int sy_flow_read_int(const config_setting_t *s, long long lo, long long hi, long long *out,
                     const char *who, const char *what, sy_diags *d);

/* The `key` member of group `g` (a limit, a cache) into *out (borrowed
 * from the setting) when it is a usable template (sy_limit_key_problem);
 * else one error naming `where`, with `example` as a key to write. */
int sy_limit_key_read(const config_setting_t *g, const char *where, const char *example,
                      const char **out, sy_diags *d);

/* --- task_cache.c ------------------------------------------------------- */

void sy_task_cache_free(sy_task_cache *c);

/* A task's `cache` group `s` into *out (left alone on errors); the
 * errors it found, naming `who`. */
int sy_task_cache_read(const config_setting_t *s, sy_task_cache **out, const char *who,
                       sy_diags *d);

/* {"key": TEMPLATE, "lifetime_ms": N}; NULL when out of memory. */
json_t *sy_task_cache_json(const sy_task_cache *c);

/* The reverse, as strictly as a file is read: NULL with why in err. */
sy_task_cache *sy_task_cache_from_json(const json_t *o, char *err, size_t err_len);

/* --- flow.c ------------------------------------------------------------- */

/* A new copy of f (NULL for NULL). */
sy_flow *sy_flow_copy(const sy_flow *f);

/* Reads `priority`, `limits`, `pool` and `pool_slots` of group `g` (a
 * workflow, `base` NULL, or a task, `base` its workflow's): *priority is
 * set only when `priority` is; *out gets what the group's limits and pool
 * make over `base` (its own `limits` replace base's, its `pool` base's
 * pool), NULL when none.  `who` names the group in messages. */
int sy_flow_read(const config_setting_t *g, const sy_flow *base, int32_t *priority,
                 sy_flow **out, const char *who, sy_diags *d);

/* f in the canonical definition's form, {"limits": [{"key", "limit",
 * "strategy"}...], "pool", "pool_slots"} (members with nothing left out);
 * NULL when out of memory. */
json_t *sy_flow_json(const sy_flow *f);

/* That form read back; NULL with why in err when malformed (the same
 * rules as a file). */
sy_flow *sy_flow_from_json(const json_t *o, char *err, size_t err_len);

/* --- rate.c: a flow's `rate_limits` -------------------------------------- */

void sy_flow_rates_free(sy_flow *f);

/* dst's rate limits become copies of src's (dst has none). */
void sy_flow_rates_copy(sy_flow *dst, const sy_flow *src);

/* `rate_limits` setting `s` into f (replacing what f had); the errors it
 * found, naming `who`. */
int sy_flow_rates_read(const config_setting_t *s, sy_flow *f, const char *who, sy_diags *d);

/* Adds "rate_limits": [{"key", "rate", "interval_ms", "burst"}...] to o
 * when f has any; non-zero when out of memory. */
int sy_flow_rates_json(const sy_flow *f, json_t *o);

/* The array `a` of that form into f; false with why in err when
 * malformed (the same rules as a file). */
bool sy_flow_rates_from_json(const json_t *a, sy_flow *f, char *err, size_t err_len);

/* --- definition_write.c ------------------------------------------------- */

/* Bumped when the layout changes, so an old host refuses a newer one; a
 * host reads every version up to its own (2 left out a task's members
 * that hold their defaults; 1 wrote them all). */
#define SY_DEFINITION_VERSION 2

/* The canonical text of wf as it would be sealed, and its hash; NULL when
 * out of memory.  For a workflow read from the parse cache, which keeps no
 * text (sy_workflow_definition_text). */
char *sy_wf_definition_build(const sy_workflow *wf, char hash[65]);

/* Writes wf->definition (canonical JSON) and wf->hash.  0, or -1 when out
 * of memory or when a value cannot be held in JSON (both left unset). */
int sy_workflow_seal(sy_workflow *wf);

/* `when` in the canonical definition's form into t->when; false when any
 * entry is malformed. */
bool sy_wf_when_from_json(const json_t *a, sy_task_def *t);

/* --- parse_task.c ------------------------------------------------------- */

/* One workflow file being read: what workflow.c has read of the workflow's
 * own keys, which its tasks start from, and what parse_task.c leaves for
 * the graph and the plugins' checks. */
typedef struct sy_wf_loader {
    sy_diags *d;
    sy_workflow *wf;
    sy_retry retry;        /* the workflow's, over the defaults */
    int64_t timeout_ms;    /* the workflow's; 0 for none */
    int64_t max_map;       /* the workflow's, or SY_MAP_DEFAULT_MAX */
    int32_t priority;      /* the workflow's; 0 when unset */
    sy_flow *flow;         /* owned: the workflow's limits and pool; NULL
                              for none */
    bool ns_ok;            /* name and tenant valid: tasks get namespaces */
    int name_line;
    sy_wf_after *after;    /* per task */
    const config_setting_t **settings; /* per task; NULL when not a group */
    json_t *no_params;     /* one reference to the empty object that every
                              task without parameters shares (a million
                              tasks, a million empty objects otherwise) */
} sy_wf_loader;

/* Reads the `tasks` list of workflow group `g` into L->wf->tasks (with
 * L->after and L->settings beside them, one per task). */
void sy_wf_tasks_read(sy_wf_loader *L, const config_setting_t *g);

/* --- cache_write.c, cache_read.c, cache_file.c --------------------------- */

#define SY_WF_CACHE_MAGIC "SYWC"
#define SY_WF_CACHE_FORMAT 3u /* 2: a task's priority and flow; 3: its cache */
#define SY_WF_CACHE_BOM 0x01020304u
#define SY_WF_CACHE_SUM_AT 16   /* the payload's SHA-256 */
#define SY_WF_CACHE_HEADER 56   /* magic .. payload length */
#define SY_WF_CACHE_NONE 0xffffffffu /* a string that is absent */
/* Smaller files parse in well under a millisecond: not worth an entry. */
#define SY_WF_CACHE_MIN_BYTES 65536

/* An entry for wf (sealed, loaded without a diagnostic) made from the
 * file whose bytes hash to `key`; 0, or -1 when out of memory. */
int sy_wf_cache_encode(const sy_workflow *wf, const unsigned char key[32], int name_line,
                       char **out, size_t *len);

/* The workflow in an entry, when the entry is whole, made by this
 * version from the file with this key in this directory; else NULL.
 * Its `definition` is NULL, its `hash` the sealed one's; `file` unset. */
sy_workflow *sy_wf_cache_decode(const char *buf, size_t len, const unsigned char key[32],
                                const char *base_dir, int *name_line);

/* A workflow file as the cache sees it. */
typedef struct sy_wf_source {
    unsigned char key[32]; /* SHA-256 of its bytes */
    struct stat st;        /* its stat when they were read */
    char *dir;             /* owned: the cache directory */
    char *slot;            /* owned: its entry's path */
} sy_wf_source;

/* Whether the cache applies to `path` (a cache directory is set; a
 * regular file of SY_WF_CACHE_MIN_BYTES or more without @include): then
 * *src is filled in and must be freed. */
bool sy_wf_cache_probe(const char *cache_dir, const char *path, const char *base_dir,
                       sy_wf_source *src);
void sy_wf_source_free(sy_wf_source *src);

/* The cached workflow of src, or NULL (no entry, a stale or bad one). */
sy_workflow *sy_wf_cache_get(const sy_wf_source *src, const char *base_dir, int *name_line);

/* Stores wf as src's entry, unless the file changed since it was hashed.
 * Failures are silent: the next load parses the file again. */
void sy_wf_cache_put(const sy_wf_source *src, const char *path, const sy_workflow *wf,
                     int name_line);

#endif
