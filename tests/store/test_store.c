/* The durable store: schema, runs and tasks, batches, claims,
 * cancellation, events, and what survives a close or a killed process.
 * Every test that is not about SQLite's file runs against both stores:
 * SQLite, then PostgreSQL on a throwaway server (tests/helpers_pg.h) when
 * this build has libpq; each PostgreSQL test starts from an empty
 * database. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../helpers.h"
#ifdef SY_HAVE_LIBPQ
#include "../helpers_pg.h"
#endif
#include "store/store.h"
#include "store/driver.h"
#include "base/util.h"

#define HASH "d1"

typedef struct {
    char *dir;
    sy_store *s;
} fx;

static sy_store *open_ok(const char *url, const char *base)
{
    sy_store *s = NULL;
    char err[512] = "";
    int rc = sy_store_open(url, base, &s, err, sizeof err);
    if (rc != SY_OK)
        fail_msg("open %s: %d %s", url, rc, err);
    return s;
}

/* The store the running test opens (and reopens, and opens a second
 * handle on): set by its setup. */
static const char *store_url = "sqlite:store.db";

static int setup_file(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    store_url = "sqlite:store.db";
    f->s = open_ok(store_url, f->dir);
    *state = f;
    return 0;
}

static int setup_memory(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    f->s = open_ok("sqlite::memory:", NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    sy_store_close(f->s);
    th_rmtree(f->dir);
    free(f);
    return 0;
}

#ifdef SY_HAVE_LIBPQ
static int setup_pg(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = th_mkdtemp();
    store_url = th_pg_url();
    th_pg_reset(store_url);
    f->s = open_ok(store_url, f->dir);
    *state = f;
    return 0;
}
#endif

static void reopen(fx *f)
{
    sy_store_close(f->s);
    f->s = open_ok(store_url, f->dir);
}

#define OK(call)                                                              \
    do {                                                                      \
        int rc_ = (call);                                                     \
        if (rc_ != SY_OK)                                                     \
            fail_msg("%s: %d %s", #call, rc_, sy_store_errmsg(f->s));         \
    } while (0)

static void assert_contains(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("\"%s\" does not contain \"%s\"", haystack ? haystack : "(null)",
                 needle);
}

static void put_def(sy_store *s)
{
    assert_int_equal(sy_store_put_definition(s, HASH, "public", "etl", "{}"),
                     SY_OK);
}

static int64_t make_run(sy_store *s, size_t n, int64_t now)
{
    static const char *const ids[] = {"extract", "transform", "load"};
    static const char *const ns[] = {"public::etl::extract",
                                     "public::etl::transform",
                                     "public::etl::load"};
    assert_true(n <= 3);
    int64_t id = 0;
    int rc = sy_store_create_run(s, HASH, "public", "etl", "{\"a\":1}", n, ids,
                                 ns, now, &id);
    if (rc != SY_OK)
        fail_msg("create_run: %s", sy_store_errmsg(s));
    assert_true(id > 0);
    return id;
}

/* --- collectors ------------------------------------------------------------- */

typedef struct {
    size_t n;
    sy_task_record t[8];
} tasks;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int collect_task(void *arg, const sy_task_record *t)
{
    tasks *c = arg;
    assert_true(c->n < 8);
    sy_task_record *d = &c->t[c->n++];
    *d = *t;
    d->task_id = dup_or_null(t->task_id);
    d->ns = dup_or_null(t->ns);
    d->executor = dup_or_null(t->executor);
    d->error = dup_or_null(t->error);
    d->output = dup_or_null(t->output);
    d->host = dup_or_null(t->host);
    return 0;
}

static void tasks_clear(tasks *c)
{
    for (size_t i = 0; i < c->n; i++)
        sy_task_record_clear(&c->t[i]);
    c->n = 0;
}

static tasks list_tasks(sy_store *s, int64_t run)
{
    tasks c = {0};
    int rc = sy_store_list_tasks(s, run, collect_task, &c);
    if (rc != SY_OK)
        fail_msg("list_tasks: %s", sy_store_errmsg(s));
    return c;
}

typedef struct {
    size_t n, stop_after;
    int64_t id[16];
} ids;

static int collect_run(void *arg, const sy_run_record *r)
{
    ids *c = arg;
    assert_true(c->n < 16);
    c->id[c->n++] = r->id;
    return c->stop_after && c->n == c->stop_after;
}

static int collect_id(void *arg, int64_t id)
{
    ids *c = arg;
    assert_true(c->n < 16);
    c->id[c->n++] = id;
    return 0;
}

static sy_run_record get_run(sy_store *s, int64_t id)
{
    sy_run_record r;
    int rc = sy_store_get_run(s, id, &r);
    if (rc != SY_OK)
        fail_msg("get_run %lld: %s", (long long)id, sy_store_errmsg(s));
    return r;
}

static sy_run_state run_state(sy_store *s, int64_t id)
{
    sy_run_record r = get_run(s, id);
    sy_run_state st = r.state;
    sy_run_record_clear(&r);
    return st;
}

static int raw_user_version(const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* --- opening ------------------------------------------------------------------ */

static void test_open_migrate_reopen(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 2, 1000);
    reopen(f);
    sy_run_record r = get_run(f->s, id);
    assert_string_equal(r.workflow, "etl");
    assert_int_equal(r.n_tasks, 2);
    sy_run_record_clear(&r);
    char *path = sy_path_join(f->dir, "store.db");
    assert_int_equal(raw_user_version(path), sy_store_sqlite_schema_version);
    free(path);
}

static void test_newer_schema_refused(void **state)
{
    fx *f = *state;
    char *path = sy_path_join(f->dir, "new.db");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", 0, 0, 0),
                     SQLITE_OK);
    sqlite3_close(db);
    sy_store *s = (sy_store *)&s;
    char err[512] = "";
    assert_int_equal(sy_store_open("sqlite:new.db", f->dir, &s, err, sizeof err),
                     SY_ENOTSUP);
    assert_null(s);
    char knows[96];
    snprintf(knows, sizeof knows, "made by a newer switchyard (schema 99, this build knows %d)",
             sy_store_sqlite_schema_version);
    assert_contains(err, knows);
    assert_contains(err, "new.db");
    assert_int_equal(raw_user_version(path), 99);
    free(path);
}

static void test_bad_urls(void **state)
{
    fx *f = *state;
    static const struct {
        const char *url;
        int rc;
        const char *needle;
    } cases[] = {
        {"", SY_EINVAL, "empty"},
        {"mysql://u:secret@h/db", SY_EINVAL, "\"sqlite:PATH\", \"sqlite::memory:\" or \"postgresql://...\""},
        {"mysql://u:secret@h/db", SY_EINVAL, "\"mysql:...\""},
        {"var/x.db", SY_EINVAL, "did you mean \"sqlite:var/x.db\""},
        {"sqlite:", SY_EINVAL, "no file path"},
        {"sqlite:?sync=full", SY_EINVAL, "no file path"},
        {"sqlite://x.db", SY_EINVAL, "without \"//\""},
        {"sqlite:x.db?sync=fast", SY_EINVAL, "bad value \"fast\" for option \"sync\""},
        {"sqlite:x.db?journal=off", SY_EINVAL, "unknown option \"journal\""},
        {"sqlite:x.db?sync=full&busy_timeout=-1", SY_EINVAL, "busy_timeout"},
        {"sqlite:x.db?busy_timeout=", SY_EINVAL, "busy_timeout"},
#ifdef SY_HAVE_LIBPQ
        /* Nothing listens on port 1; the password is never echoed. */
        {"postgresql://u:secret@127.0.0.1:1/sy?connect_timeout=2", SY_EIO, "cannot connect"},
        {"postgres://u:secret@127.0.0.1:1/sy", SY_EIO, "Connection refused"},
        {"postgresql:host=127.0.0.1 port=1 password=secret", SY_EIO, "cannot connect"},
        {"postgresql://u:secret@h/db?sslmode=sometimes", SY_EIO, "sslmode"},
        {"postgresql:bogus_option=secret", SY_EINVAL, "bogus_option"},
#else
        {"postgresql://db.example/sy", SY_ENOTSUP, "the PostgreSQL store is not in this build"},
        {"postgres://db.example/sy", SY_ENOTSUP, "the PostgreSQL store is not in this build"},
#endif
    };
    for (size_t i = 0; i < SY_ARRAY_LEN(cases); i++) {
        sy_store *s = (sy_store *)&s;
        char err[512] = "";
        int rc = sy_store_open(cases[i].url, f->dir, &s, err, sizeof err);
        if (rc != cases[i].rc)
            fail_msg("%s: rc %d, want %d (%s)", cases[i].url, rc, cases[i].rc, err);
        assert_null(s);
        assert_contains(err, cases[i].needle);
        assert_null(strstr(err, "secret"));
    }
    char err[64];
    sy_store_close(f->s);
    assert_int_equal(sy_store_open(NULL, NULL, &f->s, err, sizeof err), SY_EINVAL);
    assert_null(f->s);
    /* The options that exist are accepted. */
    f->s = open_ok("sqlite:x.db?sync=full&busy_timeout=100", f->dir);
    sy_store_close(f->s);
    f->s = open_ok("sqlite:x.db?sync=normal", f->dir);
}

/* What logs and messages show of a store URL: never its password. */
static void test_redact(void **state)
{
    (void)state;
    char out[128];
    assert_string_equal(sy_store_redact("postgresql://sy:s3cret@db:5432/sy?sslmode=require",
                                        out, sizeof out),
                        "postgresql://sy:***@db:5432/sy?sslmode=require");
    assert_string_equal(sy_store_redact("postgres://sy@db/sy", out, sizeof out),
                        "postgres://sy@db/sy");
    assert_string_equal(sy_store_redact("postgresql:host=db password=s3cret dbname=sy",
                                        out, sizeof out),
                        "postgresql:host=db password=*** dbname=sy");
    assert_string_equal(sy_store_redact("postgresql:password='a b\\' c' host=db",
                                        out, sizeof out),
                        "postgresql:password=*** host=db");
    assert_string_equal(sy_store_redact("sqlite:var/sy.db", out, sizeof out),
                        "sqlite:var/sy.db");
    assert_string_equal(sy_store_redact("sqlite:var/sy.db", out, 7), "sqlite");
}

static void test_not_a_database(void **state)
{
    fx *f = *state;
    free(th_write(f->dir, "junk.db", "this is not a database, not at all.......\n"
                                     "................................................\n"));
    sy_store *s = NULL;
    char err[512] = "";
    assert_int_equal(sy_store_open("sqlite:junk.db", f->dir, &s, err, sizeof err),
                     SY_EIO);
    assert_null(s);
    assert_contains(err, "junk.db");
    assert_contains(err, "not a database");
}

static void test_parent_directories_created(void **state)
{
    fx *f = *state;
    sy_store *s = open_ok("sqlite:a/b/c/store.db", f->dir);
    put_def(s);
    sy_store_close(s);
    char *path = sy_asprintf("%s/a/b/c/store.db", f->dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    free(path);

    /* Absolute paths ignore base_dir. */
    char *abs = sy_asprintf("sqlite:%s/d/e.db", f->dir);
    s = open_ok(abs, "/nonexistent");
    sy_store_close(s);
    free(abs);

    free(th_write(f->dir, "file", "x"));
    char err[512] = "";
    s = NULL;
    assert_int_equal(sy_store_open("sqlite:file/sub/x.db", f->dir, &s, err,
                                   sizeof err),
                     SY_EIO);
    assert_contains(err, "is not a directory");
}

/* --- definitions and runs ------------------------------------------------------- */

static void test_definitions(void **state)
{
    fx *f = *state;
    char *def = NULL;
    assert_int_equal(sy_store_get_definition(f->s, HASH, &def), SY_ENOENT);
    assert_null(def);
    assert_contains(sy_store_errmsg(f->s), HASH);
    OK(sy_store_put_definition(f->s, HASH, "public", "etl", "{\"v\":1}"));
    /* The same hash again is a no-op, even with other text. */
    OK(sy_store_put_definition(f->s, HASH, "public", "etl", "{\"v\":2}"));
    OK(sy_store_get_definition(f->s, HASH, &def));
    assert_string_equal(def, "{\"v\":1}");
    free(def);
    assert_int_equal(sy_store_put_definition(f->s, NULL, "t", "w", "{}"),
                     SY_EINVAL);
    assert_contains(sy_store_errmsg(f->s), "put_definition");
}

static void test_create_run_and_tasks(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1234);
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.id, id);
    assert_string_equal(r.workflow, "etl");
    assert_string_equal(r.tenant, "public");
    assert_string_equal(r.hash, HASH);
    assert_int_equal(r.state, SY_RUN_PENDING);
    assert_string_equal(r.context, "{\"a\":1}");
    assert_null(r.owner);
    assert_null(r.error);
    assert_false(r.cancel_requested);
    assert_int_equal(r.created, 1234);
    assert_int_equal(r.started, 0);
    assert_int_equal(r.finished, 0);
    assert_int_equal(r.n_tasks, 3);
    sy_run_record_clear(&r);
    assert_null(r.workflow);

    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.n, 3);
    const char *want[] = {"extract", "transform", "load"};
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(c.t[i].idx, i);
        assert_string_equal(c.t[i].task_id, want[i]);
        char ns[64];
        snprintf(ns, sizeof ns, "public::etl::%s", want[i]);
        assert_string_equal(c.t[i].ns, ns);
        assert_int_equal(c.t[i].state, SY_TASK_NOT_STARTED);
        assert_int_equal(c.t[i].attempts, 0);
        assert_null(c.t[i].executor);
        assert_null(c.t[i].error);
        assert_null(c.t[i].output);
    }
    tasks_clear(&c);

    assert_int_equal(sy_store_get_run(f->s, id + 100, &r), SY_ENOENT);
    assert_int_equal(sy_store_list_tasks(f->s, id + 100, collect_task, &c),
                     SY_ENOENT);
    assert_int_equal(c.n, 0);
}

/* Task rows go in a hundred a statement, then one by one: counts on both
 * sides of a hundred, every row where it belongs. */
typedef struct {
    size_t n;
    char **task_ids, **task_ns;
} rows_seen;

static int check_row(void *arg, const sy_task_record *t)
{
    rows_seen *r = arg;
    assert_int_equal(t->idx, r->n);
    assert_string_equal(t->task_id, r->task_ids[r->n]);
    assert_string_equal(t->ns, r->task_ns[r->n]);
    assert_int_equal(t->state, SY_TASK_NOT_STARTED);
    r->n++;
    return 0;
}

static void test_create_run_many_tasks(void **state)
{
    fx *f = *state;
    put_def(f->s);
    static const size_t sizes[] = {99, 100, 101, 250};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        rows_seen r = {0, calloc(n, sizeof(char *)), calloc(n, sizeof(char *))};
        assert_non_null(r.task_ids);
        assert_non_null(r.task_ns);
        for (size_t i = 0; i < n; i++) {
            r.task_ids[i] = sy_asprintf("t%zu", i);
            r.task_ns[i] = sy_asprintf("public::etl::t%zu", i);
        }
        int64_t id = 0;
        OK(sy_store_create_run(f->s, HASH, "public", "etl", NULL, n,
                               (const char *const *)r.task_ids,
                               (const char *const *)r.task_ns, 7, &id));
        OK(sy_store_list_tasks(f->s, id, check_row, &r));
        assert_int_equal(r.n, n);
        for (size_t i = 0; i < n; i++) {
            free(r.task_ids[i]);
            free(r.task_ns[i]);
        }
        free(r.task_ids);
        free(r.task_ns);
    }
}

static void test_create_run_edge_cases(void **state)
{
    fx *f = *state;
    const char *one[] = {"x"};
    int64_t id = 0;
    assert_int_equal(sy_store_create_run(f->s, "nohash", "public", "etl", NULL,
                                         1, one, one, 1, &id),
                     SY_ENOENT);
    assert_contains(sy_store_errmsg(f->s), "nohash");
    put_def(f->s);
    /* A run without tasks exists and lists no tasks; NULL context stays
     * NULL. */
    OK(sy_store_create_run(f->s, HASH, "public", "etl", NULL, 0, NULL, NULL, 5,
                           &id));
    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.n, 0);
    sy_run_record r = get_run(f->s, id);
    assert_null(r.context);
    sy_run_record_clear(&r);
    const char *bad[] = {"x", NULL};
    assert_int_equal(sy_store_create_run(f->s, HASH, "public", "etl", NULL, 2,
                                         bad, bad, 1, &id),
                     SY_EINVAL);
    assert_contains(sy_store_errmsg(f->s), "task_ids[1]");
    /* Inside a batch it refuses cleanly and the batch goes on. */
    OK(sy_store_begin(f->s));
    assert_int_equal(sy_store_create_run(f->s, HASH, "public", "etl", NULL, 1,
                                         one, one, 1, &id),
                     SY_ESTATE);
    assert_contains(sy_store_errmsg(f->s), "batch");
    OK(sy_store_commit(f->s));
    ids runs = {0};
    OK(sy_store_list_runs(f->s, 0, collect_run, &runs));
    assert_int_equal(runs.n, 1);
}

/* --- batches ------------------------------------------------------------------ */

static sy_task_record ready_task(uint32_t idx)
{
    sy_task_record t = {0};
    t.idx = idx;
    t.state = SY_TASK_RUNNING;
    t.attempts = 2;
    t.failures = 1;
    t.recoveries = 3;
    t.executor = "default";
    t.error = "";
    t.output = "{\"rows\":7}";
    t.ready_at = 50;
    t.started = 60;
    t.finished = 0;
    return t;
}

static void test_batch_commit_and_rollback(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    sy_task_record t = ready_task(1);

    assert_int_equal(sy_store_update_task(f->s, id, NULL, 0, &t), SY_ESTATE);
    assert_int_equal(sy_store_commit(f->s), SY_ESTATE);
    OK(sy_store_begin(f->s));
    assert_int_equal(sy_store_begin(f->s), SY_ESTATE);
    OK(sy_store_update_task(f->s, id, NULL, 0, &t));
    t.idx = 9;
    assert_int_equal(sy_store_update_task(f->s, id, NULL, 0, &t), SY_ENOENT);
    t.idx = 1;
    t.state = (sy_task_state)17;
    assert_int_equal(sy_store_update_task(f->s, id, NULL, 0, &t), SY_EINVAL);
    OK(sy_store_commit(f->s));

    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.t[1].state, SY_TASK_RUNNING);
    assert_int_equal(c.t[1].attempts, 2);
    assert_int_equal(c.t[1].failures, 1);
    assert_int_equal(c.t[1].recoveries, 3);
    assert_string_equal(c.t[1].executor, "default");
    assert_non_null(c.t[1].error); /* "" is not NULL */
    assert_string_equal(c.t[1].error, "");
    assert_string_equal(c.t[1].output, "{\"rows\":7}");
    assert_int_equal(c.t[1].ready_at, 50);
    assert_int_equal(c.t[1].started, 60);
    assert_int_equal(c.t[0].state, SY_TASK_NOT_STARTED);
    tasks_clear(&c);

    t = ready_task(1);
    t.state = SY_TASK_COMPLETED;
    t.error = NULL;
    t.finished = 99;
    OK(sy_store_begin(f->s));
    OK(sy_store_update_task(f->s, id, NULL, 0, &t));
    sy_store_rollback(f->s);
    sy_store_rollback(f->s); /* no batch: a no-op */
    c = list_tasks(f->s, id);
    assert_int_equal(c.t[1].state, SY_TASK_RUNNING);
    assert_int_equal(c.t[1].finished, 0);
    tasks_clear(&c);

    OK(sy_store_begin(f->s));
    OK(sy_store_update_task(f->s, id, NULL, 0, &t));
    OK(sy_store_commit(f->s));
    c = list_tasks(f->s, id);
    assert_int_equal(c.t[1].state, SY_TASK_COMPLETED);
    assert_null(c.t[1].error);
    assert_int_equal(c.t[1].finished, 99);
    tasks_clear(&c);
}

static void test_update_run_stamps(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 1, 1);
    assert_int_equal(sy_store_update_run(f->s, id, NULL, SY_RUN_RUNNING, NULL, 100),
                     SY_ESTATE);
    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_RUNNING, "transient", 100));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_RUNNING, NULL, 150));
    assert_int_equal(sy_store_update_run(f->s, id + 1, NULL, SY_RUN_RUNNING, NULL, 1),
                     SY_ENOENT);
    assert_int_equal(sy_store_update_run(f->s, id, NULL, (sy_run_state)9, NULL, 1),
                     SY_EINVAL);
    OK(sy_store_commit(f->s));
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.state, SY_RUN_RUNNING);
    assert_int_equal(r.started, 100); /* already Running at 150 */
    assert_int_equal(r.finished, 0);
    assert_null(r.error);
    sy_run_record_clear(&r);

    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_FAILED, "task load failed", 200));
    OK(sy_store_commit(f->s));
    r = get_run(f->s, id);
    assert_int_equal(r.state, SY_RUN_FAILED);
    assert_int_equal(r.started, 100);
    assert_int_equal(r.finished, 200);
    assert_string_equal(r.error, "task load failed");
    sy_run_record_clear(&r);
}

/* --- ownership ----------------------------------------------------------------- */

static void test_claim_run(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 1, 1);
    bool got = true;

    OK(sy_store_claim_run(f->s, id, "h1", 1100, 1000, NULL, 0, &got));
    assert_true(got);
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.state, SY_RUN_RUNNING);
    assert_string_equal(r.owner, "h1");
    assert_int_equal(r.lease_until, 1100);
    assert_int_equal(r.started, 1000);
    sy_run_record_clear(&r);

    /* Held and leased: nobody else, not even the holder, takes it again. */
    OK(sy_store_claim_run(f->s, id, "h2", 1200, 1050, NULL, 0, &got));
    assert_false(got);
    OK(sy_store_claim_run(f->s, id, "h1", 1200, 1050, NULL, 0, &got));
    assert_false(got);
    const char *others[] = {"h7", "h8"};
    OK(sy_store_claim_run(f->s, id, "h2", 1200, 1050, others, 2, &got));
    assert_false(got);

    /* Its owner is known dead. */
    const char *stale[] = {"h9", "h1"};
    OK(sy_store_claim_run(f->s, id, "h2", 1300, 1060, stale, 2, &got));
    assert_true(got);
    r = get_run(f->s, id);
    assert_string_equal(r.owner, "h2");
    assert_int_equal(r.started, 1000); /* not restamped */
    sy_run_record_clear(&r);

    /* The lease ran out. */
    OK(sy_store_claim_run(f->s, id, "h3", 1500, 1301, NULL, 0, &got));
    assert_true(got);

    /* Terminal: never, whatever the lease or the stale list. */
    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_COMPLETED, NULL, 1400));
    OK(sy_store_commit(f->s));
    const char *dead[] = {"h3"};
    OK(sy_store_claim_run(f->s, id, "h4", 9000, 8000, dead, 1, &got));
    assert_false(got);

    OK(sy_store_claim_run(f->s, id + 1, "h4", 9000, 8000, NULL, 0, &got));
    assert_false(got);
    assert_int_equal(sy_store_claim_run(f->s, id, NULL, 1, 1, NULL, 0, &got),
                     SY_EINVAL);
    const char *holes[] = {"a", NULL};
    assert_int_equal(sy_store_claim_run(f->s, id, "h", 1, 1, holes, 2, &got),
                     SY_EINVAL);
    assert_contains(sy_store_errmsg(f->s), "stale[1]");
}

static void test_claim_runs(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t r[5];
    for (int i = 0; i < 5; i++)
        r[i] = make_run(f->s, 1, i);
    int64_t got[8];
    size_t n = 99;

    OK(sy_store_claim_runs(f->s, "h1", 500, 100, NULL, 0, 2, got, &n));
    assert_int_equal(n, 2);
    assert_int_equal(got[0], r[0]);
    assert_int_equal(got[1], r[1]);
    OK(sy_store_claim_runs(f->s, "h2", 500, 100, NULL, 0, 8, got, &n));
    assert_int_equal(n, 3);
    assert_int_equal(got[0], r[2]);
    assert_int_equal(got[1], r[3]);
    assert_int_equal(got[2], r[4]);
    OK(sy_store_claim_runs(f->s, "h3", 500, 100, NULL, 0, 8, got, &n));
    assert_int_equal(n, 0);
    OK(sy_store_claim_runs(f->s, "h3", 500, 100, NULL, 0, 0, NULL, &n));
    assert_int_equal(n, 0);

    /* h1 died: its two runs, oldest first, and only those. */
    const char *stale[] = {"h1"};
    OK(sy_store_claim_runs(f->s, "h3", 900, 200, stale, 1, 8, got, &n));
    assert_int_equal(n, 2);
    assert_int_equal(got[0], r[0]);
    assert_int_equal(got[1], r[1]);
    sy_run_record info = get_run(f->s, r[0]);
    assert_string_equal(info.owner, "h3");
    assert_int_equal(info.lease_until, 900);
    sy_run_record_clear(&info);

    /* Every lease ran out: the rest, inside a batch this time. */
    OK(sy_store_begin(f->s));
    OK(sy_store_claim_runs(f->s, "h4", 2000, 901, NULL, 0, 8, got, &n));
    OK(sy_store_commit(f->s));
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(got[i], r[i]);
}

static int collect_owner(void *arg, const char *owner)
{
    char *buf = arg;
    strcat(buf, owner);
    strcat(buf, ",");
    return 0;
}

static void test_renew_release_owners(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t a = make_run(f->s, 1, 1), b = make_run(f->s, 1, 2),
            c = make_run(f->s, 1, 3);
    bool got;
    OK(sy_store_claim_run(f->s, a, "h1", 100, 10, NULL, 0, &got));
    OK(sy_store_claim_run(f->s, b, "h1", 100, 10, NULL, 0, &got));
    OK(sy_store_claim_run(f->s, c, "h2", 100, 10, NULL, 0, &got));
    char owners[64] = "";
    OK(sy_store_list_owners(f->s, collect_owner, owners));
    assert_string_equal(owners, "h1,h2,");

    OK(sy_store_renew(f->s, "h1", 5000, 50, NULL, NULL));
    sy_run_record r = get_run(f->s, b);
    assert_int_equal(r.lease_until, 5000);
    sy_run_record_clear(&r);
    r = get_run(f->s, c);
    assert_int_equal(r.lease_until, 100);
    sy_run_record_clear(&r);
    /* Renewed: an expired-lease claim at 200 no longer takes it. */
    OK(sy_store_claim_run(f->s, a, "h3", 9000, 200, NULL, 0, &got));
    assert_false(got);

    OK(sy_store_release(f->s, "h1"));
    r = get_run(f->s, a);
    assert_null(r.owner);
    assert_int_equal(r.state, SY_RUN_RUNNING);
    sy_run_record_clear(&r);
    owners[0] = '\0';
    OK(sy_store_list_owners(f->s, collect_owner, owners));
    assert_string_equal(owners, "h2,");
    OK(sy_store_claim_run(f->s, a, "h3", 9000, 200, NULL, 0, &got));
    assert_true(got);

    /* A finished run's owner is history, not a live owner. */
    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, c, NULL, SY_RUN_COMPLETED, NULL, 300));
    OK(sy_store_commit(f->s));
    OK(sy_store_release(f->s, "h2"));
    r = get_run(f->s, c);
    assert_string_equal(r.owner, "h2");
    sy_run_record_clear(&r);
    owners[0] = '\0';
    OK(sy_store_list_owners(f->s, collect_owner, owners));
    assert_string_equal(owners, "h3,");
}

/* --- cancellation ----------------------------------------------------------------- */

/* Fencing: a host paused past its lease (h1) resumes after another (h2)
 * took its run over; every write h1 makes under its old claim is refused,
 * and the rows keep h2's values. */
static void test_fencing_after_takeover(void **state)
{
    fx *f = *state;
    put_def(f->s);
    sy_store *s2 = open_ok(store_url, f->dir);
    int64_t id = make_run(f->s, 2, 1);
    bool got = false;
    OK(sy_store_claim_run(f->s, id, "h1", 1000, 10, NULL, 0, &got));
    assert_true(got);
    sy_run_record r = get_run(f->s, id);
    sy_store_fence h1 = {"h1", r.lease_epoch};
    assert_true(r.lease_epoch > 0);
    sy_run_record_clear(&r);
    sy_task_record t = ready_task(0);
    t.attempts = 1;
    OK(sy_store_begin(f->s));
    OK(sy_store_update_task(f->s, id, &h1, 0, &t));
    OK(sy_store_add_event(f->s, id, &h1, 0, 0, 1, "failed", "by h1", 20));
    OK(sy_store_commit(f->s));

    /* While h1's lease holds, h2 cannot take the run; once it ran out
     * (explicit times), h2 does, under a new epoch. */
    assert_int_equal(sy_store_claim_run(s2, id, "h2", 5000, 999, NULL, 0, &got),
                     SY_OK);
    assert_false(got);
    assert_int_equal(sy_store_claim_run(s2, id, "h2", 5000, 1001, NULL, 0, &got),
                     SY_OK);
    assert_true(got);
    r = get_run(s2, id);
    assert_string_equal(r.owner, "h2");
    assert_true(r.lease_epoch > h1.epoch);
    sy_store_fence h2 = {"h2", r.lease_epoch};
    sy_run_record_clear(&r);
    sy_task_record t2 = ready_task(0);
    t2.state = SY_TASK_COMPLETED;
    t2.attempts = 2;
    t2.output = "{\"by\":\"h2\"}";
    t2.finished = 1100;
    assert_int_equal(sy_store_begin(s2), SY_OK);
    assert_int_equal(sy_store_update_task(s2, id, &h2, 0, &t2), SY_OK);
    /* Later writes of the batch for the same claim skip the check (the
     * batch holds the write lock); another claim's are still checked. */
    sy_task_record t3 = ready_task(1);
    t3.state = SY_TASK_READY;
    assert_int_equal(sy_store_update_task(s2, id, &h2, 0, &t3), SY_OK);
    sy_store_fence old = {"h2", h1.epoch};
    assert_int_equal(sy_store_update_task(s2, id, &old, 0, &t3), SY_STORE_EFENCED);
    assert_int_equal(sy_store_update_task(s2, id, &h1, 0, &t3), SY_STORE_EFENCED);
    assert_int_equal(sy_store_commit(s2), SY_OK);

    /* h1 resumes: its task, run and event writes are refused, with the
     * holder named, and the batch stays usable. */
    sy_task_record late = ready_task(0);
    late.state = SY_TASK_COMPLETED;
    late.attempts = 1;
    late.output = "{\"by\":\"h1\"}";
    late.finished = 1200;
    OK(sy_store_begin(f->s));
    assert_int_equal(sy_store_update_task(f->s, id, &h1, 0, &late), SY_STORE_EFENCED);
    assert_contains(sy_store_errmsg(f->s), "held by h2");
    late.idx = 1;
    assert_int_equal(sy_store_update_task(f->s, id, &h1, 0, &late), SY_STORE_EFENCED);
    assert_int_equal(sy_store_update_run(f->s, id, &h1, SY_RUN_COMPLETED, NULL, 1200),
                     SY_STORE_EFENCED);
    assert_int_equal(sy_store_add_event(f->s, id, &h1, 0, 0, 1, "stale", "by h1", 1200),
                     SY_STORE_EFENCED);
    OK(sy_store_commit(f->s));
    /* A renewal by h1 extends nothing of h2's. */
    ids renewed = {0};
    OK(sy_store_renew(f->s, "h1", 9000, 1200, collect_id, &renewed));
    assert_int_equal(renewed.n, 0);

    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.t[0].state, SY_TASK_COMPLETED);
    assert_int_equal(c.t[0].attempts, 2);
    assert_string_equal(c.t[0].output, "{\"by\":\"h2\"}");
    assert_int_equal(c.t[0].finished, 1100);
    assert_int_equal(c.t[1].state, SY_TASK_READY);
    assert_int_equal(c.t[1].attempts, 2);
    tasks_clear(&c);
    r = get_run(f->s, id);
    assert_int_equal(r.state, SY_RUN_RUNNING);
    assert_string_equal(r.owner, "h2");
    assert_int_equal(r.lease_until, 5000);
    sy_run_record_clear(&r);

    /* h2's own writes go on; a missing task is still SY_ENOENT. */
    assert_int_equal(sy_store_begin(s2), SY_OK);
    t2.idx = 7;
    assert_int_equal(sy_store_update_task(s2, id, &h2, 0, &t2), SY_ENOENT);
    assert_int_equal(sy_store_update_run(s2, id, &h2, SY_RUN_RUNNING, NULL, 1300),
                     SY_OK);
    assert_int_equal(sy_store_commit(s2), SY_OK);
    /* A lease renews only while it holds: at 5001 h2's has expired. */
    renewed.n = 0;
    assert_int_equal(sy_store_renew(s2, "h2", 6000, 4000, collect_id, &renewed), SY_OK);
    assert_int_equal(renewed.n, 1);
    assert_int_equal(renewed.id[0], id);
    renewed.n = 0;
    assert_int_equal(sy_store_renew(s2, "h2", 9000, 6001, collect_id, &renewed), SY_OK);
    assert_int_equal(renewed.n, 0);
    sy_store_close(s2);
}

static void test_cancel_pending_unowned(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    OK(sy_store_request_cancel(f->s, id, 777));
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.state, SY_RUN_CANCELLED);
    assert_int_equal(r.finished, 777);
    assert_int_equal(r.started, 0);
    assert_non_null(r.error);
    sy_run_record_clear(&r);
    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(c.t[i].state, SY_TASK_SKIPPED);
        assert_int_equal(c.t[i].finished, 777);
    }
    tasks_clear(&c);
    bool got;
    OK(sy_store_claim_run(f->s, id, "h1", 9000, 800, NULL, 0, &got));
    assert_false(got);
}

static void test_cancel_owned(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 2, 1), other = make_run(f->s, 1, 2);
    bool got;
    OK(sy_store_claim_run(f->s, id, "h1", 9000, 10, NULL, 0, &got));
    OK(sy_store_claim_run(f->s, other, "h1", 9000, 10, NULL, 0, &got));
    ids c = {0};
    OK(sy_store_cancel_requests(f->s, "h1", collect_id, &c));
    assert_int_equal(c.n, 0);

    OK(sy_store_request_cancel(f->s, id, 20));
    OK(sy_store_request_cancel(f->s, id, 21)); /* asking twice is fine */
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.state, SY_RUN_RUNNING);
    assert_true(r.cancel_requested);
    assert_int_equal(r.finished, 0);
    sy_run_record_clear(&r);
    tasks t = list_tasks(f->s, id);
    assert_int_equal(t.t[0].state, SY_TASK_NOT_STARTED);
    tasks_clear(&t);

    OK(sy_store_cancel_requests(f->s, "h1", collect_id, &c));
    assert_int_equal(c.n, 1);
    assert_int_equal(c.id[0], id);
    c.n = 0;
    OK(sy_store_cancel_requests(f->s, "h2", collect_id, &c));
    assert_int_equal(c.n, 0);

    /* Once the owner has cancelled it, it is no longer asked for. */
    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_CANCELLED, "cancelled", 30));
    OK(sy_store_commit(f->s));
    OK(sy_store_cancel_requests(f->s, "h1", collect_id, &c));
    assert_int_equal(c.n, 0);
}

static void test_cancel_terminal_and_missing(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 1, 1);
    OK(sy_store_begin(f->s));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_RUNNING, NULL, 2));
    OK(sy_store_update_run(f->s, id, NULL, SY_RUN_COMPLETED, NULL, 3));
    OK(sy_store_commit(f->s));
    assert_int_equal(sy_store_request_cancel(f->s, id, 4), SY_ESTATE);
    assert_contains(sy_store_errmsg(f->s), "already Completed");
    assert_int_equal(sy_store_request_cancel(f->s, id + 1, 4), SY_ENOENT);
    assert_contains(sy_store_errmsg(f->s), "no run");
    assert_int_equal(run_state(f->s, id), SY_RUN_COMPLETED);
}

static void test_cancel_inside_batch(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 2, 1);
    OK(sy_store_begin(f->s));
    OK(sy_store_request_cancel(f->s, id, 5));
    assert_int_equal(sy_store_request_cancel(f->s, id, 6), SY_ESTATE);
    /* The failed request undid nothing of the batch. */
    assert_int_equal(run_state(f->s, id), SY_RUN_CANCELLED);
    sy_store_rollback(f->s);
    assert_int_equal(run_state(f->s, id), SY_RUN_PENDING);
    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.t[0].state, SY_TASK_NOT_STARTED);
    tasks_clear(&c);
}

/* --- events and listings ---------------------------------------------------------- */

typedef struct {
    size_t n;
    char text[256];
} events;

static int collect_event(void *arg, uint32_t idx, uint32_t attempt,
                         const char *kind, const char *detail, int64_t at)
{
    events *e = arg;
    size_t len = strlen(e->text);
    snprintf(e->text + len, sizeof e->text - len, "%u/%u %s %s @%lld;", idx,
             attempt, kind, detail ? detail : "NULL", (long long)at);
    e->n++;
    return 0;
}

static void test_events(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 2, 1), quiet = make_run(f->s, 1, 1);
    OK(sy_store_add_event(f->s, id, NULL, 0, 1, 1, "failed", "exit 3", 30));
    OK(sy_store_begin(f->s));
    OK(sy_store_add_event(f->s, id, NULL, 0, 0, 2, "timeout", NULL, 10));
    OK(sy_store_add_event(f->s, id, NULL, 0, 1, 2, "stale", "attempt 1 completed late", 20));
    OK(sy_store_commit(f->s));
    events e = {0};
    OK(sy_store_list_events(f->s, id, collect_event, &e));
    assert_int_equal(e.n, 3);
    /* In the order they were added, not by time. */
    assert_string_equal(e.text, "1/1 failed exit 3 @30;0/2 timeout NULL @10;"
                                "1/2 stale attempt 1 completed late @20;");
    memset(&e, 0, sizeof e);
    OK(sy_store_list_events(f->s, quiet, collect_event, &e));
    assert_int_equal(e.n, 0);
    assert_int_equal(sy_store_list_events(f->s, id + 5, collect_event, &e),
                     SY_ENOENT);
    assert_int_equal(sy_store_add_event(f->s, id + 5, NULL, 0, 0, 1, "x", NULL, 1),
                     SY_ENOENT);
    assert_int_equal(sy_store_add_event(f->s, id, NULL, 0, 0, 1, NULL, NULL, 1),
                     SY_EINVAL);
}

static void test_list_runs(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t r[5];
    for (int i = 0; i < 5; i++)
        r[i] = make_run(f->s, 1, 100 - i);
    ids c = {0};
    OK(sy_store_list_runs(f->s, 0, collect_run, &c));
    assert_int_equal(c.n, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(c.id[i], r[4 - i]);
    memset(&c, 0, sizeof c);
    OK(sy_store_list_runs(f->s, 2, collect_run, &c));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.id[0], r[4]);
    assert_int_equal(c.id[1], r[3]);
    memset(&c, 0, sizeof c);
    c.stop_after = 3;
    OK(sy_store_list_runs(f->s, 0, collect_run, &c));
    assert_int_equal(c.n, 3);
    /* The statement was reset: listing again starts over. */
    memset(&c, 0, sizeof c);
    OK(sy_store_list_runs(f->s, 1, collect_run, &c));
    assert_int_equal(c.id[0], r[4]);
}

typedef struct {
    sy_store *s;
    int inner_rc;
    size_t tasks;
} nested;

static int list_inside(void *arg, const sy_run_record *r)
{
    nested *n = arg;
    ids c = {0};
    n->inner_rc = sy_store_list_runs(n->s, 0, collect_run, &c);
    tasks t = {0};
    if (sy_store_list_tasks(n->s, r->id, collect_task, &t) == SY_OK)
        n->tasks += t.n;
    tasks_clear(&t);
    return 0;
}

static void test_listing_from_a_callback(void **state)
{
    fx *f = *state;
    put_def(f->s);
    make_run(f->s, 2, 1);
    make_run(f->s, 3, 1);
    nested n = {f->s, SY_OK, 0};
    OK(sy_store_list_runs(f->s, 0, list_inside, &n));
    assert_int_equal(n.inner_rc, SY_ESTATE);
    assert_int_equal(n.tasks, 5);
}

/* --- retention ---------------------------------------------------------------- */

static void finish(sy_store *s, int64_t id, sy_run_state state, int64_t at)
{
    assert_int_equal(sy_store_begin(s), SY_OK);
    assert_int_equal(sy_store_update_run(s, id, NULL, state, NULL, at), SY_OK);
    assert_int_equal(sy_store_commit(s), SY_OK);
}

/* Runs that ended before the cutoff go, oldest first and at most `max` a
 * call, with their tasks and events; live runs and later ones stay. */
static void test_delete_finished(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t a = make_run(f->s, 2, 1), b = make_run(f->s, 1, 1),
            c = make_run(f->s, 3, 1), live = make_run(f->s, 1, 1);
    finish(f->s, a, SY_RUN_COMPLETED, 100);
    finish(f->s, b, SY_RUN_FAILED, 300);
    finish(f->s, c, SY_RUN_CANCELLED, 200);
    OK(sy_store_add_event(f->s, a, NULL, 0, 0, 1, "failed", "x", 50));
    size_t n = 99;
    OK(sy_store_delete_finished(f->s, 100, 10, &n));
    assert_int_equal(n, 0); /* "before" is strict */
    OK(sy_store_delete_finished(f->s, 250, 1, &n));
    assert_int_equal(n, 1);
    sy_run_record r;
    assert_int_equal(sy_store_get_run(f->s, a, &r), SY_ENOENT);
    tasks t = {0};
    assert_int_equal(sy_store_list_tasks(f->s, a, collect_task, &t), SY_ENOENT);
    assert_int_equal(t.n, 0);
    events e = {0};
    assert_int_equal(sy_store_list_events(f->s, a, collect_event, &e), SY_ENOENT);
    OK(sy_store_delete_finished(f->s, 250, 10, &n));
    assert_int_equal(n, 1); /* c, ended at 200; b ended at 300 */
    assert_int_equal(run_state(f->s, b), SY_RUN_FAILED);
    OK(sy_store_delete_finished(f->s, 1000000, 10, &n));
    assert_int_equal(n, 1);
    assert_int_equal(run_state(f->s, live), SY_RUN_PENDING);
    tasks left = list_tasks(f->s, live);
    assert_int_equal(left.n, 1);
    tasks_clear(&left);
    char *def = NULL;
    OK(sy_store_get_definition(f->s, HASH, &def)); /* definitions stay */
    free(def);
    OK(sy_store_begin(f->s));
    assert_int_equal(sy_store_delete_finished(f->s, 1, 10, &n), SY_ESTATE);
    sy_store_rollback(f->s);
    assert_int_equal(sy_store_delete_finished(f->s, 1, 0, &n), SY_EINVAL);
    assert_contains(sy_store_errmsg(f->s), "max");
}

/* --- durability and concurrency ------------------------------------------------------ */

static void commit_two_updates(sy_store *s, int64_t id)
{
    sy_task_record t = ready_task(0);
    t.state = SY_TASK_COMPLETED;
    assert_int_equal(sy_store_begin(s), SY_OK);
    assert_int_equal(sy_store_update_task(s, id, NULL, 0, &t), SY_OK);
    t.idx = 1;
    t.state = SY_TASK_READY;
    assert_int_equal(sy_store_update_task(s, id, NULL, 0, &t), SY_OK);
    assert_int_equal(sy_store_commit(s), SY_OK);
}

static void assert_two_updates(sy_store *s, int64_t id)
{
    tasks c = list_tasks(s, id);
    assert_int_equal(c.t[0].state, SY_TASK_COMPLETED);
    assert_int_equal(c.t[1].state, SY_TASK_READY);
    assert_int_equal(c.t[2].state, SY_TASK_NOT_STARTED);
    tasks_clear(&c);
}

static void test_durable_across_reopen(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    commit_two_updates(f->s, id);
    reopen(f);
    assert_two_updates(f->s, id);
}

/* The log stays beside the database after the last close (see
 * store/sqlite/sqlite.c), and the database file alone holds everything. */
static void test_close_keeps_log_and_copies_it(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    commit_two_updates(f->s, id);
    sy_store_close(f->s);
    f->s = NULL;
    char *db = sy_path_join(f->dir, "store.db");
    char *wal = sy_asprintf("%s-wal", db);
    char *alone = sy_path_join(f->dir, "alone.db");
    struct stat st;
    assert_int_equal(stat(wal, &st), 0);
    /* The file by itself, as a backup that copies only it would see. */
    FILE *in = fopen(db, "rb"), *out = fopen(alone, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    f->s = open_ok("sqlite:alone.db", f->dir);
    assert_two_updates(f->s, id);
    sy_store_close(f->s);
    f->s = open_ok("sqlite:store.db", f->dir);
    assert_two_updates(f->s, id);
    free(alone);
    free(wal);
    free(db);
}

/* Kept reachable for leak checkers: the child exits without closing it. */
static sy_store *child_store;

static void test_survives_killed_process(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    sy_store_close(f->s);
    f->s = NULL;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[512];
        if (sy_store_open("sqlite:store.db", f->dir, &child_store, err,
                          sizeof err) != SY_OK)
            _exit(2);
        commit_two_updates(child_store, id);
        /* An uncommitted batch must not survive. */
        sy_task_record t = ready_task(2);
        if (sy_store_begin(child_store) != SY_OK ||
            sy_store_update_task(child_store, id, NULL, 0, &t) != SY_OK)
            _exit(3);
        _exit(0); /* no close, no checkpoint: as if killed */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char *wal = sy_path_join(f->dir, "store.db-wal");
    struct stat sb;
    assert_int_equal(stat(wal, &sb), 0); /* the commit lives in the WAL */
    free(wal);
    f->s = open_ok("sqlite:store.db", f->dir);
    assert_two_updates(f->s, id);
}

static void test_two_handles(void **state)
{
    fx *f = *state;
    sy_store *b = open_ok("sqlite:store.db?busy_timeout=50", f->dir);
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    sy_run_record r = get_run(b, id);
    assert_int_equal(r.n_tasks, 3);
    sy_run_record_clear(&r);

    commit_two_updates(f->s, id);
    assert_two_updates(b, id);

    bool got;
    OK(sy_store_claim_run(f->s, id, "h1", 1000, 10, NULL, 0, &got));
    assert_true(got);
    assert_int_equal(sy_store_claim_run(b, id, "h2", 1000, 20, NULL, 0, &got),
                     SY_OK);
    assert_false(got);

    /* A writer holds the file: the other handle gives up after its
     * timeout with SY_EBUSY and SQLite's reason. */
    OK(sy_store_begin(f->s));
    assert_int_equal(sy_store_begin(b), SY_EBUSY);
    assert_contains(sy_store_errmsg(b), "locked");
    assert_int_equal(sy_store_request_cancel(b, id, 30), SY_EBUSY);
    OK(sy_store_commit(f->s));
    assert_int_equal(sy_store_begin(b), SY_OK);
    sy_store_rollback(b);
    sy_store_close(b);
}

static void test_null_handle(void **state)
{
    (void)state;
    bool got;
    assert_int_equal(sy_store_begin(NULL), SY_EINVAL);
    assert_int_equal(sy_store_claim_run(NULL, 1, "h", 1, 1, NULL, 0, &got),
                     SY_EINVAL);
    assert_non_null(sy_store_errmsg(NULL));
    sy_store_rollback(NULL);
    sy_store_close(NULL);
    sy_run_record_clear(NULL);
    sy_task_record_clear(NULL);
}

#ifdef SY_HAVE_LIBPQ
/* PostgreSQL's own version of the schema tests: the version is a row, and
 * a database made by a newer build is refused and left alone. */
static void test_pg_schema_version(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 2, 1000);
    reopen(f);
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.n_tasks, 2);
    sy_run_record_clear(&r);
    th_pg_exec(store_url, "UPDATE switchyard_schema SET version = 99");
    sy_store *s = (sy_store *)&s;
    char err[512] = "";
    assert_int_equal(sy_store_open(store_url, NULL, &s, err, sizeof err),
                     SY_ENOTSUP);
    assert_null(s);
    char knows[96];
    snprintf(knows, sizeof knows, "made by a newer switchyard (schema 99, this build knows %d)",
             sy_store_postgres_schema_version);
    assert_contains(err, knows);
    assert_contains(err, "postgresql://");
    char set[96];
    snprintf(set, sizeof set, "UPDATE switchyard_schema SET version = %d",
             sy_store_postgres_schema_version);
    th_pg_exec(store_url, set);
}

/* Hosts started together on a new database: each opens it (the first
 * creates the schema under the advisory lock, the others wait and find it
 * made), and the schema is made once. */
static void test_pg_hosts_start_together(void **state)
{
    fx *f = *state;
    sy_store_close(f->s);
    f->s = NULL;
    th_pg_reset(store_url);
    fflush(NULL);
    pid_t kids[6];
    for (int i = 0; i < 6; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            char err[512];
            if (sy_store_open(store_url, NULL, &child_store, err, sizeof err) != SY_OK) {
                fprintf(stderr, "child %d: %s\n", i, err);
                _exit(1);
            }
            sy_store_close(child_store);
            _exit(0);
        }
    }
    for (int i = 0; i < 6; i++) {
        int status = 0;
        assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    f->s = open_ok(store_url, NULL);
    th_pg_exec(store_url, "DO $$ BEGIN IF (SELECT count(*) FROM switchyard_schema) <> 1"
                          " THEN RAISE 'schema version recorded more than once'; END IF; END $$");
    put_def(f->s);
    make_run(f->s, 1, 1);
}

/* Several handles (hosts) at once: claims never block each other and
 * never hand one run to two of them. */
static void test_pg_concurrent_claims(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t r[6];
    for (int i = 0; i < 6; i++)
        r[i] = make_run(f->s, 1, i);
    sy_store *b = open_ok(store_url, NULL);
    /* a's claim is uncommitted: SKIP LOCKED lets b take the others
     * without waiting for it. */
    int64_t got_a[8], got_b[8];
    size_t na = 0, nb = 0;
    OK(sy_store_begin(f->s));
    OK(sy_store_claim_runs(f->s, "a", 500, 100, NULL, 0, 2, got_a, &na));
    assert_int_equal(na, 2);
    assert_int_equal(sy_store_claim_runs(b, "b", 500, 100, NULL, 0, 8, got_b, &nb),
                     SY_OK);
    assert_int_equal(nb, 4);
    OK(sy_store_commit(f->s));
    for (size_t i = 0; i < nb; i++)
        for (size_t j = 0; j < na; j++)
            assert_true(got_b[i] != got_a[j]);
    nb = 0;
    assert_int_equal(sy_store_claim_runs(b, "b", 500, 100, NULL, 0, 8, got_b, &nb),
                     SY_OK);
    assert_int_equal(nb, 0);
    (void)r;
    sy_store_close(b);
}
#endif

#ifdef SY_HAVE_LIBPQ
/* Ends every other session on the test database, as a server restart or
 * a network cut would end the store's. */
static void cut_connections(void)
{
    th_pg_exec(store_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                          " WHERE pid <> pg_backend_pid() AND datname = current_database()");
    usleep(100 * 1000); /* the ended sessions' locks go with their processes */
}

/* A connection lost between statements, or inside a batch: the store
 * reconnects, replays the batch so far, and nothing is lost. */
static void test_pg_reconnects(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    cut_connections();
    sy_run_record r = get_run(f->s, id);
    assert_int_equal(r.n_tasks, 3);
    sy_run_record_clear(&r);

    bool got;
    OK(sy_store_claim_run(f->s, id, "h1", 9000, 10, NULL, 0, &got));
    sy_store_fence h1 = {"h1", 1};
    sy_task_record t = ready_task(0);
    t.state = SY_TASK_COMPLETED;
    OK(sy_store_begin(f->s));
    OK(sy_store_update_task(f->s, id, &h1, 0, &t));
    cut_connections();
    t.idx = 1;
    t.state = SY_TASK_READY;
    OK(sy_store_update_task(f->s, id, &h1, 0, &t));
    OK(sy_store_commit(f->s));
    assert_two_updates(f->s, id);
}

/* A batch whose replay finds that another host took the run in between
 * fails whole: none of its writes lands after the takeover. */
static void test_pg_replay_refused_after_takeover(void **state)
{
    fx *f = *state;
    put_def(f->s);
    int64_t id = make_run(f->s, 3, 1);
    bool got;
    OK(sy_store_claim_run(f->s, id, "h1", 100, 10, NULL, 0, &got));
    sy_store_fence h1 = {"h1", 1};
    sy_task_record t = ready_task(0);
    t.state = SY_TASK_COMPLETED;
    OK(sy_store_begin(f->s));
    OK(sy_store_update_task(f->s, id, &h1, 0, &t));
    cut_connections();
    sy_store *b = open_ok(store_url, NULL);
    assert_int_equal(sy_store_claim_run(b, id, "h2", 9000, 200, NULL, 0, &got), SY_OK);
    assert_true(got);
    t.idx = 1;
    assert_int_equal(sy_store_update_task(f->s, id, &h1, 0, &t), SY_EIO);
    assert_contains(sy_store_errmsg(f->s), "another host wrote in between");
    assert_int_equal(sy_store_commit(f->s), SY_EIO);
    tasks c = list_tasks(f->s, id);
    assert_int_equal(c.t[0].state, SY_TASK_NOT_STARTED);
    assert_int_equal(c.t[1].state, SY_TASK_NOT_STARTED);
    tasks_clear(&c);
    sy_store_close(b);
}
#endif

int main(void)
{
#define F(fn) cmocka_unit_test_setup_teardown(fn, setup_file, teardown)
#define M(fn) {#fn " (memory)", fn, setup_memory, teardown, NULL}
#define P(fn) {#fn " (postgresql)", fn, setup_pg, teardown, NULL}
    const struct CMUnitTest sqlite_tests[] = {
        F(test_open_migrate_reopen),
        F(test_newer_schema_refused),
        F(test_bad_urls),
        cmocka_unit_test(test_redact),
        F(test_not_a_database),
        F(test_parent_directories_created),
        F(test_definitions),
        F(test_create_run_and_tasks),
        F(test_create_run_many_tasks),
        F(test_create_run_edge_cases),
        F(test_batch_commit_and_rollback),
        F(test_update_run_stamps),
        F(test_claim_run),
        F(test_claim_runs),
        F(test_renew_release_owners),
        F(test_fencing_after_takeover),
        F(test_cancel_pending_unowned),
        F(test_cancel_owned),
        F(test_cancel_terminal_and_missing),
        F(test_cancel_inside_batch),
        F(test_events),
        F(test_list_runs),
        F(test_listing_from_a_callback),
        F(test_delete_finished),
        F(test_durable_across_reopen),
        F(test_close_keeps_log_and_copies_it),
        F(test_survives_killed_process),
        F(test_two_handles),
        M(test_definitions),
        M(test_create_run_and_tasks),
        M(test_create_run_many_tasks),
        M(test_batch_commit_and_rollback),
        M(test_claim_runs),
        M(test_cancel_pending_unowned),
        M(test_cancel_inside_batch),
        M(test_events),
        cmocka_unit_test(test_null_handle),
    };
#ifdef SY_HAVE_LIBPQ
    const struct CMUnitTest pg_tests[] = {
        P(test_pg_schema_version),
        P(test_pg_concurrent_claims),
        P(test_pg_hosts_start_together),
        P(test_pg_reconnects),
        P(test_pg_replay_refused_after_takeover),
        P(test_definitions),
        P(test_create_run_and_tasks),
        P(test_create_run_many_tasks),
        P(test_create_run_edge_cases),
        P(test_batch_commit_and_rollback),
        P(test_update_run_stamps),
        P(test_claim_run),
        P(test_claim_runs),
        P(test_renew_release_owners),
        P(test_fencing_after_takeover),
        P(test_cancel_pending_unowned),
        P(test_cancel_owned),
        P(test_cancel_terminal_and_missing),
        P(test_cancel_inside_batch),
        P(test_events),
        P(test_list_runs),
        P(test_listing_from_a_callback),
        P(test_delete_finished),
        P(test_durable_across_reopen),
    };
    size_t n_pg = th_pg_url() ? SY_ARRAY_LEN(pg_tests) : 0;
#else
    size_t n_pg = 0;
#endif
    /* One plan for the TAP driver: both stores' tests in one group. */
    size_t n = SY_ARRAY_LEN(sqlite_tests);
    struct CMUnitTest *all = calloc(n + n_pg, sizeof *all);
    memcpy(all, sqlite_tests, sizeof sqlite_tests);
#ifdef SY_HAVE_LIBPQ
    memcpy(all + n, pg_tests, n_pg * sizeof *all);
#endif
    int failed = _cmocka_run_group_tests("store", all, n + n_pg, NULL, NULL);
    free(all);
    return failed;
}
