/* The watchdog thread: stuck plugin calls, reported while they are stuck. */
#include "executor/watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "executor/call_record.h"

/* How often the record is read: a stuck call is reported at most this
 * late. */
#define WATCH_INTERVAL_MS 100

static pthread_t thread;
static bool running;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static bool stopping;
static atomic_uint_fast64_t stuck_count;

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The call being reported, remembered until it returns. */
typedef struct {
    bool active;
    uint64_t seq;
    int64_t started_ns;
    sy_call_snapshot what;
} stuck_call;

static void report_stuck(const sy_call_snapshot *s, sy_instance_entry *e, int64_t ms)
{
    atomic_store(&e->unhealthy, true);
    atomic_fetch_add(&stuck_count, 1);
    sy_log_fields f = {.instance = s->instance, .run = s->run_id,
                       .task = s->ns[0] ? s->ns : NULL, .attempt = s->attempt};
    sy_logf(SY_LOG_ERROR, s->instance, &f,
           "plugin bug: executor '%s', instance '%s': %s()%s%s has not returned after %lld ms "
           "(the bound is %lld ms); the host's loop is stuck inside the plugin.  The instance "
           "gets no new task; isolate it (isolate_plugin = true) or route its tasks elsewhere, and "
           "restart the host",
           s->plugin, s->instance, s->call, s->ns[0] ? " of task " : "", s->ns, (long long)ms,
           (long long)(e->call_timeout_ms > 0 ? e->call_timeout_ms : SY_CALL_BOUND_MS));
}

static void check(stuck_call *stuck)
{
    sy_call_snapshot s;
    sy_instance_entry *e = NULL;
    if (!sy_call_current(&s, &e))
        return;
    int64_t now = monotonic_ns();
    if (stuck->active && (!s.in_call || s.seq != stuck->seq)) {
        sy_log(SY_LOG_WARN, stuck->what.instance,
               "executor '%s', instance '%s': the stuck %s() returned after %lld ms; the "
               "instance stays out of dispatch until the host restarts",
               stuck->what.plugin, stuck->what.instance, stuck->what.call,
               (long long)((now - stuck->started_ns) / 1000000));
        stuck->active = false;
    }
    if (!s.in_call || !e || stuck->active)
        return;
    int64_t bound = e->call_timeout_ms > 0 ? e->call_timeout_ms : SY_CALL_BOUND_MS;
    int64_t ms = (now - s.started_ns) / 1000000;
    if (ms < bound)
        return;
    *stuck = (stuck_call){.active = true, .seq = s.seq, .started_ns = s.started_ns, .what = s};
    report_stuck(&s, e, ms);
}

static void *watch(void *arg)
{
    (void)arg;
    stuck_call stuck = {0};
    pthread_mutex_lock(&lock);
    while (!stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += WATCH_INTERVAL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&stop_cond, &lock, &until);
        if (stopping)
            break;
        pthread_mutex_unlock(&lock);
        check(&stuck);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int sy_watchdog_start(char *err, size_t err_len)
{
    if (running)
        return 0;
    stopping = false;
    int rc = pthread_create(&thread, NULL, watch, NULL);
    if (rc != 0) {
        snprintf(err, err_len, "watchdog thread: %s", strerror(rc));
        return -1;
    }
    running = true;
    return 0;
}

void sy_watchdog_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_signal(&stop_cond);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    running = false;
}

uint64_t sy_watchdog_stuck_count(void) { return (uint64_t)atomic_load(&stuck_count); }
