/* Deadlines on a connection's request: a client that sends its request a
 * byte at a time cannot hold a connection slot past admin.header_timeout
 * (request line and headers) or admin.body_timeout (the body), however
 * often it sends; libmicrohttpd's own timeout only ends idle ones. */
#include "admin/internal.h"

#include <stdlib.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "base/log.h"

/* Connections are looked over at most this often. */
#define SWEEP_EVERY_MS 250

struct sy_admin_conn {
    sy_admin_conn *prev, *next;
    struct MHD_Connection *c;
    int64_t since_ms;           /* when this phase began */
    sy_admin_phase phase;
    bool answered;              /* a request was answered on it: awaiting
                                   headers again is a kept-alive idle
                                   connection, closed without a word */
    bool closing;               /* shut down; MHD closes it next */
};

void sy_admin_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    sy_admin *a = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        sy_admin_conn *k = calloc(1, sizeof *k);
        *socket_context = k;
        if (!k)
            return; /* no deadline for this one; the idle timeout still holds */
        k->c = c;
        k->since_ms = sy_clock_now_ms();
        k->phase = SY_ADMIN_PHASE_HEADERS;
        k->next = a->conns;
        if (a->conns)
            a->conns->prev = k;
        a->conns = k;
        return;
    }
    sy_admin_conn *k = *socket_context;
    if (!k)
        return;
    if (k->prev)
        k->prev->next = k->next;
    else
        a->conns = k->next;
    if (k->next)
        k->next->prev = k->prev;
    free(k);
    *socket_context = NULL;
}

void sy_admin_conn_phase(struct MHD_Connection *c, sy_admin_phase phase)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    sy_admin_conn *k = info ? info->socket_context : NULL;
    if (!k || k->phase == phase)
        return;
    if (phase == SY_ADMIN_PHASE_ANSWERED)
        k->answered = true;
    k->phase = phase;
    k->since_ms = sy_clock_now_ms();
}

void sy_admin_conn_sweep(sy_admin *a)
{
    int64_t now = sy_clock_now_ms();
    if (now - a->swept_ms < SWEEP_EVERY_MS)
        return;
    a->swept_ms = now;
    size_t late[2] = {0, 0};
    for (sy_admin_conn *k = a->conns; k; k = k->next) {
        if (k->closing || k->phase == SY_ADMIN_PHASE_ANSWERED)
            continue;
        int64_t limit = k->phase == SY_ADMIN_PHASE_HEADERS ? a->cfg->header_timeout_ms
                                                          : a->cfg->body_timeout_ms;
        if (now - k->since_ms < limit)
            continue;
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(k->c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!info)
            continue;
        /* MHD sees the end of the stream and closes the connection. */
        shutdown(info->connect_fd, SHUT_RDWR);
        k->closing = true;
        if (!(k->answered && k->phase == SY_ADMIN_PHASE_HEADERS))
            late[k->phase == SY_ADMIN_PHASE_BODY]++;
    }
    if (late[0])
        sy_log(SY_LOG_WARN, "admin", "closed %zu connection%s that had not sent their request "
               "headers within admin.header_timeout (%lld ms)", late[0], late[0] == 1 ? "" : "s",
               (long long)a->cfg->header_timeout_ms);
    if (late[1])
        sy_log(SY_LOG_WARN, "admin", "closed %zu connection%s that had not sent their request "
               "body within admin.body_timeout (%lld ms)", late[1], late[1] == 1 ? "" : "s",
               (long long)a->cfg->body_timeout_ms);
    if (late[0] || late[1])
        a->kick(a);
}
