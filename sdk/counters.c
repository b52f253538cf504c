/*
 * counters.c -- the lock-free counters of a plugin: capacity slots and the
 * conventional metrics (switchyard/sdk.h, "Slots" and "Stats").
 */
#include <switchyard/sdk.h>

/* `limit` >= 0, or SY_CAPACITY_UNLIMITED.  `api` and `host` as create()
 * got them. */
void sy_sdk_slots_init(sy_sdk_slots *s, const sy_host_api *api, sy_host *host,
                       int64_t limit)
{
    atomic_init(&s->used, 0);
    s->limit = limit < 0 ? 0 : limit;
    s->api = api;
    s->host = host;
}

/* Takes a slot; false when none is free.  A compare-and-swap, so racing
 * submits never take more than `limit`. */
bool sy_sdk_slots_try_acquire(sy_sdk_slots *s)
{
    int64_t cur = atomic_load(&s->used);
    do {
        if (s->limit != SY_CAPACITY_UNLIMITED && cur >= s->limit)
            return false;
    } while (!atomic_compare_exchange_weak(&s->used, &cur, cur + 1));
    return true;
}

/* Gives a slot back without telling the host: for a submit() that took a
 * slot and then refused the task (the host is not waiting on it). */
void sy_sdk_slots_undo(sy_sdk_slots *s)
{
    atomic_fetch_sub(&s->used, 1);
}

/* Gives a slot back and calls api->wake(host) so tasks the host kept
 * Ready after SY_EBUSY are offered again. */
void sy_sdk_slots_release(sy_sdk_slots *s)
{
    atomic_fetch_sub(&s->used, 1);
    if (s->api && s->api->wake)
        s->api->wake(s->host);
}

/* What capacity() should answer: free slots, or SY_CAPACITY_UNLIMITED. */
int64_t sy_sdk_slots_available(sy_sdk_slots *s)
{
    if (s->limit == SY_CAPACITY_UNLIMITED)
        return SY_CAPACITY_UNLIMITED;
    int64_t left = s->limit - atomic_load(&s->used);
    return left > 0 ? left : 0;
}

int64_t sy_sdk_slots_used(sy_sdk_slots *s)
{
    return atomic_load(&s->used);
}

void sy_sdk_stats_init(sy_sdk_stats *s)
{
    atomic_init(&s->submitted, 0);
    for (int i = 0; i < 4; i++)
        atomic_init(&s->by_outcome[i], 0);
}

void sy_sdk_stats_submitted(sy_sdk_stats *s)
{
    atomic_fetch_add(&s->submitted, 1);
}

/* Counts one completion; an outcome outside sy_outcome counts as failed. */
void sy_sdk_stats_outcome(sy_sdk_stats *s, sy_outcome o)
{
    unsigned i = (unsigned)o;
    atomic_fetch_add(&s->by_outcome[i < 4 ? i : SY_OUTCOME_FAILED], 1);
}

/* Accepted and not yet completed. */
int64_t sy_sdk_stats_active(sy_sdk_stats *s)
{
    /* Completions first: `submitted` only grows, so a racing submit can
     * only make the answer larger, never negative. */
    int64_t done = 0;
    for (int i = 0; i < 4; i++)
        done += atomic_load(&s->by_outcome[i]);
    return atomic_load(&s->submitted) - done;
}

/* Emits the conventional figures: active, queued, capacity, submitted,
 * succeeded, failed, timed_out, cancelled.  `queued` and `capacity` are
 * the plugin's own (its queue length and capacity()). */
void sy_sdk_stats_emit(sy_sdk_stats *s, int64_t queued, int64_t capacity,
                       sy_metric_fn emit, void *sink)
{
    int64_t by[4], submitted;
    for (int i = 0; i < 4; i++)
        by[i] = atomic_load(&s->by_outcome[i]);
    submitted = atomic_load(&s->submitted);
    emit(sink, "active", submitted - by[0] - by[1] - by[2] - by[3]);
    emit(sink, "queued", queued);
    emit(sink, "capacity", capacity);
    emit(sink, "submitted", submitted);
    emit(sink, "succeeded", by[SY_OUTCOME_SUCCEEDED]);
    emit(sink, "failed", by[SY_OUTCOME_FAILED]);
    emit(sink, "timed_out", by[SY_OUTCOME_TIMED_OUT]);
    emit(sink, "cancelled", by[SY_OUTCOME_CANCELLED]);
}
