/* Loading a run from the store into memory, recovering what a stopped host
 * left Running, and freeing it. */
#include "engine/load.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/attempt.h"
#include "engine/cache_put.h"
#include "engine/dispatch.h"
#include "engine/fenced.h"
#include "engine/input.h"
#include "engine/orphans.h"
#include "engine/map.h"
#include "engine/route.h"
#include "engine/resume.h"
#include "engine/run.h"

struct load_ctx {
    sy_live_run *r;
    int errors;
    char *err;
    size_t err_len;
    char **hosts; /* per task: the host of an attempt found Running;
                     made at the first one */
    char **execs; /* per task (not element): the instance it was Running
                     on, as recorded; made at the first one */
};

static int load_task(void *arg, const sy_task_record *row)
{
    struct load_ctx *c = arg;
    sy_live_run *r = c->r;
    if (row->idx >= r->wf->n_tasks) {
        sy_errf(c->err, c->err_len, "task row %u beyond the definition's %zu tasks", row->idx,
                r->wf->n_tasks);
        c->errors++;
        return 1;
    }
    sy_live_task *t = &r->t[row->idx];
    t->state = row->state;
    t->attempts = row->attempts;
    t->failures = row->failures;
    t->recoveries = row->recoveries;
    t->ready_at = row->ready_at;
    t->started = row->started;
    t->finished = row->finished;
    t->token = t->token_stored = row->fence;
    t->error = row->error ? sy_xstrdup(row->error) : NULL;
    /* A task Waiting when its last host stopped is offered again here,
     * and keeps its reason until it starts or waits for something else. */
    t->waiting_for = row->state == SY_TASK_WAITING && row->waiting_for
                         ? sy_xstrdup(row->waiting_for)
                         : NULL;
    if (row->state == SY_TASK_RUNNING && row->host) {
        if (!c->hosts)
            c->hosts = calloc(r->wf->n_tasks, sizeof *c->hosts);
        if (c->hosts)
            c->hosts[row->idx] = sy_xstrdup(row->host);
    }
    /* With an overflow list the route's first instance is not
     * necessarily the one it ran on: a crash is judged by the record. */
    if (row->state == SY_TASK_RUNNING && row->executor) {
        if (!c->execs)
            c->execs = calloc(r->wf->n_tasks, sizeof *c->execs);
        if (c->execs)
            c->execs[row->idx] = sy_xstrdup(row->executor);
    }
    if (row->output) {
        t->output = json_loads(row->output, 0, NULL);
        t->output_text = sy_xstrdup(row->output);
        if (t->output && json_object_size(t->output) > 0)
            r->n_with_output++;
    }
    if (sy_task_state_terminal(t->state)) {
        r->n_terminal++;
        r->n_failed += t->state == SY_TASK_FAILED;
        r->n_skipped += t->state == SY_TASK_SKIPPED || t->state == SY_TASK_DROPPED;
    }
    return 0;
}

static void free_hosts(char **hosts, size_t n)
{
    for (size_t i = 0; hosts && i < n; i++)
        free(hosts[i]);
    free(hosts);
}

void sy_live_route(sy_engine *e, sy_live_run *r)
{
    for (size_t i = 0; i < r->wf->n_tasks; i++)
        sy_route_task(e, r, i);
    /* Elements route as their task does. */
    for (size_t i = r->wf->n_tasks; i < r->n_t; i++)
        sy_route_copy(r, i, r->maps[r->t[i].map].idx);
}

/* What the previous host's crash says of task i, when there was one. */
typedef enum { CRASH_NONE, CRASH_GUILTY, CRASH_SUSPECT, CRASH_INNOCENT } crash_verdict;

static crash_verdict judge(const sy_engine *e, const sy_live_run *r, size_t i,
                           const char *ran_on)
{
    const sy_call_snapshot *c = e->o.crash;
    if (!c || !c->fault[0])
        return CRASH_NONE; /* killed from outside (SIGKILL, OOM): nobody's fault */
    /* The task of the call in flight is guilty unless a fault names
     * another thread (a plugin's own) as where the host died. */
    bool call_guilty = c->in_call && c->ns[0] && c->fault_in_call;
    /* An element is named by its index and its task's namespace. */
    if (call_guilty && c->run_id == r->id && c->idx == sy_live_call_idx(r, i) &&
        (!sy_live_is_slot(r, i) ||
         strncmp(c->ns, sy_live_def(r, i)->ns, sizeof c->ns - 1) == 0))
        return CRASH_GUILTY;
    if (call_guilty)
        return CRASH_INNOCENT;
    const sy_live_task *t = &r->t[i];
    /* The instance it ran on as recorded, else its route's first. */
    const sy_instance_queue *q = t->queue;
    const char *instance = t->instance_name;
    for (size_t k = 0; ran_on && k < e->n_instances; k++)
        if (strcmp(e->instances[k].entry->name, ran_on) == 0) {
            q = &e->instances[k];
            instance = ran_on;
        }
    const char *plugin = q && q->entry->host.plugin ? q->entry->host.plugin : "";
    /* A fault on a plugin's own thread names the plugin, not the task:
     * every task on it is suspect, and pays as a lost attempt does. */
    if (c->fault_plugin[0] && strcmp(c->fault_plugin, plugin) == 0)
        return CRASH_SUSPECT;
    if (c->in_call && !c->ns[0] && instance && strcmp(c->instance, instance) == 0)
        return CRASH_SUSPECT;
    return CRASH_INNOCENT;
}

/* Attempts that were Running when their host stopped, or lost the run
 * (its lease lapsed), are abandoned: recorded as such with the host that
 * lost them, and the task goes back to Ready: at least once, never lost.
 * A task that keeps taking hosts down fails.  `hosts` (may be NULL) names
 * each attempt's host.  When the host died inside a plugin, the task in
 * the crashing call is charged an attempt and the others are not charged
 * at all.  In a run cancelled meanwhile (`cancel`) they end Cancelled.
 * One whose plugin resumes attempts (engine/resume.h) goes on instead,
 * unless the host died in its call. */
static void recover(sy_live_run *r, char *const *hosts, char *const *execs, bool cancel)
{
    sy_engine *e = r->e;
    for (size_t i = 0; i < r->n_t; i++) {
        sy_live_task *t = &r->t[i];
        if (t->state != SY_TASK_RUNNING)
            continue;
        /* A map runs no attempt of its own: its elements do. */
        if (!sy_live_is_slot(r, i) && r->wf->tasks[i].mapped)
            continue;
        const char *host = hosts ? hosts[i] : NULL;
        const char *ran_on = execs && i < r->wf->n_tasks ? execs[i] : NULL;
        crash_verdict v = cancel ? CRASH_NONE : judge(e, r, i, ran_on);
        if (!cancel && v != CRASH_GUILTY && sy_resume_offer(r, i, ran_on, host))
            continue;
        e->counters.abandoned++;
        sy_live_event(r, i, t->attempts, "abandoned", host);
        if (cancel) {
            /* The run was cancelled while its host was gone: what that
             * host was running ends with the run, not again. */
            sy_live_set_state(r, i, SY_TASK_CANCELLED);
            sy_live_set_error(t, "cancelled with its run (its host had stopped)");
            sy_live_task_terminal(r, i);
            continue;
        }
        char crash[768] = "", msg[1024];
        if (v != CRASH_NONE)
            sy_call_describe(e->o.crash, crash, sizeof crash);
        if (v == CRASH_GUILTY) {
            snprintf(msg, sizeof msg, "%s (attempt %u)", crash, t->attempts);
            sy_live_fail_or_retry(r, i, false, msg);
            continue;
        }
        if (v != CRASH_INNOCENT)
            t->recoveries++;
        if (v == CRASH_INNOCENT)
            snprintf(msg, sizeof msg, "recovered, not charged: attempt %u was running when %s",
                     t->attempts, crash);
        else
            snprintf(msg, sizeof msg,
                     "recovered: attempt %u was abandoned by %s, which stopped or lost the "
                     "run%s%s",
                     t->attempts, host ? host : "its host", crash[0] ? ": " : "", crash);
        if (t->recoveries > e->o.max_recoveries) {
            snprintf(msg, sizeof msg, "lost with its host %u times; not retried again",
                     t->recoveries);
            sy_live_fail_now(r, i, msg);
            continue;
        }
        sy_live_set_error(t, msg);
        sy_live_task_ready(r, i, 0);
    }
}

/* How long recovery waits for a dead host's processes to be gone after
 * SIGKILL: only a process stuck in the kernel takes longer. */
#define SY_ORPHAN_WAIT_MS 5000

/* Before anything of the run is retried: what the attempts found Running
 * left of their processes on this machine is killed (engine/orphans.h),
 * so that a retry never runs beside the attempt it replaces. */
static void kill_leftovers(sy_engine *e, sy_live_run *r)
{
    bool *running = sy_xmalloc((r->wf->n_tasks ? r->wf->n_tasks : 1) * sizeof *running);
    bool any = false;
    for (size_t i = 0; i < r->wf->n_tasks; i++)
        any |= running[i] = r->t[i].state == SY_TASK_RUNNING;
    if (any)
        sy_orphans_kill(e, r, running, SY_ORPHAN_WAIT_MS);
    free(running);
}

static void link_run(sy_engine *e, sy_live_run *r)
{
    r->next = e->runs;
    e->runs = r;
}

int sy_live_load(sy_engine *e, int64_t run_id, sy_live_run **out, char *err, size_t err_len)
{
    sy_run_record record;
    int rc = sy_store_get_run(e->o.store, run_id, &record);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "run %lld: %s", (long long)run_id,
                       rc == SY_ENOENT ? "no such run" : sy_store_errmsg(e->o.store)),
               rc;
    /* A workflow this process read from its file with the same hash is the
     * same definition: no need to parse the stored copy again. */
    sy_workflow *wf = NULL;
    bool borrowed = false;
    for (size_t i = 0; i < e->o.n_workflows && !wf; i++)
        if (strcmp(e->o.workflows[i]->hash, record.hash) == 0) {
            wf = e->o.workflows[i];
            borrowed = true;
        }
    if (!wf) {
        char *def = NULL;
        rc = sy_store_get_definition(e->o.store, record.hash, &def);
        wf = rc == SY_OK ? sy_workflow_from_json(def, err, err_len) : NULL;
        free(def);
    }
    /* The claim this host just made is the one it writes under; a run
     * another host took in between is not this host's to load. */
    if (!record.owner || strcmp(record.owner, e->o.owner) != 0) {
        sy_errf(err, err_len, "held by %s, not by this host",
                record.owner ? record.owner : "no host");
        sy_run_record_clear(&record);
        return SY_EBUSY;
    }
    int64_t epoch = record.lease_epoch, lease_until = record.lease_until;
    json_error_t jerr;
    json_t *ctx = record.context ? json_loads(record.context, 0, &jerr) : json_object();
    /* Not "not a JSON object": jansson's NULL may be memory. */
    if (!ctx && (!record.context || json_error_code(&jerr) == json_error_out_of_memory))
        sy_oom("loading the context of run %lld", (long long)run_id);
    if (!wf || !json_is_object(ctx)) {
        if (rc != SY_OK)
            sy_errf(err, err_len, "definition %s: %s", record.hash, sy_store_errmsg(e->o.store));
        else if (wf)
            sy_errf(err, err_len, "stored context is not a JSON object");
        if (!borrowed)
            sy_workflow_free(wf);
        json_decref(ctx);
        sy_run_record_clear(&record);
        return SY_EINVAL;
    }
    sy_live_run *r = calloc(1, sizeof *r);
    if (!r)
        sy_oom("loading run %lld", (long long)run_id);
    r->id = run_id;
    snprintf(r->id_text, sizeof r->id_text, "%lld", (long long)run_id);
    r->e = e;
    r->fence = (sy_store_fence){e->o.owner, epoch};
    r->gen = e->gen;
    r->lease_until = lease_until;
    r->wf = wf;
    r->wf_borrowed = borrowed;
    r->context = ctx;
    r->context_text = json_dumps(ctx, JSON_COMPACT);
    r->state = SY_RUN_RUNNING;
    r->t = calloc(wf->n_tasks ? wf->n_tasks : 1, sizeof *r->t);
    if (!r->context_text || !r->t)
        sy_oom("loading run %lld", (long long)run_id);
    bool cancel = record.cancel_requested;
    r->no_cache = record.no_cache;
    r->priority = record.priority;
    sy_run_record_clear(&record);
    r->n_t = wf->n_tasks;
    struct load_ctx load = {r, 0, err, err_len, NULL, NULL};
    rc = sy_store_list_tasks(e->o.store, run_id, load_task, &load);
    if (rc == SY_OK && !load.errors)
        rc = sy_map_load(r, &load.hosts, err, err_len);
    if (rc != SY_OK || load.errors) {
        if (rc != SY_OK)
            sy_errf(err, err_len, "%s", sy_store_errmsg(e->o.store));
        free_hosts(load.hosts, r->n_t);
        free_hosts(load.execs, wf->n_tasks);
        r->finished = true;
        sy_live_free(r);
        return rc != SY_OK ? rc : SY_EINVAL;
    }
    link_run(e, r);
    e->metrics.runs_adopted++;
    for (size_t i = 0; i < wf->n_tasks; i++) {
        const sy_task_def *d = &wf->tasks[i];
        for (size_t k = 0; k < d->n_deps; k++)
            r->t[i].deps_left += !sy_task_state_terminal(r->t[d->deps[k]].state);
    }
    sy_live_route(e, r);
    kill_leftovers(e, r);
    sy_map_resume(r);
    /* A run cancelled while no host held it is cancelled before what its
     * last host left running is recovered: that ends Cancelled too. */
    if (cancel)
        sy_live_cancel(r, "cancelled on request");
    recover(r, load.hosts, load.execs, cancel);
    free_hosts(load.hosts, r->n_t);
    free_hosts(load.execs, wf->n_tasks);
    for (size_t i = 0; i < r->n_t; i++)
        if (sy_task_state_offerable(r->t[i].state) && !r->t[i].dirty &&
            (!sy_live_is_slot(r, i) || r->t[i].elem >= 0))
            sy_live_offer(r, i);
    sy_live_start_roots(r);
    sy_live_finish_if_done(r);
    *out = r;
    return SY_OK;
}

void sy_live_drop(sy_live_run *r, const char *why)
{
    if (r->lost)
        return;
    sy_engine *e = r->e;
    r->lost = true;
    e->counters.runs_lost++;
    uint64_t lost = e->counters.runs_lost;
    if (why)
        sy_log(SY_LOG_WARN, "engine",
               "run %lld: lost its lease: %s; this host stops working on it and "
               "writes nothing more for it (%llu run%s lost so far)",
               (long long)r->id, why, (unsigned long long)lost, lost == 1 ? "" : "s");
    /* Nothing of it is offered, retried or written again; what plugins
     * still run for it is cancelled, and the run is freed once they give
     * the attempts back (reap_runs). */
    sy_dispatch_forget_run(e, r);
    for (size_t i = 0; i < r->n_t; i++) {
        sy_live_task *t = &r->t[i];
        sy_timer_stop(&e->timers, &t->backoff);
        if (t->current)
            sy_attempt_cancel(t->current);
    }
    r->dirty = false;
    if (!r->finished) {
        r->finished = true;
        if (r->watched) {
            r->watched = false;
            e->watched_left--;
        }
    }
}

void sy_live_free(sy_live_run *r)
{
    sy_engine *e = r->e;
    for (sy_live_run **p = &e->runs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    sy_dispatch_forget_run(e, r);
    for (size_t i = 0; r->wf && i < r->n_t; i++) {
        sy_live_task *t = &r->t[i];
        sy_timer_stop(&e->timers, &t->backoff);
        free(t->error);
        free(t->waiting_for);
        free(t->held); /* its rows count for nothing once the run is gone
                          from here, and are reaped (store/slots.h) */
        json_decref(t->output);
        free(t->output_text);
    }
    sy_map_free(r);
    sy_engine_input_free(r);
    sy_cache_free(r);
    free(r->t);
    if (!r->wf_borrowed)
        sy_workflow_free(r->wf);
    json_decref(r->context);
    free(r->context_text);
    free(r->error);
    free(r->fenced_why);
    free(r);
}
