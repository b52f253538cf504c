/* Chunked responses fed from the loop: bytes queued here, taken by the io
 * (admin/mhd.c suspends a connection with nothing to send, and resumes it
 * when data is queued). */
#include "admin/internal.h"

#include <stdlib.h>
#include <string.h>

size_t sy_admin_stream_take(sy_admin_stream *s, char *out, size_t max)
{
    size_t n = s->len - s->off < max ? s->len - s->off : max;
    if (!n)
        return 0;
    memcpy(out, s->buf + s->off, n);
    s->off += n;
    if (s->off == s->len)
        s->off = s->len = 0;
    return n;
}

void sy_admin_stream_free(sy_admin_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        s->admin->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (s->on_free)
        s->on_free(s);
    free(s->buf);
    free(s);
}

sy_admin_stream *sy_admin_stream_open(sy_admin_req *rq, const char *content_type,
                                      enum MHD_Result *res)
{
    sy_admin_stream *s = calloc(1, sizeof *s);
    if (!s) {
        *res = sy_admin_error(rq, 500, "out of memory");
        return NULL;
    }
    s->admin = rq->admin;
    s->conn = rq->conn;
    s->next = rq->admin->streams;
    if (s->next)
        s->next->prev = s;
    rq->admin->streams = s;
    if (!rq->admin->io->stream(rq, s, content_type, res)) {
        sy_admin_stream_free(s);
        *res = sy_admin_error(rq, 500, "the stream could not be started");
        return NULL;
    }
    return s;
}

static void wake(sy_admin_stream *s) { s->admin->io->wake(s); }

bool sy_admin_stream_write(sy_admin_stream *s, const char *data, size_t len)
{
    if (s->ended)
        return false;
    if (s->len - s->off + len > SY_ADMIN_STREAM_MAX) {
        /* A client this far behind would hold memory without bound. */
        s->off = s->len = 0;
        sy_admin_stream_end(s);
        return false;
    }
    if (s->len + len > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + len)
            cap *= 2;
        char *nb = realloc(s->buf, cap);
        if (!nb) {
            sy_admin_stream_end(s);
            return false;
        }
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    wake(s);
    return true;
}

size_t sy_admin_stream_pending(const sy_admin_stream *s) { return s->len - s->off; }

void sy_admin_stream_end(sy_admin_stream *s)
{
    s->ended = true;
    wake(s);
}

void sy_admin_streams_end_all(sy_admin *a)
{
    for (sy_admin_stream *s = a->streams; s; s = s->next)
        sy_admin_stream_end(s);
}
