/* Leases, new runs and cancel requests: what other hosts see and ask. */
#include "engine/serve.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "store/slots.h"
#include "store/waiters.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/dispatch.h"
#include "engine/lease.h"
#include "engine/preempt.h"
#include "engine/listen.h"
#include "engine/load.h"
#include "engine/run.h"

typedef struct {
    char **v;
    size_t n, cap;
    const char *me;
} owner_list;

static int collect_owner(void *arg, const char *owner)
{
    /* An owner on this machine whose process is gone is dead for sure; no
     * need to wait for its lease. */
    owner_list *s = arg;
    const char *colon = strrchr(owner, ':');
    size_t hl = strcspn(s->me, ":");
    if (!colon || (size_t)(colon - owner) != hl || strncmp(owner, s->me, hl) != 0 ||
        strcmp(owner, s->me) == 0)
        return 0;
    long pid = strtol(colon + 1, NULL, 10);
    if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        s->v = sy_engine_grow(s->v, &s->cap, s->n + 1, sizeof *s->v);
        s->v[s->n++] = sy_xstrdup(owner);
    }
    return 0;
}

static int on_cancel_request(void *arg, int64_t run_id)
{
    sy_live_cancel_by_id(arg, run_id, "cancelled on request");
    return 0;
}

size_t sy_serve_stale_owners(sy_engine *e, char ***out)
{
    owner_list stale = {NULL, 0, 0, e->o.owner};
    sy_store_list_owners(e->o.store, collect_owner, &stale);
    *out = stale.v;
    return stale.n;
}

void sy_serve_free_owners(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/*
 * Claiming.  Every host claims whole runs (the fence is the run's claim:
 * engine/fenced.c), at most CLAIM_BATCH a claim, oldest first (FOR UPDATE
 * SKIP LOCKED on PostgreSQL).  A host is woken by another's submit,
 * release or cancel request (engine/listen.h) and then lets the others go
 * first in proportion to its load: RANK_STEP_MS for each run it works on
 * and each run it claimed lately.  All listening hosts are woken at once,
 * so the least loaded claims first, and the others find the run taken:
 * runs spread evenly without a table of hosts or a vote.  A host that
 * filled its batch claims again after its turn, so a backlog is shared by
 * bites.  The fallback poll, slow while the host listens, is for missed
 * wake-ups, and claims at once.
 */
#define CLAIM_BATCH 8
#define FALLBACK_MS 1500
#define LISTEN_RETRY_MS 2000
#define RANK_STEP_MS 3.0
#define RANK_MAX_MS 200.0
/* Half of a claim's weight is gone after this long. */
#define HEAT_HALF_LIFE_MS 250.0

static double heat_now(sy_engine *e, int64_t now)
{
    if (e->heat > 0 && now > e->heat_at)
        e->heat *= exp2(-(double)(now - e->heat_at) / HEAT_HALF_LIFE_MS);
    e->heat_at = now;
    return e->heat;
}

/* How long this host waits after a wake-up before it claims: its place in
 * line behind less loaded hosts, with a step's worth of chance so that
 * equally loaded hosts take turns. */
static uint64_t rank_delay_ms(sy_engine *e)
{
    size_t live = 0;
    for (const sy_live_run *r = e->runs; r; r = r->next)
        live += !r->finished && !r->lost;
    double ms = RANK_STEP_MS * ((double)live + heat_now(e, e->now()));
    if (ms > RANK_MAX_MS)
        ms = RANK_MAX_MS;
    return (uint64_t)(ms + RANK_STEP_MS * drand48());
}

/* Claims what it may; the number of runs it claimed. */
static size_t claim_new(sy_engine *e)
{
    char **stale = NULL;
    size_t n_stale = sy_serve_stale_owners(e, &stale);
    int64_t now = e->now(), ids[CLAIM_BATCH];
    size_t n = 0;
    if (sy_store_claim_runs(e->o.store, e->o.owner, now + e->o.lease_ms, now,
                            (const char *const *)stale, n_stale, CLAIM_BATCH, ids,
                            &n) != SY_OK)
        sy_log(SY_LOG_ERROR, "store", "cannot claim runs: %s", sy_store_errmsg(e->o.store));
    sy_serve_free_owners(stale, n_stale);
    e->heat = heat_now(e, now) + (double)n;
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (sy_live_run *r = e->runs; r; r = r->next) {
            if (r->id != ids[i] || r->lost)
                continue;
            /* This host claimed again a run it still works on: its lease
             * had lapsed unseen (the loop stalled), so the claim is a new
             * one and the copy in memory, written under the old one, may
             * be behind the store.  Start over from the store. */
            if (!r->finished)
                sy_live_drop(r, "its lease lapsed and this host claimed it anew; "
                                "reloading it");
            else
                known = true;
        }
        if (known)
            continue;
        char err[512];
        sy_live_run *r;
        if (sy_live_load(e, ids[i], &r, err, sizeof err) != SY_OK)
            sy_log(SY_LOG_ERROR, "engine", "run %lld: %s", (long long)ids[i], err);
        else
            sy_log(SY_LOG_INFO, "engine", "run %lld (%s) adopted", (long long)r->id,
                   r->wf->name);
    }
    return n;
}

static void on_claim(uv_timer_t *t);

/* Claims after this host's turn in line, unless a claim is due already. */
static void claim_soon(sy_engine *e)
{
    if (!e->drain && !uv_is_active((uv_handle_t *)&e->claim))
        uv_timer_start(&e->claim, on_claim, rank_delay_ms(e), 0);
}

/* Claims new runs and acts on cancel requests, unless the host lapsed: a
 * host whose lease lapsed would claim its own runs again as if nothing
 * had happened, so it takes no work until it came back. */
static void claim_and_cancel(sy_engine *e)
{
    if (e->drain || sy_lease_lapsed(e, e->now()))
        return;
    /* A full batch may have left more behind. */
    if (claim_new(e) == CLAIM_BATCH)
        claim_soon(e);
    sy_store_cancel_requests(e->o.store, e->o.owner, on_cancel_request, e);
}

static void on_claim(uv_timer_t *t) { claim_and_cancel(t->data); }

static void on_wake(void *arg)
{
    claim_soon(arg);
    /* A wake-up may be an event another host recorded, or a slot another
     * host gave back of a key tasks here wait for (store/postgres/
     * slots.c): they are offered at the next turn, not at their retry. */
    sy_engine *e = arg;
    size_t ready = e->ready.n;
    sy_dispatch_offer_waiting(e);
    if (e->ready.n > ready)
        sy_wake_send(&e->done);
    if (e->on_store_wake)
        e->on_store_wake(e);
}

/* Listens for wake-ups when the store has them; again after a lost
 * listening connection, at most every LISTEN_RETRY_MS. */
static void keep_listening(sy_engine *e)
{
    if (e->listen && !sy_listen_lost(e->listen))
        return;
    int64_t now = e->now();
    if (e->listen_retry > now)
        return;
    bool again = e->listen != NULL || e->listen_retry > 0;
    sy_listen_close(e->listen);
    const char *why = NULL;
    e->listen = sy_listen_open(e->loop, e->o.store, on_wake, e, &why);
    if (e->listen && again)
        sy_log(SY_LOG_INFO, "store", "listening for wake-ups again");
    else if (!e->listen && why && !again)
        sy_log(SY_LOG_WARN, "store", "cannot listen for wake-ups (%s); polling every %lld ms",
               why, (long long)e->o.poll_ms);
    /* A store without wake-ups (why is NULL) is not asked again. */
    e->listen_retry = e->listen || why ? now + LISTEN_RETRY_MS : INT64_MAX;
}

/* The next poll in poll_ms (FALLBACK_MS while listening), give or take a
 * fifth: hosts started together would otherwise poll in lockstep, the
 * same one always first. */
static uint64_t next_poll_ms(const sy_engine *e)
{
    double spread = 0.8 + 0.4 * drand48();
    int64_t every = e->listen && !sy_listen_lost(e->listen) ? FALLBACK_MS : e->o.poll_ms;
    uint64_t ms = (uint64_t)((double)every * spread);
    return ms ? ms : 1;
}

static void on_poll(uv_timer_t *t)
{
    sy_engine *e = t->data;
    if (e->drain)
        return;
    keep_listening(e);
    uv_timer_start(&e->poll, on_poll, next_poll_ms(e), 0);
    claim_and_cancel(e);
}

void sy_serve_poll_soon(sy_engine *e)
{
    if (e->o.serve && !e->drain)
        uv_timer_start(&e->poll, on_poll, 0, 0);
}

typedef struct {
    sy_engine *e;
    int64_t lease_until;
} renewal;

static int on_renewed(void *arg, int64_t run_id)
{
    renewal *w = arg;
    for (sy_live_run *r = w->e->runs; r; r = r->next)
        if (r->id == run_id && !r->lost) {
            r->renewed = true;
            r->lease_until = w->lease_until;
        }
    return 0;
}

/* Why the renewal left out a run this host works on, for the log. */
static void lost_why(sy_engine *e, sy_live_run *r, int64_t now, char *why, size_t len)
{
    sy_run_record rec;
    if (sy_store_get_run(e->o.store, r->id, &rec) != SY_OK) {
        snprintf(why, len, "its renewal failed: %s", sy_store_errmsg(e->o.store));
        return;
    }
    if (!rec.owner || strcmp(rec.owner, r->fence.owner) != 0 || rec.lease_epoch != r->fence.epoch)
        snprintf(why, len, "%s holds it now (claim %lld; this host had claim %lld)",
                 rec.owner ? rec.owner : "no host", (long long)rec.lease_epoch,
                 (long long)r->fence.epoch);
    else
        snprintf(why, len, "it expired %lld ms before this renewal: the host was stopped "
                 "or too slow to renew it", (long long)(now - rec.lease_until));
    sy_run_record_clear(&rec);
}

/* Renews this host's leases and stops working on the runs it no longer
 * holds: taken over by another host, or expired before this renewal (any
 * host may claim those at any moment, so none of their work can go on). */
static void on_renew(uv_timer_t *t)
{
    sy_engine *e = t->data;
    int64_t now = e->now();
    /* Past its lease by its own clock, the host lapses as a whole rather
     * than renewing what nobody took yet. */
    if (sy_lease_lapsed(e, now))
        return;
    for (sy_live_run *r = e->runs; r; r = r->next)
        r->renewed = false;
    renewal w = {e, now + e->o.lease_ms};
    if (sy_store_renew(e->o.store, e->o.owner, w.lease_until, now, on_renewed, &w) !=
        SY_OK) {
        sy_log(SY_LOG_WARN, "store", "cannot renew leases: %s", sy_store_errmsg(e->o.store));
        e->metrics.renewal_failures++;
        return;
    }
    e->metrics.renewals++;
    /* Slot rows of holders whose claim ended count for nothing already
     * (store/slots.h); deleting them keeps the counts' scans short. */
    size_t reaped = 0;
    if (sy_store_reap_slots(e->o.store, now, &reaped) != SY_OK)
        sy_log(SY_LOG_WARN, "store", "cannot reap slots: %s", sy_store_errmsg(e->o.store));
    /* Waiters under an ended claim, the same (store/waiters.h). */
    if (sy_store_reap_waiters(e->o.store, now, &reaped) != SY_OK)
        sy_log(SY_LOG_WARN, "store", "cannot reap waiters: %s", sy_store_errmsg(e->o.store));
    /* Other hosts' cancel_in_progress requests on this host's slots
     * (engine/preempt.h): acted on within one renewal interval. */
    sy_preempt_poll(e, now);
    for (sy_live_run *r = e->runs; r; r = r->next) {
        /* A finished run's last state is written already: nothing to
         * renew. */
        if (r->renewed || r->lost || r->finished)
            continue;
        char why[512];
        lost_why(e, r, now, why, sizeof why);
        sy_live_drop(r, why);
    }
}

void sy_serve_init(sy_engine *e)
{
    uv_timer_init(e->loop, &e->poll);
    e->poll.data = e;
    uv_timer_init(e->loop, &e->renew);
    e->renew.data = e;
    uv_timer_init(e->loop, &e->claim);
    e->claim.data = e;
}

/* `run` (not serving) claims nothing, but its run takes cancel requests
 * as a serving host's do: `switchyard cancel` from another process sets
 * the request, this host carries it out. */
static void on_watch(uv_timer_t *t)
{
    sy_engine *e = t->data;
    if (!e->drain && !sy_lease_lapsed(e, e->now()))
        sy_store_cancel_requests(e->o.store, e->o.owner, on_cancel_request, e);
}

void sy_serve_start(sy_engine *e)
{
    if (e->o.serve) {
        /* Seeded by the process, so that hosts started together drift
         * apart. */
        srand48((long)getpid() ^ (long)uv_hrtime());
        uv_timer_start(&e->poll, on_poll, 0, 0);
    } else {
        uv_timer_start(&e->poll, on_watch, (uint64_t)e->o.poll_ms, (uint64_t)e->o.poll_ms);
        /* The watch alone does not keep the loop running. */
        uv_unref((uv_handle_t *)&e->poll);
    }
    uv_timer_start(&e->renew, on_renew, (uint64_t)e->o.lease_ms / 3,
                   (uint64_t)e->o.lease_ms / 3);
}

void sy_serve_quiet(sy_engine *e)
{
    uv_timer_stop(&e->poll);
    uv_timer_stop(&e->claim);
    sy_listen_close(e->listen);
    e->listen = NULL;
    e->listen_retry = INT64_MAX;
}

void sy_serve_stop(sy_engine *e)
{
    sy_serve_quiet(e);
    uv_timer_stop(&e->renew);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_serve_close(sy_engine *e)
{
    uv_close((uv_handle_t *)&e->poll, close_noop);
    uv_close((uv_handle_t *)&e->renew, close_noop);
    uv_close((uv_handle_t *)&e->claim, close_noop);
    sy_listen_close(e->listen);
    e->listen = NULL;
}
