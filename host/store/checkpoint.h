/*
 * store/checkpoint.h -- WAL checkpoints on a thread of their own.
 *
 * SQLite checkpoints a WAL database inside the commit that takes the log
 * past 1,000 pages: that commit copies the pages into the database file and
 * syncs it, and the host's loop, which made the commit, stops meanwhile
 * (tens of milliseconds on a slow disk, in the middle of a run).  Here the
 * writer's automatic checkpoints are turned off, a commit hook notes the
 * size of the log, and a thread with its own connection runs PASSIVE
 * checkpoints, which never block the writer or any reader, for the bulk.
 * The writer copies only the last few frames itself: the log can only
 * start over at a write that finds all of it copied, which never happens
 * while a busy writer races the thread (the log grew by 8 MB a second
 * under a stream of commands before this).
 *
 * Threading: sy_ckpt_start and sy_ckpt_stop are called by the thread that
 * owns `db`; the hook runs on that thread inside its commits; the
 * checkpointer thread touches only its own connection.
 */
#ifndef SY_STORE_CKPT_H
#define SY_STORE_CKPT_H

#include <sqlite3.h>

/* Frames not yet copied that start the thread: SQLite's own default. */
#define SY_CKPT_PAGES 1000
/* The most the writer copies itself once the thread has copied the rest
 * (about 256 KiB, and the two syncs of any checkpoint). */
#define SY_CKPT_TAIL 64
/* A log this long is copied by the writer whatever it holds: the bound on
 * the log when the thread cannot keep up (about 16 MiB). */
#define SY_CKPT_LIMIT 4000

typedef struct sy_ckpt sy_ckpt;

/* Starts checkpointing the WAL database at `path` (a file, not
 * ":memory:") for the writer `db`.  Returns NULL when it cannot (no memory,
 * no second connection, no thread): `db` then keeps SQLite's automatic
 * checkpoints, so nothing is lost but the smoothness. */
sy_ckpt *sy_ckpt_start(sqlite3 *db, const char *path, int busy_timeout_ms);

/* Stops the thread (a checkpoint in progress is interrupted, which SQLite
 * makes safe), closes its connection, and gives `db` back its automatic
 * checkpoints, so the close of `db` checkpoints what is left.  Call it
 * before closing `db`.  NULL is a no-op. */
void sy_ckpt_stop(sy_ckpt *c);

/* Checkpoints of the thread that left frames copied (one that found the
 * log closed to it would not count), and tails the writer copied (for
 * tests; the second on the writer's thread only). */
unsigned long sy_ckpt_count(sy_ckpt *c);
unsigned long sy_ckpt_tails(sy_ckpt *c);

#endif
