/*
 * store/named_events.h -- named events and the firing of workflow
 * triggers, in the store (docs/events.md).
 *
 * A named event is what `switchyard emit`, POST /api/v1/events and the
 * plugins' host call record: a name, an optional key and a JSON payload.
 * It is a concept of its own, stored in the table `named_events`; the
 * table `events` is the run-event journal (store.h, sy_store_add_event),
 * unrelated.
 *
 * A workflow trigger (workflow/start_trigger.h) is known to the store by
 * its key, "tenant::workflow::name".  What may fire it are items: named
 * events and finished runs.  Each item is settled once per trigger: it
 * either fired a run, or was passed over with a reason; sy_store_fire
 * records that, and the run it starts, in one transaction, under a lock
 * per trigger, so that of several hosts settling the same item exactly one
 * writes.  Same threading and error contract as store.h.
 */
#ifndef SY_STORE_NAMED_EVENTS_H
#define SY_STORE_NAMED_EVENTS_H

#include "store/store.h"

/* A named event.  Borrowed strings, valid during the callback. */
typedef struct sy_named_event {
    int64_t id;
    const char *name;
    const char *key;  /* NULL when emitted without one */
    const char *data; /* JSON text */
    int64_t created;
} sy_named_event;

typedef int (*sy_named_event_cb)(void *arg, const sy_named_event *ev);

/* Records event `name` with payload `data` (JSON text) and `key` (may be
 * NULL), durably, before it returns.  With a key, an event of the same
 * name and key recorded less than `window_ms` before `now` wins: nothing
 * is written, *duplicate is true and *id is that event's.  Outside a
 * batch. */
int sy_store_emit(sy_store *s, const char *name, const char *key, const char *data,
                  int64_t window_ms, int64_t now, int64_t *id, bool *duplicate);

/* The newest `limit` events, newest first; only those called `name`
 * unless it is NULL. */
int sy_store_list_named_events(sy_store *s, const char *name, size_t limit,
                               sy_named_event_cb cb, void *arg);

/* --- triggers ------------------------------------------------------------------ */

typedef enum sy_item_source {
    SY_ITEM_EVENT = 1, /* a named event, by its id */
    SY_ITEM_RUN = 2    /* a finished run, by its id */
} sy_item_source;

/* A trigger as stored: since when it listens, its last firing. */
typedef struct sy_trigger_record {
    int64_t since;      /* items older than this never fire it */
    int64_t last_fired; /* 0 before the first firing */
    int64_t last_run;   /* the run the last firing started; 0 */
    int64_t firings;
    int64_t in_flight;  /* runs it started that have not ended */
} sy_trigger_record;

/* Registers trigger `key` (listening from `now` on) when it is new, and
 * reads its record. */
int sy_store_trigger_open(sy_store *s, const char *key, int64_t now,
                          sy_trigger_record *out);

/* The events called `name`, created at or after `since`, that trigger
 * `key` has not settled, oldest first, at most `limit`. */
int sy_store_trigger_events(sy_store *s, const char *key, const char *name, int64_t since,
                            size_t limit, sy_named_event_cb cb, void *arg);

/* A finished run as a trigger candidate.  Borrowed strings. */
typedef struct sy_finished_run {
    int64_t id;
    sy_run_state state;
    int64_t finished;
} sy_finished_run;

/* The runs of (`tenant`, `workflow`) that ended at or after `since` in
 * one of the states of `states` (bit 1 << sy_run_state), that trigger
 * `key` has not settled, oldest first, at most `limit`. */
int sy_store_trigger_runs(sy_store *s, const char *key, const char *tenant,
                          const char *workflow, unsigned states, int64_t since,
                          size_t limit, int (*cb)(void *arg, const sy_finished_run *r),
                          void *arg);

/* One item being settled: `reason` NULL when the firing consumes it, else
 * why it was passed over (kept, for `switchyard triggers`). */
typedef struct sy_trigger_item {
    sy_item_source source;
    int64_t id;
    const char *reason;
} sy_trigger_item;

/* A firing: the items it settles and, when any is consumed, the run it
 * starts (as sy_store_create_run's arguments; the definition stored
 * first). */
typedef struct sy_trigger_firing {
    const char *key;
    const sy_trigger_item *items;
    size_t n_items;
    int64_t debounce_ms;     /* no run sooner than this after the trigger's
                                last firing; 0: none */
    uint32_t max_in_flight;  /* 0: no bound */
    const char *hash, *tenant, *workflow, *context;
    size_t n_tasks;
    const char *const *task_ids, *const *ns;
} sy_trigger_firing;

typedef enum sy_fire_outcome {
    SY_FIRE_STARTED = 0, /* the run was recorded with the items */
    SY_FIRE_SETTLED,     /* only passed-over items: recorded, no run */
    SY_FIRE_TAKEN,       /* an item was settled already (another host):
                            nothing written */
    SY_FIRE_BUSY,        /* max_in_flight runs of it have not ended:
                            nothing written */
    SY_FIRE_EARLY        /* within debounce_ms of the last firing:
                            nothing written */
} sy_fire_outcome;

/* Settles the items of `f` and starts its run, in one transaction under
 * the trigger's lock: all or nothing.  Outside a batch. */
int sy_store_fire(sy_store *s, const sy_trigger_firing *f, int64_t now,
                  sy_fire_outcome *outcome, int64_t *run_id);

/* The items trigger `key` passed over, newest first, at most `limit`. */
int sy_store_trigger_passed(sy_store *s, const char *key, size_t limit,
                            int (*cb)(void *arg, sy_item_source source, int64_t id,
                                      const char *reason, int64_t at),
                            void *arg);

/* --- what became of events ------------------------------------------------------ */

/* One trigger's settling of one named event (trigger_items). */
typedef struct sy_event_settlement {
    int64_t event_id;
    const char *trigger;  /* its store key, "tenant::workflow::name" */
    int64_t run_id;       /* the run the firing started; 0: passed over */
    const char *reason;   /* passed over, why; NULL: consumed by a firing */
} sy_event_settlement;

typedef int (*sy_event_settlement_cb)(void *arg, const sy_event_settlement *s);

/* Every trigger's settling of the named events with ids from..to
 * (inclusive), by event id; what the dashboard shows beside each event.
 * A callback's non-zero return stops the listing and is returned. */
int sy_store_event_settlements(sy_store *s, int64_t from, int64_t to,
                               sy_event_settlement_cb cb, void *arg);

#endif
