/* Chunked responses fed from the loop: a connection with nothing to send
 * is suspended, never polled, and resumed when data is queued. */
#include "admin/internal.h"

#include <stdlib.h>
#include <string.h>

static ssize_t read_stream(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    sy_admin_stream *s = cls;
    if (s->off < s->len) {
        size_t n = s->len - s->off < max ? s->len - s->off : max;
        memcpy(out, s->buf + s->off, n);
        s->off += n;
        if (s->off == s->len)
            s->off = s->len = 0;
        return (ssize_t)n;
    }
    if (s->ended)
        return MHD_CONTENT_READER_END_OF_STREAM;
    /* Returning 0 without suspending would make MHD ask again at once. */
    MHD_suspend_connection(s->conn);
    s->suspended = true;
    return 0;
}

static void free_stream(void *cls)
{
    sy_admin_stream *s = cls;
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
    struct MHD_Response *r =
        s ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, read_stream, s,
                                              free_stream)
          : NULL;
    if (!r) {
        free(s);
        *res = sy_admin_error(rq, 500, "out of memory");
        return NULL;
    }
    s->admin = rq->admin;
    s->conn = rq->conn;
    s->next = rq->admin->streams;
    if (s->next)
        s->next->prev = s;
    rq->admin->streams = s;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    *res = MHD_queue_response(rq->conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return s;
}

static void wake(sy_admin_stream *s)
{
    if (!s->suspended)
        return;
    s->suspended = false;
    MHD_resume_connection(s->conn);
    s->admin->kick(s->admin);
}

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
