/*
 * store/postgres/ownership.c -- which host runs what, in the PostgreSQL
 * store: claiming runs under a lease (several hosts at once: FOR UPDATE
 * SKIP LOCKED), renewing and releasing leases, the owners of live runs,
 * and cancel requests for an owner to act on.
 */
#include <stdlib.h>

#include "store/postgres/internal.h"

/* The claim's parameters; the stale owners travel as one text[]. */
static int claim_params(sy_store_pg *q, sy_pg_params *p, const char *owner,
                        int64_t lease_until, int64_t now, int64_t fourth,
                        const char *const *stale, size_t n_stale,
                        char **array)
{
    *array = sy_pg_text_array(stale, n_stale);
    if (!*array)
        return sy_store_fail(&q->base, SY_ENOMEM, "out of memory");
    sy_pg_text(p, 1, owner);
    sy_pg_int(p, 2, lease_until);
    sy_pg_int(p, 3, now);
    sy_pg_int(p, 4, fourth);
    sy_pg_text(p, 5, *array);
    return SY_OK;
}

int sy_pg_claim_run(sy_store *s, int64_t run_id, const char *owner,
                    int64_t lease_until, int64_t now,
                    const char *const *stale, size_t n_stale, bool *claimed)
{
    sy_store_pg *q = sy_pg_handle(s);
    q->held.valid = false; /* a claim inside a batch moves the epoch */
    sy_pg_params p = {0};
    char *array = NULL;
    int status = claim_params(q, &p, owner, lease_until, now, run_id, stale,
                              n_stale, &array);
    PGresult *r = NULL;
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_CLAIM_ONE, &p, &r, "claim run");
    if (status == SY_OK) {
        *claimed = sy_pg_changes(r) == 1;
        PQclear(r);
    }
    free(array);
    return status;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int sy_pg_claim_runs(sy_store *s, const char *owner, int64_t lease_until,
                     int64_t now, const char *const *stale, size_t n_stale,
                     size_t max, int64_t *ids, size_t *n)
{
    sy_store_pg *q = sy_pg_handle(s);
    q->held.valid = false;
    if (max == 0)
        return SY_OK;
    sy_pg_params p = {0};
    char *array = NULL;
    int64_t lim = max > INT64_MAX ? INT64_MAX : (int64_t)max;
    int status = claim_params(q, &p, owner, lease_until, now, lim, stale,
                              n_stale, &array);
    PGresult *r = NULL;
    if (status == SY_OK)
        status = sy_pg_run(q, SY_PG_CLAIM_MANY, &p, &r, "claim runs");
    free(array);
    if (status != SY_OK)
        return status;
    /* The LIMIT bounds the rows; the check on *n guards ids regardless. */
    for (int i = 0; i < PQntuples(r) && *n < max; i++)
        ids[(*n)++] = sy_pg_col_int(r, i, 0);
    PQclear(r);
    /* RETURNING gives no order. */
    qsort(ids, *n, sizeof *ids, cmp_id);
    return SY_OK;
}

int sy_pg_list_owners(sy_store *s, sy_store_owner_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    int status = sy_pg_list_enter(q, SY_PG_LIST_OWNERS_L, "list_owners");
    if (status != SY_OK)
        return status;
    PGresult *r;
    status = sy_pg_run(q, SY_PG_LIST_OWNERS, NULL, &r, "list owners");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++)
        if (cb(arg, PQgetvalue(r, i, 0)) != 0)
            break;
    if (status == SY_OK)
        PQclear(r);
    sy_pg_list_done(q, SY_PG_LIST_OWNERS_L);
    return status;
}

int sy_pg_renew(sy_store *s, const char *owner, int64_t lease_until,
                int64_t now, sy_store_id_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, owner);
    sy_pg_int(&p, 2, lease_until);
    sy_pg_int(&p, 3, now);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RENEW, &p, &r, "renew leases");
    if (status != SY_OK)
        return status;
    for (int i = 0; cb && i < PQntuples(r); i++)
        cb(arg, sy_pg_col_int(r, i, 0));
    PQclear(r);
    return SY_OK;
}

int sy_pg_release(sy_store *s, const char *owner)
{
    sy_store_pg *q = sy_pg_handle(s);
    q->held.valid = false;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, owner);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RELEASE_OWNER, &p, &r, "release runs");
    if (status != SY_OK)
        return status;
    /* Its count rows are gone, and with them what was not written. */
    sy_pg_unwritten_forget(&q->unwritten, owner);
    bool any = sy_pg_changes(r) > 0;
    PQclear(r);
    /* The runs are for the other hosts to take now, not at their next
     * poll. */
    return any ? sy_pg_notify(q) : SY_OK;
}

static int run_write(sy_store_pg *q, int id, int64_t run_id, int64_t now,
                     bool with_now, const char *what)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    if (with_now)
        sy_pg_int(&p, 2, now);
    return sy_pg_run(q, id, &p, NULL, what);
}

static int cancel_in_tx(sy_store_pg *q, int64_t run_id, int64_t now)
{
    sy_pg_params p = {0};
    sy_pg_int(&p, 1, run_id);
    PGresult *r;
    int status = sy_pg_run(q, SY_PG_RUN_STATE, &p, &r, "cancel run");
    if (status != SY_OK)
        return status;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return sy_store_fail(&q->base, SY_ENOENT, "cancel: no run %lld",
                             (long long)run_id);
    }
    sy_run_state state = (sy_run_state)sy_pg_col_int(r, 0, 0);
    bool unowned = PQgetvalue(r, 0, 1)[0] == 't';
    PQclear(r);
    if (sy_run_state_terminal(state))
        return sy_store_fail(&q->base, SY_ESTATE,
                             "cancel: run %lld is already %s",
                             (long long)run_id, sy_run_state_name(state));
    if (state != SY_RUN_PENDING || !unowned) {
        status = run_write(q, SY_PG_FLAG_CANCEL, run_id, now, false,
                           "request cancel");
        /* Its owner acts on it now, not at its next poll. */
        return status == SY_OK ? sy_pg_notify(q) : status;
    }
    status = run_write(q, SY_PG_CANCEL_PENDING, run_id, now, true,
                       "cancel run");
    if (status == SY_OK)
        status = run_write(q, SY_PG_SKIP_TASKS, run_id, now, true,
                           "skip tasks");
    return status;
}

int sy_pg_request_cancel(sy_store *s, int64_t run_id, int64_t now)
{
    sy_store_pg *q = sy_pg_handle(s);
    bool nested = q->batch;
    int status = sy_pg_transaction_begin(q, nested);
    if (status != SY_OK)
        return status;
    return sy_pg_transaction_end(q, nested, cancel_in_tx(q, run_id, now));
}

int sy_pg_cancel_requests(sy_store *s, const char *owner, sy_store_id_cb cb,
                          void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    int status = sy_pg_list_enter(q, SY_PG_CANCEL_L, "cancel_requests");
    if (status != SY_OK)
        return status;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, owner);
    PGresult *r;
    status = sy_pg_run(q, SY_PG_CANCEL_REQUESTS, &p, &r,
                       "list cancel requests");
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++)
        if (cb(arg, sy_pg_col_int(r, i, 0)) != 0)
            break;
    if (status == SY_OK)
        PQclear(r);
    sy_pg_list_done(q, SY_PG_CANCEL_L);
    return status;
}
