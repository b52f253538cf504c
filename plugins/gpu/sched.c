/* The gpu plugin's scheduler (see sched.h): ordering, best-fit placement,
 * the EASY reservation and backfill, and the two baselines. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

int sy_gs_init(sy_gs *s, int ndev, size_t cap)
{
    if (ndev < 0 || ndev > SY_GS_MAX_DEVS)
        return -1;
    s->ndev = ndev;
    s->cap = cap ? cap : 1;
    s->queue = calloc(s->cap, sizeof *s->queue);
    s->run = calloc(s->cap, sizeof *s->run);
    if (!s->queue || !s->run) {
        sy_gs_fini(s);
        return -1;
    }
    if (!s->default_run_ms)
        s->default_run_ms = 3600 * 1000;
    return 0;
}

void sy_gs_fini(sy_gs *s)
{
    free(s->queue);
    free(s->run);
    s->queue = s->run = NULL;
    s->nq = s->nr = 0;
}

size_t sy_gs_queued(const sy_gs *s) { return s->nq; }
size_t sy_gs_running(const sy_gs *s) { return s->nr; }

bool sy_gs_dev_idle(const sy_gs *s, int d)
{
    return !s->dev[d].whole && !s->dev[d].shared;
}

int64_t sy_gs_estimate(const sy_gs *s, const sy_gs_job *j)
{
    if (j->expected_ms > 0)
        return j->expected_ms;
    if (j->timeout_ms > 0)
        return j->timeout_ms;
    return s->default_run_ms;
}

/* The device could ever run the task (busy or drained aside). */
static bool matches(const sy_gs_dev *d, const sy_gs_job *j)
{
    if (j->mem_mib > 0 && d->mem_mib > 0 && j->mem_mib > d->mem_mib)
        return false;
    if (j->model && j->model[0] &&
        fnmatch(j->model, d->model ? d->model : "", 0) != 0)
        return false;
    return true;
}

static bool shares(const sy_gs *s, const sy_gs_job *j)
{
    return s->share && j->share && j->mem_mib > 0;
}

/* The device can take the task now. */
static bool usable(const sy_gs *s, const sy_gs_dev *d, const sy_gs_job *j)
{
    if (d->drained || d->whole || !matches(d, j))
        return false;
    if (!d->shared)
        return true;
    return shares(s, j) && d->mem_used + j->mem_mib <= d->mem_mib;
}

bool sy_gs_feasible(const sy_gs *s, const sy_gs_job *j, char *why,
                    size_t why_len)
{
    int n = 0;
    for (int i = 0; i < s->ndev; i++)
        n += matches(&s->dev[i], j);
    if (n >= j->gpus && j->gpus >= 1)
        return true;
    if (why && why_len)
        snprintf(why, why_len, "the task needs %d GPU%s%s%s%s, but this "
                 "instance has %d that match%s", j->gpus,
                 j->gpus == 1 ? "" : "s", j->model ? " of model " : "",
                 j->model ? j->model : "",
                 j->mem_mib > 0 ? " with enough memory" : "", n,
                 n == 1 ? "es" : "");
    return false;
}

int sy_gs_enqueue(sy_gs *s, sy_gs_job *j, int64_t now)
{
    if (s->nq + s->nr >= s->cap)
        return -1;
    j->seq = ++s->seq;
    j->queued_at = now;
    j->running = false;
    j->overdue = false;
    j->ndevs = 0;
    s->queue[s->nq++] = j;
    return 0;
}

static bool take_out(sy_gs_job **v, size_t *n, const sy_gs_job *j)
{
    for (size_t i = 0; i < *n; i++)
        if (v[i] == j) {
            memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof *v);
            (*n)--;
            return true;
        }
    return false;
}

bool sy_gs_remove(sy_gs *s, sy_gs_job *j)
{
    if (s->reserved_for == j)
        s->reserved_for = NULL;
    return take_out(s->queue, &s->nq, j);
}

static bool past_bound(const sy_gs *s, const sy_gs_job *j, int64_t now)
{
    int g = j->gpus > SY_GS_MAX_DEVS ? SY_GS_MAX_DEVS : j->gpus;
    int64_t b = s->wait_bound[g];
    return b > 0 && now - j->queued_at >= b;
}

sy_gs_job *sy_gs_overdue(sy_gs *s, int64_t now)
{
    for (size_t i = 0; i < s->nq; i++)
        if (!s->queue[i]->overdue && past_bound(s, s->queue[i], now)) {
            s->queue[i]->overdue = true;
            return s->queue[i];
        }
    return NULL;
}

/* Queue order: past the wait bound first (oldest first), then priority,
 * then arrival.  FIFO ignores everything but arrival. */
static bool before(const sy_gs *s, const sy_gs_job *a, const sy_gs_job *b,
                   int64_t now)
{
    if (s->policy != SY_GS_FIFO) {
        bool oa = past_bound(s, a, now), ob = past_bound(s, b, now);
        if (oa != ob)
            return oa;
        if (!oa && a->priority != b->priority)
            return a->priority > b->priority;
    }
    return a->seq < b->seq;
}

/* Insertion sort: the queue is short and mostly sorted already. */
static void order(sy_gs *s, int64_t now)
{
    for (size_t i = 1; i < s->nq; i++) {
        sy_gs_job *j = s->queue[i];
        size_t k = i;
        while (k > 0 && before(s, j, s->queue[k - 1], now)) {
            s->queue[k] = s->queue[k - 1];
            k--;
        }
        s->queue[k] = j;
    }
}

/* Best fit for a whole-device task among the devices in `ok`: the island
 * with the fewest candidates that still holds it; when none does, the
 * fullest islands first, so the task spans as few as it can. */
static int pick_whole(const sy_gs *s, const bool *ok, int want, int *out)
{
    int count[SY_GS_MAX_DEVS] = {0}, island[SY_GS_MAX_DEVS], ni = 0;
    for (int d = 0; d < s->ndev; d++) {
        if (!ok[d])
            continue;
        int k = 0;
        while (k < ni && island[k] != s->dev[d].island)
            k++;
        if (k == ni)
            island[ni++] = s->dev[d].island;
        count[k]++;
    }
    int best = -1;
    for (int k = 0; k < ni; k++)
        if (count[k] >= want && (best < 0 || count[k] < count[best]))
            best = k;
    int n = 0;
    if (best >= 0) {
        for (int d = 0; d < s->ndev && n < want; d++)
            if (ok[d] && s->dev[d].island == island[best])
                out[n++] = d;
        return n;
    }
    bool used[SY_GS_MAX_DEVS] = {false};
    while (n < want) {
        int big = -1;
        for (int k = 0; k < ni; k++)
            if (!used[k] && (big < 0 || count[k] > count[big]))
                big = k;
        if (big < 0)
            break;
        used[big] = true;
        for (int d = 0; d < s->ndev && n < want; d++)
            if (ok[d] && s->dev[d].island == island[big])
                out[n++] = d;
    }
    return n;
}

/* Best fit for a sharing task: devices already shared whose free memory
 * fits it most tightly, then idle ones. */
static int pick_shared(const sy_gs *s, const bool *ok, int want, int *out)
{
    bool taken[SY_GS_MAX_DEVS] = {false};
    int n = 0;
    while (n < want) {
        int best = -1;
        int64_t best_left = 0;
        for (int d = 0; d < s->ndev; d++) {
            if (!ok[d] || taken[d])
                continue;
            const sy_gs_dev *v = &s->dev[d];
            /* An idle device ranks after every shared one. */
            int64_t left = v->shared ? v->mem_mib - v->mem_used
                                     : INT64_MAX / 2 + v->mem_mib;
            if (best < 0 || left < best_left) {
                best = d;
                best_left = left;
            }
        }
        if (best < 0)
            break;
        taken[best] = true;
        out[n++] = best;
    }
    return n;
}

static void start(sy_gs *s, sy_gs_job *j, const int *devs, int64_t now)
{
    bool sh = shares(s, j);
    j->ndevs = j->gpus;
    for (int i = 0; i < j->gpus; i++) {
        sy_gs_dev *d = &s->dev[devs[i]];
        j->devs[i] = devs[i];
        if (sh) {
            d->shared++;
            d->mem_used += j->mem_mib;
        } else {
            d->whole = 1;
        }
    }
    j->running = true;
    j->started_at = now;
    j->end_est = now + sy_gs_estimate(s, j);
    if (s->reserved_for == j)
        s->reserved_for = NULL;
    take_out(s->queue, &s->nq, j);
    s->run[s->nr++] = j;
}

/* Places `j` on usable devices not in `exclude` (may be NULL).  True when
 * it started. */
static bool try_place(sy_gs *s, sy_gs_job *j, const bool *exclude,
                      int64_t now)
{
    bool ok[SY_GS_MAX_DEVS];
    int n = 0, devs[SY_GS_MAX_DEVS];
    for (int d = 0; d < s->ndev; d++) {
        ok[d] = usable(s, &s->dev[d], j) && !(exclude && exclude[d]);
        n += ok[d];
    }
    if (j->gpus < 1 || n < j->gpus)
        return false;
    int got = shares(s, j) ? pick_shared(s, ok, j->gpus, devs)
                           : pick_whole(s, ok, j->gpus, devs);
    if (got < j->gpus)
        return false;
    start(s, j, devs, now);
    return true;
}

/* When each device is expected to be free for `j`: now when usable,
 * else the latest expected end of its tasks (a task past its estimate is
 * expected to end at any moment); INT64_MAX when it never can be. */
static void free_times(const sy_gs *s, const sy_gs_job *j, int64_t now,
                       int64_t *at)
{
    for (int d = 0; d < s->ndev; d++) {
        const sy_gs_dev *v = &s->dev[d];
        at[d] = (v->drained || !matches(v, j)) ? INT64_MAX
                : usable(s, v, j) ? now : now + 1;
    }
    for (size_t i = 0; i < s->nr; i++) {
        const sy_gs_job *r = s->run[i];
        int64_t end = r->end_est > now ? r->end_est : now + 1;
        for (int k = 0; k < r->ndevs; k++) {
            int d = r->devs[k];
            if (at[d] != INT64_MAX && at[d] != now && end > at[d])
                at[d] = end;
        }
    }
}

/* The reservation of `head`: the `gpus` devices that free earliest, and
 * the time the last of them frees (the shadow time).  False when it
 * cannot be reserved (too few undrained devices). */
static bool reserve(const sy_gs *s, const sy_gs_job *head, int64_t now,
                    bool *reserved, int64_t *shadow)
{
    int64_t at[SY_GS_MAX_DEVS];
    free_times(s, head, now, at);
    memset(reserved, 0, sizeof(bool) * SY_GS_MAX_DEVS);
    *shadow = now;
    for (int n = 0; n < head->gpus; n++) {
        int best = -1;
        for (int d = 0; d < s->ndev; d++)
            if (!reserved[d] && at[d] != INT64_MAX &&
                (best < 0 || at[d] < at[best]))
                best = d;
        if (best < 0)
            return false;
        reserved[best] = true;
        if (at[best] > *shadow)
            *shadow = at[best];
    }
    return true;
}

sy_gs_job *sy_gs_next(sy_gs *s, int64_t now)
{
    if (!s->nq)
        return NULL;
    order(s, now);
    sy_gs_job *head = s->queue[0];
    if (try_place(s, head, NULL, now))
        return head;
    if (s->policy == SY_GS_FIFO)
        return NULL;
    bool reserved[SY_GS_MAX_DEVS] = {false};
    int64_t shadow = INT64_MAX;
    bool have = s->policy == SY_GS_EASY &&
                reserve(s, head, now, reserved, &shadow);
    s->reserved_for = have ? head : NULL;
    s->shadow_ms = have ? shadow : 0;
    for (size_t i = 1; i < s->nq; i++) {
        sy_gs_job *j = s->queue[i];
        bool ends_first = !have || now + sy_gs_estimate(s, j) <= shadow;
        if (try_place(s, j, ends_first ? NULL : reserved, now))
            return j;
    }
    return NULL;
}

void sy_gs_release(sy_gs *s, sy_gs_job *j)
{
    if (!take_out(s->run, &s->nr, j))
        return;
    bool sh = shares(s, j);
    for (int i = 0; i < j->ndevs; i++) {
        sy_gs_dev *d = &s->dev[j->devs[i]];
        if (sh) {
            d->shared--;
            d->mem_used -= j->mem_mib;
        } else {
            d->whole = 0;
        }
    }
    j->running = false;
}
