/* The exposition: the engine's figures in the Prometheus text format. */
#include "service/metrics.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "engine/metrics.h"

/* Label values are lowercase words joined by `_`: "NotStarted" becomes
 * "not_started". */
static void state_label(const char *name, char *buf, size_t len)
{
    size_t at = 0;
    for (const char *p = name; *p && at + 2 < len; p++) {
        if (isupper((unsigned char)*p) && p != name)
            buf[at++] = '_';
        buf[at++] = (char)tolower((unsigned char)*p);
    }
    buf[at] = '\0';
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
    sy_expo_family(f, name, "counter", help);
    sy_expo_sample(f, name, NULL, (double)v);
}

static void gauge(FILE *f, const char *name, const char *help, double v)
{
    sy_expo_family(f, name, "gauge", help);
    sy_expo_sample(f, name, NULL, v);
}

static void host_figures(FILE *f, sy_engine *e)
{
    const sy_engine_metrics *m = sy_engine_metrics_get(e);
    char labels[160] = "";
    sy_expo_family(f, "switchyard_build_info", "gauge",
                   "Always 1: the version of this host and the executor ABI it speaks.");
    sy_expo_label(labels, sizeof labels, "version", PACKAGE_VERSION);
    char abi[32];
    snprintf(abi, sizeof abi, "%d.%d", SY_EXECUTOR_ABI_MAJOR, SY_EXECUTOR_ABI_MINOR);
    sy_expo_label(labels, sizeof labels, "abi", abi);
    sy_expo_sample(f, "switchyard_build_info", labels, 1);
    gauge(f, "switchyard_start_time_seconds",
          "When this host started its engine, in seconds since the Unix epoch.",
          (double)m->started_ms / 1000.0);
    gauge(f, "switchyard_draining",
          "0 while the host takes work; 1 draining after a stop signal; 2 cancelling "
          "its attempts after a second one.",
          sy_engine_draining(e));
}

static void states(FILE *f, sy_engine *e)
{
    uint64_t tasks[SY_TASK_STATE_COUNT], runs[SY_RUN_STATE_COUNT];
    sy_engine_metrics_states(e, tasks, runs);
    char labels[64], state[32];
    sy_expo_family(f, "switchyard_tasks", "gauge",
                   "Tasks of the runs this host holds in memory, by state (a map's "
                   "elements counted while a slot holds them).");
    for (int s = 0; s < SY_TASK_STATE_COUNT; s++) {
        state_label(sy_task_state_name((sy_task_state)s), state, sizeof state);
        labels[0] = '\0';
        sy_expo_sample(f, "switchyard_tasks", sy_expo_label(labels, sizeof labels, "state", state),
                       (double)tasks[s]);
    }
    uint64_t waiting[SY_ENGINE_WAITING_KINDS];
    sy_engine_metrics_waiting(e, waiting);
    sy_expo_family(f, "switchyard_tasks_waiting", "gauge",
                   "Tasks (and elements held) Waiting for a flow-control slot, by the kind "
                   "of bound that is full: key, pool, tenant, or other.");
    for (int k = 0; k < SY_ENGINE_WAITING_KINDS; k++) {
        labels[0] = '\0';
        sy_expo_sample(f, "switchyard_tasks_waiting",
                       sy_expo_label(labels, sizeof labels, "kind", sy_engine_waiting_kind(k)),
                       (double)waiting[k]);
    }
    sy_expo_family(f, "switchyard_runs", "gauge",
                   "Runs this host holds in memory, by state (an ended run until its "
                   "last rows are written).");
    for (int s = 0; s < SY_RUN_STATE_COUNT; s++) {
        state_label(sy_run_state_name((sy_run_state)s), state, sizeof state);
        labels[0] = '\0';
        sy_expo_sample(f, "switchyard_runs", sy_expo_label(labels, sizeof labels, "state", state),
                       (double)runs[s]);
    }
    const sy_engine_metrics *m = sy_engine_metrics_get(e);
    sy_expo_family(f, "switchyard_runs_ended_total", "counter",
                   "Runs this host ended, by their final state.");
    for (int s = SY_RUN_COMPLETED; s < SY_RUN_STATE_COUNT; s++) {
        state_label(sy_run_state_name((sy_run_state)s), state, sizeof state);
        labels[0] = '\0';
        sy_expo_sample(f, "switchyard_runs_ended_total",
                       sy_expo_label(labels, sizeof labels, "state", state),
                       (double)m->runs_ended[s]);
    }
    counter(f, "switchyard_runs_adopted_total",
            "Runs this host claimed and loaded (submitted, taken over or recovered).",
            m->runs_adopted);
    counter(f, "switchyard_attempts_submitted_total",
            "Attempts handed to an executor instance and accepted by it.", m->submitted);
    counter(f, "switchyard_cache_hits_total",
            "Tasks with a cache completed from it, without running.", m->cache_hits);
    counter(f, "switchyard_cache_misses_total",
            "Tasks with a cache that found no entry for their key, and ran.", m->cache_misses);
}

static void histograms(FILE *f, sy_engine *e)
{
    const sy_engine_metrics *m = sy_engine_metrics_get(e);
    sy_expo_family(f, "switchyard_dispatch_latency_seconds", "histogram",
                   "From a task becoming Ready (or its backoff ending) to its attempt "
                   "handed to the instance, waits for capacity included; millisecond "
                   "resolution.");
    sy_expo_histogram(f, "switchyard_dispatch_latency_seconds", NULL, &m->dispatch);
    sy_expo_family(f, "switchyard_task_duration_seconds", "histogram",
                   "From an attempt handed to its instance to its result back on the "
                   "host's loop (or its deadline); millisecond resolution.");
    sy_expo_histogram(f, "switchyard_task_duration_seconds", NULL, &m->duration);
    sy_expo_family(f, "switchyard_store_batch_rows", "histogram",
                   "Task and run rows written by one loop turn's transaction.");
    sy_expo_histogram(f, "switchyard_store_batch_rows", NULL, &m->rows);
    sy_expo_family(f, "switchyard_store_write_seconds", "histogram",
                   "One loop turn's transaction: waiting for the write lock, the writes "
                   "and the commit.");
    sy_expo_histogram(f, "switchyard_store_write_seconds", NULL, &m->write);
}

static void lease(FILE *f, sy_engine *e)
{
    const sy_engine_metrics *m = sy_engine_metrics_get(e);
    sy_engine_counters c;
    sy_engine_counters_get(e, &c);
    int64_t lease_ms;
    int64_t age = sy_engine_metrics_lease_age(e, &lease_ms);
    gauge(f, "switchyard_lease_age_seconds",
          "Age of the oldest run lease this host holds: time since it was claimed or last "
          "renewed (0 while it holds none); past switchyard_lease_duration_seconds the "
          "host stops writing.",
          age < 0 ? 0.0 : (double)age / 1000.0);
    gauge(f, "switchyard_lease_duration_seconds", "The run lease this host claims for (lease).",
          (double)lease_ms / 1000.0);
    counter(f, "switchyard_lease_renewals_total", "Lease renewals this host made.",
            m->renewals);
    counter(f, "switchyard_lease_renewal_failures_total",
            "Lease renewals the store failed.", m->renewal_failures);
    counter(f, "switchyard_lease_lapses_total",
            "Times this host found its lease lapsed and stopped writing.", c.lapses);
    counter(f, "switchyard_runs_lost_total",
            "Runs this host dropped because another claim took them.", c.runs_lost);
    counter(f, "switchyard_store_writes_refused_total",
            "Writes the store refused by their fence (the run or task held by another "
            "claim).", c.writes_refused);
    counter(f, "switchyard_attempts_abandoned_total",
            "Attempts of hosts that lost a run, found Running when this host took it.",
            c.abandoned);
    counter(f, "switchyard_attempts_resumed_total",
            "Attempts of hosts that lost a run that their plugin took over (resume) instead "
            "of a retry.", c.resumed);
    /* A plugin that waits for its process group's record (attempt_process)
     * holds its command that long: on a busy machine that wait was most of
     * a short command's overhead.  One that asks without waiting
     * (attempt_process_async) adds no wait. */
    counter(f, "switchyard_process_records_total",
            "Process groups of attempts that plugins asked the host to record "
            "(attempt_process, attempt_process_async), counted when answered.",
            c.process_records);
    sy_expo_family(f, "switchyard_process_record_wait_seconds_total", "counter",
                   "Time plugin threads waited for those records (the loop's write and "
                   "commit), summed; asks that do not wait add nothing.");
    sy_expo_sample(f, "switchyard_process_record_wait_seconds_total", NULL,
                   (double)c.process_wait_ns / 1e9);
}

/* Per instance: the samples are gathered first, then written family by
 * family, as the format wants each family's samples together. */
typedef struct {
    sy_instance_sample *v;
    size_t n, cap;
    bool oom;
} samples;

static void gather(void *arg, const sy_instance_sample *s)
{
    samples *ss = arg;
    if (ss->n == ss->cap) {
        size_t cap = ss->cap ? ss->cap * 2 : 8;
        sy_instance_sample *v = realloc(ss->v, cap * sizeof *v);
        if (!v) {
            ss->oom = true;
            return;
        }
        ss->v = v;
        ss->cap = cap;
    }
    ss->v[ss->n++] = *s;
}

static void instance_labels(const sy_instance_sample *s, char *buf, size_t len)
{
    buf[0] = '\0';
    sy_expo_label(buf, len, "executor", s->m->name);
    sy_expo_label(buf, len, "plugin", s->m->plugin);
}

enum { F_ACTIVE, F_CAPACITY, F_HEALTHY, F_COMPLETED, F_FAILED, F_THROTTLED, F_BUSY, F_N };

static const struct {
    const char *name, *type, *help;
} families[F_N] = {
    {"switchyard_executor_active", "gauge",
     "Attempts the executor instance holds now (timed-out ones it has not returned "
     "included)."},
    {"switchyard_executor_capacity", "gauge",
     "What the instance's capacity() answers now: how many more attempts it would "
     "accept (+Inf: no bound); instances in the configuration in force only."},
    {"switchyard_executor_healthy", "gauge",
     "1, or 0 once the watchdog caught a call into the instance stuck (it gets no new "
     "task until the host restarts)."},
    {"switchyard_executor_completed_total", "counter",
     "Attempts the instance ended succeeded."},
    {"switchyard_executor_failed_total", "counter",
     "Attempts the instance ended otherwise: failed, timed out (its own timeout or the "
     "host's deadline), cancelled, or refused at submit."},
    {"switchyard_executor_throttled_total", "counter",
     "Attempts the instance deferred (throttled, retry after a delay): offered again "
     "later, not charged as failures."},
    {"switchyard_executor_busy_total", "counter",
     "Submits the instance answered busy (no capacity after all): the task waited, "
     "Ready."},
};

static double family_value(int fam, const sy_instance_sample *s)
{
    switch (fam) {
    case F_ACTIVE: return (double)s->active;
    case F_CAPACITY:
        return s->capacity == SY_CAPACITY_UNLIMITED ? INFINITY : (double)s->capacity;
    case F_HEALTHY: return s->healthy ? 1 : 0;
    case F_COMPLETED: return (double)s->m->completed;
    case F_FAILED: return (double)s->m->failed;
    case F_THROTTLED: return (double)s->m->throttled;
    default: return (double)s->m->busy;
    }
}

typedef struct {
    FILE *f;
    const char *labels;
} plugin_sink;

/* A plugin's own figure: its name is a label value, as it comes. */
static void plugin_value(void *sink, const char *name, int64_t value)
{
    plugin_sink *ps = sink;
    char labels[512];
    snprintf(labels, sizeof labels, "%s", ps->labels);
    sy_expo_label(labels, sizeof labels, "name", name ? name : "");
    sy_expo_sample(ps->f, "switchyard_executor_plugin_value", labels, (double)value);
}

static int instances(FILE *f, sy_engine *e)
{
    samples ss = {0};
    sy_engine_metrics_instances(e, gather, &ss);
    if (ss.oom) {
        free(ss.v);
        return SY_ENOMEM;
    }
    char labels[400];
    for (int fam = 0; fam < F_N; fam++) {
        sy_expo_family(f, families[fam].name, families[fam].type, families[fam].help);
        for (size_t i = 0; i < ss.n; i++) {
            if ((fam == F_CAPACITY || fam == F_HEALTHY) && !ss.v[i].configured)
                continue;
            instance_labels(&ss.v[i], labels, sizeof labels);
            sy_expo_sample(f, families[fam].name, labels, family_value(fam, &ss.v[i]));
        }
    }
    sy_expo_family(f, "switchyard_executor_submit_seconds", "histogram",
                   "Time spent inside the plugin's submit() call (the host's loop waits "
                   "for it).");
    for (size_t i = 0; i < ss.n; i++) {
        instance_labels(&ss.v[i], labels, sizeof labels);
        sy_expo_histogram(f, "switchyard_executor_submit_seconds", labels, &ss.v[i].m->call);
    }
    sy_expo_family(f, "switchyard_executor_plugin_value", "untyped",
                   "What the plugin's own metrics() reports, by the name it gives (active, "
                   "queued, capacity, submitted, succeeded, ...; see the executor ABI).");
    for (size_t i = 0; i < ss.n; i++) {
        if (!ss.v[i].configured)
            continue;
        instance_labels(&ss.v[i], labels, sizeof labels);
        plugin_sink ps = {f, labels};
        sy_engine_metrics_plugin(ss.v[i].entry, plugin_value, &ps);
    }
    free(ss.v);
    return SY_OK;
}

/* The host's loop thread: how long it has waited for something to do
 * since it started (libuv's idle-time metric, configured when the loop is
 * made); the rest of its life it was dispatching, writing the store and
 * answering, which is where a command's wall time goes that is not the
 * tasks'. */
static void triggers(FILE *f, sy_engine *e)
{
    uint64_t fired, passed, taken;
    sy_engine_trigger_counts(e, &fired, &passed, &taken);
    counter(f, "switchyard_trigger_firings_total",
            "Runs this host started from workflow triggers (docs/events.md).", fired);
    counter(f, "switchyard_trigger_passed_total",
            "Events this host's triggers passed over: their payload failed `when`.", passed);
    counter(f, "switchyard_trigger_taken_total",
            "Firings this host found made already by another host serving the store.", taken);
}

static void loop_figures(FILE *f, sy_service *sv)
{
    if (!sv->have_loop)
        return;
    const char *name = "switchyard_loop_idle_seconds_total";
    sy_expo_family(f, name, "counter",
                   "Time the host's loop has waited in poll since it started.");
    sy_expo_sample(f, name, NULL, (double)uv_metrics_idle_time(&sv->loop) / 1e9);
}

int sy_metrics_render(sy_service *sv, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    if (!sv || !sv->engine)
        return SY_ESTATE;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f)
        return SY_ENOMEM;
    host_figures(f, sv->engine);
    loop_figures(f, sv);
    states(f, sv->engine);
    histograms(f, sv->engine);
    int rc = instances(f, sv->engine);
    lease(f, sv->engine);
    triggers(f, sv->engine);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad || rc != SY_OK || !buf) {
        free(buf);
        return SY_ENOMEM;
    }
    *text = buf;
    *len = size;
    return SY_OK;
}
