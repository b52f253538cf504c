/*
 * store/record.c -- freeing the run and task records store.h hands out.
 * Below store.c and every implementation: both fill and free records.
 */
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

void sy_run_record_clear(sy_run_record *r)
{
    if (!r)
        return;
    free(r->workflow);
    free(r->tenant);
    free(r->hash);
    free(r->context);
    free(r->owner);
    free(r->error);
    memset(r, 0, sizeof *r);
}

void sy_task_record_clear(sy_task_record *t)
{
    if (!t)
        return;
    free(t->task_id);
    free(t->ns);
    free(t->executor);
    free(t->error);
    free(t->output);
    free(t->host);
    free(t->waiting_for);
    memset(t, 0, sizeof *t);
}
