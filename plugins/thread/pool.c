/* A bounded pool of worker threads with a FIFO queue. */
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void link_live(sy_pool *p, sy_pool_item *it)
{
    it->prev = NULL;
    it->next = p->live;
    if (p->live)
        p->live->prev = it;
    p->live = it;
}

static void unlink_live(sy_pool *p, sy_pool_item *it)
{
    if (it->prev)
        it->prev->next = it->next;
    else
        p->live = it->next;
    if (it->next)
        it->next->prev = it->prev;
    it->prev = it->next = NULL;
}

static sy_pool_item *pop_queue(sy_pool *p)
{
    sy_pool_item *it = p->qhead;
    p->qhead = it->qnext;
    if (!p->qhead)
        p->qtail = NULL;
    it->qnext = NULL;
    return it;
}

static void remove_queued(sy_pool *p, sy_pool_item *it)
{
    sy_pool_item **pp = &p->qhead, *prev = NULL;
    while (*pp && *pp != it) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (!*pp)
        return;
    *pp = it->qnext;
    if (p->qtail == it)
        p->qtail = prev;
    it->qnext = NULL;
}

/* The n-th CPU of `set` (n < CPU_COUNT). */
static int nth_cpu(const cpu_set_t *set, int64_t n)
{
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, set) && n-- == 0)
            return cpu;
    return -1;
}

/* Shared by every pinned pool of the process: the next CPU to hand out. */
static _Atomic int64_t next_cpu;

/* Sets `attr` to start a thread bound to the next CPU of p->pin; false
 * when there is none to give (the thread then starts unbound). */
static bool next_binding(sy_pool *p, pthread_attr_t *attr)
{
    int64_t n = CPU_COUNT(p->pin);
    int cpu = n > 0 ? nth_cpu(p->pin, atomic_fetch_add(&next_cpu, 1) % n) : -1;
    if (cpu < 0)
        return false;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_attr_setaffinity_np(attr, sizeof one, &one) == 0;
}

static void *worker_main(void *arg)
{
    sy_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (!p->qhead && p->idle) {
            pthread_mutex_unlock(&p->mu);
            p->idle(p->arg);
            pthread_mutex_lock(&p->mu);
        }
        while (!p->qhead && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->qhead)
            break;
        sy_pool_item *it = pop_queue(p);
        it->running = true;
        p->queued--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        p->run(it, p->arg);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Workers start with every asynchronous signal blocked, so the host's
 * signals (SIGTERM, SIGINT, SIGHUP) go to the host's own threads; all but
 * SIGCHLD.  A command's SIGCHLD is sent to the thread that started it, and
 * one that does not block it, with the action left at its default
 * (ignore), drops it on the spot; blocked, it would stay pending for the
 * process and wake whichever host thread does not block it (the loop
 * thread, once per command).  Set outright, not added to the creator's
 * mask: the creator may block SIGCHLD itself. */
static int start_threads(sy_pool *p, int64_t workers)
{
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGCHLD);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = 0;
    for (int64_t i = 0; i < workers && rc == 0; i++) {
        /* Bound from its first instruction: it never runs elsewhere. */
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        bool bound = p->pin && next_binding(p, &attr);
        rc = pthread_create(&p->threads[i], &attr, worker_main, p);
        /* A binding the kernel refuses (a CPU gone offline) fails the
         * create: that worker starts unbound instead. */
        if (rc == EINVAL && bound) {
            bound = false;
            rc = pthread_create(&p->threads[i], NULL, worker_main, p);
        }
        pthread_attr_destroy(&attr);
        if (rc == 0)
            p->n_threads++;
        if (rc == 0 && bound)
            p->pinned++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int sy_pool_start(sy_pool *p, const char *name, int64_t workers,
                  int64_t queue_depth, const cpu_set_t *pin,
                  sy_pool_run_fn run, sy_pool_interrupt_fn interrupt,
                  sy_pool_idle_fn idle, void *arg, char *err, size_t err_len)
{
    memset(p, 0, sizeof *p);
    p->name = name;
    p->pin = pin;
    p->slots = workers + queue_depth;
    p->run = run;
    p->interrupt = interrupt;
    p->idle = idle;
    p->arg = arg;
    atomic_init(&p->active, 0);
    p->threads = calloc((size_t)workers, sizeof *p->threads);
    if (!p->threads) {
        snprintf(err, err_len, "out of memory for %lld %s workers",
                 (long long)workers, name);
        return SY_ENOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    int rc = start_threads(p, workers);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start %s worker %zu of %lld: %s", name,
                 p->n_threads + 1, (long long)workers, strerror(rc));
        sy_pool_stop(p);
        return SY_EIO;
    }
    return SY_OK;
}

int sy_pool_submit(sy_pool *p, sy_pool_item *it, const void *key)
{
    pthread_mutex_lock(&p->mu);
    int64_t active = atomic_load(&p->active);
    if (p->stop || active >= p->slots) {
        pthread_mutex_unlock(&p->mu);
        return SY_EBUSY;
    }
    atomic_store(&p->active, active + 1);
    it->key = key;
    it->running = false;
    it->qnext = NULL;
    link_live(p, it);
    if (p->qtail)
        p->qtail->qnext = it;
    else
        p->qhead = it;
    p->qtail = it;
    p->queued++;
    p->submitted++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return SY_OK;
}

static sy_pool_item *find_live(sy_pool *p, const void *key)
{
    for (sy_pool_item *it = p->live; it; it = it->next)
        if (it->key == key)
            return it;
    return NULL;
}

/* Unlinks `it` and gives its place back; under mu. */
static void settle(sy_pool *p, sy_pool_item *it, sy_outcome outcome)
{
    unlink_live(p, it);
    if ((unsigned)outcome < 4)
        p->by_outcome[outcome]++;
    atomic_store(&p->active, atomic_load(&p->active) - 1);
}

sy_pool_cancel_result sy_pool_cancel(sy_pool *p, const void *key,
                                     sy_pool_item **out)
{
    sy_pool_cancel_result res = SY_POOL_ABSENT;
    pthread_mutex_lock(&p->mu);
    sy_pool_item *it = find_live(p, key);
    if (it && !it->running) {
        remove_queued(p, it);
        p->queued--;
        settle(p, it, SY_OUTCOME_CANCELLED);
        *out = it;
        res = SY_POOL_DEQUEUED;
    } else if (it) {
        p->interrupt(it, p->arg);
        res = SY_POOL_INTERRUPTED;
    }
    pthread_mutex_unlock(&p->mu);
    return res;
}

bool sy_pool_finish(sy_pool *p, sy_pool_item *it, sy_outcome outcome)
{
    pthread_mutex_lock(&p->mu);
    p->running--;
    settle(p, it, outcome);
    bool more = p->qhead != NULL;
    pthread_mutex_unlock(&p->mu);
    return more;
}

int64_t sy_pool_capacity(sy_pool *p)
{
    int64_t left = p->slots - atomic_load(&p->active);
    return left > 0 ? left : 0;
}

void sy_pool_counts_get(sy_pool *p, sy_pool_counts *out)
{
    pthread_mutex_lock(&p->mu);
    out->workers = (int64_t)p->n_threads;
    out->pinned = p->pinned;
    out->slots = p->slots;
    out->active = atomic_load(&p->active);
    out->queued = p->queued;
    out->running = p->running;
    out->capacity = out->slots > out->active ? out->slots - out->active : 0;
    out->submitted = p->submitted;
    out->succeeded = p->by_outcome[SY_OUTCOME_SUCCEEDED];
    out->failed = p->by_outcome[SY_OUTCOME_FAILED];
    out->timed_out = p->by_outcome[SY_OUTCOME_TIMED_OUT];
    out->cancelled = p->by_outcome[SY_OUTCOME_CANCELLED];
    pthread_mutex_unlock(&p->mu);
}

void sy_pool_stop(sy_pool *p)
{
    if (!p->threads)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    p->threads = NULL;
    p->n_threads = 0;
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}
