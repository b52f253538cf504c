/* The engine's instruments, and what readers ask of them. */
#include "engine/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/util.h"
#include "engine/internal.h"
#include "engine/waiting.h"
#include "executor/call_record.h"

void sy_engine_metrics_init(sy_engine_metrics *m)
{
    memset(m, 0, sizeof *m);
    sy_histogram_init(&m->dispatch, sy_metrics_latency_ms, sy_metrics_latency_ms_n, 1e3);
    sy_histogram_init(&m->duration, sy_metrics_duration_ms, sy_metrics_duration_ms_n, 1e3);
    sy_histogram_init(&m->rows, sy_metrics_rows, sy_metrics_rows_n, 1.0);
    sy_histogram_init(&m->write, sy_metrics_write_ns, sy_metrics_write_ns_n, 1e9);
    m->started_ms = sy_clock_now_ms();
}

void sy_engine_metrics_free(sy_engine_metrics *m)
{
    while (m->instances) {
        sy_instance_metrics *im = m->instances;
        m->instances = im->next;
        free(im->name);
        free(im->plugin);
        free(im);
    }
}

static const char *plugin_name(const sy_instance_entry *entry)
{
    return entry->desc && entry->desc->name ? entry->desc->name : "";
}

sy_instance_metrics *sy_engine_metrics_instance(sy_engine_metrics *m,
                                                const sy_instance_entry *entry)
{
    const char *name = entry->name ? entry->name : "", *plugin = plugin_name(entry);
    sy_instance_metrics **p = &m->instances;
    for (; *p; p = &(*p)->next)
        if (strcmp((*p)->name, name) == 0 && strcmp((*p)->plugin, plugin) == 0)
            return *p;
    sy_instance_metrics *im = sy_xmalloc(sizeof *im);
    memset(im, 0, sizeof *im);
    im->name = sy_xstrdup(name);
    im->plugin = sy_xstrdup(plugin);
    sy_histogram_init(&im->call, sy_metrics_call_ns, sy_metrics_call_ns_n, 1e9);
    *p = im;
    return im;
}

const sy_engine_metrics *sy_engine_metrics_get(const sy_engine *e) { return &e->metrics; }

void sy_engine_metrics_states(const sy_engine *e, uint64_t tasks[SY_TASK_STATE_COUNT],
                              uint64_t runs[SY_RUN_STATE_COUNT])
{
    memset(tasks, 0, SY_TASK_STATE_COUNT * sizeof *tasks);
    memset(runs, 0, SY_RUN_STATE_COUNT * sizeof *runs);
    for (const sy_live_run *r = e->runs; r; r = r->next) {
        /* A run this host lost is another host's to report. */
        if (r->lost)
            continue;
        if ((unsigned)r->state < SY_RUN_STATE_COUNT)
            runs[r->state]++;
        for (size_t i = 0; i < r->n_t; i++) {
            const sy_live_task *t = &r->t[i];
            if (i >= r->wf->n_tasks && t->elem < 0)
                continue; /* a free slot */
            if ((unsigned)t->state < SY_TASK_STATE_COUNT)
                tasks[t->state]++;
        }
    }
}

_Static_assert(SY_ENGINE_WAITING_KINDS == SY_WAITING_KIND_COUNT, "one count per kind");

void sy_engine_metrics_waiting(const sy_engine *e, uint64_t n[SY_ENGINE_WAITING_KINDS])
{
    memset(n, 0, SY_ENGINE_WAITING_KINDS * sizeof *n);
    for (const sy_live_run *r = e->runs; r; r = r->next) {
        if (r->lost)
            continue;
        /* A free slot is NotStarted: never counted here. */
        for (size_t i = 0; i < r->n_t; i++)
            if (r->t[i].state == SY_TASK_WAITING)
                n[sy_waiting_kind_of(r->t[i].waiting_for)]++;
    }
}

const char *sy_engine_waiting_kind(int k) { return sy_waiting_kind_name((sy_waiting_kind)k); }

int64_t sy_engine_metrics_lease_age(const sy_engine *e, int64_t *lease_ms)
{
    *lease_ms = e->o.lease_ms;
    int64_t oldest = -1, now = e->now();
    for (const sy_live_run *r = e->runs; r; r = r->next) {
        if (r->lost || r->finished || r->lease_until <= 0)
            continue;
        /* lease_until is set by the claim and each renewal to that
         * moment plus the lease. */
        int64_t age = now - (r->lease_until - e->o.lease_ms);
        if (age < 0)
            age = 0;
        if (age > oldest)
            oldest = age;
    }
    return oldest;
}

void sy_engine_metrics_instances(sy_engine *e,
                                 void (*fn)(void *arg, const sy_instance_sample *s),
                                 void *arg)
{
    for (sy_instance_metrics *im = e->metrics.instances; im; im = im->next)
        im->active = 0;
    for (const sy_attempt *a = e->live; a; a = a->live_next)
        if (a->queue && a->queue->metrics && a->c.token)
            a->queue->metrics->active++;
    /* Those in force first, each once (a reload may name one again). */
    for (size_t i = 0; i < e->n_instances; i++) {
        sy_instance_queue *q = &e->instances[i];
        sy_instance_sample s = {.m = q->metrics, .active = q->metrics->active,
                                .configured = true, .entry = q->entry};
        s.healthy = !atomic_load_explicit(&q->entry->unhealthy, memory_order_relaxed);
        if (s.healthy) {
            sy_call_begin(q->entry, "capacity", NULL, 0, 0, 0);
            s.capacity = q->entry->desc->capacity(q->entry->inst);
            sy_call_end();
            if (s.capacity < 0 && s.capacity != SY_CAPACITY_UNLIMITED)
                s.capacity = 0;
        }
        fn(arg, &s);
    }
    for (sy_instance_metrics *im = e->metrics.instances; im; im = im->next) {
        bool current = false;
        for (size_t i = 0; i < e->n_instances && !current; i++)
            current = e->instances[i].metrics == im;
        if (!current)
            fn(arg, &(sy_instance_sample){.m = im, .active = im->active, .healthy = true});
    }
}

void sy_engine_metrics_plugin(sy_instance_entry *entry,
                              void (*emit)(void *sink, const char *name, int64_t value),
                              void *sink)
{
    if (!entry || !entry->inst || !SY_HAS_FIELD(entry->desc, sy_executor, metrics) ||
        !entry->desc->metrics ||
        atomic_load_explicit(&entry->unhealthy, memory_order_relaxed))
        return;
    sy_call_begin(entry, "metrics", NULL, 0, 0, 0);
    entry->desc->metrics(entry->inst, emit, sink);
    sy_call_end();
}
