/* The proxy's state: the attempts a worker holds, the writer's queue,
 * waiting for answers, stopping. */
#include "executor/isolated_state.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/wire.h"

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

sy_instance *sy_isolated_new(const sy_host_api *api, sy_host *host, const json_t *start)
{
    sy_instance *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->api = api;
    in->host = host;
    in->name = dup_or_empty(json_string_value(json_object_get(start, "instance")));
    in->plugin = dup_or_empty(json_string_value(json_object_get(start, "plugin")));
    in->start = json_deep_copy(start);
    in->fd = -1;
    in->next_id = 1;
    in->backoff_ms = SY_ISOLATED_BACKOFF_MIN_MS;
    pthread_mutex_init(&in->lock, NULL);
    pthread_cond_init(&in->cond, NULL);
    if (!in->name || !in->plugin || !in->start) {
        sy_isolated_free(in);
        return NULL;
    }
    return in;
}

void sy_isolated_free(sy_instance *in)
{
    if (!in)
        return;
    sy_isolated_queue_clear(in);
    free(in->queue);
    for (size_t b = 0; b < SY_ISOLATED_BUCKETS; b++)
        while (in->buckets[b]) {
            sy_isolated_pending *p = in->buckets[b];
            in->buckets[b] = p->next;
            free(p);
        }
    json_decref(in->validated);
    json_decref(in->start);
    free(in->name);
    free(in->plugin);
    pthread_mutex_destroy(&in->lock);
    pthread_cond_destroy(&in->cond);
    free(in);
}

/* --- the writer --------------------------------------------------------- */

/* Lock held.  Steals m. */
static int enqueue(sy_instance *in, json_t *m)
{
    if (in->queued == in->queue_cap) {
        size_t cap = in->queue_cap ? in->queue_cap * 2 : 64;
        json_t **q = realloc(in->queue, cap * sizeof *q);
        if (!q) {
            json_decref(m);
            return -1;
        }
        in->queue = q;
        in->queue_cap = cap;
    }
    in->queue[in->queued++] = m;
    pthread_cond_broadcast(&in->cond);
    return 0;
}

void sy_isolated_queue_clear(sy_instance *in)
{
    for (size_t i = 0; i < in->queued; i++)
        json_decref(in->queue[i]);
    in->queued = 0;
}

/* Sends what is queued, in order, outside the lock: a worker slow to read
 * holds up this thread, never the host's loop. */
static void *writer(void *arg)
{
    sy_instance *in = arg;
    json_t **batch = NULL;
    size_t cap = 0;
    pthread_mutex_lock(&in->lock);
    for (;;) {
        while (in->queued == 0 && !in->writer_stop)
            pthread_cond_wait(&in->cond, &in->lock);
        if (in->queued == 0 && in->writer_stop)
            break;
        if (cap < in->queued) {
            json_t **grown = realloc(batch, in->queued * sizeof *grown);
            if (!grown) {
                sy_isolated_queue_clear(in);
                continue;
            }
            batch = grown;
            cap = in->queued;
        }
        size_t n = in->queued;
        memcpy(batch, in->queue, n * sizeof *batch);
        in->queued = 0;
        int fd = in->fd;
        pthread_mutex_unlock(&in->lock);
        /* A failed send means the worker is gone: the reader sees the end
         * of the stream and fails what it held. */
        for (size_t i = 0; i < n; i++) {
            if (fd >= 0)
                sy_wire_send(fd, batch[i]);
            json_decref(batch[i]);
        }
        pthread_mutex_lock(&in->lock);
    }
    pthread_mutex_unlock(&in->lock);
    free(batch);
    return NULL;
}

int sy_isolated_start_threads(sy_instance *in, void *(*reader)(void *), char *err,
                              size_t err_len)
{
    int rc = pthread_create(&in->writer_thread, NULL, writer, in);
    if (rc != 0)
        return snprintf(err, err_len, "writer thread: %s", strerror(rc)), -1;
    rc = pthread_create(&in->reader_thread, NULL, reader, in);
    if (rc != 0) {
        pthread_mutex_lock(&in->lock);
        in->writer_stop = true;
        pthread_cond_broadcast(&in->cond);
        pthread_mutex_unlock(&in->lock);
        pthread_join(in->writer_thread, NULL);
        return snprintf(err, err_len, "reader thread: %s", strerror(rc)), -1;
    }
    in->threads_started = true;
    return 0;
}

void sy_isolated_stop(sy_instance *in)
{
    pthread_mutex_lock(&in->lock);
    in->stopping = true;
    pid_t pid = in->up ? in->pid : 0;
    json_t *destroy = json_pack("{s:s}", "t", "destroy");
    if (in->up && destroy)
        enqueue(in, destroy);
    else
        json_decref(destroy);
    pthread_cond_broadcast(&in->cond);
    pthread_mutex_unlock(&in->lock);
    if (!in->threads_started) {
        if (in->fd >= 0)
            close(in->fd);
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        return;
    }
    /* The worker answers destroy by exiting, which ends the reader; one
     * that does not within 5 s is killed. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    if (pthread_timedjoin_np(in->reader_thread, NULL, &until) != 0) {
        pthread_mutex_lock(&in->lock);
        pid = in->pid;
        pthread_mutex_unlock(&in->lock);
        if (pid > 0)
            kill(pid, SIGKILL);
        pthread_join(in->reader_thread, NULL);
    }
    pthread_mutex_lock(&in->lock);
    in->writer_stop = true;
    pthread_cond_broadcast(&in->cond);
    pthread_mutex_unlock(&in->lock);
    pthread_join(in->writer_thread, NULL);
    in->threads_started = false;
}

/* --- the attempts the worker holds ---------------------------------------- */

static sy_isolated_pending **bucket(sy_instance *in, uint64_t id)
{
    return &in->buckets[id % SY_ISOLATED_BUCKETS];
}

sy_completion *sy_isolated_take(sy_instance *in, uint64_t id)
{
    sy_completion *c = NULL;
    pthread_mutex_lock(&in->lock);
    for (sy_isolated_pending **p = bucket(in, id); *p; p = &(*p)->next)
        if ((*p)->id == id) {
            sy_isolated_pending *found = *p;
            *p = found->next;
            c = found->c;
            free(found);
            in->n_pending--;
            break;
        }
    pthread_mutex_unlock(&in->lock);
    return c;
}

sy_completion *sy_isolated_peek(sy_instance *in, uint64_t id)
{
    sy_completion *c = NULL;
    pthread_mutex_lock(&in->lock);
    for (sy_isolated_pending *p = *bucket(in, id); p && !c; p = p->next)
        if (p->id == id)
            c = p->c;
    pthread_mutex_unlock(&in->lock);
    return c;
}

int sy_isolated_send(sy_instance *in, json_t *m)
{
    if (!m)
        return SY_ENOMEM;
    pthread_mutex_lock(&in->lock);
    int rc = enqueue(in, m) == 0 ? SY_OK : SY_ENOMEM;
    pthread_mutex_unlock(&in->lock);
    return rc;
}

size_t sy_isolated_fail_all(sy_instance *in, const char *why)
{
    size_t n = 0;
    for (;;) {
        sy_completion *c = NULL;
        pthread_mutex_lock(&in->lock);
        for (size_t b = 0; b < SY_ISOLATED_BUCKETS && !c; b++)
            if (in->buckets[b]) {
                sy_isolated_pending *p = in->buckets[b];
                in->buckets[b] = p->next;
                c = p->c;
                free(p);
                in->n_pending--;
            }
        pthread_mutex_unlock(&in->lock);
        if (!c)
            return n;
        sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_FAILED, .error = why};
        in->api->complete(c, &r);
        n++;
    }
}

int sy_isolated_send_submit(sy_instance *in, sy_completion *c, json_t *m)
{
    sy_isolated_pending *p = malloc(sizeof *p);
    pthread_mutex_lock(&in->lock);
    if (!in->up || in->stopping || !p) {
        pthread_mutex_unlock(&in->lock);
        free(p);
        json_decref(m);
        return p ? SY_EBUSY : SY_ENOMEM;
    }
    p->id = in->next_id++;
    p->c = c;
    json_object_set_new(m, "id", json_integer((json_int_t)p->id));
    sy_isolated_pending **b = bucket(in, p->id);
    p->next = *b;
    *b = p;
    in->n_pending++;
    if (enqueue(in, m) != 0) {
        *b = p->next;
        in->n_pending--;
        free(p);
        pthread_mutex_unlock(&in->lock);
        return SY_ENOMEM;
    }
    pthread_mutex_unlock(&in->lock);
    return SY_OK;
}

int sy_isolated_send_cancel(sy_instance *in, sy_completion *c)
{
    int rc = SY_ENOENT;
    pthread_mutex_lock(&in->lock);
    for (size_t b = 0; b < SY_ISOLATED_BUCKETS && rc == SY_ENOENT; b++)
        for (sy_isolated_pending *p = in->buckets[b]; p; p = p->next)
            if (p->c == c) {
                json_t *m = json_pack("{s:s, s:I}", "t", "cancel", "id", (json_int_t)p->id);
                rc = m && enqueue(in, m) == 0 ? SY_OK : SY_ENOMEM;
                break;
            }
    pthread_mutex_unlock(&in->lock);
    return rc;
}

int sy_isolated_call_validate(sy_instance *in, const json_t *params, const char *base_dir,
                              char *err, size_t err_len)
{
    pthread_mutex_lock(&in->lock);
    if (!in->up) {
        pthread_mutex_unlock(&in->lock);
        return snprintf(err, err_len, "the isolated worker is not running"), SY_ESTATE;
    }
    uint64_t seq = ++in->validate_seq;
    json_t *m = json_pack("{s:s, s:I, s:O, s:s}", "t", "validate", "seq", (json_int_t)seq,
                          "params", params ? (json_t *)params : json_null(), "base_dir",
                          base_dir ? base_dir : ".");
    if (!m || enqueue(in, m) != 0) {
        pthread_mutex_unlock(&in->lock);
        return snprintf(err, err_len, "out of memory"), SY_ENOMEM;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    int rc = SY_OK;
    for (;;) {
        json_t *v = in->validated;
        if (v && (uint64_t)json_integer_value(json_object_get(v, "seq")) == seq) {
            rc = (int)json_integer_value(json_object_get(v, "rc"));
            const char *e = json_string_value(json_object_get(v, "error"));
            if (rc != SY_OK)
                snprintf(err, err_len, "%s", e && *e ? e : "refused without a reason");
            break;
        }
        if (pthread_cond_timedwait(&in->cond, &in->lock, &until) == ETIMEDOUT) {
            rc = SY_EIO;
            snprintf(err, err_len, "the isolated worker did not answer validate() in 10 s");
            break;
        }
    }
    pthread_mutex_unlock(&in->lock);
    return rc;
}
