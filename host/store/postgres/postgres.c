/*
 * store/postgres/postgres.c -- the shared store: one PostgreSQL database that
 * several hosts use at once.
 *
 * This file turns the URL into what libpq takes, connects, brings the
 * schema up to date, and hands store.c the driver table; closing undoes
 * it.  The operations live in the files store/postgres/internal.h lists.
 *
 * The URL is any libpq connection URI ("postgresql://user@host:5432/db?
 * sslmode=require") or, after "postgresql:", a keyword string
 * ("postgresql:host=/run/postgresql dbname=sy").  A password belongs in
 * PGPASSFILE or ~/.pgpass, never in the configuration; one given in the
 * URL still works and is never printed: messages name the database as
 * "postgresql://user@host:port/db", from the live connection.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/named_driver.h"
#include "store/waiters.h"
#include "store/postgres/internal.h"

static void pg_close(sy_store *s)
{
    sy_store_pg *q = sy_pg_handle(s);
    /* Ending the session rolls an open batch back on the server. */
    if (q->conn)
        PQfinish(q->conn);
    sy_pg_listen_close(q);
    sy_pg_journal_free(q);
    sy_pg_holds_free(q);
    sy_pg_grants_clear(q);
    free(q->granted_keys);
    sy_pg_keys_free(&q->hints);
    sy_pg_returns_clear(q);
    sy_pg_keys_free(&q->back_by_key);
    sy_pg_keys_free(&q->read_shared);
    sy_pg_unwritten_free(&q->unwritten);
    free(q->conninfo);
    free(q->where);
    free(q);
}

static const struct sy_store_ops pg_ops = {
    .close = pg_close,
    .put_definition = sy_pg_put_definition,
    .get_definition = sy_pg_get_definition,
    .create_run = sy_pg_create_run,
    .get_run = sy_pg_get_run,
    .list_runs = sy_pg_list_runs,
    .list_tasks = sy_pg_list_tasks,
    .claim_run = sy_pg_claim_run,
    .claim_runs = sy_pg_claim_runs,
    .list_owners = sy_pg_list_owners,
    .renew = sy_pg_renew,
    .release = sy_pg_release,
    .request_cancel = sy_pg_request_cancel,
    .cancel_requests = sy_pg_cancel_requests,
    .begin = sy_pg_begin,
    .commit = sy_pg_commit,
    .rollback = sy_pg_rollback,
    .update_task = sy_pg_update_task,
    .update_tasks = sy_pg_update_tasks,
    .update_run = sy_pg_update_run,
    .add_event = sy_pg_add_event,
    .list_events = sy_pg_list_events,
    .delete_finished = sy_pg_delete_finished,
    .record_process = sy_pg_record_process,
    .list_processes = sy_pg_list_processes,
    .fire_tick = sy_pg_fire_tick,
    .last_tick = sy_pg_last_tick,
    .create_run_keyed = sy_pg_create_run_keyed,
    .backfill_tick = sy_pg_backfill_tick,
    .tick_run = sy_pg_tick_run,
    .cache_put = sy_pg_cache_put,
    .cache_get = sy_pg_cache_get,
    .add_log = sy_pg_add_log,
    .list_logs = sy_pg_list_logs,
    .reopen_run = sy_pg_reopen_run,
    .put_map = sy_pg_put_map,
    .update_element = sy_pg_update_element,
    .update_elements = sy_pg_update_elements,
    .list_maps = sy_pg_list_maps,
    .list_elements = sy_pg_list_elements,
    .listen = sy_pg_listen,
    .wakeups = sy_pg_wakeups,
    .add_audit = sy_pg_add_audit,
    .list_audit = sy_pg_list_audit,
    .delete_audit = sy_pg_delete_audit,
    .take_slots = sy_pg_take_slots,
    .slot_room = sy_pg_slot_room,
    .put_slots = sy_pg_put_slots,
    .return_takes = sy_pg_return_takes,
    .return_slots = sy_pg_return_slots,
    .reap_slots = sy_pg_reap_slots,
    .list_slots = sy_pg_list_slots,
    .named = &sy_pg_named_ops,
    .waiters = &sy_pg_waiter_ops,
    .take_rates = sy_pg_take_rates,
    .rate_bucket = sy_pg_rate_bucket,
    .list_rate_buckets = sy_pg_list_rate_buckets,
    .request_slot_cancel = sy_pg_request_slot_cancel,
    .list_cancel_requests = sy_pg_list_cancel_requests,
};

/* The libpq connection string for `target`, what followed the matched
 * prefix: a URI gets its scheme back, a keyword string is used as is. */
static char *conninfo_of(const char *prefix, const char *target)
{
    if (strcmp(prefix, "postgresql:") == 0)
        return sy_asprintf("%s", target);
    return sy_asprintf("%s%s", prefix, target);
}

/* Whether libpq can read `conninfo`; its complaint in err when not.  The
 * complaint quotes no value, so no password reaches a message. */
static int check_conninfo(const char *conninfo, char *err, size_t err_len)
{
    char *why = NULL;
    PQconninfoOption *o = PQconninfoParse(conninfo, &why);
    if (o) {
        PQconninfoFree(o);
        return SY_OK;
    }
    size_t len = why ? strcspn(why, "\n") : 0;
    sy_errf(err, err_len, "store \"postgresql:...\": %.*s", (int)len,
            why ? why : "out of memory");
    PQfreemem(why);
    return SY_EINVAL;
}

static int open_with(const char *conninfo, sy_store **out, char *err,
                     size_t err_len)
{
    sy_store_pg *q = calloc(1, sizeof *q);
    if (q) {
        q->conninfo = sy_asprintf("%s", conninfo);
        q->where = sy_asprintf("postgresql store");
    }
    if (!q || !q->conninfo || !q->where) {
        if (q)
            pg_close(&q->base);
        sy_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    q->base.ops = &pg_ops;
    int status = sy_pg_connect(q);
    if (status == SY_OK)
        status = sy_pg_migrate(q);
    if (status != SY_OK) {
        sy_errf(err, err_len, "%s", q->base.err);
        pg_close(&q->base);
        return status;
    }
    *out = &q->base;
    return SY_OK;
}

static const char *const pg_prefixes[] = {
    "postgresql://", "postgres://", "postgresql:", NULL,
};

static int pg_open(const char *target, const char *base_dir, sy_store **out,
                   char *err, size_t err_len)
{
    (void)base_dir;
    /* store.c matched one of the prefixes and passes what follows it;
     * every prefix is at least 11 characters long, so the 11 before
     * `target` are the URL's and tell which ("postgresql://" leaves
     * "stgresql://" there). */
    const char *prefix = "postgresql://";
    if (strncmp(target - 11, "postgres://", 11) == 0)
        prefix = "postgres://";
    else if (strncmp(target - 11, "postgresql:", 11) == 0)
        prefix = "postgresql:";
    char why[300];
    if (sy_libpq_load(why, sizeof why) != 0) {
        sy_errf(err, err_len, "store \"%s...\": %s", prefix, why);
        return SY_ENOTSUP;
    }
    char *conninfo = conninfo_of(prefix, target);
    if (!conninfo) {
        sy_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    int status = check_conninfo(conninfo, err, err_len);
    if (status == SY_OK)
        status = open_with(conninfo, out, err, err_len);
    free(conninfo);
    return status;
}

const struct sy_store_driver sy_store_postgres_driver = {
    .name = "PostgreSQL",
    .prefixes = pg_prefixes,
    .open = pg_open,
};
