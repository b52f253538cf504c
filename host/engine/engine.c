/* The engine's lifecycle and its loop turn: apply completions, fire due
 * timers, decide, write one transaction, submit. */
#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/attempt.h"
#include "engine/batch.h"
#include "engine/completion.h"
#include "engine/dispatch.h"
#include "engine/fair.h"
#include "engine/limits.h"
#include "engine/waiters.h"
#include "engine/preempt.h"
#include "engine/priority.h"
#include "engine/process.h"
#include "engine/shutdown.h"
#include "engine/internal.h"
#include "engine/lease.h"
#include "engine/load.h"
#include "engine/map.h"
#include "engine/observe.h"
#include "engine/reload.h"
#include "engine/run.h"
#include "engine/schedule.h"
#include "engine/start_triggers.h"
#include "engine/named_events.h"
#include "engine/serve.h"

char *sy_engine_owner_id(void)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    return sy_asprintf("%s:%ld", host, (long)getpid());
}

/* Finished runs leave memory once their last rows are written and no
 * plugin holds one of their attempts. */
static void reap_runs(sy_engine *e)
{
    for (sy_live_run **p = &e->runs; *p;) {
        sy_live_run *r = *p;
        if (r->finished && r->inflight == 0 && !r->dirty) {
            sy_live_free(r); /* unlinks r */
            continue;
        }
        p = &r->next;
    }
}

/* Runs whose writes the store refused this turn: another host holds them
 * now.  Dropped once the turn's attempts are out, so that an attempt
 * decided for one is cancelled like any other it has running. */
static void drop_fenced(sy_engine *e)
{
    for (sy_live_run *r = e->runs; r; r = r->next)
        if (r->fenced && !r->lost) {
            sy_live_drop(r, r->fenced_why ? r->fenced_why : "a write was refused");
            free(r->fenced_why);
            r->fenced_why = NULL;
        }
}

static void stop_loop(sy_engine *e)
{
    e->stopping = true;
    uv_stop(e->loop);
}

static void check_idle(sy_engine *e)
{
    if (e->stopping)
        return;
    if (e->drain || e->winding_down) {
        if (!e->live && e->n_dirty == 0)
            stop_loop(e);
        return;
    }
    /* Idle means nothing held and no claim due: a host that filled its
     * claim batch claims again after its turn (serve.c), and the runs of
     * that next claim are work too. */
    if (e->o.serve && e->o.exit_when_idle && !e->runs && e->watched_left == 0 &&
        !uv_is_active((uv_handle_t *)&e->claim))
        stop_loop(e);
    /* Not before the last changes are written: a task a refused submit
     * ended, after this turn's write, is written by the next. */
    if (!e->o.serve && e->watched_left == 0 && e->n_dirty == 0 && !sy_batch_any_run_dirty(e))
        stop_loop(e);
}

/* One wake for completions and wakes: a plugin calls complete() then
 * wake() from the same thread, and the second send finds the first not yet
 * read, so the loop is woken once for both. */
static void on_done(sy_wake *w)
{
    sy_engine *e = w->data;
    sy_engine_apply_done(e);
    sy_dispatch_take_wakes(e);
    /* Outside the turn's batch: each event is a commit of its own. */
    sy_engine_emits_serve(e);
}

static void fatal_store(sy_engine *e, const char *what)
{
    sy_log(SY_LOG_ERROR, "store", "cannot %s: %s; stopping", what, sy_store_errmsg(e->o.store));
    e->fatal = true;
    uv_stop(e->loop);
}

/* A lapsed host (engine/lease.h) writes nothing; once the attempts it
 * cancelled are back and its runs freed, `serve` comes back as a new
 * host and `run` ends.  False when the turn may go on. */
static bool lapsed_turn(sy_engine *e)
{
    if (e->lease_past && !e->lapsed)
        sy_lease_lapsed(e, e->now());
    if (!e->lapsed)
        return false;
    /* Its attempts are being cancelled: none of their groups is recorded. */
    sy_process_refuse_all(e, SY_ESTATE, false);
    sy_lease_forget_writes(e);
    reap_runs(e);
    if (e->runs || e->live)
        return true;
    if (!e->o.serve || e->drain)
        stop_loop(e);
    else
        sy_lease_reregister(e);
    return true;
}

/* Once per loop turn: fire what is due on the engine's clock, decide,
 * write everything in one transaction, then submit what was decided. */
static void on_flush(uv_prepare_t *h)
{
    sy_engine *e = h->data;
    if (lapsed_turn(e))
        return;
    if (e->fatal) {
        /* Nothing is written any more; what is left is to get back the
         * attempts plugins hold, so that nothing they still reference
         * is freed under them.  A group nobody can record must stop. */
        sy_process_refuse_all(e, SY_EIO, false);
        if (e->winding_down && !e->live)
            stop_loop(e);
        return;
    }
    /* Reading the clock only while a timer waits keeps idle turns free. */
    if (e->timers.n > 0) {
        int64_t now = e->now();
        if (sy_timers_due(&e->timers, now))
            sy_timers_expire(&e->timers, now);
    }
    if (e->ready.n == 0 && e->n_dirty == 0 && !e->maps_pending && !sy_batch_any_run_dirty(e) &&
        !sy_process_pending(e)) {
        drop_fenced(e); /* an event refused since the last turn */
        reap_runs(e);
        if (e->retired)
            sy_reload_collect(e);
        check_idle(e);
        return;
    }
    sy_dispatch_begin_turn(e);
    /* The store's share of the turn, for the metrics: waiting for the
     * write lock, the writes and the commit, decisions left out. */
    uint64_t t0 = uv_hrtime();
    if (sy_store_begin(e->o.store) != SY_OK) {
        fatal_store(e, "begin");
        return;
    }
    /* The clock is read once the batch holds the store's write lock
     * (begin may have waited for it): while the leases hold at that
     * moment, no other host can claim a run before the commit. */
    int64_t now = e->now();
    if (sy_lease_lapsed(e, now)) {
        sy_store_rollback(e->o.store);
        lapsed_turn(e);
        return;
    }
    uint64_t t1 = uv_hrtime();
    /* Slots given back since the last turn first: the tasks waiting for
     * them are offered in this one. */
    /* cancel_in_progress: a holder here this host asked to end gives its
     * slot back in this turn's flush (another host's ask, at renewal). */
    if (sy_limits_asked(e))
        sy_preempt_poll(e, now);
    if (sy_limits_flush(e))
        sy_dispatch_offer_waiting(e);
    /* Once a write is refused the batch is rolled back: the rest of the
     * turn would be refused for "no batch is open", each with a line. */
    if (!e->fatal) {
        sy_map_turn(e);
        sy_dispatch_decide(e, now);
    }
    /* Ended waiters' rows go in this batch; the turn's view of the keys
     * is forgotten (engine/waiters.h). */
    sy_waiters_end_turn(e);
    uint64_t t2 = uv_hrtime();
    size_t rows = e->fatal ? 0 : sy_batch_write(e, now);
    sy_process_write(e, now);
    bool refused = e->fatal;
    if (refused || sy_store_commit(e->o.store) != SY_OK) {
        /* A write the batch refused has its line already: no second one
         * for the commit it made impossible. */
        if (refused)
            uv_stop(e->loop);
        else
            fatal_store(e, "commit");
        sy_store_rollback(e->o.store);
        sy_observe_discard(e);
        sy_dispatch_discard(e);
        sy_process_answer(e, SY_EIO);
        return;
    }
    sy_histogram_observe(&e->metrics.write, (int64_t)((t1 - t0) + (uv_hrtime() - t2)));
    sy_histogram_observe(&e->metrics.rows, (int64_t)rows);
    sy_process_answer(e, SY_OK);
    sy_observe_flush(e);
    sy_dispatch_submit(e);
    drop_fenced(e);
    /* A submit refused or busy changed its task after this turn's write:
     * one more turn writes it (and decides what it frees), or the loop
     * would sleep with the store saying Running. */
    if (e->n_dirty > 0 || e->maps_pending)
        sy_wake_send(&e->done);
    if (e->n_dirty == 0)
        reap_runs(e);
    if (e->retired)
        sy_reload_collect(e);
    check_idle(e);
}

void sy_engine_set_limits(sy_engine *e, const sy_pool_config *pools, size_t n_pools,
                          const sy_tenant_config *tenants, size_t n_tenants)
{
    sy_limits_set(e, pools, n_pools, tenants, n_tenants);
    /* A pool made larger may have room now: the waiting try again. */
    sy_dispatch_offer_waiting(e);
    sy_wake_send(&e->done);
}

void sy_engine_set_rates(sy_engine *e, const sy_rate_config *rates, size_t n)
{
    sy_limits_set_rates(e, rates, n);
    /* A faster rate may have a token now: the waiting try again. */
    sy_dispatch_offer_rate_waiting(e);
    sy_wake_send(&e->done);
}

void sy_engine_drain(sy_engine *e)
{
    e->drain++;
    sy_serve_quiet(e);
    if (e->winding_down && e->live) {
        /* The runs are over: nothing is left to drain, only the wait. */
        sy_grace_end_now(e);
        return;
    }
    if (e->drain >= 3) {
        stop_loop(e);
        return;
    }
    if (e->drain == 2)
        sy_engine_interrupt(e);
    sy_grace_start(e);
    /* Attempts not yet submitted will not be: they stay Ready in the
     * store for whoever runs next. */
    check_idle(e);
}

int sy_engine_draining(const sy_engine *e) { return e->drain; }

bool sy_engine_serving(const sy_engine *e) { return e->o.serve; }

bool sy_engine_winding_down(const sy_engine *e) { return e->winding_down && e->live; }

int sy_engine_cancel(sy_engine *e, int64_t run_id, const char *why)
{
    return sy_live_cancel_by_id(e, run_id, why);
}

bool sy_engine_view_run(const sy_engine *e, int64_t run_id, sy_engine_view *v)
{
    for (const sy_live_run *r = e->runs; r; r = r->next)
        if (r->id == run_id) {
            sy_live_fill_view(r, v);
            return true;
        }
    return false;
}

size_t sy_engine_runs_held(const sy_engine *e)
{
    size_t n = 0;
    for (const sy_live_run *r = e->runs; r; r = r->next)
        n += !r->finished;
    return n;
}

int sy_engine_new(sy_engine **out, uv_loop_t *loop, const sy_engine_opts *o, char *err,
                  size_t err_len)
{
    sy_engine *e = calloc(1, sizeof *e);
    if (!e)
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    e->loop = loop;
    e->o = *o;
    if (!e->o.max_context_bytes)
        e->o.max_context_bytes = 16u << 20;
    if (e->o.lease_ms <= 0)
        e->o.lease_ms = 30000;
    if (e->o.poll_ms <= 0)
        e->o.poll_ms = 200;
    if (e->o.map_window == 0)
        e->o.map_window = SY_MAP_WINDOW;
    if (e->o.priority_aging_ms <= 0)
        e->o.priority_aging_ms = SY_PRIORITY_AGING_MS;
    e->grace_ms = e->o.shutdown_grace_ms > 0 ? e->o.shutdown_grace_ms : 30000;
    e->now = o->clock ? o->clock : sy_clock_now_ms;
    e->done.data = e;
    int wrc = sy_wake_init(loop, &e->done, on_done);
    if (wrc) {
        if (uv_is_closing((uv_handle_t *)&e->done.poll))
            uv_run(loop, UV_RUN_NOWAIT); /* let libuv finish closing it */
        free(e);
        return sy_errf(err, err_len, "cannot make the loop's wake-up descriptor: %s",
                       uv_strerror(wrc)),
               SY_EIO;
    }
    pthread_mutex_init(&e->done_lock, NULL);
    sy_process_init(e);
    sy_engine_metrics_init(&e->metrics);
    sy_dispatch_init(e);
    sy_limits_init(e); /* before fair.c, which lets go of o.tenants */
    sy_fair_init(e);
    sy_timers_init(&e->timers, loop, e->now, !o->clock);
    uv_prepare_init(loop, &e->flush);
    e->flush.data = e;
    uv_prepare_start(&e->flush, on_flush);
    sy_serve_init(e);
    sy_schedule_init(e);
    sy_start_triggers_init(e);
    e->on_store_wake = sy_start_triggers_soon;
    *out = e;
    return SY_OK;
}

int sy_engine_adopt(sy_engine *e, int64_t run_id, bool stop_when_done, char *err,
                    size_t err_len)
{
    bool claimed = false;
    int64_t now = e->now();
    char **stale = NULL;
    size_t n_stale = sy_serve_stale_owners(e, &stale);
    int rc = sy_store_claim_run(e->o.store, run_id, e->o.owner, now + e->o.lease_ms, now,
                                (const char *const *)stale, n_stale, &claimed);
    sy_serve_free_owners(stale, n_stale);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "%s", sy_store_errmsg(e->o.store)), rc;
    if (!claimed)
        return sy_errf(err, err_len, "run %lld is held by another live host or has ended",
                       (long long)run_id),
               SY_EBUSY;
    sy_live_run *r;
    rc = sy_live_load(e, run_id, &r, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (stop_when_done && !r->finished) {
        r->watched = true;
        e->watched_left++;
    }
    return SY_OK;
}

static int run_loop(sy_engine *e)
{
    sy_serve_start(e);
    sy_schedule_start(e);
    sy_start_triggers_start(e);
    /* The first loop turn flushes whatever adopting the runs changed, then
     * decides whether anything is left to do. */
    uv_run(e->loop, UV_RUN_DEFAULT);
    if (e->drain >= 3)
        return 2;
    if (e->abandoned)
        return SY_ENGINE_ABANDONED;
    if (e->live) {
        /* Attempts that outlived their task (timed out, cancelled run), or
         * every attempt after a store failure: instances are destroyed, and
         * the engine freed, only after they come back.  A signal now still
         * counts as the first. */
        for (sy_attempt *a = e->live; a; a = a->live_next)
            sy_attempt_cancel(a);
        e->winding_down = true;
        e->stopping = false;
        sy_grace_start(e);
        sy_grace_say_waiting(e);
        uv_run(e->loop, UV_RUN_DEFAULT);
        if (e->drain >= 3)
            return 2;
        if (e->abandoned)
            return SY_ENGINE_ABANDONED;
    }
    sy_serve_stop(e);
    sy_schedule_stop(e);
    sy_start_triggers_stop(e);
    /* A lapsed host's runs are not its own to hand back. */
    if ((e->drain || e->winding_down) && !e->fatal && !e->lapsed)
        sy_store_release(e->o.store, e->o.owner);
    return e->fatal     ? -1
           : e->lapsed      ? SY_ENGINE_LAPSED
           : e->interrupted ? SY_ENGINE_INTERRUPTED
                            : 0;
}

int sy_engine_run(sy_engine *e)
{
    e->loop_thread = pthread_self();
    sy_engine_emits_open(e);
    int rc = run_loop(e);
    /* No turn writes a group from now on: a plugin reporting one stops it. */
    sy_process_refuse_all(e, SY_ESTATE, true);
    sy_engine_emits_close(e);
    return rc;
}

void sy_engine_counters_get(const sy_engine *e, sy_engine_counters *out)
{
    *out = e->counters;
    /* Plugin threads add to these (engine/process.c). */
    pthread_mutex_lock((pthread_mutex_t *)&e->done_lock);
    out->process_records = e->proc_records;
    out->process_wait_ns = e->proc_wait_ns;
    pthread_mutex_unlock((pthread_mutex_t *)&e->done_lock);
}

const char *sy_engine_owner(const sy_engine *e) { return e->o.owner; }

const char *sy_engine_lapse_reason(const sy_engine *e) { return e->lapse_why; }

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_engine_free(sy_engine *e)
{
    if (!e)
        return;
    /* Attempts still with plugins belong to them until they complete; the
     * caller destroys instances (which drains them) before this. */
    sy_engine_apply_done(e);
    while (e->runs) {
        sy_live_run *r = e->runs;
        r->finished = true;
        r->inflight = 0;
        sy_live_free(r);
    }
    sy_wake_close(&e->done);
    sy_grace_close(e);
    uv_close((uv_handle_t *)&e->flush, close_noop);
    sy_serve_close(e);
    sy_schedule_close(e);
    sy_start_triggers_close(e);
    sy_timers_close(&e->timers);
    uv_run(e->loop, UV_RUN_DEFAULT);
    sy_dispatch_free(e);
    sy_fair_free(e);
    sy_limits_free(e);
    sy_reload_free(e);
    sy_observe_free(e);
    free(e->ready.v);
    free(e->dirty);
    free(e->submit);
    sy_process_free(e);
    pthread_mutex_destroy(&e->done_lock);
    sy_engine_metrics_free(&e->metrics);
    free(e->lapse_why);
    free(e->owner_base);
    free(e->owner_own);
    free(e);
}
