/* The channel behind sy_host_api.emit_event (executor/emit.h). */
#include "executor/emit.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* One lock for the queue and the sink: a request takes it to queue, the
 * loop to take the queue and to answer; nobody holds it while recording. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t answered = PTHREAD_COND_INITIALIZER;
static sy_emit_request *head, *tail;
static void (*sink_wake)(void *arg);
static void *sink_arg;
static pthread_t sink_thread;

void sy_emit_open(void (*wake)(void *arg), void *arg)
{
    pthread_mutex_lock(&lock);
    sink_wake = wake;
    sink_arg = arg;
    sink_thread = pthread_self();
    pthread_mutex_unlock(&lock);
}

sy_emit_request *sy_emit_take(void)
{
    pthread_mutex_lock(&lock);
    sy_emit_request *list = head;
    head = tail = NULL;
    pthread_mutex_unlock(&lock);
    return list;
}

/* Under the lock: the waiters of `list` may return (each request lives
 * on its waiter's stack, so it is not touched after `done`). */
static void settle(sy_emit_request *list, int status)
{
    for (sy_emit_request *q = list, *next; q; q = next) {
        next = q->next;
        if (status != SY_OK) {
            q->status = status;
            snprintf(q->err, sizeof q->err, "the host stopped running workflows");
        }
        q->done = true;
    }
    pthread_cond_broadcast(&answered);
}

void sy_emit_answer(sy_emit_request *list)
{
    if (!list)
        return;
    pthread_mutex_lock(&lock);
    settle(list, SY_OK);
    pthread_mutex_unlock(&lock);
}

void sy_emit_close(void *arg)
{
    pthread_mutex_lock(&lock);
    /* Another engine of this process opened since (tests run several):
     * its sink stays. */
    if (sink_arg != arg) {
        pthread_mutex_unlock(&lock);
        return;
    }
    sink_wake = NULL;
    sink_arg = NULL;
    settle(head, SY_ESTATE);
    head = tail = NULL;
    pthread_mutex_unlock(&lock);
}

static int refuse(int status, char *err, size_t err_len, const char *why)
{
    if (err && err_len)
        snprintf(err, err_len, "%s", why);
    return status;
}

int sy_emit_event(sy_host *h, const char *name, const char *key, const char *data,
                  size_t data_len, int64_t *event_id, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    if (!name)
        return refuse(SY_EINVAL, err, err_len, "emit_event() without an event name");
    sy_emit_request q = {.host = h, .name = name, .key = key, .data = data,
                         .data_len = data ? data_len : 0};
    pthread_mutex_lock(&lock);
    if (!sink_wake) {
        pthread_mutex_unlock(&lock);
        return refuse(SY_ESTATE, err, err_len,
                      "the host runs no workflows now: no event is recorded");
    }
    if (pthread_equal(pthread_self(), sink_thread)) {
        pthread_mutex_unlock(&lock);
        return refuse(SY_ESTATE, err, err_len,
                      "emit_event() from inside a call of the host (submit, cancel, ...): "
                      "call it from a thread of the plugin's own");
    }
    if (tail)
        tail->next = &q;
    else
        head = &q;
    tail = &q;
    /* Under the lock, so that the sink cannot close in between. */
    sink_wake(sink_arg);
    while (!q.done)
        pthread_cond_wait(&answered, &lock);
    pthread_mutex_unlock(&lock);
    if (q.status == SY_OK && event_id)
        *event_id = q.id;
    if (q.status != SY_OK && err && err_len)
        snprintf(err, err_len, "%s", q.err);
    return q.status;
}
