/*
 * bench/slot_rows -- what one slot row costs SQLite alone, taken and given
 * back, in three layouts (docs/flow-control.md, "The cost of limits"):
 *
 *   0  the store's: text key, the holder as four integers, owner text
 *   1  integers only: key id and holder id as the primary key
 *   2  the holder id as the rowid, the key a plain column
 *
 * Each round opens a transaction (BEGIN IMMEDIATE, WAL, synchronous
 * NORMAL, as the store does), inserts 100 rows and deletes the previous
 * round's 100, and commits: 10,000 rows in all.  Run it under callgrind,
 * where the count does not move with the machine's load:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
 *       build/plain/bench/slot_rows 0
 *
 * and divide "Collected" by 10,000 for the instructions of one row
 * inserted and deleted, its share of the commits included.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 10000
#define ROUND 100

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
};

static const char *const inserts[] = {
    "INSERT INTO s (key, run_id, idx, elem, token, n, owner, epoch, taken)"
    " VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, 3, 1700000000000)",
    "INSERT INTO s (key, holder, n, owner, epoch, taken) VALUES (?1, ?2, 1, 2, 3, 1700000000000)",
    "INSERT INTO s (holder, key, n, owner, epoch, taken) VALUES (?2, ?1, 1, 2, 3, 1700000000000)",
};

static const char *const deletes[] = {
    "DELETE FROM s WHERE key = ?1 AND run_id = ?2 AND idx = ?3 AND elem = ?4 AND token = ?5"
    " AND owner = ?6",
    "DELETE FROM s WHERE key = ?1 AND holder = ?2",
    "DELETE FROM s WHERE holder = ?2",
};

/* Binds row `id`'s identity in `layout` to st. */
static void bind_row(sqlite3_stmt *st, int layout, long id)
{
    if (layout == 0) {
        sqlite3_bind_text(st, 1, "pool:p", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id / 1000);
        sqlite3_bind_int64(st, 3, id % 1000);
        sqlite3_bind_int64(st, 4, -1);
        sqlite3_bind_int64(st, 5, 1);
        sqlite3_bind_text(st, 6, "host-0123456789:4242", -1, SQLITE_STATIC);
    } else {
        sqlite3_bind_int64(st, 1, 1);
        sqlite3_bind_int64(st, 2, id);
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

int main(int argc, char **argv)
{
    int layout = argc == 2 ? atoi(argv[1]) : -1;
    if (layout < 0 || layout > 2) {
        fprintf(stderr, "usage: slot_rows 0|1|2\n");
        return 2;
    }
    char dir[] = "/tmp/sy-slot-rows-XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        perror("slot_rows: mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/rows.db", dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL, *del = NULL;
    int rc = sqlite3_open(path, &db) == SQLITE_OK &&
                     sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
                                  NULL, NULL, NULL) == SQLITE_OK &&
                     sqlite3_exec(db, tables[layout], NULL, NULL, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, inserts[layout], -1, &ins, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, deletes[layout], -1, &del, NULL) == SQLITE_OK
                 ? 0
                 : -1;
    for (long round = 0; rc == 0 && round < ROWS / ROUND; round++) {
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
        for (long i = 0; rc == 0 && i < ROUND; i++) {
            bind_row(ins, layout, round * ROUND + i);
            rc = step(db, ins);
        }
        for (long i = 0; rc == 0 && round > 0 && i < ROUND; i++) {
            bind_row(del, layout, (round - 1) * ROUND + i);
            rc = step(db, del);
        }
        if (rc == 0)
            rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    }
    if (rc != 0)
        fprintf(stderr, "slot_rows: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_finalize(ins);
    sqlite3_finalize(del);
    sqlite3_close(db);
    char wal[80];
    snprintf(wal, sizeof wal, "%s-wal", path);
    remove(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    remove(wal);
    remove(path);
    remove(dir);
    if (rc == 0)
        printf("layout %d: %d rows taken and given back\n", layout, ROWS);
    return rc == 0 ? 0 : 1;
}
