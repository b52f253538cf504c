/* Runs: recording, cancelling, and reading them back as data. */
#include "service/runs.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/util.h"
#include "store/keyed.h"
#include "workflow/state.h"

int sy_runs_record(sy_store *st, const sy_workflow *wf, const char *context,
                   int64_t *run_id, char *err, size_t err_len)
{
    return sy_runs_record_keyed(st, wf, context, NULL, 0, 0, run_id, NULL, err, err_len);
}

int sy_runs_record_with(sy_store *st, const sy_workflow *wf, const char *context,
                        sy_runs_create_fn create, void *arg, char *err, size_t err_len)
{
    /* A workflow from the parse cache writes its text only now. */
    char hash[65], *built = NULL;
    const char *def = sy_workflow_definition(wf, &built, hash);
    if (!def) {
        sy_errf(err, err_len, "out of memory writing the workflow's definition");
        return SY_ENOMEM;
    }
    int rc = sy_store_put_definition(st, hash, wf->tenant, wf->name, def);
    free(built);
    if (rc == SY_OK) {
        const char **ids = sy_xmalloc((wf->n_tasks + 1) * sizeof *ids);
        const char **ns = sy_xmalloc((wf->n_tasks + 1) * sizeof *ns);
        for (size_t i = 0; i < wf->n_tasks; i++) {
            ids[i] = wf->tasks[i].id;
            ns[i] = wf->tasks[i].ns;
        }
        sy_store_new_run r = {hash, wf->tenant, wf->name, context, wf->n_tasks, ids, ns, 0};
        rc = create(st, &r, arg);
        free(ids);
        free(ns);
    }
    if (rc != SY_OK)
        sy_errf(err, err_len, "%s", sy_store_errmsg(st));
    return rc;
}

struct keyed {
    const char *key;
    int64_t window_ms;
    int32_t priority;
    int64_t *run_id;
    bool created;
};

static int create_keyed(sy_store *st, const sy_store_new_run *r, void *arg)
{
    struct keyed *k = arg;
    sy_store_new_run with = *r;
    with.priority = k->priority;
    if (k->key)
        return sy_store_create_run_keyed(st, &with, k->key, k->window_ms, sy_clock_now_ms(),
                                         k->run_id, &k->created);
    return sy_store_create_run_with(st, &with, sy_clock_now_ms(), k->run_id);
}

int sy_runs_record_keyed(sy_store *st, const sy_workflow *wf, const char *context,
                         const char *key, int64_t window_ms, int32_t priority, int64_t *run_id,
                         bool *created, char *err, size_t err_len)
{
    struct keyed k = {key, window_ms, priority, run_id, true};
    int rc = sy_runs_record_with(st, wf, context, create_keyed, &k, err, err_len);
    if (created)
        *created = k.created;
    return rc;
}

int sy_runs_stored_workflow(sy_store *st, int64_t run_id, const char *hash,
                            sy_workflow **out, char *err, size_t err_len)
{
    char *def = NULL;
    *out = NULL;
    int rc = sy_store_get_definition(st, hash, &def);
    if (rc != SY_OK)
        sy_errf(err, err_len, "run %lld: %s", (long long)run_id, sy_store_errmsg(st));
    /* err says what is wrong with the stored text: a store edited by hand,
     * or written by a newer host. */
    else if (!(*out = sy_workflow_from_json(def, err, err_len)))
        rc = SY_EINVAL;
    free(def);
    return rc;
}

int sy_runs_cancel(sy_store *st, int64_t run_id, sy_run_state *state, char *err,
                   size_t err_len)
{
    int rc = sy_store_request_cancel(st, run_id, sy_clock_now_ms());
    sy_run_record r;
    if (rc == SY_OK)
        rc = sy_store_get_run(st, run_id, &r);
    if (rc == SY_OK) {
        *state = r.state;
        sy_run_record_clear(&r);
        return SY_OK;
    }
    sy_errf(err, err_len, "%s",
            rc == SY_ENOENT   ? "no such run"
            : rc == SY_ESTATE ? "already ended"
                              : sy_store_errmsg(st));
    return rc;
}

static json_t *string_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* A page of a run's tasks, and every task counted by state: a run of a
 * million tasks is summed up without a million objects. */
struct listing {
    json_t *tasks;
    const sy_runs_page *page;
    bool outputs;                       /* parse each listed task's output */
    size_t n;                           /* tasks seen */
    size_t count[SY_TASK_STATE_COUNT];  /* by state */
};

static int add_task(void *arg, const sy_task_record *t)
{
    struct listing *l = arg;
    size_t at = l->n++;
    if ((unsigned)t->state < SY_TASK_STATE_COUNT)
        l->count[t->state]++;
    const sy_runs_page *p = l->page;
    if (p && p->task_id ? strcmp(t->task_id, p->task_id) != 0
                        : p && (at < p->offset || (p->limit && at - p->offset >= p->limit)))
        return 0;
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:[]}", "index",
                          (json_int_t)t->idx, "namespace",
                          t->ns, "id", t->task_id, "status", sy_task_state_name(t->state),
                          "attempts", (json_int_t)t->attempts, "recoveries",
                          (json_int_t)t->recoveries, "executor", string_or_null(t->executor),
                          "error", string_or_null(t->error), "host",
                          string_or_null(t->host), "abandoned");
    json_object_set_new(o, "waiting_for", string_or_null(t->waiting_for));
    json_object_set_new(o, "resumed", json_array());
    json_object_set_new(o, "cached", json_false());
    json_t *out = t->output && l->outputs ? json_loads(t->output, 0, NULL) : NULL;
    json_object_set_new(o, "output", out ? out : json_null());
    json_array_append_new(l->tasks, o);
    return 0;
}

json_t *sy_runs_task_at(const json_t *tasks, uint32_t idx)
{
    size_t lo = 0, hi = json_array_size(tasks);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        json_t *t = json_array_get(tasks, mid);
        json_int_t at = json_integer_value(json_object_get(t, "index"));
        if (at == (json_int_t)idx)
            return t;
        if (at < (json_int_t)idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* An attempt abandoned by a host that lost the run, or resumed from it
 * (executor ABI 1.4), under its task, in the list of that name. */
static int add_abandoned(void *arg, uint32_t idx, uint32_t attempt, const char *kind,
                         const char *detail, int64_t at)
{
    bool cached = strcmp(kind, "cached") == 0;
    if (strcmp(kind, "abandoned") != 0 && strcmp(kind, "resumed") != 0 && !cached)
        return 0;
    json_t *task = sy_runs_task_at(arg, idx);
    if (!task)
        return 0;
    /* Completed from the cache (engine/cache.h): by its last attempt, not
     * by one a retry ran again since. */
    if (cached) {
        json_int_t last = json_integer_value(json_object_get(task, "attempts"));
        if ((json_int_t)attempt == last &&
            strcmp(json_string_value(json_object_get(task, "status")), "Completed") == 0)
            json_object_set_new(task, "cached", json_true());
        return 0;
    }
    /* An element's event starts with its index: "[17] HOST". */
    long long element = -1;
    char *end = NULL;
    if (detail && detail[0] == '[') {
        element = strtoll(detail + 1, &end, 10);
        if (end && end[0] == ']' && end[1] == ' ')
            detail = end[2] ? end + 2 : NULL;
        else
            element = -1;
    }
    json_t *a = json_pack("{s:I, s:o, s:I}", "attempt", (json_int_t)attempt, "host",
                          string_or_null(detail), "at", (json_int_t)at);
    if (element >= 0)
        json_object_set_new(a, "element", json_integer(element));
    json_array_append_new(json_object_get(task, kind), a);
    return 0;
}

int sy_runs_status(sy_store *st, int64_t run_id, unsigned flags, json_t **out, char *err,
                   size_t err_len)
{
    return sy_runs_status_page(st, run_id, flags, NULL, out, err, err_len);
}

int sy_runs_status_page(sy_store *st, int64_t run_id, unsigned flags,
                        const sy_runs_page *page, json_t **out, char *err, size_t err_len)
{
    sy_run_record r;
    int rc = sy_store_get_run(st, run_id, &r);
    if (rc != SY_OK) {
        sy_errf(err, err_len, "%s", rc == SY_ENOENT ? "no such run" : sy_store_errmsg(st));
        return rc;
    }
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:i}", "run_id", (json_int_t)r.id,
                          "workflow", r.workflow, "tenant", r.tenant, "status",
                          sy_run_state_name(r.state), "error", string_or_null(r.error),
                          "priority", (int)r.priority);
    if (!(flags & SY_RUNS_NO_TASKS)) {
        json_t *tasks = json_array();
        json_object_set_new(o, "tasks", tasks);
        struct listing l = {.tasks = tasks, .page = page,
                            .outputs = !(flags & SY_RUNS_NO_OUTPUT)};
        /* A partial list would read as a run with fewer tasks. */
        if ((rc = sy_store_list_tasks(st, r.id, add_task, &l)) != SY_OK ||
            (rc = sy_store_list_events(st, r.id, add_abandoned, tasks)) != SY_OK) {
            sy_errf(err, err_len, "%s", sy_store_errmsg(st));
            sy_run_record_clear(&r);
            json_decref(o);
            return rc;
        }
        json_t *by_state = json_object();
        for (int s = 0; s < SY_TASK_STATE_COUNT; s++)
            if (l.count[s])
                json_object_set_new(by_state, sy_task_state_name((sy_task_state)s),
                                    json_integer((json_int_t)l.count[s]));
        json_object_set_new(o, "n_tasks", json_integer((json_int_t)l.n));
        json_object_set_new(o, "task_counts", by_state);
        if (page && !page->task_id)
            json_object_set_new(o, "tasks_offset", json_integer((json_int_t)page->offset));
    }
    if (flags & SY_RUNS_DETAIL) {
        json_object_set_new(o, "created", json_integer(r.created));
        json_object_set_new(o, "started", json_integer(r.started));
        json_object_set_new(o, "finished", json_integer(r.finished));
        json_object_set_new(o, "owner", string_or_null(r.owner));
    }
    sy_run_record_clear(&r);
    *out = o;
    return SY_OK;
}

struct find {
    const sy_runs_filter *f;
    json_t *runs;
};

static int add_run(void *arg, const sy_run_record *r)
{
    struct find *fd = arg;
    const sy_runs_filter *f = fd->f;
    if (f->after > 0 && r->id >= f->after)
        return 0;
    if (f->state >= 0 && (int)r->state != f->state)
        return 0;
    if (f->workflow && strcmp(f->workflow, r->workflow) != 0) {
        /* "TENANT::NAME" matches too */
        size_t tl = strlen(r->tenant);
        if (strncmp(f->workflow, r->tenant, tl) != 0 || strncmp(f->workflow + tl, "::", 2) != 0 ||
            strcmp(f->workflow + tl + 2, r->workflow) != 0)
            return 0;
    }
    /* A run still going has lasted until now; one not started, nothing. */
    int64_t end = r->finished ? r->finished : sy_clock_now_ms();
    json_t *duration = r->started ? json_integer(end - r->started) : json_null();
    json_array_append_new(
        fd->runs, json_pack("{s:I, s:s, s:I, s:I, s:I, s:o, s:s, s:s, s:I, s:{}, s:o}", "run_id",
                       (json_int_t)r->id, "status", sy_run_state_name(r->state), "created",
                       (json_int_t)r->created, "started", (json_int_t)r->started,
                       "finished", (json_int_t)r->finished, "duration_ms", duration,
                       "workflow", r->workflow, "tenant", r->tenant, "n_tasks",
                       (json_int_t)r->n_tasks, "tasks", "error", string_or_null(r->error)));
    return f->limit && json_array_size(fd->runs) >= f->limit;
}

static int count_task(void *arg, const sy_task_record *t)
{
    size_t *count = arg;
    if ((unsigned)t->state < SY_TASK_STATE_COUNT)
        count[t->state]++;
    return 0;
}

int sy_runs_list(sy_store *st, size_t limit, json_t **out, char *err, size_t err_len)
{
    sy_runs_filter f = {.limit = limit, .state = -1};
    return sy_runs_find(st, &f, out, err, err_len);
}

int sy_runs_find(sy_store *st, const sy_runs_filter *f, json_t **out, char *err,
                 size_t err_len)
{
    json_t *runs = json_array();
    struct find fd = {f, runs};
    /* Unfiltered, the store stops at the limit itself; filtered, the
     * callback does, once it has enough that match. */
    bool filtered = f->after > 0 || f->state >= 0 || f->workflow;
    int rc = sy_store_list_runs(st, filtered ? 0 : f->limit, add_run, &fd);
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        if (rc != SY_OK)
            break;
        size_t count[SY_TASK_STATE_COUNT] = {0};
        rc = sy_store_list_tasks(st, (int64_t)json_integer_value(json_object_get(r, "run_id")),
                                 count_task, count);
        json_t *by_state = json_object_get(r, "tasks");
        for (int s = 0; s < SY_TASK_STATE_COUNT; s++)
            if (count[s])
                json_object_set_new(by_state, sy_task_state_name((sy_task_state)s),
                                    json_integer((json_int_t)count[s]));
    }
    if (rc != SY_OK) {
        json_decref(runs);
        sy_errf(err, err_len, "%s", sy_store_errmsg(st));
        return rc;
    }
    *out = runs;
    return SY_OK;
}
