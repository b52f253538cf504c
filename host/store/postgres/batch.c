/*
 * store/postgres/batch.c -- a turn's task-row writes in one statement
 * (store.h, sy_store_update_tasks), and its element-row writes in another
 * (sy_store_update_elements).
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
 * it and checks that it writes as many rows again.  Element rows go the
 * same way; a write of an element not there yet inserts its row in the
 * same statement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/postgres/internal.h"

/* The columns, one array each; the statement's distinct holds follow,
 * and for the task rows the runs their fenced writes name. */
enum { TASK_COLS = 18, ELEMENT_COLS = 19 };

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
        char *v = sy_grow(a->v, &a->cap, a->n + len + 2, 1, 256);
        if (!v) {
            a->bad = true;
            return;
        }
        a->v = v;
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
    size_t len = (size_t)(sy_pg_decimal(num, v) - num);
    sep(a, i);
    put(a, num, len);
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

/* A statement's distinct holds: their array literal, sent as its last
 * parameter, each row naming its hold by index.  A turn's attempts mostly
 * hold the same text (a pool, a workflow's limit); escaped into every
 * row's array it cost the host about 800 instructions a task, and the
 * server a read of it a row.  Found by the identity postgres/holds.c
 * gives a hold of one take, else by the last one and a small table by
 * hash; a text a table has lost is sent again (only longer, never
 * wrong). */
enum { HOLD_SLOTS = 256 };
typedef struct {
    literal list;  /* "{text,...", the holds sent */
    size_t n;      /* how many */
    literal text;  /* the same, NUL-separated, to compare with */
    struct {
        size_t index; /* + 1; 0: free */
        size_t at;    /* where it starts in `text` */
    } slot[HOLD_SLOTS], last;
    struct {
        uint64_t id;  /* sy_pg_hold_text's; 0: free */
        size_t index; /* + 1 */
    } by_id[HOLD_SLOTS];
} holds_seen;

/* Adds the hold to the statement's holds: its index + 1, 0 only out of
 * memory (list.bad). */
static size_t hold_new(holds_seen *h, const char *hold)
{
    if (h->n)
        put(&h->text, "", 1); /* the NUL that ends the one before */
    size_t at = h->text.n;
    put(&h->text, hold, strlen(hold));
    put_text(&h->list, h->n, hold);
    h->list.bad |= h->text.bad;
    if (h->list.bad)
        return 0;
    h->last.index = ++h->n;
    h->last.at = at;
    return h->n;
}

/* The hold's index + 1 in the statement's holds, added if not found; 0
 * only out of memory (list.bad).  id: sy_pg_hold_text's. */
static size_t hold_index(holds_seen *h, const char *hold, uint64_t id)
{
    if (id) {
        size_t k = (size_t)(id % HOLD_SLOTS);
        if (h->by_id[k].id != id) {
            h->by_id[k].index = hold_new(h, hold);
            h->by_id[k].id = h->by_id[k].index ? id : 0;
        }
        return h->by_id[k].index;
    }
    if (h->last.index && strcmp(h->text.v + h->last.at, hold) == 0)
        return h->last.index;
    size_t k = (size_t)(sy_fnv1a(SY_FNV_START, hold) % HOLD_SLOTS);
    if (h->slot[k].index && strcmp(h->text.v + h->slot[k].at, hold) == 0) {
        h->last = h->slot[k];
        return h->last.index;
    }
    if (!hold_new(h, hold))
        return 0;
    h->slot[k] = h->last;
    return h->n;
}

/* The statement's holds as its last parameter, c: "{...}" once sent. */
static void holds_done(holds_seen *h, literal *c)
{
    if (h->n == 0)
        put(&h->list, "{", 1);
    *c = h->list;
    free(h->text.v);
}

/* The slots the write's attempt took in this batch, when it starts that
 * attempt (postgres/holds.c): its index in the statement's holds, or 0. */
static void put_hold(sy_store_pg *q, literal *c, size_t i, holds_seen *seen, int64_t run_id,
                     uint32_t idx, int64_t elem, int64_t token)
{
    bool oom = false;
    uint64_t id = 0;
    const char *hold =
        q->holds.n ? sy_pg_hold_text(q, run_id, idx, elem, token, &oom, &id) : NULL;
    c->bad |= oom;
    put_int(c, i, hold ? (int64_t)hold_index(seen, hold, id) : 0);
}

/* The row's mutable columns from c[0] on (state ... finished), as both
 * statements take them. */
static void put_record(literal *c, size_t i, const sy_task_record *t)
{
    put_int(&c[0], i, (int)t->state);
    put_int(&c[1], i, t->attempts);
    put_int(&c[2], i, t->failures);
    put_int(&c[3], i, t->recoveries);
    put_text(&c[4], i, t->executor);
    put_text(&c[5], i, t->error);
    put_text(&c[6], i, t->output);
    put_int(&c[7], i, t->ready_at);
    put_int(&c[8], i, t->started);
    put_int(&c[9], i, t->finished);
}

/* The fence's columns from c[0] on: owner, epoch, the row's new token and
 * the one its writer holds. */
static void put_fence(literal *c, size_t i, const sy_store_fence *fence, int64_t fe,
                      int64_t token)
{
    put_text(&c[0], i, fence ? fence->owner : NULL);
    if (fence)
        put_int(&c[1], i, fence->epoch);
    else
        put_text(&c[1], i, NULL);
    put_int(&c[2], i, fe);
    put_int(&c[3], i, token);
}

static void put_row(sy_store_pg *q, literal *c, size_t i, holds_seen *seen,
                    const sy_store_task_write *w)
{
    put_int(&c[0], i, w->run_id);
    put_int(&c[1], i, w->t->idx);
    put_record(&c[2], i, w->t);
    put_fence(&c[12], i, w->fence, w->t->fence, w->token);
    put_text(&c[16], i, w->t->waiting_for);
    put_hold(q, &c[17], i, seen, w->run_id, w->t->idx, -1, w->t->fence);
}

static void put_element(sy_store_pg *q, literal *c, size_t i, holds_seen *seen,
                        const sy_store_element_write *w)
{
    put_int(&c[0], i, w->run_id);
    put_int(&c[1], i, w->t->idx);
    put_int(&c[2], i, w->elem);
    put_record(&c[3], i, w->t);
    put_fence(&c[13], i, w->fence, w->t->fence, w->token);
    put_text(&c[17], i, w->t->waiting_for);
    put_hold(q, &c[18], i, seen, w->run_id, w->t->idx, w->elem, w->t->fence);
}

/* Sends statement `id` with the k arrays (freed here); landed[i] set for
 * each write among the rows it returned, *rows how many. */
static int send(sy_store_pg *q, int id, literal *c, int k, bool *landed, size_t n,
                size_t *rows, const char *what)
{
    sy_pg_params p = {0};
    bool bad = !landed;
    for (int j = 0; j < k; j++) {
        put(&c[j], "}", 1);
        bad |= c[j].bad;
        sy_pg_text(&p, j + 1, c[j].v);
    }
    PGresult *r = NULL;
    int status = bad ? sy_store_fail(&q->base, SY_ENOMEM, "out of memory")
                     : sy_pg_run(q, id, &p, &r, what);
    for (int j = 0; j < k; j++)
        free(c[j].v);
    *rows = 0;
    if (status != SY_OK)
        return status;
    int got = PQntuples(r);
    for (int i = 0; i < got; i++) {
        int64_t at = sy_pg_col_int(r, i, 0);
        if (at >= 1 && (size_t)at <= n && !landed[at - 1]) {
            landed[at - 1] = true;
            ++*rows;
        }
    }
    PQclear(r);
    return SY_OK;
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
    literal c[TASK_COLS + 2] = {{0}};
    holds_seen *seen = calloc(1, sizeof *seen);
    if (!seen)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    literal *runs = &c[TASK_COLS + 1];
    size_t n_runs = 0;
    for (size_t i = 0; i < n; i++) {
        put_row(q, c, i, seen, &w[i]);
        /* A turn's writes come run by run: a run named again is only a
         * longer array, never a wrong one. */
        if (w[i].fence && (i == 0 || w[i - 1].run_id != w[i].run_id || !w[i - 1].fence))
            put_int(runs, n_runs++, w[i].run_id);
    }
    if (n_runs == 0)
        put(runs, "{", 1);
    holds_done(seen, &c[TASK_COLS]);
    free(seen);
    bool *landed = calloc(n, sizeof *landed);
    size_t rows = 0;
    int status =
        send(q, SY_PG_UPDATE_TASKS, c, TASK_COLS + 2, landed, n, &rows, "update tasks");
    if (status == SY_OK && rows < n)
        status = name_refused(q, w, n, landed, refused, arg);
    free(landed);
    return status;
}

int sy_pg_update_elements(sy_store *s, const sy_store_element_write *w, size_t n,
                          sy_store_refused_cb refused, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (!q->batch)
        return sy_store_fail(s, SY_ESTATE, "update_elements: no batch is open");
    if (n == 0)
        return SY_OK;
    literal c[ELEMENT_COLS + 1] = {{0}};
    holds_seen *seen = calloc(1, sizeof *seen);
    if (!seen)
        return sy_store_fail(s, SY_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        put_element(q, c, i, seen, &w[i]);
    holds_done(seen, &c[ELEMENT_COLS]);
    free(seen);
    bool *landed = calloc(n, sizeof *landed);
    size_t rows = 0;
    int status = send(q, SY_PG_UPDATE_ELEMENTS, c, ELEMENT_COLS + 1, landed, n, &rows,
                      "write elements");
    /* Each write not made, with its cause, as the single write finds it. */
    for (size_t i = 0; status == SY_OK && rows < n && i < n; i++) {
        if (landed[i])
            continue;
        int why = sy_pg_element_refused(q, w[i].run_id, w[i].fence, w[i].token, w[i].elem,
                                        w[i].t->idx);
        if (why == SY_STORE_EFENCED || why == SY_ENOENT)
            refused(arg, i, why);
        else
            status = why;
    }
    free(landed);
    return status;
}
