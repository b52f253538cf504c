/* The grace at shutdown: stop waiting for plugins that never complete. */
#include "engine/shutdown.h"

#include "base/log.h"
#include "engine/attempt.h"
#include "engine/fenced.h"
#include "engine/run.h"

/* Attempts named one by one in the log; the rest are counted. */
#define NAMED_MAX 20

static void abandon(sy_engine *e)
{
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
               entry->host.plugin ? entry->host.plugin : "?", entry->name, a->number, a->task.ns,
               (long long)a->run->id, (long long)e->grace_ms);
    }
    if (n > NAMED_MAX)
        sy_log(SY_LOG_ERROR, "engine", "abandoned at shutdown: %zu more attempts", n - NAMED_MAX);
    e->abandoned = true;
    e->stopping = true;
    uv_stop(e->loop);
}

static void on_grace(uv_timer_t *h) { abandon(h->data); }

void sy_grace_say_waiting(sy_engine *e)
{
    size_t n = 0;
    long long left_s = (long long)((sy_engine_grace_left_ms(e) + 999) / 1000);
    for (sy_attempt *a = e->live; a; a = a->live_next, n++) {
        if (n >= NAMED_MAX)
            continue;
        const sy_instance_entry *entry = a->queue->entry;
        sy_log(SY_LOG_WARN, entry->name,
               "waiting for executor '%s', instance '%s' to hand back attempt %u of task %s "
               "(run %lld), which it was asked to cancel: at most %lld s more, then it is "
               "abandoned; a signal (Ctrl-C) stops the wait now",
               entry->host.plugin ? entry->host.plugin : "?", entry->name, a->number, a->task.ns,
               (long long)a->run->id, left_s);
    }
    if (n > NAMED_MAX)
        sy_log(SY_LOG_WARN, "engine", "waiting for %zu more attempts", n - NAMED_MAX);
}

void sy_grace_end_now(sy_engine *e)
{
    if (e->grace_armed)
        uv_timer_stop(&e->grace);
    abandon(e);
}

void sy_grace_start(sy_engine *e)
{
    if (e->grace_armed)
        return;
    e->grace_armed = true;
    e->grace_started = (int64_t)uv_now(e->loop);
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

void sy_engine_interrupt(sy_engine *e)
{
    e->interrupted = true;
    for (sy_live_run *r = e->runs; r; r = r->next) {
        if (r->finished)
            continue;
        if (!e->o.serve) {
            sy_live_cancel(r, "interrupted: the host was stopped by a second signal");
            continue;
        }
        for (size_t i = 0; i < r->n_t; i++)
            if (r->t[i].state == SY_TASK_RUNNING && r->t[i].current)
                sy_attempt_cancel(r->t[i].current);
    }
}

bool sy_engine_requeue_interrupted(sy_engine *e, sy_attempt *a)
{
    if (!e->interrupted || !e->o.serve)
        return false;
    sy_live_run *r = a->run;
    sy_live_task *t = &r->t[a->idx];
    t->attempts--;
    sy_live_event(r, a->idx, a->number, "interrupted",
                  "stopped with its host (a second signal); not charged");
    sy_live_task_ready(r, a->idx, 0);
    return true;
}

int64_t sy_engine_grace_left_ms(const sy_engine *e)
{
    if (!e->grace_armed)
        return e->grace_ms;
    int64_t left = e->grace_ms - ((int64_t)uv_now(e->loop) - e->grace_started);
    return left > 0 ? left : 0;
}

size_t sy_engine_running(const sy_engine *e, char *names, size_t len)
{
    size_t n = 0, at = 0;
    if (len)
        names[0] = '\0';
    for (const sy_attempt *a = e->live; a; a = a->live_next) {
        const sy_live_task *t = &a->run->t[a->idx];
        if (t->current != a)
            continue; /* outlived its task (timed out): not what a user waits for */
        if (n < 5 && at + 1 < len) {
            int w = snprintf(names + at, len - at, "%s%s", n ? ", " : "", a->task.ns);
            at = w > 0 && (size_t)w < len - at ? at + (size_t)w : len - 1;
        }
        n++;
    }
    if (n > 5 && at + 1 < len)
        snprintf(names + at, len - at, " and %zu more", n - 5);
    return n;
}
