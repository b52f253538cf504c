/* systemd's view of a serving host: ready, status, reload, watchdog. */
#include "service/supervise.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/sdnotify.h"

const char *sy_supervise_status(const sy_engine *e, char *buf, size_t len)
{
    char names[8];
    size_t running = sy_engine_running(e, names, sizeof names);
    size_t runs = sy_engine_runs_held(e);
    if (sy_engine_draining(e))
        snprintf(buf, len, "draining: %zu task%s running, at most %lld s more", running,
                 running == 1 ? "" : "s",
                 (long long)((sy_engine_grace_left_ms(e) + 999) / 1000));
    else
        snprintf(buf, len, "serving, %zu run%s, %zu task%s running", runs, runs == 1 ? "" : "s",
                 running, running == 1 ? "" : "s");
    return buf;
}

static void send_status(sy_supervise *s, const char *lead)
{
    char now[sizeof s->last];
    sy_supervise_status(s->engine, now, sizeof now);
    if (!lead && strcmp(now, s->last) == 0)
        return;
    memcpy(s->last, now, sizeof now);
    sy_sd_notifyf("%sSTATUS=%s", lead ? lead : "", now);
}

static void on_first_turn(uv_check_t *c)
{
    sy_supervise *s = c->data;
    uv_check_stop(c);
    s->ready = true;
    send_status(s, "READY=1\n");
}

static void on_status(uv_timer_t *t)
{
    sy_supervise *s = t->data;
    if (s->ready)
        send_status(s, NULL);
}

static void on_watchdog(uv_timer_t *t)
{
    (void)t;
    sy_sd_notify("WATCHDOG=1");
}

void sy_supervise_start(sy_supervise *s, uv_loop_t *loop, sy_engine *engine)
{
    memset(s, 0, sizeof *s);
    if (!sy_sd_enabled())
        return;
    s->engine = engine;
    s->active = true;
    /* A check handle runs after the turn's timers (the first claim) and
     * its flush: READY=1 then means the runs found at start are held. */
    uv_check_init(loop, &s->first_turn);
    s->first_turn.data = s;
    uv_check_start(&s->first_turn, on_first_turn);
    uv_timer_init(loop, &s->status);
    s->status.data = s;
    uv_timer_start(&s->status, on_status, SY_SUPERVISE_STATUS_MS, SY_SUPERVISE_STATUS_MS);
    uv_timer_init(loop, &s->watchdog);
    s->watchdog.data = s;
    uint64_t usec = sy_sd_watchdog_usec();
    if (usec) {
        /* Half the interval, as sd_watchdog_enabled(3) advises: one late
         * turn must not cost the host its life. */
        uint64_t ms = usec / 2000;
        uv_timer_start(&s->watchdog, on_watchdog, 0, ms ? ms : 1);
    }
    /* None of these keeps the loop up: the engine decides when it ends. */
    uv_unref((uv_handle_t *)&s->first_turn);
    uv_unref((uv_handle_t *)&s->status);
    uv_unref((uv_handle_t *)&s->watchdog);
}

void sy_supervise_reloading(sy_supervise *s)
{
    if (!s->active)
        return;
    sy_sd_notifyf("RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading the configuration",
                  sy_sd_monotonic_usec());
}

void sy_supervise_reloaded(sy_supervise *s, bool ok)
{
    if (!s->active)
        return;
    char now[sizeof s->last];
    sy_supervise_status(s->engine, now, sizeof now);
    memcpy(s->last, now, sizeof now);
    sy_sd_notifyf("READY=1\nSTATUS=%s%s", ok ? "" : "reload refused (see the log); ", now);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_supervise_close(sy_supervise *s)
{
    if (!s->active)
        return;
    uv_check_stop(&s->first_turn);
    uv_timer_stop(&s->status);
    uv_timer_stop(&s->watchdog);
    uv_close((uv_handle_t *)&s->first_turn, close_noop);
    uv_close((uv_handle_t *)&s->status, close_noop);
    uv_close((uv_handle_t *)&s->watchdog, close_noop);
    s->active = false;
}
