/*
 * store/postgres/processes.c -- the process groups attempts run
 * (sy_store_record_process, sy_store_list_processes) in PostgreSQL.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"

int sy_pg_record_process(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                         int64_t token, const sy_process_record *p)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params a = {0};
    sy_pg_int(&a, 1, run_id);
    sy_pg_int(&a, 2, p->idx);
    sy_pg_int(&a, 3, p->attempt);
    sy_pg_int(&a, 4, p->pgid);
    sy_pg_text(&a, 5, fence ? fence->owner : p->host);
    sy_pg_text(&a, 6, p->machine);
    sy_pg_text(&a, 7, p->boot_id);
    sy_pg_int(&a, 8, (int64_t)p->start_time);
    sy_pg_int(&a, 9, p->recorded);
    sy_pg_text(&a, 10, fence ? fence->owner : NULL);
    if (fence)
        sy_pg_int(&a, 11, fence->epoch);
    else
        sy_pg_text(&a, 11, NULL);
    sy_pg_int(&a, 12, token);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RECORD_PROCESS, &a, &r, "record process group");
    if (status != SY_OK)
        return status;
    int64_t changed = sy_pg_changes(r);
    PQclear(r);
    if (changed == 0)
        return sy_pg_fenced(q, run_id, fence, p->idx, token, "record_process");
    return SY_OK;
}

int sy_pg_list_processes(sy_store *s, int64_t run_id,
                         int (*cb)(void *arg, const sy_process_record *p),
                         void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params a = {0};
    sy_pg_int(&a, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_LIST_PROCESSES, &a, &r, "list processes");
    if (status != SY_OK)
        return status;
    int rows = PQntuples(r);
    for (int i = 0; i < rows; i++) {
        sy_process_record p = {
            .idx = (uint32_t)sy_pg_col_int(r, i, 0),
            .attempt = (uint32_t)sy_pg_col_int(r, i, 1),
            .host = sy_pg_col(r, i, 2),
            .machine = sy_pg_col(r, i, 3),
            .boot_id = sy_pg_col(r, i, 4),
            .pgid = sy_pg_col_int(r, i, 5),
            .start_time = (uint64_t)sy_pg_col_int(r, i, 6),
            .recorded = sy_pg_col_int(r, i, 7),
        };
        if (cb(arg, &p) != 0)
            break;
    }
    PQclear(r);
    return SY_OK;
}
