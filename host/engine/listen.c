/* Wake-ups from other hosts: the store's listening socket in the loop. */
#include "engine/listen.h"

#include <stdlib.h>

#include "base/log.h"

struct sy_listen {
    uv_poll_t poll;
    sy_store *store;
    void (*on_wake)(void *arg);
    void *arg;
    bool lost;
};

static void on_readable(uv_poll_t *p, int status, int events)
{
    (void)events;
    sy_listen *l = p->data;
    size_t n = 0;
    /* Read even when the poll failed: libuv reports a socket's error
     * condition (a reset connection) as EBADF, and the store's reading
     * names what actually happened. */
    int rc = sy_store_wakeups(l->store, &n);
    if (rc != SY_OK || status < 0) {
        if (rc != SY_OK)
            sy_log(SY_LOG_WARN, "store", "%s; this host looks for new runs by polling "
                   "until it listens again", sy_store_errmsg(l->store));
        else
            sy_log(SY_LOG_WARN, "store", "the listening connection's socket failed (%s); "
                   "this host looks for new runs by polling until it listens again",
                   uv_strerror(status));
        l->lost = true;
        uv_poll_stop(p);
        return;
    }
    if (n > 0)
        l->on_wake(l->arg);
}

sy_listen *sy_listen_open(uv_loop_t *loop, sy_store *s, void (*on_wake)(void *arg),
                          void *arg, const char **why)
{
    *why = NULL;
    int fd = -1;
    if (sy_store_listen(s, &fd) != SY_OK) {
        *why = sy_store_errmsg(s);
        return NULL;
    }
    if (fd < 0)
        return NULL;
    sy_listen *l = calloc(1, sizeof *l);
    if (!l) {
        *why = "out of memory";
        return NULL;
    }
    *l = (sy_listen){.store = s, .on_wake = on_wake, .arg = arg};
    int rc = uv_poll_init(loop, &l->poll, fd);
    if (rc == 0) {
        l->poll.data = l;
        rc = uv_poll_start(&l->poll, UV_READABLE, on_readable);
        if (rc == 0)
            return l;
        sy_listen_close(l);
    } else {
        free(l);
    }
    *why = uv_strerror(rc);
    return NULL;
}

bool sy_listen_lost(const sy_listen *l) { return l->lost; }

static void on_closed(uv_handle_t *h) { free(h->data); }

void sy_listen_close(sy_listen *l)
{
    if (!l)
        return;
    uv_poll_stop(&l->poll);
    uv_close((uv_handle_t *)&l->poll, on_closed);
}
