/* Runs in the engine: transitions, triggers, retries, loading, recovery. */
#include "base/clock.h"
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

#include "workflow/context.h"
#include "base/log.h"
#include "workflow/trigger.h"
#include "base/util.h"

static const sy_live_task *task_c(const sy_live_run *r, size_t idx) { return &r->t[idx]; }

void sy_engine_fill_view(const sy_live_run *r, sy_engine_view *v)
{
    *v = (sy_engine_view){
        .run_id = r->id,
        .wf = r->wf,
        .state = r->state,
        .n_tasks = r->wf->n_tasks,
        .n_done = r->n_terminal,
        .n_failed = r->n_failed,
        .n_skipped = r->n_skipped,
        .n_running = r->n_running,
    };
}

static void report(sy_live_run *r, size_t idx)
{
    sy_engine *e = r->e;
    if (!e->o.on_task)
        return;
    sy_engine_view v;
    sy_engine_fill_view(r, &v);
    const sy_live_task *t = task_c(r, idx);
    e->o.on_task(e->o.arg, &v, r->wf->tasks[idx].id, t->state, t->attempts, t->error);
}

/* Every change of state goes through here: an illegal one is a bug that is
 * logged, never applied. */
bool sy_engine_set_state(sy_live_run *r, size_t idx, sy_task_state to)
{
    sy_live_task *t = &r->t[idx];
    if (!sy_task_transition_ok(t->state, to)) {
        sy_log(SY_LOG_ERROR, "engine",
               "bug: illegal transition %s -> %s for %s in run %lld; not applied",
               sy_task_state_name(t->state), sy_task_state_name(to), r->wf->tasks[idx].ns,
               (long long)r->id);
        return false;
    }
    t->state = to;
    if (sy_task_state_terminal(to)) {
        r->n_terminal++;
        r->n_failed += to == SY_TASK_FAILED;
        r->n_skipped += to == SY_TASK_SKIPPED;
        t->finished = sy_clock_now_ms();
    }
    sy_engine_mark_task(r, idx);
    return true;
}

static void set_error(sy_live_task *t, const char *msg)
{
    free(t->error);
    t->error = msg ? sy_xstrdup(msg) : NULL;
}

static void close_free(uv_handle_t *h) { free(h); }

static void on_backoff(uv_timer_t *h)
{
    const sy_task_ref *ref = h->data;
    /* The timer's clock (libuv's monotonic loop time) and ready_at (wall
     * time) can disagree by a millisecond: the timer's word is final. */
    ref->run->t[ref->idx].ready_at = 0;
    sy_engine_enqueue(ref->run, ref->idx);
}

void sy_engine_arm_backoff(sy_live_run *r, size_t idx, int64_t delay)
{
    sy_live_task *t = &r->t[idx];
    if (!t->backoff) {
        /* The handle and its back-reference travel together. */
        struct { uv_timer_t timer; sy_task_ref ref; } *b = sy_xmalloc(sizeof *b);
        uv_timer_init(r->e->loop, &b->timer);
        b->ref = (sy_task_ref){r, idx};
        b->timer.data = &b->ref;
        t->backoff = &b->timer;
    }
    uv_timer_start(t->backoff, on_backoff, (uint64_t)delay, 0);
}

void sy_engine_task_ready(sy_live_run *r, size_t idx, int64_t ready_at)
{
    if (!sy_engine_set_state(r, idx, SY_TASK_READY))
        return;
    r->t[idx].ready_at = ready_at;
    int64_t delay = ready_at - sy_clock_now_ms();
    if (ready_at > 0 && delay > 0)
        sy_engine_arm_backoff(r, idx, delay);
    else
        sy_engine_enqueue(r, idx);
}

void sy_engine_fail_now(sy_live_run *r, size_t idx, const char *error)
{
    if (!sy_engine_set_state(r, idx, SY_TASK_FAILED))
        return;
    set_error(&r->t[idx], error);
    sy_engine_task_terminal(r, idx);
}

void sy_engine_fail_or_retry(sy_live_run *r, size_t idx, bool timeout, const char *error)
{
    sy_live_task *t = &r->t[idx];
    const sy_retry *p = &r->wf->tasks[idx].retry;
    t->failures++;
    set_error(t, error);
    bool wanted = (p->retry_on & (timeout ? SY_RETRY_ON_TIMEOUT : SY_RETRY_ON_FAILED)) != 0;
    if (wanted && t->failures < p->attempts && !r->cancelling) {
        int64_t delay = sy_retry_delay_ms(p, t->attempts + 1, drand48());
        char detail[1024];
        snprintf(detail, sizeof detail, "%s; retry %u of %u in %lldms", error ? error : "",
                 t->failures, p->attempts - 1, (long long)delay);
        sy_store_add_event(r->e->o.store, r->id, (uint32_t)idx, t->attempts,
                           timeout ? "timed_out" : "failed", detail, sy_clock_now_ms());
        sy_engine_task_ready(r, idx, sy_clock_now_ms() + delay);
        report(r, idx);
        return;
    }
    sy_store_add_event(r->e->o.store, r->id, (uint32_t)idx, t->attempts,
                       timeout ? "timed_out" : "failed", error, sy_clock_now_ms());
    if (!sy_engine_set_state(r, idx, SY_TASK_FAILED))
        return;
    sy_engine_task_terminal(r, idx);
}

/* Why a trigger rule did not hold, for the Skipped task's error. */
static void skip_reason(const sy_live_run *r, size_t idx, char *buf, size_t len)
{
    const sy_task_def *d = &r->wf->tasks[idx];
    size_t off = (size_t)snprintf(buf, len, "trigger %s does not hold:",
                                  sy_trigger_name(d->trigger));
    for (size_t i = 0; i < d->n_deps && off < len; i++) {
        size_t dep = d->deps[i];
        off += (size_t)snprintf(buf + off, len - off, "%s %s %s", i ? "," : "",
                                r->wf->tasks[dep].id,
                                sy_task_state_name(r->t[dep].state));
    }
}

/* Names the first `when` condition that does not hold, and what the
 * context had there, so a Skipped task explains itself. */
static void when_reason(const sy_task_def *d, const json_t *ctx, char *buf, size_t len)
{
    for (size_t i = 0; ctx && i < d->n_when; i++) {
        const sy_cond *c = &d->when[i];
        if (sy_conds_hold(c, 1, ctx))
            continue;
        char *want = json_dumps(c->value, JSON_COMPACT | JSON_ENCODE_ANY);
        const json_t *have = sy_json_path(ctx, c->path);
        char *got = have ? json_dumps(have, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        snprintf(buf, len, "when: %s %s %s does not hold (%s is %.200s)", c->path,
                 sy_cond_op_name(c->op), want ? want : "?", c->path, got ? got : "absent");
        free(want);
        free(got);
        return;
    }
    snprintf(buf, len, "when: a condition does not hold on the input context");
}

/* Decides a NotStarted task whose dependencies may all have ended:
 * Ready, Skipped, or (still waiting) nothing.  Returns true when it
 * became Skipped, so its own children need deciding too. */
static bool decide_task(sy_live_run *r, size_t idx)
{
    const sy_task_def *d = &r->wf->tasks[idx];
    if (r->t[idx].state != SY_TASK_NOT_STARTED)
        return false;
    sy_task_state deps[64] = {0}, *dv = deps;
    if (d->n_deps > 64)
        dv = sy_xmalloc(d->n_deps * sizeof *dv);
    for (size_t i = 0; i < d->n_deps; i++)
        dv[i] = r->t[d->deps[i]].state;
    sy_trig_verdict v = sy_trigger_eval(d->trigger, dv, d->n_deps);
    if (dv != deps)
        free(dv);
    if (v == SY_TRIG_WAIT)
        return false;
    char why[512];
    if (v == SY_TRIG_RUN && d->n_when > 0) {
        json_t *ctx = sy_engine_input_json(r, idx);
        if (!ctx || !sy_conds_hold(d->when, d->n_when, ctx)) {
            v = SY_TRIG_SKIP;
            when_reason(d, ctx, why, sizeof why);
        }
        json_decref(ctx);
    } else if (v == SY_TRIG_SKIP) {
        skip_reason(r, idx, why, sizeof why);
    }
    if (v == SY_TRIG_RUN) {
        sy_engine_task_ready(r, idx, 0);
        return false;
    }
    if (!sy_engine_set_state(r, idx, SY_TASK_SKIPPED))
        return false;
    set_error(&r->t[idx], why);
    report(r, idx);
    return true;
}

void sy_engine_task_terminal(sy_live_run *r, size_t idx)
{
    report(r, idx);
    /* Skipping propagates down the graph; an explicit stack keeps a deep
     * chain from exhausting the C stack. */
    size_t cap = 64, n = 0;
    size_t *stack = sy_xmalloc(cap * sizeof *stack);
    stack[n++] = idx;
    while (n > 0) {
        const sy_task_def *d = &r->wf->tasks[stack[--n]];
        for (size_t i = 0; i < d->n_children; i++) {
            size_t c = d->children[i];
            if (r->t[c].deps_left > 0)
                r->t[c].deps_left--;
            if (r->t[c].deps_left > 0 || !decide_task(r, c))
                continue;
            if (n == cap)
                stack = realloc(stack, (cap *= 2) * sizeof *stack);
            if (!stack)
                abort();
            stack[n++] = c;
        }
    }
    free(stack);
    sy_engine_maybe_finish(r);
}

void sy_engine_start_roots(sy_live_run *r)
{
    for (size_t i = 0; i < r->wf->n_tasks; i++) {
        size_t idx = r->wf->topo[i];
        if (r->t[idx].deps_left == 0 && decide_task(r, idx))
            sy_engine_task_terminal(r, idx);
    }
}

void sy_engine_maybe_finish(sy_live_run *r)
{
    if (r->finished || r->n_terminal < r->wf->n_tasks)
        return;
    sy_engine *e = r->e;
    r->finished = true;
    r->state = r->cancelling ? SY_RUN_CANCELLED
               : r->n_failed ? SY_RUN_FAILED
                             : SY_RUN_COMPLETED;
    if (r->state == SY_RUN_FAILED && !r->error) {
        char msg[256];
        snprintf(msg, sizeof msg, "%zu task%s failed", r->n_failed,
                 r->n_failed == 1 ? "" : "s");
        r->error = sy_xstrdup(msg);
    }
    sy_engine_mark_run(r);
    if (e->o.on_run) {
        sy_engine_view v;
        sy_engine_fill_view(r, &v);
        e->o.on_run(e->o.arg, &v);
    }
    if (r->watched) {
        r->watched = false;
        e->watched_left--;
    }
}

void sy_engine_cancel_run(sy_live_run *r, const char *why)
{
    if (r->finished || r->cancelling)
        return;
    r->cancelling = true;
    free(r->error);
    r->error = sy_xstrdup(why);
    for (size_t i = 0; i < r->wf->n_tasks; i++) {
        sy_live_task *t = &r->t[i];
        if (t->state == SY_TASK_NOT_STARTED || t->state == SY_TASK_READY) {
            if (t->backoff)
                uv_timer_stop(t->backoff);
            if (sy_engine_set_state(r, i, SY_TASK_SKIPPED))
                set_error(t, "run cancelled");
        } else if (t->state == SY_TASK_RUNNING && t->current && !t->current->cancel_sent) {
            sy_attempt *a = t->current;
            a->cancel_sent = true;
            a->queue->entry->plugin->desc->cancel(a->queue->entry->inst, &a->c);
        }
    }
    sy_engine_mark_run(r);
    sy_engine_maybe_finish(r);
}

/* --- loading a run ----------------------------------------------------------- */

struct load_ctx {
    sy_live_run *r;
    int errors;
    char *err;
    size_t err_len;
};

static int load_task(void *arg, const sy_task_record *ti)
{
    struct load_ctx *c = arg;
    sy_live_run *r = c->r;
    if (ti->idx >= r->wf->n_tasks) {
        sy_errf(c->err, c->err_len, "task row %u beyond the definition's %zu tasks", ti->idx,
                r->wf->n_tasks);
        c->errors++;
        return 1;
    }
    sy_live_task *t = &r->t[ti->idx];
    t->state = ti->state;
    t->attempts = ti->attempts;
    t->failures = ti->failures;
    t->recoveries = ti->recoveries;
    t->ready_at = ti->ready_at;
    t->started = ti->started;
    t->finished = ti->finished;
    t->error = ti->error ? sy_xstrdup(ti->error) : NULL;
    if (ti->output) {
        t->output = json_loads(ti->output, 0, NULL);
        t->output_text = sy_xstrdup(ti->output);
        if (t->output && json_object_size(t->output) > 0)
            r->n_with_output++;
    }
    if (sy_task_state_terminal(t->state)) {
        r->n_terminal++;
        r->n_failed += t->state == SY_TASK_FAILED;
        r->n_skipped += t->state == SY_TASK_SKIPPED;
    }
    return 0;
}

static void route_tasks(sy_engine *e, sy_live_run *r)
{
    const sy_routes *routes = &e->o.setup->cfg.routes;
    for (size_t i = 0; i < r->wf->n_tasks; i++) {
        const char *name = NULL;
        sy_routes_resolve(routes, r->wf->tasks[i].ns, &name, NULL);
        r->t[i].instance_name = name;
        r->t[i].queue = sy_engine_instance_queue(e, r->t[i].instance_name);
    }
}

/* Attempts that were Running when their host stopped go back to Ready:
 * at least once, never lost.  A task that keeps taking hosts down fails. */
static void recover(sy_live_run *r)
{
    sy_engine *e = r->e;
    for (size_t i = 0; i < r->wf->n_tasks; i++) {
        sy_live_task *t = &r->t[i];
        if (t->state != SY_TASK_RUNNING)
            continue;
        t->recoveries++;
        char msg[256];
        snprintf(msg, sizeof msg, "recovered: attempt %u was running on a host that stopped",
                 t->attempts);
        sy_store_add_event(e->o.store, r->id, (uint32_t)i, t->attempts, "recovered", msg,
                           sy_clock_now_ms());
        if (t->recoveries > e->o.max_recoveries) {
            snprintf(msg, sizeof msg, "lost with its host %u times; not retried again",
                     t->recoveries);
            sy_engine_fail_now(r, i, msg);
            continue;
        }
        set_error(t, msg);
        sy_engine_task_ready(r, i, 0);
    }
}

static void link_run(sy_engine *e, sy_live_run *r)
{
    r->next = e->runs;
    e->runs = r;
}

int sy_engine_load_run(sy_engine *e, int64_t run_id, sy_live_run **out, char *err, size_t err_len)
{
    sy_run_record ri;
    int rc = sy_store_get_run(e->o.store, run_id, &ri);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "run %lld: %s", (long long)run_id,
                       rc == SY_ENOENT ? "no such run" : sy_store_errmsg(e->o.store)),
               rc;
    /* A workflow this process read from its file with the same hash is the
     * same definition: no need to parse the stored copy again. */
    sy_workflow *wf = NULL;
    bool borrowed = false;
    for (size_t i = 0; i < e->o.setup->n_wfs && !wf; i++)
        if (strcmp(e->o.setup->wfs[i]->hash, ri.hash) == 0) {
            wf = e->o.setup->wfs[i];
            borrowed = true;
        }
    if (!wf) {
        char *def = NULL;
        rc = sy_store_get_definition(e->o.store, ri.hash, &def);
        wf = rc == SY_OK ? sy_workflow_from_json(def, err, err_len) : NULL;
        free(def);
    }
    json_t *ctx = ri.context ? json_loads(ri.context, 0, NULL) : json_object();
    if (!wf || !json_is_object(ctx)) {
        if (rc != SY_OK)
            sy_errf(err, err_len, "definition %s: %s", ri.hash, sy_store_errmsg(e->o.store));
        else if (wf)
            sy_errf(err, err_len, "stored context is not a JSON object");
        if (!borrowed)
            sy_workflow_free(wf);
        json_decref(ctx);
        sy_run_record_clear(&ri);
        return SY_EINVAL;
    }
    sy_live_run *r = calloc(1, sizeof *r);
    r->id = run_id;
    snprintf(r->id_text, sizeof r->id_text, "%lld", (long long)run_id);
    r->e = e;
    r->wf = wf;
    r->wf_borrowed = borrowed;
    r->context = ctx;
    r->context_text = json_dumps(ctx, JSON_COMPACT);
    r->state = SY_RUN_RUNNING;
    r->t = calloc(wf->n_tasks ? wf->n_tasks : 1, sizeof *r->t);
    bool cancel = ri.cancel_requested;
    sy_run_record_clear(&ri);
    struct load_ctx lc = {r, 0, err, err_len};
    rc = sy_store_list_tasks(e->o.store, run_id, load_task, &lc);
    if (rc != SY_OK || lc.errors) {
        if (rc != SY_OK)
            sy_errf(err, err_len, "%s", sy_store_errmsg(e->o.store));
        r->finished = true;
        sy_engine_free_run(r);
        return rc != SY_OK ? rc : SY_EINVAL;
    }
    link_run(e, r);
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *d = &wf->tasks[i];
        for (size_t k = 0; k < d->n_deps; k++)
            r->t[i].deps_left += !sy_task_state_terminal(r->t[d->deps[k]].state);
    }
    route_tasks(e, r);
    recover(r);
    for (size_t i = 0; i < wf->n_tasks; i++)
        if (r->t[i].state == SY_TASK_READY && !r->t[i].dirty)
            sy_engine_task_ready_reload(r, i);
    sy_engine_start_roots(r);
    if (cancel)
        sy_engine_cancel_run(r, "cancelled on request");
    sy_engine_maybe_finish(r);
    *out = r;
    return SY_OK;
}

/* A task loaded as Ready: offer it when its backoff is over. */
void sy_engine_task_ready_reload(sy_live_run *r, size_t idx)
{
    int64_t delay = r->t[idx].ready_at - sy_clock_now_ms();
    if (r->t[idx].ready_at > 0 && delay > 0)
        sy_engine_arm_backoff(r, idx, delay);
    else
        sy_engine_enqueue(r, idx);
}

static void purge_refs(sy_engine *e, const sy_live_run *r)
{
    sy_task_queue *q = &e->ready;
    size_t keep = 0;
    for (size_t i = 0; i < q->n; i++) {
        sy_task_ref t = q->v[(q->head + i) % q->cap];
        if (t.run != r)
            q->v[(q->head + keep++) % q->cap] = t;
    }
    q->n = keep;
    for (size_t x = 0; x < e->n_instances; x++) {
        sy_instance_queue *ex = &e->instances[x];
        size_t k = 0;
        for (size_t i = 0; i < ex->n_waiting; i++)
            if (ex->waiting[i].run != r)
                ex->waiting[k++] = ex->waiting[i];
        ex->n_waiting = k;
    }
}

void sy_engine_free_run(sy_live_run *r)
{
    sy_engine *e = r->e;
    for (sy_live_run **p = &e->runs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    purge_refs(e, r);
    for (size_t i = 0; r->wf && i < r->wf->n_tasks; i++) {
        sy_live_task *t = &r->t[i];
        if (t->backoff) {
            uv_timer_stop(t->backoff);
            uv_close((uv_handle_t *)t->backoff, close_free);
        }
        free(t->error);
        json_decref(t->output);
        free(t->output_text);
    }
    free(r->t);
    if (!r->wf_borrowed)
        sy_workflow_free(r->wf);
    json_decref(r->context);
    free(r->context_text);
    free(r->error);
    free(r);
}
