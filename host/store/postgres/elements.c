/*
 * store/postgres/elements.c -- mapped tasks in the PostgreSQL store: a
 * map's size, its element rows (made by their first write), and listing
 * both.
 */
#include <stdlib.h>
#include <string.h>

#include "store/postgres/internal.h"

int sy_pg_put_map(sy_store *s, int64_t run_id, const sy_store_fence *fence, uint32_t idx,
                  int64_t size)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "put_map: no batch is open");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, idx);
    sy_pg_int(&p, 3, size);
    sy_pg_text(&p, 4, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&p, 5, fence->epoch);
    else
        sy_pg_text(&p, 5, NULL);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_PUT_MAP, &p, &r, "record a map");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    /* Nothing inserted: there already (fine) or not this claim's run. */
    if (changed == 0 && fence) {
        status = sy_pg_fenced(q, run_id, fence, SY_PG_NO_TASK, 0, "put_map");
        return status == SY_ENOENT ? SY_OK : status;
    }
    return SY_OK;
}

int sy_pg_update_element(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                         int64_t token, int64_t elem, const sy_task_record *t)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "update_element: no batch is open");
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, t->idx);
    sy_pg_int(&p, 3, elem);
    sy_pg_int(&p, 4, (int)t->state);
    sy_pg_int(&p, 5, t->attempts);
    sy_pg_int(&p, 6, t->failures);
    sy_pg_int(&p, 7, t->recoveries);
    sy_pg_text(&p, 8, t->executor);
    sy_pg_text(&p, 9, t->error);
    sy_pg_text(&p, 10, t->output);
    sy_pg_int(&p, 11, t->ready_at);
    sy_pg_int(&p, 12, t->started);
    sy_pg_int(&p, 13, t->finished);
    sy_pg_text(&p, 14, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&p, 15, fence->epoch);
    else
        sy_pg_text(&p, 15, NULL);
    sy_pg_int(&p, 16, t->fence);
    sy_pg_int(&p, 17, token);
    sy_pg_text(&p, 18, t->waiting_for);
    /* The slots this write's attempt took in the batch, when it starts
     * that attempt (postgres/holds.c). */
    bool oom = false;
    const char *hold =
        q->holds.n ? sy_pg_hold_text(q, run_id, t->idx, elem, t->fence, &oom, NULL) : NULL;
    sy_pg_text(&p, 19, hold);
    if (oom)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    /* Most writes are to rows already there; a first write (token 0)
     * finds none and inserts it. */
    for (int i = 0; i < 2; i++) {
        PGresult *r;
        int status = sy_pg_run(q, i ? SY_PG_INSERT_ELEMENT : SY_PG_UPDATE_ELEMENT, &p, &r,
                               "write an element");
        if (status != SY_OK)
            return status;
        int64_t changed = sy_pg_changes(r);
        PQclear(r);
        if (changed > 0)
            return SY_OK;
        if (token != 0)
            break;
    }
    return sy_pg_element_refused(q, run_id, fence, token, elem, t->idx);
}

int sy_pg_element_refused(sy_store_pg *q, int64_t run_id, const sy_store_fence *fence,
                          int64_t token, int64_t elem, uint32_t idx)
{
    if (fence) {
        int status = sy_pg_fenced(q, run_id, fence, SY_PG_NO_TASK, 0, "update_element");
        if (status != SY_ENOENT)
            return status;
        return sy_store_fail(&q->base, SY_STORE_EFENCED,
                             "update_element: run %lld task %u[%lld] no longer holds attempt "
                             "token %lld",
                             (long long)run_id, idx, (long long)elem, (long long)token);
    }
    return sy_store_fail(&q->base, SY_ENOENT,
                         "update_element: run %lld has no map at task %u with element %lld",
                         (long long)run_id, idx, (long long)elem);
}

int sy_pg_list_maps(sy_store *s, int64_t run_id, sy_store_map_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LIST_MAPS, &p, &r, "list maps");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    sy_map_record m;
    bool have = false;
    for (int i = 0; i <= rows; i++) {
        uint32_t idx = i < rows ? (uint32_t)sy_pg_col_int(r, i, 0) : 0;
        if (have && (i == rows || m.idx != idx)) {
            have = false;
            if (cb(arg, &m) != 0)
                break;
        }
        if (i == rows)
            break;
        if (!have) {
            memset(&m, 0, sizeof m);
            m.idx = idx;
            m.size = sy_pg_col_int(r, i, 1);
            have = true;
        }
        int64_t state = sy_pg_col_int(r, i, 2);
        if (!PQgetisnull(r, i, 2) && state >= 0 && state < SY_TASK_STATE_COUNT) {
            m.count[state] += sy_pg_col_int(r, i, 3);
            m.created += sy_pg_col_int(r, i, 3);
        }
    }
    PQclear(r);
    return SY_OK;
}

int sy_pg_list_elements(sy_store *s, int64_t run_id, uint32_t idx, bool open_only,
                        sy_store_element_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    sy_pg_int(&p, 2, idx);
    sy_pg_int(&p, 3, open_only);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LIST_ELEMENTS, &p, &r, "list elements");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        sy_task_record t = {
            .idx = idx,
            .state = (sy_task_state)sy_pg_col_int(r, i, 1),
            .attempts = (uint32_t)sy_pg_col_int(r, i, 2),
            .failures = (uint32_t)sy_pg_col_int(r, i, 3),
            .recoveries = (uint32_t)sy_pg_col_int(r, i, 4),
            .executor = sy_pg_col(r, i, 5),
            .error = sy_pg_col(r, i, 6),
            .output = sy_pg_col(r, i, 7),
            .ready_at = sy_pg_col_int(r, i, 8),
            .started = sy_pg_col_int(r, i, 9),
            .finished = sy_pg_col_int(r, i, 10),
            .fence = sy_pg_col_int(r, i, 11),
            .host = sy_pg_col(r, i, 12),
            .waiting_for = sy_pg_col(r, i, 13),
        };
        if (cb(arg, sy_pg_col_int(r, i, 0), &t) != 0)
            break;
    }
    PQclear(r);
    return SY_OK;
}
