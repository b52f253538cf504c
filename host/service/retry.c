/* Retry: which tasks of a finished run run again, and reopening it. */
#include "service/retry.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "service/runs.h"
#include "workflow/workflow.h"

struct rows {
    sy_task_state *state;
    uint32_t *attempts;
    size_t n;
};

static int take_row(void *arg, const sy_task_record *t)
{
    struct rows *r = arg;
    if (t->idx < r->n) {
        r->state[t->idx] = t->state;
        r->attempts[t->idx] = t->attempts;
    }
    return 0;
}

/* Marks `from` and every task downstream of it. */
static void mark_downstream(const sy_workflow *wf, size_t from, bool *mark)
{
    mark[from] = true;
    /* Tasks come in definition order, not always topological: go round
     * until nothing more is marked. */
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < wf->n_tasks; i++)
            for (size_t k = 0; !mark[i] && k < wf->tasks[i].n_deps; k++)
                if (mark[wf->tasks[i].deps[k]])
                    mark[i] = grew = true;
    }
}

static json_t *entry(const sy_workflow *wf, const struct rows *rows, size_t i)
{
    return json_pack("{s:s, s:I, s:s, s:I}", "id", wf->tasks[i].id, "index", (json_int_t)i,
                     "status", sy_task_state_name(rows->state[i]), "attempts",
                     (json_int_t)rows->attempts[i]);
}

static int build(const sy_run_record *run, const sy_workflow *wf, const struct rows *rows,
                 const char *task_id, json_t **plan, char *err, size_t err_len)
{
    bool *mark = calloc(wf->n_tasks ? wf->n_tasks : 1, sizeof *mark);
    if (!mark)
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    if (task_id) {
        long at = sy_workflow_task_index(wf, task_id);
        if (at < 0) {
            free(mark);
            sy_errf(err, err_len, "run %lld has no task '%s'", (long long)run->id, task_id);
            return SY_ENOENT;
        }
        mark_downstream(wf, (size_t)at, mark);
    } else {
        for (size_t i = 0; i < wf->n_tasks; i++)
            mark[i] = rows->state[i] != SY_TASK_COMPLETED;
    }
    json_t *rerun = json_array(), *kept = json_array();
    for (size_t i = 0; i < wf->n_tasks; i++)
        json_array_append_new(mark[i] ? rerun : kept, entry(wf, rows, i));
    free(mark);
    *plan = json_pack("{s:I, s:s, s:s, s:s?, s:o, s:o}", "run_id", (json_int_t)run->id,
                      "workflow", run->workflow, "status", sy_run_state_name(run->state),
                      "task", task_id, "rerun", rerun, "kept", kept);
    if (json_array_size(rerun) == 0) {
        sy_errf(err, err_len, "run %lld has nothing to retry: every task completed "
                "(--task TASK runs one again, and what is downstream of it)",
                (long long)run->id);
        return SY_EINVAL;
    }
    return SY_OK;
}

int sy_retry_plan(sy_store *st, int64_t run_id, const char *task_id, json_t **plan,
                  char *err, size_t err_len)
{
    *plan = NULL;
    sy_run_record run;
    int rc = sy_store_get_run(st, run_id, &run);
    if (rc != SY_OK)
        return sy_errf(err, err_len, "run %lld: %s", (long long)run_id,
                       rc == SY_ENOENT ? "no such run" : sy_store_errmsg(st)),
               rc;
    if (!sy_run_state_terminal(run.state)) {
        sy_errf(err, err_len, "run %lld is %s%s%s; only a finished run can be retried "
                "(wait for it, or cancel it first)", (long long)run_id,
                sy_run_state_name(run.state), run.owner ? ", held by " : "",
                run.owner ? run.owner : "");
        sy_run_record_clear(&run);
        return SY_ESTATE;
    }
    sy_workflow *wf = NULL;
    rc = sy_runs_stored_workflow(st, run_id, run.hash, &wf, err, err_len);
    struct rows rows = {NULL, NULL, wf ? wf->n_tasks : 0};
    if (rc == SY_OK) {
        rows.state = calloc(rows.n + 1, sizeof *rows.state);
        rows.attempts = calloc(rows.n + 1, sizeof *rows.attempts);
        if (!rows.state || !rows.attempts) {
            sy_errf(err, err_len, "out of memory");
            rc = SY_ENOMEM;
        } else if ((rc = sy_store_list_tasks(st, run_id, take_row, &rows)) != SY_OK)
            sy_errf(err, err_len, "run %lld: %s", (long long)run_id, sy_store_errmsg(st));
    }
    if (rc == SY_OK)
        rc = build(&run, wf, &rows, task_id, plan, err, err_len);
    free(rows.state);
    free(rows.attempts);
    sy_workflow_free(wf);
    sy_run_record_clear(&run);
    return rc;
}

int sy_retry_apply(sy_store *st, const json_t *plan, bool no_cache, int64_t now, char *err,
                   size_t err_len)
{
    int64_t run_id = json_integer_value(json_object_get(plan, "run_id"));
    const json_t *rerun = json_object_get(plan, "rerun");
    size_t n = json_array_size(rerun);
    uint32_t *idx = calloc(n + 1, sizeof *idx);
    if (!idx)
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)json_integer_value(json_object_get(json_array_get(rerun, i), "index"));
    int rc = sy_store_reopen_run(st, run_id, idx, n, no_cache, now);
    if (rc != SY_OK)
        sy_errf(err, err_len, "run %lld: %s", (long long)run_id, sy_store_errmsg(st));
    /* The new attempts' start is marked in the run's events. */
    for (size_t i = 0; rc == SY_OK && i < n; i++) {
        const json_t *t = json_array_get(rerun, i);
        sy_store_add_event(st, run_id, NULL, 0, idx[i],
                           (uint32_t)json_integer_value(json_object_get(t, "attempts")),
                           "retry", "run again by switchyard retry", now);
    }
    free(idx);
    return rc;
}
