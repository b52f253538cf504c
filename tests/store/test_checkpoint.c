/* store_ckpt: the writer's commits never checkpoint; the thread does, and
 * nothing written is lost across a stop, a close and a reopen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store/checkpoint.h"

static char dir[] = "/tmp/sy-ckpt-XXXXXX";
static char path[256];

static void exec_ok(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err ? err : "?");
}

static sqlite3 *open_wal(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
                                     SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                     NULL), SQLITE_OK);
    exec_ok(db, "PRAGMA journal_mode = WAL");
    exec_ok(db, "PRAGMA synchronous = NORMAL");
    return db;
}

/* Frames in the log, and frames of it already in the database file. */
static void sleep_ms(long ms);

/* (SQLITE_BUSY while the thread's checkpoint is under way: try again.) */
static void wal_state(sqlite3 *db, int *log, int *done)
{
    int rc = SQLITE_BUSY;
    for (int i = 0; i < 3000 && rc == SQLITE_BUSY; i++) {
        rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, log,
                                       done);
        if (rc == SQLITE_BUSY)
            sleep_ms(10);
    }
    assert_int_equal(rc, SQLITE_OK);
}

/* `n` commits of one 4 KiB row each: about 2 pages a commit, each after
 * `gap_us` microseconds (the host commits as events come, not in a tight
 * loop; under a CPU-starved writer's pace the thread could not keep up,
 * and the writer copies the whole log at SY_CKPT_LIMIT instead). */
static void write_rows_paced(sqlite3 *db, int n, long gap_us);
static void write_rows(sqlite3 *db, int n) { write_rows_paced(db, n, 0); }

static void write_rows_paced(sqlite3 *db, int n, long gap_us)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t(v) VALUES (?)", -1,
                                        &st, NULL), SQLITE_OK);
    char blob[4096];
    memset(blob, 'x', sizeof blob);
    for (int i = 0; i < n; i++) {
        sqlite3_bind_blob(st, 1, blob, sizeof blob, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
        if (gap_us) {
            struct timespec ts = {0, gap_us * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    sqlite3_finalize(st);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_checkpoints_off_the_writer(void **state)
{
    (void)state;
    sqlite3 *db = open_wal();
    exec_ok(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)");
    sy_ckpt *c = sy_ckpt_start(db, path, 5000);
    assert_non_null(c);

    write_rows(db, 2 * SY_CKPT_PAGES);
    /* The thread copies, by its own account (a checkpoint here would copy
     * the frames itself and prove nothing), within 30 s. */
    for (int i = 0; i < 3000 && sy_ckpt_count(c) == 0; i++)
        sleep_ms(10);
    assert_true(sy_ckpt_count(c) >= 1);
    /* What is left is at most the tail the writer copies. */
    int log = 0, done = 0;
    wal_state(db, &log, &done);
    assert_int_equal(done, log);

    sy_ckpt_stop(c);
    sqlite3_close(db);

    /* Reopened: every row is there, and the close has emptied the log. */
    db = open_wal();
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st,
                                        NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 2 * SY_CKPT_PAGES);
    sqlite3_finalize(st);
    sqlite3_close(db);
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat sb;
    assert_true(stat(wal, &sb) != 0 || sb.st_size == 0);
}

/* The WAL file's size: the longest the log has been (a log that starts
 * over is written from its start again; the file is not cut). */
static long wal_frames(void)
{
    char wal[300];
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat sb;
    if (stat(wal, &sb) != 0)
        return 0;
    return (long)((sb.st_size - 32) / (4096 + 24));
}

/* A writer that commits without end (every 100 us, for five times the
 * threshold in rows, ten in frames): the log still starts over (the writer
 * copies the tail the thread leaves), so the file stays a few thresholds
 * long instead of holding every frame written, as it did when nothing but
 * the close started it over. */
static void test_log_starts_over_under_a_stream(void **state)
{
    (void)state;
    char p[300];
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        unlink(p);
    }
    sqlite3 *db = open_wal();
    exec_ok(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)");
    sy_ckpt *c = sy_ckpt_start(db, path, 5000);
    assert_non_null(c);
    write_rows_paced(db, 5 * SY_CKPT_PAGES, 100);
    long longest = wal_frames();
    assert_true(sy_ckpt_count(c) >= 1);
    assert_true(sy_ckpt_tails(c) >= 1);
    if (longest > 2 * SY_CKPT_LIMIT)
        fail_msg("the log grew to %ld frames (limit %d)", longest, SY_CKPT_LIMIT);
    sy_ckpt_stop(c);
    sqlite3_close(db);
}

/* Stopped at once, even with nothing to do; a NULL checkpointer is a
 * no-op; and after a stop the writer checkpoints by itself again. */
static void test_stop_and_fallback(void **state)
{
    (void)state;
    sy_ckpt_stop(NULL);
    assert_int_equal(sy_ckpt_count(NULL), 0);
    sqlite3 *db = open_wal();
    exec_ok(db, "CREATE TABLE IF NOT EXISTS u(id INTEGER PRIMARY KEY, v BLOB)");
    sy_ckpt *c = sy_ckpt_start(db, path, 5000);
    assert_non_null(c);
    sy_ckpt_stop(c);
    exec_ok(db, "DELETE FROM t");
    write_rows(db, 2 * SY_CKPT_PAGES);
    /* SQLite's own hook ran in those commits (about 4,000 frames): the log
     * was restarted whenever it passed the threshold. */
    int log = 0, done = 0;
    wal_state(db, &log, &done);
    assert_true(log < 2 * SY_CKPT_PAGES);
    sqlite3_close(db);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/ckpt.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[300];
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoints_off_the_writer),
        cmocka_unit_test(test_stop_and_fallback),
        cmocka_unit_test(test_log_starts_over_under_a_stream),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
