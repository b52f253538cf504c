/*
 * bench/slot_rows -- what holding a slot costs SQLite alone (no host), in
 * the layouts docs/flow-control.md weighs ("The cost of limits").
 *
 * A slot row of its own, taken and given back:
 *
 *   0  the store's: text key, the holder as four integers, owner text
 *   1  integers only: key id and holder id as the primary key
 *   2  the holder id as the rowid, the key a plain column
 *
 * The attempt's own task row, started (Running) and ended (Completed with
 * an output), as every task's is:
 *
 *   3  the task row alone: what a task costs with no limit
 *   4  the hold written in the task row (set at the start, cleared at the
 *      end), and the host's held counts rewritten once a round: one pool,
 *      one row
 *   5  the same with 100 keys, a key per task, the counts in 8 rows by a
 *      hash of the key (each rewritten once a round)
 *
 * Each round opens a transaction (BEGIN IMMEDIATE, WAL, synchronous
 * NORMAL, as the store does), starts 100 and ends the previous round's
 * 100, and commits: 10,000 in all.  Run it under callgrind, where the
 * count does not move with the machine's load:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
 *       build/plain/bench/slot_rows 0
 *
 * and divide "Collected" by 10,000: for 0 to 2 the instructions of one
 * row inserted and deleted, for 3 to 5 of one task started and ended,
 * their share of the commits included.  4 or 5 less 3 is what the hold
 * adds to a task.
 */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 10000
#define ROUND 100

#define TASK_TABLES                                                                        \
    "CREATE TABLE t(run_id INTEGER NOT NULL, idx INTEGER NOT NULL, state INTEGER NOT NULL," \
    " started INTEGER NOT NULL, finished INTEGER NOT NULL, output TEXT, holds TEXT,"        \
    " PRIMARY KEY (run_id, idx)) WITHOUT ROWID;"                                           \
    "CREATE TABLE counts(owner TEXT NOT NULL, grp INTEGER NOT NULL, held TEXT NOT NULL,"   \
    " PRIMARY KEY (owner, grp)) WITHOUT ROWID;"                                            \
    "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)"       \
    " INSERT INTO t SELECT i / 1000, i % 1000, 0, 0, 0, NULL, NULL FROM n"

static const char *const tables[] = {
    "CREATE TABLE s(key TEXT NOT NULL, run_id INTEGER NOT NULL, idx INTEGER NOT NULL,"
    " elem INTEGER NOT NULL, token INTEGER NOT NULL, n INTEGER NOT NULL, owner TEXT NOT NULL,"
    " epoch INTEGER NOT NULL, taken INTEGER NOT NULL, cancel_why TEXT,"
    " PRIMARY KEY (key, run_id, idx, elem, token)) WITHOUT ROWID",
    "CREATE TABLE s(key INTEGER NOT NULL, holder INTEGER NOT NULL, n INTEGER NOT NULL,"
    " owner INTEGER NOT NULL, epoch INTEGER NOT NULL, taken INTEGER NOT NULL,"
    " PRIMARY KEY (key, holder)) WITHOUT ROWID",
    "CREATE TABLE s(holder INTEGER PRIMARY KEY, key INTEGER NOT NULL, n INTEGER NOT NULL,"
    " owner INTEGER NOT NULL, epoch INTEGER NOT NULL, taken INTEGER NOT NULL)",
    TASK_TABLES, TASK_TABLES, TASK_TABLES,
};

/* What takes (0 to 2) or starts the attempt (3 to 5). */
static const char *const starts[] = {
    "INSERT INTO s (key, run_id, idx, elem, token, n, owner, epoch, taken)"
    " VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, 3, 1700000000000)",
    "INSERT INTO s (key, holder, n, owner, epoch, taken) VALUES (?1, ?2, 1, 2, 3, 1700000000000)",
    "INSERT INTO s (holder, key, n, owner, epoch, taken) VALUES (?2, ?1, 1, 2, 3, 1700000000000)",
    "UPDATE t SET state = 1, started = 1700000000000 WHERE run_id = ?1 AND idx = ?2",
    "UPDATE t SET state = 1, started = 1700000000000, holds = ?3 WHERE run_id = ?1 AND idx = ?2",
    "UPDATE t SET state = 1, started = 1700000000000, holds = ?3 WHERE run_id = ?1 AND idx = ?2",
};

/* What gives back (0 to 2) or ends the attempt (3 to 5). */
static const char *const ends[] = {
    "DELETE FROM s WHERE key = ?1 AND run_id = ?2 AND idx = ?3 AND elem = ?4 AND token = ?5"
    " AND owner = ?6",
    "DELETE FROM s WHERE key = ?1 AND holder = ?2",
    "DELETE FROM s WHERE holder = ?2",
    "UPDATE t SET state = 2, finished = 1700000000001, output = '{\"ok\":true}'"
    " WHERE run_id = ?1 AND idx = ?2",
    "UPDATE t SET state = 2, finished = 1700000000001, output = '{\"ok\":true}', holds = NULL"
    " WHERE run_id = ?1 AND idx = ?2",
    "UPDATE t SET state = 2, finished = 1700000000001, output = '{\"ok\":true}', holds = NULL"
    " WHERE run_id = ?1 AND idx = ?2",
};

#define GROUPS 8

/* Binds attempt `id`'s identity in `layout` to st, and at a start of 4
 * or 5 the hold its row keeps. */
static void bind_row(sqlite3_stmt *st, int layout, long id, bool start)
{
    if (layout == 0) {
        sqlite3_bind_text(st, 1, "pool:p", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id / 1000);
        sqlite3_bind_int64(st, 3, id % 1000);
        sqlite3_bind_int64(st, 4, -1);
        sqlite3_bind_int64(st, 5, 1);
        sqlite3_bind_text(st, 6, "host-0123456789:4242", -1, SQLITE_STATIC);
    } else if (layout <= 2) {
        sqlite3_bind_int64(st, 1, 1);
        sqlite3_bind_int64(st, 2, id);
    } else {
        sqlite3_bind_int64(st, 1, id / 1000);
        sqlite3_bind_int64(st, 2, id % 1000);
        if (start && layout >= 4) {
            char hold[32];
            if (layout == 4)
                snprintf(hold, sizeof hold, "[\"pool:p\",1]");
            else
                snprintf(hold, sizeof hold, "[\"k:%ld\",1]", id % 100);
            sqlite3_bind_text(st, 3, hold, -1, SQLITE_TRANSIENT);
        }
    }
}

static int step(sqlite3 *db, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        fprintf(stderr, "slot_rows: %s\n", sqlite3_errmsg(db));
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Layouts 4 and 5, once a round: the host's held counts rewritten, as
 * JSON text, one row (one pool) or GROUPS rows (100 keys, a key's group
 * its number modulo GROUPS), each now holding one slot of every key. */
static int write_counts(sqlite3 *db, sqlite3_stmt *st, int layout)
{
    int rc = 0;
    for (int g = 0; rc == 0 && g < (layout == 4 ? 1 : GROUPS); g++) {
        char held[1024];
        size_t n = 0;
        if (layout == 4)
            n = (size_t)snprintf(held, sizeof held, "{\"pool:p\":%d}", ROUND);
        else
            for (int k = g; k < 100; k += GROUPS)
                n += (size_t)snprintf(held + n, sizeof held - n, "%s\"k:%d\":1",
                                      n ? "," : "{", k);
        if (layout == 5)
            snprintf(held + n, sizeof held - n, "}");
        sqlite3_bind_text(st, 1, "host-0123456789:4242", -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, g);
        sqlite3_bind_text(st, 3, held, -1, SQLITE_TRANSIENT);
        rc = step(db, st);
    }
    return rc;
}

int main(int argc, char **argv)
{
    int layout = argc == 2 ? atoi(argv[1]) : -1;
    if (layout < 0 || layout > 5) {
        fprintf(stderr, "usage: slot_rows LAYOUT (0 to 5)\n");
        return 2;
    }
    char dir[] = "/tmp/sy-slot-rows-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        perror("slot_rows: mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/rows.db", dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL, *del = NULL, *counts = NULL;
    int rc = sqlite3_open(path, &db) == SQLITE_OK &&
                     sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                                  NULL, NULL, NULL) == SQLITE_OK &&
                     sqlite3_exec(db, tables[layout], NULL, NULL, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, starts[layout], -1, &ins, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, ends[layout], -1, &del, NULL) == SQLITE_OK &&
                     (layout < 4 ||
                      sqlite3_prepare_v2(db,
                                         "INSERT INTO counts (owner, grp, held)"
                                         " VALUES (?1, ?2, ?3) ON CONFLICT (owner, grp)"
                                         " DO UPDATE SET held = excluded.held",
                                         -1, &counts, NULL) == SQLITE_OK)
                 ? 0
                 : -1;
    for (long round = 0; rc == 0 && round < ROWS / ROUND; round++) {
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
        for (long i = 0; rc == 0 && i < ROUND; i++) {
            bind_row(ins, layout, round * ROUND + i, true);
            rc = step(db, ins);
        }
        for (long i = 0; rc == 0 && round > 0 && i < ROUND; i++) {
            bind_row(del, layout, (round - 1) * ROUND + i, false);
            rc = step(db, del);
        }
        if (rc == 0 && counts)
            rc = write_counts(db, counts, layout);
        if (rc == 0)
            rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    }
    if (rc != 0)
        fprintf(stderr, "slot_rows: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_finalize(ins);
    sqlite3_finalize(del);
    sqlite3_finalize(counts);
    sqlite3_close(db);
    char wal[80];
    snprintf(wal, sizeof wal, "%s-wal", path);
    remove(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    remove(wal);
    remove(path);
    remove(dir);
    if (rc == 0)
        printf("layout %d: %d %s\n", layout, ROWS,
               layout <= 2 ? "rows taken and given back" : "attempts started and ended");
    return rc == 0 ? 0 : 1;
}
