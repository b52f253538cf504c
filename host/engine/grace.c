/* The grace at shutdown: stop waiting for plugins that never complete. */
#include "engine/grace.h"

#include "base/log.h"

/* Attempts named one by one in the log; the rest are counted. */
#define NAMED_MAX 20

static void on_grace(uv_timer_t *h)
{
    sy_engine *e = h->data;
    if (!e->live)
        return;
    size_t n = 0;
    for (sy_attempt *a = e->live; a; a = a->live_next, n++) {
        if (n >= NAMED_MAX)
            continue;
        const sy_instance_entry *entry = a->queue->entry;
        sy_log(SY_LOG_ERROR, entry->name,
               "abandoned at shutdown: executor '%s', instance '%s' has not completed attempt "
               "%u of task %s (run %lld) %lld ms after it was asked to stop; a host that takes "
               "the run next recovers it",
               entry->desc ? entry->desc->name : "?", entry->name, a->number, a->task.ns,
               (long long)a->run->id, (long long)e->grace_ms);
    }
    if (n > NAMED_MAX)
        sy_log(SY_LOG_ERROR, "engine", "abandoned at shutdown: %zu more attempts", n - NAMED_MAX);
    e->abandoned = true;
    e->stopping = true;
    uv_stop(e->loop);
}

void sy_grace_start(sy_engine *e)
{
    if (e->grace_armed)
        return;
    e->grace_armed = true;
    uv_timer_init(e->loop, &e->grace);
    e->grace.data = e;
    uv_timer_start(&e->grace, on_grace, (uint64_t)e->grace_ms, 0);
    /* The wait must not keep the loop alive by itself. */
    uv_unref((uv_handle_t *)&e->grace);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_grace_close(sy_engine *e)
{
    if (!e->grace_armed)
        return;
    uv_timer_stop(&e->grace);
    uv_close((uv_handle_t *)&e->grace, close_noop);
    e->grace_armed = false;
}
