/* The engine's loop: batches, dispatch, completions, timers, signals. */
#include "base/clock.h"
#include "engine/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "workflow/context.h"
#include "base/duration.h"
#include "base/log.h"
#include "config/params.h"
#include "base/util.h"

char *sy_engine_owner_id(void)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    return sy_asprintf("%s:%ld", host, (long)getpid());
}

static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return v;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *nv = realloc(v, c * elem);
    if (!nv) {
        sy_log(SY_LOG_ERROR, "engine", "out of memory");
        abort();
    }
    *cap = c;
    return nv;
}

/* --- the ready queue and the dirty list ------------------------------------- */

static void tq_push(sy_task_queue *q, sy_live_run *r, size_t idx)
{
    if (q->n == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 256;
        sy_task_ref *nv = sy_xmalloc(nc * sizeof *nv);
        for (size_t i = 0; i < q->n; i++)
            nv[i] = q->v[(q->head + i) % q->cap];
        free(q->v);
        q->v = nv;
        q->head = 0;
        q->cap = nc;
    }
    q->v[(q->head + q->n) % q->cap] = (sy_task_ref){r, idx};
    q->n++;
}

static sy_task_ref tq_pop(sy_task_queue *q)
{
    sy_task_ref t = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    return t;
}

void sy_engine_mark_task(sy_live_run *r, size_t idx)
{
    sy_engine *e = r->e;
    if (r->t[idx].dirty)
        return;
    r->t[idx].dirty = true;
    e->dirty = grow(e->dirty, &e->cap_dirty, e->n_dirty + 1, sizeof *e->dirty);
    e->dirty[e->n_dirty++] = (sy_task_ref){r, idx};
}

void sy_engine_mark_run(sy_live_run *r) { r->dirty = true; }

void sy_engine_enqueue(sy_live_run *r, size_t idx) { tq_push(&r->e->ready, r, idx); }

sy_instance_queue *sy_engine_instance_queue(sy_engine *e, const char *name)
{
    for (size_t i = 0; i < e->n_instances; i++)
        if (strcmp(e->instances[i].entry->cfg->name, name) == 0)
            return &e->instances[i];
    return NULL;
}

/* --- attempts ------------------------------------------------------------------ */

static void attempt_free_cb(uv_handle_t *h)
{
    sy_attempt *a = h->data;
    if (!a->input_borrowed)
        free(a->input);
    free(a->output);
    free(a->result_error);
    free(a);
}

/* Frees an attempt once the plugin has returned it (or never took it). */
static void attempt_release(sy_attempt *a)
{
    sy_live_run *r = a->run;
    sy_engine *e = a->e;
    r->inflight--;
    if (a->lprev)
        a->lprev->lnext = a->lnext;
    else
        e->live = a->lnext;
    if (a->lnext)
        a->lnext->lprev = a->lprev;
    if (a->deadline_armed) {
        uv_timer_stop(&a->deadline);
        uv_close((uv_handle_t *)&a->deadline, attempt_free_cb);
    } else {
        a->deadline.data = a;
        attempt_free_cb((uv_handle_t *)&a->deadline);
    }
}

/* Finished runs leave memory once their last rows are written and no
 * plugin holds one of their attempts. */
static void reap_runs(sy_engine *e)
{
    for (sy_live_run **p = &e->runs; *p;) {
        sy_live_run *r = *p;
        if (r->finished && r->inflight == 0 && !r->dirty) {
            sy_engine_free_run(r); /* unlinks r */
            continue;
        }
        p = &r->next;
    }
}

/* Runs on the plugin's thread: copy what the host needs and queue it. */
static void on_complete(sy_completion *c, const sy_result *res)
{
    sy_attempt *a = (sy_attempt *)c;
    sy_engine *e = a->e;
    a->outcome = res->outcome;
    if (res->output && res->output_len) {
        a->output = malloc(res->output_len + 1);
        if (a->output) {
            memcpy(a->output, res->output, res->output_len);
            a->output[res->output_len] = '\0';
            a->output_len = res->output_len;
        }
    }
    a->result_error = res->error ? strdup(res->error) : NULL;
    pthread_mutex_lock(&e->qlock);
    a->qnext = NULL;
    if (e->qtail)
        e->qtail->qnext = a;
    else
        e->qhead = a;
    e->qtail = a;
    pthread_mutex_unlock(&e->qlock);
    sy_wake_send(&e->done);
}

static void on_deadline(uv_timer_t *t)
{
    sy_attempt *a = t->data;
    sy_live_run *r = a->run;
    sy_live_task *tt = &r->t[a->idx];
    if (tt->current != a)
        return;
    a->timed_out = true;
    tt->current = NULL;
    r->n_running--;
    char msg[128];
    char dur[32];
    snprintf(msg, sizeof msg, "timed out after %s (attempt %u)",
             sy_duration_format(a->task.timeout_ms, dur, sizeof dur), a->number);
    sy_store_add_event(r->e->o.store, r->id, (uint32_t)a->idx, a->number, "timed_out", msg,
                       sy_clock_now_ms());
    if (!a->cancel_sent) {
        a->cancel_sent = true;
        a->queue->entry->plugin->desc->cancel(a->queue->entry->inst, &a->c);
    }
    sy_engine_fail_or_retry(r, a->idx, true, msg);
}

/* The attempt's outcome, applied to its task. */
static void apply_result(sy_engine *e, sy_attempt *a)
{
    sy_live_run *r = a->run;
    sy_live_task *t = &r->t[a->idx];
    if (t->current != a) {
        static const char *const outcomes[] = {"succeeded", "failed", "timed out",
                                               "cancelled"};
        char detail[256];
        snprintf(detail, sizeof detail, "attempt %u %s after %s; ignored", a->number,
                 (unsigned)a->outcome < 4 ? outcomes[a->outcome] : "ended",
                 a->timed_out ? "its timeout" : "it stopped being current");
        sy_store_add_event(e->o.store, r->id, (uint32_t)a->idx, a->number, "stale", detail,
                           sy_clock_now_ms());
        return;
    }
    t->current = NULL;
    r->n_running--;
    if (r->cancelling) {
        sy_engine_set_state(r, a->idx, SY_TASK_FAILED);
        free(t->error);
        t->error = sy_xstrdup("cancelled with its run");
        sy_engine_task_terminal(r, a->idx);
        return;
    }
    if (a->outcome == SY_OUTCOME_SUCCEEDED) {
        char err[256];
        json_t *out = sy_output_parse(a->output, a->output_len, e->o.max_context_bytes,
                                      err, sizeof err);
        if (out) {
            if (!sy_engine_set_state(r, a->idx, SY_TASK_COMPLETED)) {
                json_decref(out);
                return;
            }
            free(t->error);
            t->error = NULL;
            if (json_object_size(out) > 0) {
                t->output = out;
                t->output_text = json_dumps(out, JSON_COMPACT);
                r->n_with_output++;
            } else {
                json_decref(out);
            }
            sy_engine_task_terminal(r, a->idx);
            return;
        }
        sy_engine_fail_or_retry(r, a->idx, false, err);
        return;
    }
    const char *why = a->result_error && *a->result_error ? a->result_error : NULL;
    char buf[128];
    switch (a->outcome) {
    case SY_OUTCOME_TIMED_OUT:
        sy_engine_fail_or_retry(r, a->idx, true, why ? why : "timed out in the executor");
        break;
    case SY_OUTCOME_CANCELLED:
        sy_engine_fail_or_retry(r, a->idx, false, why ? why : "cancelled by the executor");
        break;
    default:
        snprintf(buf, sizeof buf, "failed (attempt %u)", a->number);
        sy_engine_fail_or_retry(r, a->idx, false, why ? why : buf);
    }
}

/* Capacity freed somewhere: offer the tasks that waited for it again. */
static void take_wakes(sy_engine *e)
{
    for (size_t i = 0; i < e->n_instances; i++) {
        sy_instance_queue *q = &e->instances[i];
        if (!atomic_exchange(&q->woken, 0))
            continue;
        for (size_t j = 0; j < q->n_waiting; j++)
            tq_push(&e->ready, q->waiting[j].run, q->waiting[j].idx);
        q->n_waiting = 0;
    }
}

/* One wake for completions and wakes: a plugin calls complete() then
 * wake() from the same thread, and the second send finds the first not yet
 * read, so the loop is woken once for both. */
static void take_done(sy_engine *e)
{
    pthread_mutex_lock(&e->qlock);
    sy_attempt *a = e->qhead;
    e->qhead = e->qtail = NULL;
    pthread_mutex_unlock(&e->qlock);
    while (a) {
        sy_attempt *next = a->qnext;
        if (a->deadline_armed)
            uv_timer_stop(&a->deadline);
        apply_result(e, a);
        attempt_release(a);
        a = next;
    }
    take_wakes(e);
}

static void on_done(sy_wake *w) { take_done(w->data); }

static void on_plugin_wake(sy_host *h)
{
    sy_instance_queue *q = h->data;
    atomic_store(&q->woken, 1);
    sy_wake_send(&q->e->done);
}

/* --- dispatch ---------------------------------------------------------------- */

static void wait_for_capacity(sy_instance_queue *q, sy_live_run *r, size_t idx)
{
    q->waiting = grow(q->waiting, &q->cap_waiting, q->n_waiting + 1, sizeof *q->waiting);
    q->waiting[q->n_waiting].run = r;
    q->waiting[q->n_waiting].idx = idx;
    q->n_waiting++;
}

static bool has_capacity(sy_instance_queue *q)
{
    if (q->cap < 0) {
        q->cap = q->entry->plugin->desc->capacity(q->entry->inst);
        if (q->cap < 0)
            q->cap = 0;
    }
    return q->cap == SY_CAPACITY_UNLIMITED || q->reserved < q->cap;
}

static sy_attempt *new_attempt(sy_engine *e, sy_live_run *r, size_t idx, char *err, size_t len)
{
    sy_live_task *t = &r->t[idx];
    const sy_task_def *d = &r->wf->tasks[idx];
    bool borrowed = false;
    char *input = sy_engine_input(r, idx, &borrowed, err, len);
    if (!input)
        return NULL;
    sy_attempt *a = calloc(1, sizeof *a);
    if (!a) {
        if (!borrowed)
            free(input);
        sy_errf(err, len, "out of memory");
        return NULL;
    }
    a->e = e;
    a->lnext = e->live;
    if (e->live)
        e->live->lprev = a;
    e->live = a;
    a->run = r;
    a->idx = idx;
    a->queue = t->queue;
    a->number = t->attempts + 1;
    a->input = input;
    a->input_borrowed = borrowed;
    sy_completion_init(&a->c, t->instance_name, on_complete, a);
    a->task = (sy_task){
        .size = sizeof(sy_task),
        .attempt = a->number,
        .ns = d->ns,
        .run_id = r->id_text,
        .task_id = d->id,
        .input = input,
        .input_len = strlen(input),
        .params = sy_params_view(d->params),
        .timeout_ms = d->timeout_ms,
        .workflow = r->wf->name,
        .base_dir = r->wf->base_dir ? r->wf->base_dir : ".",
    };
    return a;
}

/* Decides what to submit this turn: each Ready task whose backoff is over
 * and whose instance has capacity becomes Running in the open batch. */
static void decide(sy_engine *e, int64_t now)
{
    size_t n = e->ready.n;
    for (size_t i = 0; i < n && !e->drain; i++) {
        sy_task_ref ref = tq_pop(&e->ready);
        sy_live_run *r = ref.run;
        sy_live_task *t = &r->t[ref.idx];
        if (t->state != SY_TASK_READY || r->cancelling || r->finished)
            continue;
        if (t->ready_at > now) {
            sy_engine_arm_backoff(r, ref.idx, t->ready_at - now);
            continue;
        }
        if (!t->queue) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "routed to executor '%s', which is not defined in this configuration",
                     t->instance_name ? t->instance_name : "?");
            sy_engine_fail_now(r, ref.idx, msg);
            continue;
        }
        if (!has_capacity(t->queue)) {
            wait_for_capacity(t->queue, r, ref.idx);
            continue;
        }
        char err[256];
        sy_attempt *a = new_attempt(e, r, ref.idx, err, sizeof err);
        if (!a) {
            sy_engine_fail_now(r, ref.idx, err);
            continue;
        }
        if (!sy_engine_set_state(r, ref.idx, SY_TASK_RUNNING)) {
            r->inflight++;
            attempt_release(a);
            continue;
        }
        t->attempts++;
        t->started = now;
        r->n_running++;
        t->queue->reserved++;
        t->current = a;
        r->inflight++;
        e->submit = grow(e->submit, &e->cap_submit, e->n_submit + 1, sizeof *e->submit);
        e->submit[e->n_submit++] = a;
    }
}

static void write_batch(sy_engine *e, int64_t now)
{
    for (size_t i = 0; i < e->n_dirty; i++) {
        sy_live_run *r = e->dirty[i].run;
        size_t idx = e->dirty[i].idx;
        sy_live_task *t = &r->t[idx];
        t->dirty = false;
        sy_task_record ti = {
            .idx = (uint32_t)idx,
            .state = t->state,
            .attempts = t->attempts,
            .failures = t->failures,
            .recoveries = t->recoveries,
            .executor = (char *)t->instance_name,
            .error = t->error,
            .output = t->output_text,
            .ready_at = t->ready_at,
            .started = t->started,
            .finished = t->finished,
        };
        if (sy_store_update_task(e->o.store, r->id, &ti) != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot record task: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
    }
    e->n_dirty = 0;
    for (sy_live_run *r = e->runs; r; r = r->next) {
        if (!r->dirty)
            continue;
        r->dirty = false;
        if (sy_store_update_run(e->o.store, r->id, r->state, r->error, now) != SY_OK) {
            sy_log(SY_LOG_ERROR, "store", "cannot record run: %s",
                   sy_store_errmsg(e->o.store));
            e->fatal = true;
        }
    }
}

static void submit_all(sy_engine *e)
{
    for (size_t i = 0; i < e->n_submit; i++) {
        sy_attempt *a = e->submit[i];
        sy_live_run *r = a->run;
        const sy_executor *plugin = a->queue->entry->plugin->desc;
        if (a->task.timeout_ms > 0) {
            uv_timer_init(e->loop, &a->deadline);
            a->deadline.data = a;
            a->deadline_armed = true;
            uv_timer_start(&a->deadline, on_deadline, (uint64_t)a->task.timeout_ms, 0);
        }
        char err[512] = "";
        int rc = plugin->submit(a->queue->entry->inst, &a->task, &a->c, err, sizeof err);
        if (rc == SY_OK)
            continue;
        /* Not accepted: the attempt never started. */
        sy_live_task *t = &r->t[a->idx];
        if (t->current == a) {
            t->current = NULL;
            r->n_running--;
            if (rc == SY_EBUSY) {
                sy_engine_set_state(r, a->idx, SY_TASK_READY);
                wait_for_capacity(a->queue, r, a->idx);
            } else {
                char msg[600];
                snprintf(msg, sizeof msg, "executor '%s' refused the task: %s",
                         a->queue->entry->cfg->name, err[0] ? err : "no reason given");
                sy_engine_fail_or_retry(r, a->idx, false, msg);
            }
        }
        attempt_release(a);
    }
    e->n_submit = 0;
}

/* Once per loop turn: decide, write everything in one transaction, then
 * submit what was decided. */
static void on_flush(uv_prepare_t *h)
{
    sy_engine *e = h->data;
    if (e->fatal)
        return;
    bool any_run_dirty = false;
    for (sy_live_run *r = e->runs; r && !any_run_dirty; r = r->next)
        any_run_dirty = r->dirty;
    if (e->ready.n == 0 && e->n_dirty == 0 && !any_run_dirty) {
        reap_runs(e);
        sy_engine_check_idle(e);
        return;
    }
    int64_t now = sy_clock_now_ms();
    for (size_t i = 0; i < e->n_instances; i++) {
        e->instances[i].cap = -1;
        e->instances[i].reserved = 0;
    }
    if (sy_store_begin(e->o.store) != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "cannot begin: %s", sy_store_errmsg(e->o.store));
        e->fatal = true;
        uv_stop(e->loop);
        return;
    }
    decide(e, now);
    write_batch(e, now);
    if (e->fatal || sy_store_commit(e->o.store) != SY_OK) {
        sy_log(SY_LOG_ERROR, "store", "cannot commit: %s; stopping",
               sy_store_errmsg(e->o.store));
        sy_store_rollback(e->o.store);
        e->fatal = true;
        uv_stop(e->loop);
        return;
    }
    submit_all(e);
    if (e->n_dirty == 0)
        reap_runs(e);
    sy_engine_check_idle(e);
}

/* --- serve: new runs, cancel requests, leases, signals ---------------------------- */

static int collect_owner(void *arg, const char *owner)
{
    /* An owner on this machine whose process is gone is dead for sure; no
     * need to wait for its lease. */
    struct { char **v; size_t n, cap; const char *me; } *s = arg;
    const char *colon = strrchr(owner, ':');
    size_t hl = strcspn(s->me, ":");
    if (!colon || (size_t)(colon - owner) != hl || strncmp(owner, s->me, hl) != 0 ||
        strcmp(owner, s->me) == 0)
        return 0;
    long pid = strtol(colon + 1, NULL, 10);
    if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        s->v = grow(s->v, &s->cap, s->n + 1, sizeof *s->v);
        s->v[s->n++] = sy_xstrdup(owner);
    }
    return 0;
}

static int on_cancel_request(void *arg, int64_t run_id)
{
    sy_engine *e = arg;
    for (sy_live_run *r = e->runs; r; r = r->next)
        if (r->id == run_id && !r->finished && !r->cancelling)
            sy_engine_cancel_run(r, "cancelled on request");
    return 0;
}

static void claim_new(sy_engine *e)
{
    struct { char **v; size_t n, cap; const char *me; } stale = {NULL, 0, 0, e->o.owner};
    sy_store_list_owners(e->o.store, collect_owner, &stale);
    int64_t now = sy_clock_now_ms(), ids[64];
    size_t n = 0;
    if (sy_store_claim_runs(e->o.store, e->o.owner, now + e->o.lease_ms, now,
                            (const char *const *)stale.v, stale.n, 64, ids, &n) != SY_OK)
        sy_log(SY_LOG_ERROR, "store", "cannot claim runs: %s", sy_store_errmsg(e->o.store));
    for (size_t i = 0; i < stale.n; i++)
        free(stale.v[i]);
    free(stale.v);
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (sy_live_run *r = e->runs; r; r = r->next)
            known |= r->id == ids[i];
        if (known)
            continue;
        char err[512];
        sy_live_run *r;
        if (sy_engine_load_run(e, ids[i], &r, err, sizeof err) != SY_OK)
            sy_log(SY_LOG_ERROR, "engine", "run %lld: %s", (long long)ids[i], err);
        else
            sy_log(SY_LOG_INFO, "engine", "run %lld (%s) adopted", (long long)r->id,
                   r->wf->name);
    }
}

static void on_poll(uv_timer_t *t)
{
    sy_engine *e = t->data;
    if (e->drain)
        return;
    claim_new(e);
    sy_store_cancel_requests(e->o.store, e->o.owner, on_cancel_request, e);
}

static void on_renew(uv_timer_t *t)
{
    sy_engine *e = t->data;
    if (sy_store_renew(e->o.store, e->o.owner, sy_clock_now_ms() + e->o.lease_ms) != SY_OK)
        sy_log(SY_LOG_WARN, "store", "cannot renew leases: %s", sy_store_errmsg(e->o.store));
}

static void on_signal(uv_signal_t *s, int signum)
{
    sy_engine *e = s->data;
    sy_log(SY_LOG_INFO, "engine", "%s: %s", strsignal(signum),
           e->drain ? "stopping now" : "draining (again to stop now)");
    sy_engine_drain(e);
}

void sy_engine_drain(sy_engine *e)
{
    e->drain++;
    uv_timer_stop(&e->poll);
    if (e->drain >= 2) {
        e->stopping = true;
        uv_stop(e->loop);
        return;
    }
    /* Attempts not yet submitted will not be: they stay Ready in the
     * store for whoever runs next. */
    sy_engine_check_idle(e);
}

void sy_engine_check_idle(sy_engine *e)
{
    if (e->stopping)
        return;
    if (e->drain) {
        if (!e->live && e->n_dirty == 0) {
            e->stopping = true;
            uv_stop(e->loop);
        }
        return;
    }
    if (e->o.serve && e->o.exit_when_idle && !e->runs && e->watched_left == 0) {
        e->stopping = true;
        uv_stop(e->loop);
    }
    if (!e->o.serve && e->watched_left == 0) {
        e->stopping = true;
        uv_stop(e->loop);
    }
}

/* --- lifecycle --------------------------------------------------------------- */

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
    pthread_mutex_init(&e->qlock, NULL);
    sy_setup *s = o->setup;
    e->instances = calloc(s->n_instances ? s->n_instances : 1, sizeof *e->instances);
    for (size_t i = 0; i < s->n_instances; i++) {
        if (!s->instances[i].inst)
            continue;
        sy_instance_queue *q = &e->instances[e->n_instances++];
        q->entry = &s->instances[i];
        q->e = e;
        q->cap = -1;
        atomic_init(&q->woken, 0);
        q->entry->host.on_wake = on_plugin_wake;
        q->entry->host.data = q;
    }
    uv_prepare_init(loop, &e->flush);
    e->flush.data = e;
    uv_prepare_start(&e->flush, on_flush);
    uv_timer_init(loop, &e->poll);
    e->poll.data = e;
    uv_timer_init(loop, &e->renew);
    e->renew.data = e;
    uv_signal_init(loop, &e->sigterm);
    e->sigterm.data = e;
    uv_signal_init(loop, &e->sigint);
    e->sigint.data = e;
    *out = e;
    return SY_OK;
}

int sy_engine_adopt(sy_engine *e, int64_t run_id, bool stop_when_done, char *err,
                    size_t err_len)
{
    bool claimed = false;
    int64_t now = sy_clock_now_ms();
    int rc = sy_store_claim_run(e->o.store, run_id, e->o.owner, now + e->o.lease_ms, now,
                                NULL, 0, &claimed);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "%s", sy_store_errmsg(e->o.store)), rc;
    if (!claimed)
        return sy_errf(err, err_len, "run %lld is held by another live host or has ended",
                       (long long)run_id),
               SY_EBUSY;
    sy_live_run *r;
    rc = sy_engine_load_run(e, run_id, &r, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (stop_when_done && !r->finished) {
        r->watched = true;
        e->watched_left++;
    }
    return SY_OK;
}

int sy_engine_run(sy_engine *e)
{
    uv_signal_start(&e->sigterm, on_signal, SIGTERM);
    uv_signal_start(&e->sigint, on_signal, SIGINT);
    if (e->o.serve) {
        uv_timer_start(&e->poll, on_poll, 0, (uint64_t)e->o.poll_ms);
    }
    uv_timer_start(&e->renew, on_renew, (uint64_t)e->o.lease_ms / 3,
                   (uint64_t)e->o.lease_ms / 3);
    /* The first loop turn flushes whatever adopting the runs changed, then
     * decides whether anything is left to do. */
    uv_run(e->loop, UV_RUN_DEFAULT);
    if (e->drain >= 2)
        return 2; /* stop now: the caller exits without waiting */
    if (e->live && !e->fatal) {
        /* Attempts that outlived their task (timed out, cancelled run):
         * instances are destroyed only after they come back. */
        for (sy_attempt *a = e->live; a; a = a->lnext)
            if (!a->cancel_sent) {
                a->cancel_sent = true;
                a->queue->entry->plugin->desc->cancel(a->queue->entry->inst, &a->c);
            }
        if (!e->drain)
            e->drain = 1;
        e->stopping = false;
        uv_run(e->loop, UV_RUN_DEFAULT);
        if (e->drain >= 2)
            return 2;
    }
    uv_timer_stop(&e->poll);
    uv_timer_stop(&e->renew);
    uv_signal_stop(&e->sigterm);
    uv_signal_stop(&e->sigint);
    if (e->drain && !e->fatal)
        sy_store_release(e->o.store, e->o.owner);
    return e->fatal ? -1 : 0;
}

static void close_noop(uv_handle_t *h) { (void)h; }

void sy_engine_free(sy_engine *e)
{
    if (!e)
        return;
    /* Attempts still with plugins belong to them until they complete; the
     * caller destroys instances (which drains them) before this. */
    take_done(e);
    while (e->runs) {
        sy_live_run *r = e->runs;
        r->finished = true;
        r->inflight = 0;
        sy_engine_free_run(r);
    }
    sy_wake_close(&e->done);
    uv_close((uv_handle_t *)&e->flush, close_noop);
    uv_close((uv_handle_t *)&e->poll, close_noop);
    uv_close((uv_handle_t *)&e->renew, close_noop);
    uv_close((uv_handle_t *)&e->sigterm, close_noop);
    uv_close((uv_handle_t *)&e->sigint, close_noop);
    uv_run(e->loop, UV_RUN_DEFAULT);
    for (size_t i = 0; i < e->n_instances; i++) {
        free(e->instances[i].waiting);
        e->instances[i].entry->host.on_wake = NULL;
    }
    free(e->instances);
    free(e->ready.v);
    free(e->dirty);
    free(e->submit);
    pthread_mutex_destroy(&e->qlock);
    free(e);
}
