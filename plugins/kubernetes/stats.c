/*
 * stats.c -- the kubernetes instance's metrics.  Every figure is an
 * atomic counter or gauge written where the event happens (submit on a
 * host thread, the rest on the loop), so metrics() only reads.
 */
#include <stdio.h>

#include "kubernetes.h"

static const char *const reasons[SY_K8S_R_N] = {
    [SY_K8S_R_EXIT] = "exit_code",       [SY_K8S_R_OOM] = "oom_killed",
    [SY_K8S_R_PULL] = "image_pull",      [SY_K8S_R_UNSCHED] = "unschedulable",
    [SY_K8S_R_DEADLINE] = "deadline",    [SY_K8S_R_EVICTED] = "evicted",
    [SY_K8S_R_PREEMPTED] = "preempted",  [SY_K8S_R_OUTPUT] = "bad_output",
    [SY_K8S_R_API] = "api",              [SY_K8S_R_INPUT] = "input_too_large",
    [SY_K8S_R_GONE] = "gone",            [SY_K8S_R_THROTTLED] = "throttled",
};

const char *sy_k8s_reason_name(int reason)
{
    return reason >= 0 && reason < SY_K8S_R_N ? reasons[reason] : "other";
}

void sy_k8s_stats_emit(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_k8s_stats *s = &inst->stats;
    int64_t used = atomic_load(&inst->used);
    int64_t done = 0;
    for (int i = 0; i < 5; i++)
        done += atomic_load(&s->by_outcome[i]);
    int64_t submitted = atomic_load(&s->submitted);
    int64_t cap = inst->set.max_in_flight - used;
    emit(sink, "active", submitted - done);
    emit(sink, "queued", 0);
    emit(sink, "capacity", cap > 0 ? cap : 0);
    emit(sink, "submitted", submitted);
    emit(sink, "succeeded", atomic_load(&s->by_outcome[SY_OUTCOME_SUCCEEDED]));
    emit(sink, "failed", atomic_load(&s->by_outcome[SY_OUTCOME_FAILED]));
    emit(sink, "timed_out", atomic_load(&s->by_outcome[SY_OUTCOME_TIMED_OUT]));
    emit(sink, "cancelled", atomic_load(&s->by_outcome[SY_OUTCOME_CANCELLED]));
    emit(sink, "deferred", atomic_load(&s->by_outcome[SY_OUTCOME_DEFERRED]));
    emit(sink, "resumed", atomic_load(&s->resumed));
    emit(sink, "jobs", atomic_load(&s->jobs));
    emit(sink, "creates", atomic_load(&s->creates));
    emit(sink, "adoptions", atomic_load(&s->adoptions));
    emit(sink, "deletes", atomic_load(&s->deletes));
    emit(sink, "throttled", atomic_load(&s->throttled));
    emit(sink, "watch_restarts", atomic_load(&s->watch_restarts));
    emit(sink, "relists", atomic_load(&s->relists));
    emit(sink, "gone_410", atomic_load(&s->gone_410));
    emit(sink, "create_to_running_ms.sum", atomic_load(&s->run_latency_ms));
    emit(sink, "create_to_running_ms.count", atomic_load(&s->run_latency_n));
    char name[64];
    for (int i = 0; i < SY_K8S_R_N; i++) {
        snprintf(name, sizeof name, "failures.%s", reasons[i]);
        emit(sink, name, atomic_load(&s->failures[i]));
    }
}
