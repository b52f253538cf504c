/*
 * store/postgres_batch.c -- a turn's task-row writes in one statement
 * (store.h, sy_store_update_tasks).
 *
 * One write each was one round trip each: on a loaded machine most of a
 * host's time went waiting for them.  Here the n writes travel as one
 * array per column, unnested by one UPDATE whose WHERE checks each row's
 * attempt token and its run's claim exactly as the single write does (the
 * same FENCE, share-locking the run's row), and which returns the
 * positions of the rows it wrote.  A write not among them was refused or
 * found no row; only then is its cause looked up (sy_pg_fenced), one
 * statement per refused write, as the single write does.  The statement
 * goes through the batch's journal like any other, so a reconnect replays
 * it and checks that it writes as many rows again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres_internal.h"

enum { COLS = 16 };

/* An array literal being built; `bad` once out of memory. */
typedef struct {
    char *v;
    size_t n, cap;
    bool bad;
} literal;

static void put(literal *a, const char *s, size_t len)
{
    if (a->bad)
        return;
    if (a->n + len + 2 > a->cap) {
        size_t cap = a->cap ? a->cap : 256;
        while (a->n + len + 2 > cap)
            cap *= 2;
        char *v = realloc(a->v, cap);
        if (!v) {
            a->bad = true;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    memcpy(a->v + a->n, s, len);
    a->n += len;
    a->v[a->n] = '\0';
}

static void sep(literal *a, size_t i)
{
    put(a, i ? "," : "{", 1);
}

static void put_int(literal *a, size_t i, int64_t v)
{
    char num[24];
    int len = snprintf(num, sizeof num, "%lld", (long long)v);
    sep(a, i);
    put(a, num, (size_t)len);
}

/* NULL, or the text quoted: "..." with \ and " escaped. */
static void put_text(literal *a, size_t i, const char *s)
{
    sep(a, i);
    if (!s) {
        put(a, "NULL", 4);
        return;
    }
    put(a, "\"", 1);
    for (const char *run = s;; s++) {
        if (*s && *s != '"' && *s != '\\')
            continue;
        put(a, run, (size_t)(s - run));
        if (!*s)
            break;
        put(a, "\\", 1);
        run = s;
    }
    put(a, "\"", 1);
}

static void put_row(literal *c, size_t i, const sy_store_task_write *w)
{
    const sy_task_record *t = w->t;
    put_int(&c[0], i, w->run_id);
    put_int(&c[1], i, t->idx);
    put_int(&c[2], i, (int)t->state);
    put_int(&c[3], i, t->attempts);
    put_int(&c[4], i, t->failures);
    put_int(&c[5], i, t->recoveries);
    put_text(&c[6], i, t->executor);
    put_text(&c[7], i, t->error);
    put_text(&c[8], i, t->output);
    put_int(&c[9], i, t->ready_at);
    put_int(&c[10], i, t->started);
    put_int(&c[11], i, t->finished);
    put_text(&c[12], i, w->fence ? w->fence->owner : NULL);
    if (w->fence)
        put_int(&c[13], i, w->fence->epoch);
    else
        put_text(&c[13], i, NULL);
    put_int(&c[14], i, t->fence);
    put_int(&c[15], i, w->token);
}

/* Each write the statement did not make, refused or missing, with its
 * cause; any other failure to find the cause ends the call. */
static int name_refused(sy_store_pg *q, const sy_store_task_write *w, size_t n,
                        const bool *landed, sy_store_refused_cb refused, void *arg)
{
    for (size_t i = 0; i < n; i++) {
        if (landed[i])
            continue;
        int status = w[i].fence ? sy_pg_fenced(q, w[i].run_id, w[i].fence, w[i].t->idx,
                                               w[i].token, "update_task")
                                : SY_ENOENT;
        if (status == SY_ENOENT)
            status = sy_store_fail(&q->base, SY_ENOENT, "update_task: run %lld has no task %u",
                                   (long long)w[i].run_id, w[i].t->idx);
        if (status != SY_STORE_EFENCED && status != SY_ENOENT)
            return status;
        refused(arg, i, status);
    }
    return SY_OK;
}

int sy_pg_update_tasks(sy_store *s, const sy_store_task_write *w, size_t n,
                       sy_store_refused_cb refused, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "update_tasks: no batch is open");
    if (n == 0)
        return SY_OK;
    literal c[COLS] = {{0}};
    for (size_t i = 0; i < n; i++)
        put_row(c, i, &w[i]);
    sy_pg_params p = {0};
    bool bad = false;
    for (int k = 0; k < COLS; k++) {
        put(&c[k], "}", 1);
        bad |= c[k].bad;
        sy_pg_text(&p, k + 1, c[k].v);
    }
    bool *landed = bad ? NULL : calloc(n, sizeof *landed);
    int status = SY_ENOMEM;
    PGresult *r = NULL;
    if (!landed)
        sy_store_fail(s, SY_ENOMEM, "out of memory");
    else
        status = sy_pg_run(q, SY_PG_UPDATE_TASKS, &p, &r, "update tasks");
    for (int k = 0; k < COLS; k++)
        free(c[k].v);
    if (status == SY_OK) {
        int rows = PQntuples(r);
        for (int i = 0; i < rows; i++) {
            int64_t at = sy_pg_col_int(r, i, 0);
            if (at >= 1 && (size_t)at <= n)
                landed[at - 1] = true;
        }
        PQclear(r);
        if ((size_t)rows < n)
            status = name_refused(q, w, n, landed, refused, arg);
    }
    free(landed);
    return status;
}
