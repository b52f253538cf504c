/* The gpu executor's metrics(): the conventional figures, then the
 * devices, each with its state, so an operator sees a drained device and
 * why (its last Xid, ECC, since when). */
#include <stdio.h>

#include "gpu.h"

void sy_gpu_metrics(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    pthread_mutex_lock(&inst->mu);
    const sy_gs *s = &inst->sched;
    int64_t busy = 0, drained = 0, cap = inst->queue_length - inst->active;
    const struct { const char *name; int64_t v; } m[] = {
        {"active", inst->active},
        {"queued", (int64_t)sy_gs_queued(s)},
        {"running", (int64_t)sy_gs_running(s)},
        {"capacity", cap > 0 ? cap : 0},
        {"submitted", inst->submitted},
        {"succeeded", inst->succeeded},
        {"failed", inst->failed},
        {"timed_out", inst->timed_out},
        {"cancelled", inst->cancelled},
        {"deferred", inst->deferred},
        {"xid_events", inst->xids},
        {"ecc_events", inst->ecc_errors},
        {"nvml", sy_nvml_count(inst->nvml) > 0},
        {"devices", s->ndev},
        {"reservation_ms", s->reserved_for ? s->shadow_ms : 0},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        emit(sink, m[i].name, m[i].v);
    char name[64];
    for (int d = 0; d < s->ndev; d++) {
        const sy_gpu_dev *g = &inst->gdev[d];
        const struct { const char *what; int64_t v; } k[] = {
            {"busy", !sy_gs_dev_idle(s, d)},
            {"drained", s->dev[d].drained},
            {"manual", g->manual},
            {"xid", (int64_t)g->xid},
            {"ecc", g->dbe},
            {"drained_at", g->drained_at},
            {"tasks", g->tasks_run},
            {"mem_used_mib", s->dev[d].mem_used},
        };
        for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
            snprintf(name, sizeof name, "device.%d.%s", d, k[i].what);
            emit(sink, name, k[i].v);
        }
        busy += !sy_gs_dev_idle(s, d);
        drained += s->dev[d].drained;
    }
    emit(sink, "devices_busy", busy);
    emit(sink, "devices_drained", drained);
    pthread_mutex_unlock(&inst->mu);
}
