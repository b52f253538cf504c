/* SIGTERM and SIGINT: drain, then cancel, then stop at once; SIGHUP:
 * reload. */
#include "service/signals.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/sdnotify.h"

/* How often a drain says what it still waits for. */
#define COUNTDOWN_MS 5000

static void say_waiting(sy_signals *s, const char *lead)
{
    char names[512];
    size_t n = sy_engine_running(s->engine, names, sizeof names);
    if (n == 0) {
        sy_log(SY_LOG_INFO, "engine", "%s: nothing is running; stopping", lead);
        return;
    }
    sy_log(SY_LOG_INFO, "engine",
           "%s: waiting for %zu running task%s (%s), at most %lld s more; again to cancel %s",
           lead, n, n == 1 ? "" : "s", names,
           (long long)((sy_engine_grace_left_ms(s->engine) + 999) / 1000), n == 1 ? "it" : "them");
}

static void on_countdown(uv_timer_t *t)
{
    sy_signals *s = t->data;
    if (sy_engine_draining(s->engine) == 1)
        say_waiting(s, "draining");
}

bool sy_signals_drain(sy_signals *s, const char *why)
{
    if (sy_engine_draining(s->engine))
        return false;
    /* Whoever asked (systemctl stop, a kill by hand, POST /api/v1/drain),
     * systemd then shows the unit stopping rather than failing when it
     * exits. */
    sy_sd_notify("STOPPING=1\nSTATUS=draining");
    char lead[160];
    snprintf(lead, sizeof lead, "%s: draining", why);
    say_waiting(s, lead);
    uv_timer_start(&s->countdown, on_countdown, COUNTDOWN_MS, COUNTDOWN_MS);
    sy_engine_drain(s->engine);
    return true;
}

static void on_signal(uv_signal_t *h, int signum)
{
    sy_signals *s = h->data;
    int level = sy_engine_draining(s->engine) + 1;
    const char *name = strsignal(signum);
    if (sy_engine_winding_down(s->engine)) {
        sy_log(SY_LOG_INFO, "engine", "%s: no longer waiting for plugins", name);
    } else if (level == 1) {
        sy_signals_drain(s, name);
        return;
    } else if (level == 2) {
        uv_timer_stop(&s->countdown);
        char names[512];
        size_t n = sy_engine_running(s->engine, names, sizeof names);
        sy_log(SY_LOG_INFO, "engine", "%s: cancelling %zu running task%s%s%s%s; again to stop at once",
               name, n, n == 1 ? "" : "s", n ? " (" : "", n ? names : "", n ? ")" : "");
        sy_log(SY_LOG_INFO, "engine", "%s",
               sy_engine_serving(s->engine)
                   ? "their tasks go back to Ready, not charged, for the next host"
                   : "they end Cancelled, and the run is recorded Cancelled");
    } else {
        sy_log(SY_LOG_INFO, "engine", "%s: stopping now", name);
    }
    sy_engine_drain(s->engine);
}

static void on_hangup(uv_signal_t *h, int signum)
{
    (void)signum;
    sy_signals *s = h->data;
    if (!s->reload) {
        sy_log(SY_LOG_WARN, "engine", "Hangup: no configuration file to read again; ignored");
        return;
    }
    if (sy_engine_draining(s->engine)) {
        sy_log(SY_LOG_WARN, "engine", "Hangup: the host is stopping; not reloaded");
        return;
    }
    s->reload(s->arg);
}

void sy_signals_start(sy_signals *s, uv_loop_t *loop, sy_engine *engine,
                      void (*reload)(void *arg), void *arg)
{
    s->engine = engine;
    s->reload = reload;
    s->arg = arg;
    uv_signal_init(loop, &s->hangup);
    s->hangup.data = s;
    uv_signal_start(&s->hangup, on_hangup, SIGHUP);
    uv_signal_init(loop, &s->term);
    s->term.data = s;
    uv_signal_init(loop, &s->interrupt);
    s->interrupt.data = s;
    uv_timer_init(loop, &s->countdown);
    s->countdown.data = s;
    /* The countdown only speaks while something else keeps the loop up. */
    uv_unref((uv_handle_t *)&s->countdown);
    uv_signal_start(&s->term, on_signal, SIGTERM);
    uv_signal_start(&s->interrupt, on_signal, SIGINT);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_signals_close(sy_signals *s)
{
    uv_signal_stop(&s->term);
    uv_signal_stop(&s->interrupt);
    uv_signal_stop(&s->hangup);
    uv_timer_stop(&s->countdown);
    uv_close((uv_handle_t *)&s->hangup, close_noop);
    uv_close((uv_handle_t *)&s->term, close_noop);
    uv_close((uv_handle_t *)&s->interrupt, close_noop);
    uv_close((uv_handle_t *)&s->countdown, close_noop);
}
