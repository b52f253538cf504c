/* SIGTERM and SIGINT: drain first, stop now the second time. */
#include "service/signals.h"

#include <signal.h>
#include <string.h>

#include "base/log.h"

static void on_signal(uv_signal_t *h, int signum)
{
    sy_signals *s = h->data;
    sy_log(SY_LOG_INFO, "engine", "%s: %s", strsignal(signum),
           sy_engine_draining(s->engine) ? "stopping now" : "draining (again to stop now)");
    sy_engine_drain(s->engine);
}

void sy_signals_start(sy_signals *s, uv_loop_t *loop, sy_engine *engine)
{
    s->engine = engine;
    uv_signal_init(loop, &s->term);
    s->term.data = s;
    uv_signal_init(loop, &s->interrupt);
    s->interrupt.data = s;
    uv_signal_start(&s->term, on_signal, SIGTERM);
    uv_signal_start(&s->interrupt, on_signal, SIGINT);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_signals_close(sy_signals *s)
{
    uv_signal_stop(&s->term);
    uv_signal_stop(&s->interrupt);
    uv_close((uv_handle_t *)&s->term, close_noop);
    uv_close((uv_handle_t *)&s->interrupt, close_noop);
}
