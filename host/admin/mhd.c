/* The io (admin/internal.h) over libmicrohttpd's connections: query
 * arguments and headers looked up in MHD, replies queued as MHD
 * responses, streams as chunked responses whose connection is suspended
 * while there is nothing to send. */
#include "admin/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

static const char *lookup(sy_admin_req *rq, bool header, const char *key)
{
    return MHD_lookup_connection_value(rq->conn,
                                       header ? MHD_HEADER_KIND : MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result reply(sy_admin_req *rq, unsigned status, const char *body, size_t len,
                             const char *const *headers)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
        MHD_add_response_header(r, headers[i], headers[i + 1]);
    enum MHD_Result res = MHD_queue_response(rq->conn, status, r);
    MHD_destroy_response(r);
    return res;
}

static ssize_t read_stream(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    sy_admin_stream *s = cls;
    size_t n = sy_admin_stream_take(s, out, max);
    if (n)
        return (ssize_t)n;
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
    /* No connection: the response was never queued, and the stream is
     * sy_admin_stream_open's to free. */
    if (s->conn)
        sy_admin_stream_free(s);
}

static bool stream(sy_admin_req *rq, sy_admin_stream *s, const char *content_type,
                   enum MHD_Result *res)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
                                                               read_stream, s, free_stream);
    if (!r)
        return false;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, "X-Accel-Buffering", "no");
    *res = MHD_queue_response(rq->conn, MHD_HTTP_OK, r);
    if (*res != MHD_YES)
        s->conn = NULL;
    MHD_destroy_response(r);
    return *res == MHD_YES;
}

static void wake(sy_admin_stream *s)
{
    if (!s->suspended)
        return;
    s->suspended = false;
    MHD_resume_connection(s->conn);
    s->admin->kick(s->admin);
}

static void peer(sy_admin_req *rq, char *buf, size_t len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (!sa)
        snprintf(buf, len, "-");
    else if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)len);
    else
        snprintf(buf, len, "unix");
}

const sy_admin_io sy_admin_mhd_io = {lookup, reply, stream, wake, peer};
