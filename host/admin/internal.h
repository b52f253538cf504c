/*
 * admin/internal.h -- what the admin API's files share: the server, a
 * request, streams.  Loop thread only.
 */
#ifndef SY_ADMIN_INTERNAL_H
#define SY_ADMIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include "admin/libmicrohttpd.h"
#include <uv.h>

#include "admin/admin.h"
#include "admin/router.h"

typedef struct sy_admin_stream sy_admin_stream;
typedef struct sy_admin_req sy_admin_req;
typedef struct sy_admin_conn sy_admin_conn;
struct sy_admin_events;

/* How requests are read and answered: libmicrohttpd's connections
 * (admin/mhd.c), or a caller's own that records the replies (the fuzz
 * target, tests/fuzz/admin.c).  The handlers see only this. */
typedef struct sy_admin_io {
    /* A query argument (header false) or a request header (its name in
     * any case), or NULL. */
    const char *(*lookup)(sy_admin_req *rq, bool header, const char *key);
    /* Queues the reply: `len` bytes of `body` (copied) with the headers
     * (name, value, ..., NULL). */
    enum MHD_Result (*reply)(sy_admin_req *rq, unsigned status, const char *body, size_t len,
                             const char *const *headers);
    /* Answers 200 with stream s as a chunked body of `content_type`, and
     * calls sy_admin_stream_free once the connection is gone; false when
     * it could not (s is the caller's to free, and it answers 500). */
    bool (*stream)(sy_admin_req *rq, sy_admin_stream *s, const char *content_type,
                   enum MHD_Result *res);
    /* Bytes were queued on a stream, or it ended. */
    void (*wake)(sy_admin_stream *s);
    /* Writes the client's address ("192.0.2.7", "2001:db8::1", "unix")
     * into buf, for the audit trail.  May be NULL: "-". */
    void (*peer)(sy_admin_req *rq, char *buf, size_t len);
} sy_admin_io;

struct sy_admin {
    sy_service *sv;
    const sy_admin_config *cfg;
    const sy_admin_io *io;
    struct MHD_Daemon *d;
    uv_poll_t poll;                 /* MHD's epoll descriptor */
    uv_timer_t timer;               /* MHD_get_timeout, and kicks */
    int n_open;                     /* handles not closed yet */
    char *token;                    /* owned: admin.token_file's (role
                                       admin); NULL: none */
    sy_admin_tokens tokens;         /* admin.tokens_file's digests */
    char *tls_cert, *tls_key;       /* owned PEM texts (admin/tls.c); NULL:
                                       plain HTTP.  libmicrohttpd reads them
                                       while it runs */
    char *tls_trust;                /* owned: admin.tls_client_ca's PEM;
                                       NULL: no client certificates */
    bool reads_open;                /* loopback or Unix socket */
    char *unix_path;                /* owned: to unlink at stop */
    char where[300];
    bool stopping;
    sy_admin_stream *streams;       /* admin/stream.c */
    struct sy_admin_events *events; /* admin/api_events.c */
    void (*kick)(sy_admin *a);      /* have MHD run soon (server.c) */
    sy_admin_conn *conns;           /* open connections (admin/deadline.c) */
    int64_t swept_ms;               /* when they were last looked over */
};

/* --- TLS (admin/tls.c) -------------------------------------------------- */

/* Reads admin.tls_cert and admin.tls_key (the key: this user's, mode 0600
 * or 0400) into a->tls_cert, a->tls_key; nothing without tls_cert.  0, or
 * -1 with one line naming the file. */
int sy_admin_tls_load(sy_admin *a, char *err, size_t err_len);
void sy_admin_tls_free(sy_admin *a);

/* Whether the client on `c` showed a certificate admin.tls_client_ca
 * signed (true when no client CA is set). */
bool sy_admin_tls_client_ok(const sy_admin *a, struct MHD_Connection *c);

/* --- deadlines on a request (admin/deadline.c) -------------------------- */

/* Where a connection's current request is: its deadline runs from the
 * phase's start. */
typedef enum sy_admin_phase {
    SY_ADMIN_PHASE_HEADERS,  /* awaiting the request line and headers (since
                                the connection opened, or its previous
                                answer): admin.header_timeout */
    SY_ADMIN_PHASE_BODY,     /* headers read, awaiting the body:
                                admin.body_timeout */
    SY_ADMIN_PHASE_ANSWERED, /* answered (a stream may last): no deadline */
} sy_admin_phase;

/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the sy_admin): keeps the
 * list of open connections. */
void sy_admin_conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code);

/* The request on `c` moved to `phase`. */
void sy_admin_conn_phase(struct MHD_Connection *c, sy_admin_phase phase);

/* Shuts down the connections past their phase's deadline (at most every
 * 250 ms; MHD then closes them), with one log line per kind; a kept-alive
 * connection idle past admin.header_timeout after an answer is closed
 * without one. */
void sy_admin_conn_sweep(sy_admin *a);

/* One request, from its first callback to its completion. */
struct sy_admin_req {
    sy_admin *admin;
    struct MHD_Connection *conn;
    const char *method, *path;
    const sy_admin_route *route;
    char caps[SY_ADMIN_MAX_CAPS][SY_ADMIN_CAP_LEN]; /* the path's {} parts */
    char *body;                     /* owned, NUL-terminated */
    size_t len;
    bool overflow;
    char who[SY_ADMIN_TOKEN_NAME_MAX]; /* the token's name once matched
                                       (its role may still be too low);
                                       "" without one */
    sy_admin_role role;             /* that token's role; SY_ROLE_UNSET */
    /* With SY_ADMIN_IDENTIFY: whether a token was sent the host does not
     * know, and the actions above a read the request's role may do, each
     * once (sy_admin_route_action's words). */
    bool token_unknown;
    const char *may[16];
    size_t n_may;
    unsigned status;                /* the status answered; 0 before */
    char target[300];               /* what a change touched, for the
                                       audit trail ("" : from the path) */
    char note[512];                 /* the error answered, or what a change
                                       made ("run 17"), for the audit
                                       trail */
    bool drain_after;               /* POST /api/v1/drain: the host drains
                                       once the answer is out */
    void *io_data;                  /* the io's own, per request */
};

/* --- a request's way through (admin/request.c) ------------------------- */

/* Before the body: the route (404, 405 with Allow), who may go on (401,
 * 403) and the announced length (413).  true when that answered it (res:
 * how the reply went); false: read the body, then sy_admin_answer. */
bool sy_admin_screen(sy_admin_req *rq, enum MHD_Result *res);

/* With the whole body (rq->body, rq->len): 400 for a body the route takes
 * none of, else the route's handler. */
enum MHD_Result sy_admin_answer(sy_admin_req *rq);

/* --- the audit trail (admin/audit.c) ------------------------------------ */

/* Records the change request rq was (a route with SY_ADMIN_CHANGE),
 * answered or refused: who, role, action, target, the client's address,
 * the status and the error or what it made. */
void sy_admin_audit(sy_admin_req *rq);

/* --- replies (admin/reply.c) ------------------------------------------- */

/* Sends `len` bytes of `text` (copied) as `content_type` with `status`:
 * for a reply that is not JSON (e.g. GET /metrics, "text/plain;
 * version=0.0.4"). */
enum MHD_Result sy_admin_text(sy_admin_req *rq, unsigned status, const char *content_type,
                              const char *text, size_t len);

/* Sends `body` (stolen) with `status`; MHD_YES or MHD_NO. */
enum MHD_Result sy_admin_json(sy_admin_req *rq, unsigned status, json_t *body);

/* Sends {"error": MSG} with `status`. */
enum MHD_Result sy_admin_error(sy_admin_req *rq, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Query parameter `key`, or NULL. */
const char *sy_admin_query(sy_admin_req *rq, const char *key);

/* Request header `name`, or NULL. */
const char *sy_admin_header(sy_admin_req *rq, const char *name);

/* Query parameter `key` as an integer in [lo, hi] (absent: *out = def).
 * false after replying 400 naming the parameter. */
bool sy_admin_query_int(sy_admin_req *rq, const char *key, long long lo, long long hi,
                        long long def, long long *out, enum MHD_Result *res);

/* Query parameter `key` as a boolean ("true", "1", "false", "0"). */
bool sy_admin_query_bool(sy_admin_req *rq, const char *key, bool *out, enum MHD_Result *res);

/* The request body as a JSON object (an empty body: {}), or NULL after
 * replying 400 with the line and column. */
json_t *sy_admin_body(sy_admin_req *rq, enum MHD_Result *res);

/* Capture i of the path as a run id; false after replying 400. */
bool sy_admin_cap_id(sy_admin_req *rq, size_t i, int64_t *id, enum MHD_Result *res);

/* --- streams (admin/stream.c) ------------------------------------------ */

struct sy_admin_stream {
    sy_admin *admin;
    struct MHD_Connection *conn;
    char *buf;                      /* pending bytes: buf[off..len) */
    size_t off, len, cap;
    bool suspended, ended;          /* suspended: the io's */
    void (*on_free)(sy_admin_stream *s); /* the owner's cleanup; may be NULL */
    void *owner;
    sy_admin_stream *prev, *next;
};

/* Answers the request with a chunked stream of `content_type`; NULL after
 * replying 500.  The stream lives until the connection ends. */
sy_admin_stream *sy_admin_stream_open(sy_admin_req *rq, const char *content_type,
                                      enum MHD_Result *res);

/* Queues bytes; false (and the stream ended) when the client is more than
 * SY_ADMIN_STREAM_MAX behind. */
bool sy_admin_stream_write(sy_admin_stream *s, const char *data, size_t len);

/* Bytes queued and not yet sent. */
size_t sy_admin_stream_pending(const sy_admin_stream *s);

/* No more data: the response ends once what is queued is sent. */
void sy_admin_stream_end(sy_admin_stream *s);

/* Ends every stream (the server is stopping). */
void sy_admin_streams_end_all(sy_admin *a);

/* Moves up to `max` queued bytes to `out` for the io to send; how many. */
size_t sy_admin_stream_take(sy_admin_stream *s, char *out, size_t max);

/* The connection is gone: the owner's cleanup, then the stream freed.
 * The io calls it once, whether the stream ended or not. */
void sy_admin_stream_free(sy_admin_stream *s);

/* --- libmicrohttpd (admin/mhd.c) --------------------------------------- */

extern const sy_admin_io sy_admin_mhd_io;

#define SY_ADMIN_STREAM_MAX (4u << 20)

#endif
