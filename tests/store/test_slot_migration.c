/* A store made before holds moved into the attempts' rows (a slot row per
 * take, counters per key and host, cancel requests on the slot rows)
 * keeps what it held when this build migrates it: the live holders are
 * listed and counted as before, a dead claim's are not, and a cancel
 * request stays with its holder.  SQLite (schema 22), then PostgreSQL
 * when this build has libpq. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "store/driver.h"
#include "store/preempt.h"
#include "store/slots.h"
#include "fixture.h"

#define NOW 100

/* The tables as schema 22 had them, from this build's file: what the
 * last migration changes, undone. */
static const char old_schema[] =
    "DROP VIEW slot_holders; DROP TABLE slot_cancels; DROP TABLE slot_counts;"
    "CREATE TABLE slot_counts (key TEXT NOT NULL, owner TEXT NOT NULL,"
    " held INTEGER NOT NULL, PRIMARY KEY (key, owner)) WITHOUT ROWID;"
    "ALTER TABLE slots ADD COLUMN cancel_why TEXT;"
    "ALTER TABLE tasks DROP COLUMN hold; ALTER TABLE task_elements DROP COLUMN hold;";

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err);
}

typedef struct {
    int64_t live, dead;
} held;

static int add_up(void *arg, const sy_slot_record *r)
{
    held *h = arg;
    if (strcmp(r->key, "pool:gpu") == 0)
        *(r->live ? &h->live : &h->dead) += r->n;
    return 0;
}

static int count_request(void *arg, const sy_cancel_request *r)
{
    (*(int *)arg)++;
    assert_string_equal(r->why, "newer");
    assert_int_equal(r->holder.idx, 0);
    return 0;
}

static void migrated_holders_kept(fx *f);

/* A second run, claimed by h2 and taken over since (its epoch moved
 * on): its slot row counts for nothing.  The handles closed, the old
 * layout's rows as SQL into sql: three slot rows (two live, h1's, one
 * with a cancel request; h2's under its stale epoch), the counters made
 * from them, then `version_sql` with `version` (the schema before the
 * last migration). */
static void old_rows(fx *f, char *sql, size_t len, const char *version_sql, int version)
{
    static const char *const ids[] = {"x"};
    static const char *const ns[] = {"public::w::x"};
    int64_t other = 0;
    bool got = false;
    OK(f->a, sy_store_create_run(f->a, HASH, "public", "w", "{}", 1, ids, ns, 1, &other));
    OK(f->a, sy_store_claim_run(f->a, other, "h2", 1000, 10, NULL, 0, &got));
    int64_t stale = fx_epoch(f->a, other) - 1;
    sy_store_close(f->a);
    sy_store_close(f->b);
    f->a = f->b = NULL;
    char tail[128];
    snprintf(tail, sizeof tail, version_sql, version);
    snprintf(sql, len,
             "INSERT INTO slots (key, run_id, idx, elem, token, n, owner, epoch, taken,"
             " cancel_why) VALUES"
             " ('pool:gpu', %lld, 0, -1, 1, 2, 'h1', %lld, 10, 'newer'),"
             " ('pool:gpu', %lld, 1, -1, 1, 1, 'h1', %lld, 11, NULL),"
             " ('pool:gpu', %lld, 0, -1, 1, 4, 'h2', %lld, 12, NULL);"
             "INSERT INTO slot_counts SELECT key, owner, SUM(n) FROM slots GROUP BY 1, 2;%s",
             (long long)f->run, (long long)f->h1.epoch, (long long)f->run,
             (long long)f->h1.epoch, (long long)other, (long long)stale, tail);
}

static void test_holders_kept(void **state)
{
    fx *f = *state;
    char path[1024], sql[2048];
    old_rows(f, sql, sizeof sql, "PRAGMA user_version = %d;",
             sy_store_sqlite_schema_version - 1);
    snprintf(path, sizeof path, "%s/store.db", f->dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec(db, old_schema);
    exec(db, sql);
    sqlite3_close(db);
    migrated_holders_kept(f);
}

#ifdef SY_HAVE_LIBPQ
/* The PostgreSQL tables before the holds' migration, from this build's:
 * what it changes, undone (and with it the one after it, which adds a
 * column to slot_counts and makes switchyard_counts_add again). */
static const char old_schema_pg[] =
    "DROP VIEW slot_holders; DROP TABLE slot_cancels; DROP TABLE slot_counts;"
    "DROP FUNCTION switchyard_counts_add(jsonb, jsonb);"
    "CREATE TABLE slot_counts (key TEXT NOT NULL, owner TEXT NOT NULL,"
    " held BIGINT NOT NULL, PRIMARY KEY (key, owner));"
    "ALTER TABLE slots ADD COLUMN cancel_why TEXT;"
    "ALTER TABLE tasks DROP COLUMN hold; ALTER TABLE task_elements DROP COLUMN hold;";

static void test_holders_kept_pg(void **state)
{
    fx *f = *state;
    char sql[2048];
    old_rows(f, sql, sizeof sql,
             "DELETE FROM switchyard_schema; INSERT INTO switchyard_schema VALUES (%d);",
             sy_store_postgres_schema_version - 2);
    th_pg_exec(fx_store_url, old_schema_pg);
    th_pg_exec(fx_store_url, sql);
    migrated_holders_kept(f);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_holders_kept, fx_setup, fx_teardown),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg[] = {
        {"test_holders_kept (postgresql)", test_holders_kept_pg, fx_setup_pg, fx_teardown, NULL},
    };
    return fx_run_groups("store_slot_migration", tests, 1, pg, 1);
#else
    return fx_run_groups("store_slot_migration", tests, 1, NULL, 0);
#endif
}

/* Opens the store (migrating it) and checks what it held. */
static void migrated_holders_kept(fx *f)
{
    f->a = fx_open(f->dir); /* migrates */
    f->b = fx_open(f->dir);
    held h = {0};
    OK(f->a, sy_store_list_slots(f->a, NOW, add_up, &h));
    assert_int_equal(h.live, 3);
    assert_int_equal(h.dead, 4);
    assert_int_equal(fx_room(f->b, "pool:gpu", 3, NOW), 3);
    int requests = 0;
    OK(f->a, sy_store_list_cancel_requests(f->a, "h1", NOW, count_request, &requests));
    assert_int_equal(requests, 1);
    /* Given back as the migrated rows they are. */
    sy_slot_holder gone[] = {{f->run, 0, -1, 1}, {f->run, 1, -1, 1}};
    OK(f->a, sy_store_begin(f->a));
    OK(f->a, sy_store_return_slots(f->a, gone, 2));
    OK(f->a, sy_store_commit(f->a));
    assert_int_equal(fx_room(f->b, "pool:gpu", 3, NOW), 0);
}
