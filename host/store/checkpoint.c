/* WAL checkpoints on a thread of their own (see store/checkpoint.h). */
#include "store/checkpoint.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

struct sy_ckpt {
    sqlite3 *writer;        /* the owner's connection (borrowed) */
    sqlite3 *db;            /* the checkpointer's own */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool wanted, stop;      /* under mu */
    bool busy;              /* under mu: the thread is checkpointing */
    int copied;             /* under mu: frames of the log the thread's last
                               checkpoint left copied; 0 after a restart */
    unsigned gen;           /* under mu: restarts of the log seen */
    unsigned long done;     /* under mu: checkpoints that copied frames */
    unsigned long tails;    /* writer only: tails it copied itself */
    int last_pages;         /* writer only: the log at its last commit */
    int next_tail;          /* writer only: the log length before which it
                               copies no tail again (a reader that keeps
                               the log from starting over would otherwise
                               have it copy at every commit) */
};

/* One PASSIVE checkpoint: copies what no reader still needs and waits for
 * no one (SQLITE_BUSY, another checkpoint under way, is fine). */
static void passive(sqlite3 *db, int *log, int *copied)
{
    *log = *copied = 0;
    if (sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, log,
                                  copied) != SQLITE_OK || *log < 0 || *copied < 0)
        *log = *copied = 0;
}

/*
 * After every commit of the writer, on its thread.  The log starts over
 * only at a write that finds every frame of it already copied, which a
 * checkpointer on another thread, racing a busy writer, never lets it
 * find: the log would grow for as long as commits keep coming.  So the
 * thread copies the bulk (from SY_CKPT_PAGES frames behind), and the
 * writer copies the last few frames itself (SY_CKPT_TAIL or fewer: a short
 * copy and two syncs), after which its next transaction starts the log
 * over; past SY_CKPT_LIMIT frames it copies whatever is left, as SQLite's
 * own hook would.  Cheap while the log is short.
 */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
    (void)name;
    sy_ckpt *c = arg;
    bool restarted = pages < c->last_pages;
    c->last_pages = pages;
    if (restarted)
        c->next_tail = 0;
    if (pages < SY_CKPT_PAGES && !restarted)
        return SQLITE_OK;
    pthread_mutex_lock(&c->mu);
    if (restarted) {
        c->copied = 0;
        c->gen++;
    }
    bool idle = !c->wanted && !c->busy;
    int behind = pages - (c->copied <= pages ? c->copied : 0);
    bool tail = idle && pages >= SY_CKPT_PAGES && pages >= c->next_tail &&
                (behind <= SY_CKPT_TAIL || pages >= SY_CKPT_LIMIT);
    if (idle && !tail && behind >= SY_CKPT_PAGES) {
        c->wanted = true;
        pthread_cond_signal(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    if (tail) {
        int log, copied;
        passive(db, &log, &copied);
        c->tails++;
        c->next_tail = pages + SY_CKPT_PAGES;
        pthread_mutex_lock(&c->mu);
        if (copied > c->copied)
            c->copied = copied;
        pthread_mutex_unlock(&c->mu);
    }
    return SQLITE_OK;
}

static void *run(void *arg)
{
    sy_ckpt *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->wanted && !c->stop)
            pthread_cond_wait(&c->cv, &c->mu);
        if (c->stop)
            break;
        c->wanted = false;
        c->busy = true;
        unsigned gen = c->gen;
        pthread_mutex_unlock(&c->mu);
        /* Rounds until what the writer appended meanwhile is a short tail
         * (each round is shorter than the one before). */
        int log = 0, copied = 0;
        for (int round = 0; round < 4; round++) {
            passive(c->db, &log, &copied);
            if (log - copied <= SY_CKPT_TAIL)
                break;
            pthread_mutex_lock(&c->mu);
            bool stop = c->stop;
            pthread_mutex_unlock(&c->mu);
            if (stop)
                break;
        }
        pthread_mutex_lock(&c->mu);
        if (copied > 0)
            c->done++;
        if (c->gen == gen) /* else the figure is of a log since started over */
            c->copied = copied;
        c->busy = false;
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* The thread blocks every signal: the host's go to the host's threads. */
static int start_thread(sy_ckpt *c)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&c->thread, NULL, run, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

sy_ckpt *sy_ckpt_start(sqlite3 *db, const char *path, int busy_timeout_ms)
{
    sy_ckpt *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->writer = db;
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        sqlite3_close(c->db);
        free(c);
        return NULL;
    }
    sqlite3_busy_timeout(c->db, busy_timeout_ms);
    /* A connection opens the log at its first read; until then SQLite's
     * checkpoint on it does nothing (and says so only by a log of -1). */
    if (sqlite3_exec(c->db, "SELECT count(*) FROM sqlite_schema", NULL, NULL,
                     NULL) != SQLITE_OK) {
        sqlite3_close(c->db);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (start_thread(c) != 0) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        sqlite3_close(c->db);
        free(c);
        return NULL;
    }
    /* The hook replaces the one sqlite3_wal_autocheckpoint installs. */
    sqlite3_wal_hook(db, on_commit, c);
    return c;
}

void sy_ckpt_stop(sy_ckpt *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    sqlite3_interrupt(c->db);
    pthread_join(c->thread, NULL);
    sqlite3_close(c->db);
    sqlite3_wal_autocheckpoint(c->writer, SY_CKPT_PAGES);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

unsigned long sy_ckpt_tails(sy_ckpt *c) { return c ? c->tails : 0; }


unsigned long sy_ckpt_count(sy_ckpt *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    unsigned long n = c->done;
    pthread_mutex_unlock(&c->mu);
    return n;
}
