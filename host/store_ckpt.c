/* WAL checkpoints on a thread of their own (see store_ckpt.h). */
#include "store_ckpt.h"

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
    unsigned long done;     /* under mu */
};

/* After every commit of the writer, on its thread: wakes the checkpointer
 * once the log is long enough.  Cheap when it is not. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
    (void)db;
    (void)name;
    sy_ckpt *c = arg;
    if (pages < SY_CKPT_PAGES)
        return SQLITE_OK;
    pthread_mutex_lock(&c->mu);
    if (!c->wanted) {
        c->wanted = true;
        pthread_cond_signal(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
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
        c->done++;
        pthread_mutex_unlock(&c->mu);
        /* PASSIVE: copies what no reader still needs and waits for no one;
         * SQLITE_BUSY (another process checkpointing) is fine. */
        sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                  NULL, NULL);
        pthread_mutex_lock(&c->mu);
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

unsigned long sy_ckpt_count(sy_ckpt *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    unsigned long n = c->done;
    pthread_mutex_unlock(&c->mu);
    return n;
}
