/*
 * store/postgres/named_events.c -- named events and trigger firings in
 * the PostgreSQL store (store/named_events.h).  Hosts write at once here:
 * a transaction-level advisory lock per (name, key) makes "no event of
 * this key within the window" hold between two hosts emitting the same
 * key, and one per trigger makes "no item settled yet" and the bound on
 * runs in flight hold between two hosts firing the same trigger; the
 * primary key of trigger_items would refuse a second settling anyway.
 */
#include "store/named_driver.h"
#include "store/postgres/internal.h"

/* Runs `sql`; *value gets the first column of the first row (untouched
 * when there is none). */
static int one(sy_store_pg *q, const char *sql, const sy_pg_params *p, int64_t *value,
               const char *what)
{
    PGresult *r;
    int status = sy_pg_query(q, sql, p, &r, what);
    if (status == SY_OK && value && PQntuples(r) > 0)
        *value = sy_pg_col_int(r, 0, 0);
    PQclear(r);
    return status;
}

static int pg_emit(sy_store *s, const char *name, const char *key, const char *data,
                   int64_t window_ms, int64_t now, int64_t *id, bool *duplicate)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "emit: called inside a batch; commit first");
    int status = sy_pg_transaction_begin(q, false);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, name);
    sy_pg_text(&p, 2, key);
    int64_t seen = 0, made = 0;
    if (status == SY_OK && key)
        status = one(q, "SELECT pg_advisory_xact_lock(21338, hashtext($1::text || '/' || $2::text))",
                     &p, NULL, "lock the event's key");
    sy_pg_int(&p, 3, now - window_ms);
    if (status == SY_OK && key)
        status = one(q,
                     "SELECT id FROM named_events WHERE name = $1::text AND key = $2::text"
                     " AND created > $3::bigint ORDER BY id DESC LIMIT 1",
                     &p, &seen, "look the event's key up");
    sy_pg_text(&p, 3, data);
    sy_pg_int(&p, 4, now);
    if (status == SY_OK && !seen)
        status = one(q,
                     "INSERT INTO named_events (name, key, data, created)"
                     " VALUES ($1::text, $2::text, $3::text, $4::bigint) RETURNING id",
                     &p, &made, "record the event");
    /* Listening hosts wake for it: their triggers look at once. */
    if (status == SY_OK && !seen)
        status = sy_pg_notify(q);
    status = sy_pg_transaction_end(q, false, status);
    if (status == SY_OK) {
        *id = seen ? seen : made;
        *duplicate = seen != 0;
    }
    return status;
}

/* Each row (id, name, key, data, created) of r into cb. */
static int each_event(PGresult *r, sy_named_event_cb cb, void *arg)
{
    int status = SY_OK;
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_named_event ev = {
            .id = sy_pg_col_int(r, i, 0),
            .name = sy_pg_col(r, i, 1),
            .key = sy_pg_col(r, i, 2),
            .data = sy_pg_col(r, i, 3),
            .created = sy_pg_col_int(r, i, 4),
        };
        status = cb(arg, &ev);
    }
    PQclear(r);
    return status;
}

static int pg_list(sy_store *s, const char *name, size_t limit, sy_named_event_cb cb,
                   void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, name);
    sy_pg_int(&p, 2, (int64_t)limit);
    PGresult *r;
    int status = sy_pg_query(q,
                             "SELECT id, name, key, data, created FROM named_events"
                             " WHERE $1::text IS NULL OR name = $1::text ORDER BY id DESC"
                             " LIMIT $2::bigint",
                             &p, &r, "list events");
    return status == SY_OK ? each_event(r, cb, arg) : status;
}

#define IN_FLIGHT                                                                          \
    "SELECT count(*) FROM trigger_firings f JOIN runs r ON r.id = f.run_id"               \
    " WHERE f.trigger_key = $1::text AND r.state IN (0, 1)"

static int pg_trigger_open(sy_store *s, const char *key, int64_t now, sy_trigger_record *out)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, now);
    int status = one(q,
                     "INSERT INTO trigger_states (trigger_key, since) VALUES ($1::text,"
                     " $2::bigint) ON CONFLICT DO NOTHING",
                     &p, NULL, "register the trigger");
    p.n = 1;
    PGresult *r = NULL;
    if (status == SY_OK)
        status = sy_pg_query(q,
                             "SELECT since, last_fired, last_run, firings, (" IN_FLIGHT ")"
                             " FROM trigger_states WHERE trigger_key = $1::text",
                             &p, &r, "read the trigger");
    if (status == SY_OK && PQntuples(r) == 1) {
        out->since = sy_pg_col_int(r, 0, 0);
        out->last_fired = sy_pg_col_int(r, 0, 1);
        out->last_run = sy_pg_col_int(r, 0, 2);
        out->firings = sy_pg_col_int(r, 0, 3);
        out->in_flight = sy_pg_col_int(r, 0, 4);
    } else if (status == SY_OK) {
        status = sy_store_fail(s, SY_EIO, "read the trigger %s: no row", key);
    }
    PQclear(r);
    return status;
}

static int pg_trigger_events(sy_store *s, const char *key, const char *name, int64_t since,
                             size_t limit, sy_named_event_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_text(&p, 2, name);
    sy_pg_int(&p, 3, since);
    sy_pg_int(&p, 4, (int64_t)limit);
    PGresult *r;
    int status = sy_pg_query(q,
                             "SELECT id, name, key, data, created FROM named_events e"
                             " WHERE name = $2::text AND created >= $3::bigint AND NOT EXISTS"
                             " (SELECT 1 FROM trigger_items t WHERE t.trigger_key = $1::text"
                             " AND t.source = 1 AND t.item = e.id) ORDER BY id"
                             " LIMIT $4::bigint",
                             &p, &r, "list the trigger's events");
    return status == SY_OK ? each_event(r, cb, arg) : status;
}

static int pg_trigger_runs(sy_store *s, const char *key, const char *tenant,
                           const char *workflow, unsigned states, int64_t since, size_t limit,
                           sy_store_run_item_cb cb, void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_text(&p, 2, tenant);
    sy_pg_text(&p, 3, workflow);
    sy_pg_int(&p, 4, states);
    sy_pg_int(&p, 5, since);
    sy_pg_int(&p, 6, (int64_t)limit);
    PGresult *r;
    int status = sy_pg_query(q,
                             "SELECT id, state, finished FROM runs r WHERE tenant = $2::text"
                             " AND workflow = $3::text AND state >= 2"
                             " AND ((1 << state) & $4::int) <> 0 AND finished >= $5::bigint"
                             " AND NOT EXISTS (SELECT 1 FROM trigger_items t WHERE"
                             " t.trigger_key = $1::text AND t.source = 2 AND t.item = r.id)"
                             " ORDER BY id LIMIT $6::bigint",
                             &p, &r, "list the trigger's runs");
    if (status != SY_OK)
        return status;
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++) {
        sy_finished_run run = {sy_pg_col_int(r, i, 0), (sy_run_state)sy_pg_col_int(r, i, 1),
                               sy_pg_col_int(r, i, 2)};
        status = cb(arg, &run);
    }
    PQclear(r);
    return status;
}

/* Inside the firing's transaction, holding the trigger's lock: whether it
 * may write (*outcome left as it was when so). */
static int may_fire(sy_store_pg *q, const sy_trigger_firing *f, bool consumes, int64_t now,
                    sy_fire_outcome *outcome)
{
    int status = SY_OK;
    for (size_t i = 0; status == SY_OK && i < f->n_items; i++) {
        sy_pg_params p = {0};
        sy_pg_text(&p, 1, f->key);
        sy_pg_int(&p, 2, f->items[i].source);
        sy_pg_int(&p, 3, f->items[i].id);
        int64_t seen = 0;
        status = one(q,
                     "SELECT 1 FROM trigger_items WHERE trigger_key = $1::text"
                     " AND source = $2::smallint AND item = $3::bigint",
                     &p, &seen, "look the item up");
        if (seen) {
            *outcome = SY_FIRE_TAKEN;
            return status;
        }
    }
    if (status != SY_OK || !consumes)
        return status;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, f->key);
    int64_t last = 0, busy = 0;
    status = one(q, "SELECT last_fired FROM trigger_states WHERE trigger_key = $1::text", &p,
                 &last, "read the trigger");
    if (status == SY_OK && f->max_in_flight)
        status = one(q, IN_FLIGHT, &p, &busy, "count runs in flight");
    if (last && f->debounce_ms && last + f->debounce_ms > now)
        *outcome = SY_FIRE_EARLY;
    else if (f->max_in_flight && busy >= f->max_in_flight)
        *outcome = SY_FIRE_BUSY;
    return status;
}

/* The run, the firing and the trigger's record, for a firing that
 * consumes items. */
static int start(sy_store_pg *q, const sy_trigger_firing *f, int64_t now, int64_t *run,
                 int64_t *firing)
{
    int status = sy_pg_insert_run(q, f->hash, f->tenant, f->workflow, f->context, f->n_tasks,
                                  f->task_ids, f->ns, now, run);
    int64_t used = 0;
    for (size_t i = 0; i < f->n_items; i++)
        used += !f->items[i].reason;
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, f->key);
    sy_pg_int(&p, 2, *run);
    sy_pg_int(&p, 3, now);
    sy_pg_int(&p, 4, used);
    if (status == SY_OK)
        status = one(q,
                     "INSERT INTO trigger_firings (trigger_key, run_id, fired, items) VALUES"
                     " ($1::text, $2::bigint, $3::bigint, $4::int) RETURNING id",
                     &p, firing, "record the firing");
    p.n = 3;
    if (status == SY_OK)
        status = one(q,
                     "INSERT INTO trigger_states (trigger_key, since, last_fired, last_run,"
                     " firings) VALUES ($1::text, $3::bigint, $3::bigint, $2::bigint, 1)"
                     " ON CONFLICT (trigger_key) DO UPDATE SET last_fired = $3::bigint,"
                     " last_run = $2::bigint, firings = trigger_states.firings + 1",
                     &p, NULL, "record the trigger's firing");
    /* The run is a submitted one: listening hosts wake for it. */
    if (status == SY_OK)
        status = sy_pg_notify(q);
    return status;
}

static int pg_fire(sy_store *s, const sy_trigger_firing *f, int64_t now,
                   sy_fire_outcome *outcome, int64_t *run_id)
{
    sy_store_pg *q = sy_pg_handle(s);
    if (q->batch)
        return sy_store_fail(s, SY_ESTATE, "fire: called inside a batch; commit first");
    bool consumes = false;
    for (size_t i = 0; i < f->n_items; i++)
        consumes |= !f->items[i].reason;
    sy_fire_outcome out = consumes ? SY_FIRE_STARTED : SY_FIRE_SETTLED;
    int status = sy_pg_transaction_begin(q, false);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, f->key);
    if (status == SY_OK)
        status = one(q, "SELECT pg_advisory_xact_lock(21339, hashtext($1::text))", &p, NULL,
                     "lock the trigger");
    if (status == SY_OK)
        status = may_fire(q, f, consumes, now, &out);
    bool go = out == SY_FIRE_STARTED || out == SY_FIRE_SETTLED;
    int64_t run = 0, firing = 0;
    if (status == SY_OK && go && consumes)
        status = start(q, f, now, &run, &firing);
    for (size_t i = 0; status == SY_OK && go && i < f->n_items; i++) {
        const sy_trigger_item *it = &f->items[i];
        sy_pg_params w = {0};
        sy_pg_text(&w, 1, f->key);
        sy_pg_int(&w, 2, it->source);
        sy_pg_int(&w, 3, it->id);
        if (it->reason)
            sy_pg_text(&w, 4, NULL);
        else
            sy_pg_int(&w, 4, firing);
        sy_pg_text(&w, 5, it->reason);
        sy_pg_int(&w, 6, now);
        status = one(q,
                     "INSERT INTO trigger_items (trigger_key, source, item, firing, reason, at)"
                     " VALUES ($1::text, $2::smallint, $3::bigint, $4::bigint, $5::text,"
                     " $6::bigint)",
                     &w, NULL, "settle the item");
    }
    status = sy_pg_transaction_end(q, false, status);
    if (status == SY_OK) {
        *outcome = out;
        *run_id = run;
    }
    return status;
}

static int pg_trigger_passed(sy_store *s, const char *key, size_t limit, sy_store_passed_cb cb,
                             void *arg)
{
    sy_store_pg *q = sy_pg_handle(s);
    sy_pg_params p = {0};
    sy_pg_text(&p, 1, key);
    sy_pg_int(&p, 2, (int64_t)limit);
    PGresult *r;
    int status = sy_pg_query(q,
                             "SELECT source, item, reason, at FROM trigger_items WHERE"
                             " trigger_key = $1::text AND reason IS NOT NULL"
                             " ORDER BY at DESC, item DESC LIMIT $2::bigint",
                             &p, &r, "list passed-over items");
    if (status != SY_OK)
        return status;
    for (int i = 0; status == SY_OK && i < PQntuples(r); i++)
        status = cb(arg, (sy_item_source)sy_pg_col_int(r, i, 0), sy_pg_col_int(r, i, 1),
                    sy_pg_col(r, i, 2), sy_pg_col_int(r, i, 3));
    PQclear(r);
    return status;
}

const struct sy_store_named_ops sy_pg_named_ops = {
    .emit = pg_emit,
    .list = pg_list,
    .trigger_open = pg_trigger_open,
    .trigger_events = pg_trigger_events,
    .trigger_runs = pg_trigger_runs,
    .fire = pg_fire,
    .trigger_passed = pg_trigger_passed,
    .settlements = sy_pg_event_settlements,
};
