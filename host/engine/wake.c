/* Loop wake-ups from any thread: an eventfd behind a flag (see wake.h). */
#include "engine/wake.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

static void on_readable(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    sy_wake *w = p->data;
    char buf[64];
    /* Drain first, then disarm: a send after the disarm writes again, so
     * a send is never left without a wake-up. */
    while (read(w->rd, buf, sizeof buf) < 0 && errno == EINTR)
        ;
    atomic_store(&w->armed, 0);
    w->cb(w);
}

static int open_fds(sy_wake *w)
{
#ifdef __linux__
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd >= 0) {
        w->rd = w->wr = fd;
        return 0;
    }
#endif
    int p[2];
    if (pipe(p) != 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(p[i], F_SETFD, FD_CLOEXEC);
        fcntl(p[i], F_SETFL, O_NONBLOCK);
    }
    w->rd = p[0];
    w->wr = p[1];
    return 0;
}

static void close_fds(sy_wake *w)
{
    if (w->wr != w->rd)
        close(w->wr);
    close(w->rd);
    w->rd = w->wr = -1;
}

int sy_wake_init(uv_loop_t *loop, sy_wake *w, sy_wake_cb cb)
{
    w->cb = cb;
    atomic_init(&w->armed, 0);
    int rc = open_fds(w);
    if (rc)
        return rc;
    rc = uv_poll_init(loop, &w->poll, w->rd);
    if (rc) {
        close_fds(w);
        return rc;
    }
    w->poll.data = w;
    rc = uv_poll_start(&w->poll, UV_READABLE, on_readable);
    if (rc)
        sy_wake_close(w); /* the descriptors go with the handle */
    return rc;
}

void sy_wake_send(sy_wake *w)
{
    /* Sequentially consistent, load included: a sender that finds the flag
     * set relies on the loop disarming after this load, and so seeing what
     * the sender stored before it. */
    if (atomic_load(&w->armed) || atomic_exchange(&w->armed, 1))
        return;
    uint64_t one = 1;
    int saved = errno;
    /* EAGAIN: the counter (or pipe) is already full, so the loop will wake. */
    while (write(w->wr, &one, w->wr == w->rd ? sizeof one : 1) < 0 &&
           errno == EINTR)
        ;
    errno = saved;
}

static void on_closed(uv_handle_t *h)
{
    close_fds(((uv_poll_t *)h)->data);
}

void sy_wake_close(sy_wake *w)
{
    uv_close((uv_handle_t *)&w->poll, on_closed);
}
