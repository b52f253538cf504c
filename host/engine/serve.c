/* Leases, new runs and cancel requests: what other hosts see and ask. */
#include "engine/serve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/batch.h"
#include "engine/lease.h"
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

static void claim_new(sy_engine *e)
{
    char **stale = NULL;
    size_t n_stale = sy_serve_stale_owners(e, &stale);
    int64_t now = e->now(), ids[64];
    size_t n = 0;
    if (sy_store_claim_runs(e->o.store, e->o.owner, now + e->o.lease_ms, now,
                            (const char *const *)stale, n_stale, 64, ids, &n) != SY_OK)
        sy_log(SY_LOG_ERROR, "store", "cannot claim runs: %s", sy_store_errmsg(e->o.store));
    sy_serve_free_owners(stale, n_stale);
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
}

/* The next poll in poll_ms, give or take a fifth: hosts started together
 * would otherwise poll in lockstep, the same one always first after each
 * submit, taking every run while the others idle. */
static uint64_t next_poll_ms(const sy_engine *e)
{
    double spread = 0.8 + 0.4 * drand48();
    uint64_t ms = (uint64_t)((double)e->o.poll_ms * spread);
    return ms ? ms : 1;
}

static void on_poll(uv_timer_t *t)
{
    sy_engine *e = t->data;
    if (e->drain)
        return;
    uv_timer_start(&e->poll, on_poll, next_poll_ms(e), 0);
    /* A host whose lease lapsed would claim its own runs again as if
     * nothing had happened: it takes no work until it came back. */
    if (sy_lease_lapsed(e, e->now()))
        return;
    claim_new(e);
    sy_store_cancel_requests(e->o.store, e->o.owner, on_cancel_request, e);
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
        return;
    }
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
}

void sy_serve_start(sy_engine *e)
{
    if (e->o.serve) {
        /* Seeded by the process, so that hosts started together drift
         * apart. */
        srand48((long)getpid() ^ (long)uv_hrtime());
        uv_timer_start(&e->poll, on_poll, 0, 0);
    }
    uv_timer_start(&e->renew, on_renew, (uint64_t)e->o.lease_ms / 3,
                   (uint64_t)e->o.lease_ms / 3);
}

void sy_serve_stop(sy_engine *e)
{
    uv_timer_stop(&e->poll);
    uv_timer_stop(&e->renew);
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_serve_close(sy_engine *e)
{
    uv_close((uv_handle_t *)&e->poll, close_noop);
    uv_close((uv_handle_t *)&e->renew, close_noop);
}
