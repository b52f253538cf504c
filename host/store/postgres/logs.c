/*
 * store/postgres/logs.c -- attempt logs, and reopening a finished run so
 * that `switchyard retry` can run what failed in it again.
 */
#include <string.h>

#include "store/postgres/internal.h"

int sy_pg_add_log(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                  int64_t token, const sy_log_record *log)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, log->idx);
    sy_pg_int(&p, 3, log->attempt);
    sy_pg_text(&p, 4, log->stream);
    sy_pg_text(&p, 5, log->text);
    sy_pg_int(&p, 6, log->size);
    sy_pg_int(&p, 7, log->dropped);
    sy_pg_int(&p, 8, log->at);
    sy_pg_text(&p, 9, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&p, 10, fence->epoch);
    else
        sy_pg_text(&p, 10, NULL);
    sy_pg_int(&p, 11, token);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_ADD_LOG, &p, &r, "add log");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    if (changed == 0)
        return sy_pg_fenced(q, run_id, fence, log->idx, token, "add_log");
    return SY_OK;
}

static int run_state(sy_store_pg *q, int64_t run_id, int *state)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RUN_STATE_OF, &p, &r, "look up run");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0)
        status = sy_store_fail(&q->base, SY_ENOENT, "no run %lld",
                               (long long)run_id);
    else
        *state = (int)sy_pg_col_int(r, 0, 0);
    PQclear(r);
    return status;
}

int sy_pg_list_logs(sy_store *s, int64_t run_id, int64_t since,
                    sy_store_log_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    int state = 0;
    int status = run_state(q, run_id, &state);
    if (status != SY_OK)
        return status;
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, since);
    PGresult *r;
    status = sy_pg_run(q, SY_PG_LIST_LOGS, &p, &r, "list logs");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        sy_log_record log = {
            .idx = (uint32_t)sy_pg_col_int(r, i, 0),
            .attempt = (uint32_t)sy_pg_col_int(r, i, 1),
            .stream = sy_pg_col(r, i, 2),
            .text = sy_pg_col(r, i, 3),
            .size = sy_pg_col_int(r, i, 4),
            .dropped = sy_pg_col_int(r, i, 5),
            .at = sy_pg_col_int(r, i, 6),
        };
        if (cb(arg, &log) != 0)
            break;
    }
    PQclear(r);
    return SY_OK;
}

static int reopen_in_tx(sy_store_pg *q, int64_t run_id, const uint32_t *idx,
                        size_t n, bool no_cache)
{
    int state = 0;
    int status = run_state(q, run_id, &state);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, no_cache); /* then each task's index */
    PGresult *r = NULL;
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_REOPEN_RUN, &p, &r, "reopen run");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    if (changed == 0)
        return sy_store_fail(&q->base, SY_ESTATE,
                             "run %lld is %s, not finished", (long long)run_id,
                             sy_run_state_name((sy_run_state)state));
    for (size_t i = 0; i < n && status == SY_OK; i++) {
        sy_pg_int(&p, 2, idx[i]);
        status = sy_pg_run(q, SY_PG_REOPEN_TASK, &p, &r, "reopen task");
        if (status != SY_OK)
            break;
        changed = sy_pg_changes(r);
        PQclear(r);
        if (changed == 0)
            status = sy_store_fail(&q->base, SY_EINVAL,
                                   "reopen_run: run %lld has no task %u",
                                   (long long)run_id, idx[i]);
    }
    return status;
}

int sy_pg_reopen_run(sy_store *s, int64_t run_id, const uint32_t *idx,
                     size_t n, bool no_cache, int64_t now)
{
    (void)now;
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "reopen_run: inside a batch");
    int status = sy_pg_transaction_begin(q, false);
    if (status != SY_OK)
        return status;
    status = reopen_in_tx(q, run_id, idx, n, no_cache);
    /* The reopened run is Pending again: listening hosts wake for it. */
    if (status == SY_OK)
        status = sy_pg_notify(q);
    return sy_pg_transaction_end(q, false, status);
}
