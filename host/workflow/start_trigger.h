/*
 * workflow/start_trigger.h -- a workflow's triggers: what starts a run of
 * the workflow by itself (docs/events.md).  Not to be confused with a
 * task's `trigger` rule (workflow/trigger.h), which decides whether a task
 * of a run already started runs.
 *
 * A trigger has one part, or with `all` several that must each have
 * happened since its last firing.  A part is a named event (`event`,
 * optionally with `when` conditions on its payload, the language of a
 * task's `when`) or the end of a run of another workflow of the same
 * tenant (`run`, in the states of `states`; Completed unless said).
 *
 * A loaded trigger is immutable: any thread may read it.
 */
#ifndef SY_START_TRIGGER_H
#define SY_START_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "workflow/state.h"
#include "workflow/workflow.h"

/* The longest name of an event, of a trigger, and the longest event key,
 * in bytes. */
#define SY_EVENT_NAME_MAX 200
#define SY_EVENT_KEY_MAX 200
/* The most parts of an `all`. */
#define SY_TRIGGER_PARTS_MAX 16

/* NULL when `name` may name an event (and a trigger): 1 to
 * SY_EVENT_NAME_MAX bytes of letters, digits and "._-:/", starting with a
 * letter or digit; else why not (static text).  Pure. */
const char *sy_event_name_problem(const char *name);

/* NULL when `key` may be an event's key: 1 to SY_EVENT_KEY_MAX bytes of
 * printable ASCII or UTF-8, no control characters; else why not. */
const char *sy_event_key_problem(const char *key);

typedef struct sy_trigger_part {
    char *event;        /* owned: the event's name; NULL for a run part */
    sy_cond *when;      /* owned: conditions on the event's payload */
    size_t n_when;
    char *run;          /* owned: the workflow (same tenant) whose runs'
                           ends fire it; NULL for an event part */
    unsigned states;    /* run part: bits 1 << sy_run_state, terminal
                           states only; default Completed */
} sy_trigger_part;

typedef struct sy_start_trigger {
    char *name;              /* owned: unique in its workflow */
    sy_trigger_part *parts;  /* owned: 1, or with `all` 2..PARTS_MAX */
    size_t n_parts;
    bool all;                /* written as `all = ( ... )` */
    int64_t debounce_ms;     /* fire at most once per this long; 0 none */
    bool all_payloads;       /* debounce: every payload, else the last */
    uint32_t max_in_flight;  /* runs it started not ended; 0 no bound */
    int line;                /* where it was written; 0 from JSON */
} sy_start_trigger;

/* Frees what t holds and zeroes it; frees an array of n. */
void sy_start_trigger_clear(sy_start_trigger *t);
void sy_start_triggers_free(sy_start_trigger *t, size_t n);

/* Reads a workflow's `triggers` list (FILE:LINE errors into d) into *out,
 * *n; entries with errors are left out.  Returns the number of errors.
 * `tenant` and `workflow` name the workflow it belongs to: a run part
 * naming the workflow itself is refused (it would start itself). */
int sy_start_triggers_read(const config_setting_t *s, const char *workflow,
                           sy_start_trigger **out, size_t *n, sy_diags *d);

/* The triggers in the canonical definition's form (an array), and back;
 * NULL with why in err when malformed. */
json_t *sy_start_triggers_json(const sy_start_trigger *t, size_t n);
int sy_start_triggers_from_json(const json_t *a, sy_start_trigger **out, size_t *n,
                                char *err, size_t err_len);

/* The key the store knows trigger `t` of `wf` by: "tenant::workflow::name";
 * to free. */
char *sy_start_trigger_key(const sy_workflow *wf, const sy_start_trigger *t);

/* Whether the conditions of event part `p` hold on `payload`; when not,
 * why (the first that failed, one line) into why.  Pure. */
bool sy_trigger_part_matches(const sy_trigger_part *p, const json_t *payload, char *why,
                             size_t why_len);

#endif
