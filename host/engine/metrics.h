/*
 * engine/metrics.h -- what the engine measures as it works, and what a
 * reader (service/metrics.c) asks of it.
 *
 * The instruments live in the engine and are moved by the loop thread
 * where the work happens: dispatch.c (dispatch latency, plugin call time,
 * busy and refused submits), completion.c (task duration and outcomes per
 * instance), engine.c (the turn's batch size and write time), run.c (runs
 * ended, when a task became Ready), serve.c (lease renewals).  Each is an
 * integer or a fixed-bucket histogram (base/metrics.h): no lock, no
 * allocation per task.  Times are read from libuv's loop clock, which the
 * loop has read already, and once per turn at submit: the ms figures cost
 * no clock reading per task; a submit's duration costs one (the call
 * record read the start).
 *
 * An instance's figures are kept by its name and plugin, across reloads:
 * a counter never goes back while the process lives.
 *
 * Threads: the loop thread only, readers included.
 */
#ifndef SY_ENGINE_METRICS_H
#define SY_ENGINE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/metrics.h"
#include "executor/instance.h"
#include "workflow/state.h"

typedef struct sy_engine sy_engine;

/* One executor instance's figures, kept by (name, plugin). */
typedef struct sy_instance_metrics {
    char *name, *plugin;   /* owned */
    uint64_t completed;    /* attempts it ended succeeded */
    uint64_t failed;       /* attempts it ended otherwise: failed, timed out
                              (its own timeout or the host's deadline),
                              cancelled, or refused at submit */
    uint64_t throttled;    /* attempts it deferred (retry-after) */
    uint64_t busy;         /* submits it answered busy (no capacity) */
    sy_histogram call;     /* time inside its submit(), ns */
    int64_t active;        /* scratch of sy_engine_metrics_instances */
    struct sy_instance_metrics *next;
} sy_instance_metrics;

typedef struct sy_engine_metrics {
    sy_histogram dispatch; /* Ready (or its backoff over) -> submitted, ms */
    sy_histogram duration; /* submitted -> its result applied, ms */
    sy_histogram rows;     /* task and run rows written per turn */
    sy_histogram write;    /* the turn's transaction, begin and writes
                              to commit (decisions left out), ns */
    uint64_t runs_ended[SY_RUN_STATE_COUNT]; /* runs this host ended */
    uint64_t runs_adopted; /* runs claimed and loaded */
    uint64_t renewals, renewal_failures; /* lease renewals (serve) */
    uint64_t submitted;    /* attempts handed to a plugin */
    uint64_t cache_hits;   /* tasks completed from the cache (engine/cache.h) */
    uint64_t cache_misses; /* tasks with a cache that found no entry */
    uint64_t submit_ms;    /* the loop clock at this turn's submits */
    int64_t started_ms;    /* wall clock (ms since the epoch) when the
                              engine was made */
    sy_instance_metrics *instances; /* owned, in the order first seen */
} sy_engine_metrics;

/* Engine side (engine.c, dispatch.c). */
void sy_engine_metrics_init(sy_engine_metrics *m);
void sy_engine_metrics_free(sy_engine_metrics *m);
/* The figures of instance `entry`: found, or made (at dispatch_init and
 * reloads, never per task).  Aborts when out of memory, as the engine
 * does. */
sy_instance_metrics *sy_engine_metrics_instance(sy_engine_metrics *m,
                                                const sy_instance_entry *entry);

/* --- readers --------------------------------------------------------------- */

const sy_engine_metrics *sy_engine_metrics_get(const sy_engine *e);

/* The tasks of the runs this host holds in memory, by state (a map's
 * elements counted by the slots that hold them), and those runs by state. */
void sy_engine_metrics_states(const sy_engine *e, uint64_t tasks[SY_TASK_STATE_COUNT],
                              uint64_t runs[SY_RUN_STATE_COUNT]);

/* The tasks (and held elements) Waiting, by the kind of bound they wait
 * for: n[k] is the kind named sy_engine_waiting_kind(k) ("key", "pool",
 * "tenant", "other": a reason of free text). */
#define SY_ENGINE_WAITING_KINDS 4
void sy_engine_metrics_waiting(const sy_engine *e, uint64_t n[SY_ENGINE_WAITING_KINDS]);
const char *sy_engine_waiting_kind(int k);

/* The age, in ms of the engine's clock, of the oldest lease this host
 * holds on a run (since it was claimed or last renewed); -1 when it holds
 * none.  *lease_ms is the configured lease. */
int64_t sy_engine_metrics_lease_age(const sy_engine *e, int64_t *lease_ms);

/* One instance as a reader sees it. */
typedef struct sy_instance_sample {
    const sy_instance_metrics *m;
    int64_t active;        /* attempts the plugin holds now */
    bool configured;       /* in the configuration in force */
    bool healthy;          /* not caught stuck by the watchdog */
    int64_t capacity;      /* capacity() now (configured and healthy
                              only; SY_CAPACITY_UNLIMITED: no bound) */
    sy_instance_entry *entry; /* configured only, else NULL */
} sy_instance_sample;

/* Calls fn for every instance seen since the engine was made: those in
 * force first, asked their capacity() now (a call into the plugin, as
 * dispatch makes it; not asked while the watchdog holds it stuck). */
void sy_engine_metrics_instances(sy_engine *e,
                                 void (*fn)(void *arg, const sy_instance_sample *s),
                                 void *arg);

/* The plugin's own figures (its descriptor's metrics(), when it has one),
 * called as every call into a plugin is (the call record brackets it). */
void sy_engine_metrics_plugin(sy_instance_entry *entry, void (*emit)(void *sink,
                              const char *name, int64_t value), void *sink);

/* Workflow triggers (engine/start_triggers.c): firings this host recorded,
 * items it passed over (their payload failed `when`), and firings another
 * host had taken first. */
void sy_engine_trigger_counts(const sy_engine *e, uint64_t *fired, uint64_t *passed,
                              uint64_t *taken);

#endif
