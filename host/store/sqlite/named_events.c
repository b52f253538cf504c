/*
 * store/sqlite/named_events.c -- named events and trigger firings in the
 * SQLite store (store/named_events.h).  Emitting and firing are each one
 * BEGIN IMMEDIATE transaction: the write lock is taken before the checks
 * (a key seen within the window, an item settled already), so of two
 * hosts on one file the second finds the first's rows.
 */
#include <stdio.h>

#include "store/named_driver.h"
#include "store/sqlite/internal.h"

/* A statement's parameter: text (t, NULL for SQL NULL) or an integer. */
typedef struct {
    bool is_text;
    const char *t;
    int64_t i;
} param;

#define T(v) ((param){.is_text = true, .t = (v)})
#define I(v) ((param){.i = (int64_t)(v)})

/* Prepares `sql` with params ?1..?n bound. */
static int prepare(sy_store_sqlite *q, const char *sql, const param *p, int n,
                   sqlite3_stmt **st, const char *what)
{
    int rc = sqlite3_prepare_v2(q->db, sql, -1, st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++)
        rc = p[i].is_text ? bind_text(*st, i + 1, p[i].t)
                          : sqlite3_bind_int64(*st, i + 1, p[i].i);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(*st);
        *st = NULL;
        return sy_sqlite_fail(q, rc, "%s", what);
    }
    return SY_OK;
}

/* Runs a statement that returns no row, or one whose first column is read
 * into *value (untouched when there is no row). */
static int one(sy_store_sqlite *q, const char *sql, const param *p, int n, int64_t *value,
               const char *what)
{
    sqlite3_stmt *st;
    int status = prepare(q, sql, p, n, &st, what);
    if (status != SY_OK)
        return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && value)
        *value = sqlite3_column_int64(st, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        status = sy_sqlite_fail(q, rc, "%s", what);
    sqlite3_finalize(st);
    return status;
}

static int sq_emit(sy_store *s, const char *name, const char *key, const char *data,
                   int64_t window_ms, int64_t now, int64_t *id, bool *duplicate)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "emit: called inside a batch; commit first");
    int status = sy_sqlite_transaction_begin(q, false);
    int64_t seen = 0;
    if (status == SY_OK && key)
        status = one(q,
                     "SELECT id FROM named_events WHERE name = ?1 AND key = ?2"
                     " AND created > ?3 ORDER BY id DESC LIMIT 1",
                     (param[]){T(name), T(key), I(now - window_ms)}, 3, &seen,
                     "look the event's key up");
    if (status == SY_OK && !seen)
        status = one(q,
                     "INSERT INTO named_events (name, key, data, created)"
                     " VALUES (?1, ?2, ?3, ?4)",
                     (param[]){T(name), T(key), T(data), I(now)}, 4, NULL, "record the event");
    int64_t made = seen ? seen : sqlite3_last_insert_rowid(q->db);
    status = sy_sqlite_transaction_end(q, false, status);
    if (status == SY_OK) {
        *id = made;
        *duplicate = seen != 0;
    }
    return status;
}

/* Steps a listing of events (id, name, key, data, created) into cb. */
static int each_event(sy_store_sqlite *q, sqlite3_stmt *st, sy_named_event_cb cb, void *arg,
                      const char *what)
{
    int rc, status = SY_OK;
    while (status == SY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_named_event ev = {
            .id = sqlite3_column_int64(st, 0),
            .name = col_text(st, 1),
            .key = col_text(st, 2),
            .data = col_text(st, 3),
            .created = sqlite3_column_int64(st, 4),
        };
        status = cb(arg, &ev);
    }
    if (status == SY_OK && rc != SQLITE_DONE)
        status = sy_sqlite_fail(q, rc, "%s", what);
    sqlite3_finalize(st);
    return status;
}

static int sq_list(sy_store *s, const char *name, size_t limit, sy_named_event_cb cb,
                   void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int status = prepare(q,
                         "SELECT id, name, key, data, created FROM named_events"
                         " WHERE ?1 IS NULL OR name = ?1 ORDER BY id DESC LIMIT ?2",
                         (param[]){T(name), I(limit)}, 2, &st, "list events");
    return status == SY_OK ? each_event(q, st, cb, arg, "list events") : status;
}

/* Runs of the trigger's that have not ended. */
#define IN_FLIGHT                                                                          \
    "SELECT count(*) FROM trigger_firings f JOIN runs r ON r.id = f.run_id"               \
    " WHERE f.trigger_key = ?1 AND r.state IN (0, 1)"

static int sq_trigger_open(sy_store *s, const char *key, int64_t now, sy_trigger_record *out)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    int status = one(q, "INSERT OR IGNORE INTO trigger_states (trigger_key, since) VALUES (?1, ?2)",
                     (param[]){T(key), I(now)}, 2, NULL, "register the trigger");
    sqlite3_stmt *st = NULL;
    if (status == SY_OK)
        status = prepare(q,
                         "SELECT since, last_fired, last_run, firings, (" IN_FLIGHT ")"
                         " FROM trigger_states WHERE trigger_key = ?1",
                         (param[]){T(key)}, 1, &st, "read the trigger");
    if (status != SY_OK)
        return status;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->since = sqlite3_column_int64(st, 0);
        out->last_fired = sqlite3_column_int64(st, 1);
        out->last_run = sqlite3_column_int64(st, 2);
        out->firings = sqlite3_column_int64(st, 3);
        out->in_flight = sqlite3_column_int64(st, 4);
    } else {
        status = sy_sqlite_fail(q, rc, "read the trigger %s", key);
    }
    sqlite3_finalize(st);
    return status;
}

static int sq_trigger_events(sy_store *s, const char *key, const char *name, int64_t since,
                             size_t limit, sy_named_event_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int status = prepare(q,
                         "SELECT id, name, key, data, created FROM named_events e"
                         " WHERE name = ?2 AND created >= ?3 AND NOT EXISTS (SELECT 1"
                         " FROM trigger_items t WHERE t.trigger_key = ?1 AND t.source = 1"
                         " AND t.item = e.id) ORDER BY id LIMIT ?4",
                         (param[]){T(key), T(name), I(since), I(limit)}, 4, &st,
                         "list the trigger's events");
    return status == SY_OK ? each_event(q, st, cb, arg, "list the trigger's events") : status;
}

static int sq_trigger_runs(sy_store *s, const char *key, const char *tenant,
                           const char *workflow, unsigned states, int64_t since, size_t limit,
                           sy_store_run_item_cb cb, void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int status = prepare(q,
                         "SELECT id, state, finished FROM runs r WHERE tenant = ?2"
                         " AND workflow = ?3 AND state >= 2 AND ((1 << state) & ?4) != 0"
                         " AND finished >= ?5 AND NOT EXISTS (SELECT 1 FROM trigger_items t"
                         " WHERE t.trigger_key = ?1 AND t.source = 2 AND t.item = r.id)"
                         " ORDER BY id LIMIT ?6",
                         (param[]){T(key), T(tenant), T(workflow), I(states), I(since),
                                   I(limit)},
                         6, &st, "list the trigger's runs");
    if (status != SY_OK)
        return status;
    int rc;
    while (status == SY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        sy_finished_run r = {sqlite3_column_int64(st, 0),
                             (sy_run_state)sqlite3_column_int(st, 1),
                             sqlite3_column_int64(st, 2)};
        status = cb(arg, &r);
    }
    if (status == SY_OK && rc != SQLITE_DONE)
        status = sy_sqlite_fail(q, rc, "list the trigger's runs");
    sqlite3_finalize(st);
    return status;
}

/* Inside the firing's transaction: whether it may write (*outcome left
 * SY_FIRE_STARTED or SY_FIRE_SETTLED when so). */
static int may_fire(sy_store_sqlite *q, const sy_trigger_firing *f, bool consumes, int64_t now,
                    sy_fire_outcome *outcome)
{
    int status = SY_OK;
    for (size_t i = 0; status == SY_OK && i < f->n_items; i++) {
        int64_t seen = 0;
        status = one(q,
                     "SELECT 1 FROM trigger_items WHERE trigger_key = ?1 AND source = ?2"
                     " AND item = ?3",
                     (param[]){T(f->key), I(f->items[i].source), I(f->items[i].id)}, 3, &seen,
                     "look the item up");
        if (seen) {
            *outcome = SY_FIRE_TAKEN;
            return status;
        }
    }
    if (status != SY_OK || !consumes)
        return status;
    int64_t last = 0, busy = 0;
    status = one(q, "SELECT last_fired FROM trigger_states WHERE trigger_key = ?1",
                 (param[]){T(f->key)}, 1, &last, "read the trigger");
    if (status == SY_OK && f->max_in_flight)
        status = one(q, IN_FLIGHT, (param[]){T(f->key)}, 1, &busy, "count runs in flight");
    if (last && f->debounce_ms && last + f->debounce_ms > now)
        *outcome = SY_FIRE_EARLY;
    else if (f->max_in_flight && busy >= f->max_in_flight)
        *outcome = SY_FIRE_BUSY;
    return status;
}

static int sq_fire(sy_store *s, const sy_trigger_firing *f, int64_t now,
                   sy_fire_outcome *outcome, int64_t *run_id)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    if (in_tx(q))
        return sy_store_fail(s, SY_ESTATE, "fire: called inside a batch; commit first");
    bool consumes = false;
    for (size_t i = 0; i < f->n_items; i++)
        consumes |= !f->items[i].reason;
    sy_fire_outcome out = consumes ? SY_FIRE_STARTED : SY_FIRE_SETTLED;
    int status = sy_sqlite_transaction_begin(q, false);
    if (status == SY_OK)
        status = may_fire(q, f, consumes, now, &out);
    bool go = out == SY_FIRE_STARTED || out == SY_FIRE_SETTLED;
    int64_t run = 0, firing = 0;
    if (status == SY_OK && go && consumes) {
        status = sy_sqlite_insert_run(q, f->hash, f->tenant, f->workflow, f->context,
                                      f->n_tasks, f->task_ids, f->ns, now, &run);
        size_t used = 0;
        for (size_t i = 0; i < f->n_items; i++)
            used += !f->items[i].reason;
        if (status == SY_OK)
            status = one(q,
                         "INSERT INTO trigger_firings (trigger_key, run_id, fired, items)"
                         " VALUES (?1, ?2, ?3, ?4)",
                         (param[]){T(f->key), I(run), I(now), I(used)}, 4, NULL,
                         "record the firing");
        firing = sqlite3_last_insert_rowid(q->db);
        if (status == SY_OK)
            status = one(q,
                         "INSERT INTO trigger_states (trigger_key, since, last_fired, last_run,"
                         " firings) VALUES (?1, ?2, ?2, ?3, 1) ON CONFLICT (trigger_key) DO"
                         " UPDATE SET last_fired = ?2, last_run = ?3, firings = firings + 1",
                         (param[]){T(f->key), I(now), I(run)}, 3, NULL,
                         "record the trigger's firing");
    }
    for (size_t i = 0; status == SY_OK && go && i < f->n_items; i++) {
        const sy_trigger_item *it = &f->items[i];
        status = one(q,
                     "INSERT INTO trigger_items (trigger_key, source, item, firing, reason, at)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                     (param[]){T(f->key), I(it->source), I(it->id),
                               it->reason ? (param){.is_text = true} : I(firing),
                               T(it->reason), I(now)},
                     6, NULL, "settle the item");
    }
    status = sy_sqlite_transaction_end(q, false, status);
    if (status == SY_OK) {
        *outcome = out;
        *run_id = run;
    }
    return status;
}

static int sq_trigger_passed(sy_store *s, const char *key, size_t limit, sy_store_passed_cb cb,
                             void *arg)
{
    sy_store_sqlite *q = sy_sqlite_handle(s);
    sqlite3_stmt *st;
    int status = prepare(q,
                         "SELECT source, item, reason, at FROM trigger_items WHERE"
                         " trigger_key = ?1 AND reason IS NOT NULL ORDER BY at DESC, item DESC"
                         " LIMIT ?2",
                         (param[]){T(key), I(limit)}, 2, &st, "list passed-over items");
    if (status != SY_OK)
        return status;
    int rc;
    while (status == SY_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        status = cb(arg, (sy_item_source)sqlite3_column_int(st, 0),
                    sqlite3_column_int64(st, 1), col_text(st, 2),
                    sqlite3_column_int64(st, 3));
    if (status == SY_OK && rc != SQLITE_DONE)
        status = sy_sqlite_fail(q, rc, "list passed-over items");
    sqlite3_finalize(st);
    return status;
}

const struct sy_store_named_ops sy_sqlite_named_ops = {
    .emit = sq_emit,
    .list = sq_list,
    .trigger_open = sq_trigger_open,
    .trigger_events = sq_trigger_events,
    .trigger_runs = sq_trigger_runs,
    .fire = sq_fire,
    .trigger_passed = sq_trigger_passed,
    .settlements = sy_sqlite_event_settlements,
};
