/*
 * http_loop.c -- libcurl's multi interface on a libuv loop of its own
 * thread (switchyard/http.h): curl's socket and timer callbacks, the
 * queues from host threads, start and stop.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/http.h>
#include <switchyard/sdk.h>

/* The watcher of one socket, kept by descriptor number. */
typedef struct watcher {
    uv_poll_t poll;
    curl_socket_t fd;
    sy_http_loop *loop;
} watcher;

struct sy_http_loop {
    sy_http_loop_ops ops;
    void *arg;             /* the plugin's, first to every callback */
    uv_loop_t uv;
    uv_async_t async;      /* wakes the loop for the queues */
    uv_timer_t curl_timer; /* curl's timeout (TIMERFUNCTION) */
    CURLM *multi;
    watcher **watchers;    /* by descriptor number; loop thread */
    size_t n_watchers;
    pthread_t thread;
    bool thread_started;

    pthread_mutex_t mu;    /* guards the queues and stopping */
    sy_http_link *q_head, *q_tail;
    sy_http_link *cancel_head, *cancel_tail;
    bool stopping;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* curl_global_init is not safe to race; the host may create two
 * instances from two threads. */
static void init_curl(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- curl's callbacks ----------------------------------------------------- */

static void check_done(sy_http_loop *l)
{
    if (l->ops.progress)
        l->ops.progress(l->arg);
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(l->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        /* m is curl's until the next call into the multi: read it first */
        CURL *e = m->easy_handle;
        CURLcode code = m->data.result;
        curl_multi_remove_handle(l->multi, e);
        l->ops.done(l->arg, e, code);
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    watcher *w = h->data;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    else {
        if (events & UV_READABLE)
            flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE)
            flags |= CURL_CSELECT_OUT;
    }
    int running;
    curl_multi_socket_action(w->loop->multi, w->fd, flags, &running);
    check_done(w->loop);
}

/* The watcher of socket `s`, kept by descriptor number: curl stops
 * watching a kept-alive connection between two requests, and a watcher
 * kept stopped saves the setup libuv does for a new one (three system
 * calls) on every request.  A number reused for a new socket gets the same
 * watcher, which holds nothing but the number. */
static watcher *watcher_for(sy_http_loop *l, curl_socket_t s)
{
    if (s < 0)
        return NULL;
    if ((size_t)s >= l->n_watchers) {
        size_t n = l->n_watchers ? l->n_watchers : 256;
        while (n <= (size_t)s)
            n *= 2;
        watcher **t = realloc(l->watchers, n * sizeof *t);
        if (!t)
            return NULL;
        memset(t + l->n_watchers, 0, (n - l->n_watchers) * sizeof *t);
        l->watchers = t;
        l->n_watchers = n;
    }
    watcher *w = l->watchers[s];
    if (w)
        return w;
    w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fd = s;
    w->loop = l;
    if (uv_poll_init_socket(&l->uv, &w->poll, s) != 0) {
        free(w);
        return NULL;
    }
    w->poll.data = w;
    l->watchers[s] = w;
    return w;
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp,
                     void *socketp)
{
    (void)e;
    sy_http_loop *l = userp;
    watcher *w = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (w) {
            uv_poll_stop(&w->poll);
            curl_multi_assign(l->multi, s, NULL);
        }
        return 0;
    }
    if (!w) {
        w = watcher_for(l, s);
        if (!w)
            return -1; /* curl fails the transfer */
        curl_multi_assign(l->multi, s, w);
    }
    int ev = 0;
    if (what & CURL_POLL_IN)
        ev |= UV_READABLE;
    if (what & CURL_POLL_OUT)
        ev |= UV_WRITABLE;
    uv_poll_start(&w->poll, ev, on_poll);
    return 0;
}

static void on_curl_timer(uv_timer_t *t)
{
    sy_http_loop *l = t->data;
    int running;
    curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(l);
}

static int on_timer_change(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    sy_http_loop *l = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&l->curl_timer);
    else
        uv_timer_start(&l->curl_timer, on_curl_timer, (uint64_t)timeout_ms,
                       0);
    return 0;
}

/* ---- stop ----------------------------------------------------------------- */

static void on_watcher_closed(uv_handle_t *h)
{
    free(h->data);
}

static void close_rest(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* On the loop thread (or the creating one, when it never ran): after it
 * uv_run() has nothing left and returns. */
static void shut_down(sy_http_loop *l)
{
    if (l->ops.stopping)
        l->ops.stopping(l->arg);
    /* Closes the kept-alive connections, which tells on_socket to stop
     * watching them. */
    curl_multi_cleanup(l->multi);
    l->multi = NULL;
    for (size_t i = 0; i < l->n_watchers; i++)
        if (l->watchers[i])
            uv_close((uv_handle_t *)&l->watchers[i]->poll, on_watcher_closed);
    free(l->watchers);
    l->watchers = NULL;
    l->n_watchers = 0;
    uv_walk(&l->uv, close_rest, NULL);
}

/* ---- the queues from host threads ------------------------------------------ */

static void on_async(uv_async_t *a)
{
    sy_http_loop *l = a->data;
    pthread_mutex_lock(&l->mu);
    sy_http_link *posted = l->q_head, *cancelled = l->cancel_head;
    bool stopping = l->stopping;
    l->q_head = l->q_tail = NULL;
    l->cancel_head = l->cancel_tail = NULL;
    pthread_mutex_unlock(&l->mu);

    /* Each link's next is read before the callback, which owns the link
     * (and may free or post its item again). */
    for (sy_http_link *n; posted; posted = n) {
        n = posted->next;
        l->ops.posted(l->arg, posted);
    }
    for (sy_http_link *n; cancelled; cancelled = n) {
        n = cancelled->next;
        l->ops.cancelled(l->arg, cancelled);
    }
    if (stopping)
        shut_down(l);
}

static void enqueue(sy_http_loop *l, sy_http_link **head, sy_http_link **tail,
                    sy_http_link *link)
{
    link->next = NULL;
    pthread_mutex_lock(&l->mu);
    if (*tail)
        (*tail)->next = link;
    else
        *head = link;
    *tail = link;
    pthread_mutex_unlock(&l->mu);
    uv_async_send(&l->async);
}

void sy_http_loop_post(sy_http_loop *l, sy_http_link *link)
{
    if (l && link)
        enqueue(l, &l->q_head, &l->q_tail, link);
}

void sy_http_loop_post_cancel(sy_http_loop *l, sy_http_link *link)
{
    if (l && link)
        enqueue(l, &l->cancel_head, &l->cancel_tail, link);
}

int sy_http_loop_cancel(sy_http_loop *l, sy_sdk_inflight *in,
                        sy_completion *c)
{
    void *link = NULL;
    if (sy_sdk_inflight_take(in, c, &link) != SY_OK)
        return SY_ENOENT;
    sy_http_loop_post_cancel(l, link);
    return SY_OK;
}

/* ---- start and stop ------------------------------------------------------------ */

int sy_http_loop_new(const sy_http_loop_ops *ops, void *arg,
                     sy_http_loop **out, char *err, size_t err_len)
{
    *out = NULL;
    pthread_once(&curl_once, init_curl);
    if (curl_init_rc != CURLE_OK) {
        sy_sdk_errf(err, err_len, "libcurl: %s",
                    curl_easy_strerror(curl_init_rc));
        return SY_EINTERNAL;
    }
    sy_http_loop *l = calloc(1, sizeof *l);
    if (!l) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    l->ops = *ops;
    l->arg = arg;
    int rc = uv_loop_init(&l->uv);
    if (rc != 0) {
        sy_sdk_errf(err, err_len, "cannot start an event loop: %s",
                    uv_strerror(rc));
        free(l);
        return SY_EINTERNAL;
    }
    pthread_mutex_init(&l->mu, NULL);
    uv_async_init(&l->uv, &l->async, on_async);
    l->async.data = l;
    uv_timer_init(&l->uv, &l->curl_timer);
    l->curl_timer.data = l;
    l->multi = curl_multi_init();
    if (!l->multi) {
        sy_sdk_errf(err, err_len, "out of memory (curl_multi_init)");
        l->ops.stopping = NULL; /* nothing of the plugin's is on it yet */
        sy_http_loop_free(l);
        return SY_ENOMEM;
    }
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, on_timer_change);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
    *out = l;
    return SY_OK;
}

uv_loop_t *sy_http_loop_uv(sy_http_loop *l)
{
    return &l->uv;
}

CURLM *sy_http_loop_multi(sy_http_loop *l)
{
    return l->multi;
}

static void *loop_main(void *arg)
{
    sy_http_loop *l = arg;
    if (l->ops.started)
        l->ops.started(l->arg);
    uv_run(&l->uv, UV_RUN_DEFAULT);
    return NULL;
}

int sy_http_loop_start(sy_http_loop *l, char *err, size_t err_len)
{
    int rc = pthread_create(&l->thread, NULL, loop_main, l);
    l->thread_started = rc == 0;
    if (rc != 0)
        sy_sdk_errf(err, err_len, "cannot start the loop thread: %s",
                    strerror(rc));
    return rc == 0 ? SY_OK : SY_EINTERNAL;
}

void sy_http_loop_free(sy_http_loop *l)
{
    if (!l)
        return;
    if (l->thread_started) {
        pthread_mutex_lock(&l->mu);
        l->stopping = true;
        pthread_mutex_unlock(&l->mu);
        uv_async_send(&l->async);
        pthread_join(l->thread, NULL);
    } else {
        shut_down(l);
        uv_run(&l->uv, UV_RUN_DEFAULT); /* the closes complete */
    }
    uv_loop_close(&l->uv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
