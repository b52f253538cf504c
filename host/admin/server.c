/* libmicrohttpd on the engine's loop: its epoll descriptor watched by a
 * uv_poll, its timeout by a uv_timer, MHD_run called from both; the
 * listening socket made here (TCP or Unix) and handed to it. */
#include "admin/internal.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <openssl/crypto.h>

#include "admin/auth.h"
#include "base/log.h"
#include "base/util.h"

static void on_timer(uv_timer_t *t);

/* MHD_run, then the timer set to MHD's next deadline.  MHD_get_timeout
 * says 0 when a connection still has work (the epoll descriptor will not
 * tell again), so that work is never left waiting. */
static void drive(sy_admin *a)
{
    if (a->stopping || !a->d)
        return;
    MHD_run(a->d);
    sy_admin_conn_sweep(a);
    MHD_UNSIGNED_LONG_LONG ms = 0;
    if (MHD_get_timeout(a->d, &ms) != MHD_YES || ms > 1000)
        ms = 1000;
    uv_timer_start(&a->timer, on_timer, (uint64_t)ms, 0);
}

static void on_timer(uv_timer_t *t) { drive(t->data); }

static void on_poll(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    drive(p->data);
}

static void kick(sy_admin *a)
{
    if (!a->stopping)
        uv_timer_start(&a->timer, on_timer, 0, 0);
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    sy_log(SY_LOG_WARN, "admin", "%s", line);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)c;
    (void)why;
    /* A kept-alive connection awaits its next request from now. */
    sy_admin_conn_phase(c, SY_ADMIN_PHASE_HEADERS);
    sy_admin_req *rq = *con_cls;
    if (!rq)
        return;
    /* After the answer: a drain with nothing running ends the loop, and
     * the listener with it. */
    if (rq->drain_after)
        sy_signals_drain(&rq->admin->sv->signals, "POST /api/v1/drain");
    free(rq->body);
    free(rq);
    *con_cls = NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_len, void **con_cls)
{
    (void)version;
    sy_admin *a = cls;
    sy_admin_req *rq = *con_cls;
    if (!rq) {
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        *con_cls = rq;
        rq->admin = a;
        rq->conn = c;
        rq->method = method;
        rq->path = url;
        enum MHD_Result res;
        if (!sy_admin_tls_client_ok(a, c)) {
            sy_admin_conn_phase(c, SY_ADMIN_PHASE_ANSWERED);
            return sy_admin_error(rq, 403, "a client certificate signed by "
                                  "admin.tls_client_ca is required");
        }
        if (sy_admin_screen(rq, &res)) {
            sy_admin_conn_phase(c, SY_ADMIN_PHASE_ANSWERED);
            return res;
        }
        sy_admin_conn_phase(c, SY_ADMIN_PHASE_BODY);
        return MHD_YES;
    }
    if (*upload_len) {
        if (rq->len + *upload_len > (size_t)a->cfg->max_body) {
            /* Chunked, so not refused by its length: the connection is
             * dropped rather than read to its end. */
            sy_log(SY_LOG_WARN, "admin", "%s %s: body over admin.max_body; connection closed",
                   method, url);
            return MHD_NO;
        }
        char *nb = realloc(rq->body, rq->len + *upload_len + 1);
        if (!nb)
            return MHD_NO;
        memcpy(nb + rq->len, upload, *upload_len);
        rq->body = nb;
        rq->len += *upload_len;
        rq->body[rq->len] = '\0';
        *upload_len = 0;
        return MHD_YES;
    }
    sy_admin_conn_phase(c, SY_ADMIN_PHASE_ANSWERED);
    return sy_admin_answer(rq);
}

/* The listening socket for "HOST:PORT" or "unix:PATH". */
static int open_listener(sy_admin *a, const char *spec, char *err, size_t err_len)
{
    if (strncmp(spec, "unix:", 5) == 0) {
        const char *path = spec + 5;
        struct sockaddr_un sun = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof sun.sun_path)
            return sy_errf(err, err_len, "admin.listen: the socket path is too long"), -1;
        strcpy(sun.sun_path, path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            return sy_errf(err, err_len, "admin.listen: socket: %s", strerror(errno)), -1;
        /* A socket file left by a host that is gone is replaced; one a
         * live host listens on is not. */
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
            int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            bool live = probe >= 0 && connect(probe, (struct sockaddr *)&sun, sizeof sun) == 0;
            if (probe >= 0)
                close(probe);
            if (live) {
                close(fd);
                return sy_errf(err, err_len, "admin.listen %s: another process listens there",
                               spec), -1;
            }
            unlink(path);
        }
        mode_t old = umask(077); /* this user only: reads are open on it */
        int rc = bind(fd, (struct sockaddr *)&sun, sizeof sun);
        umask(old);
        if (rc != 0 || listen(fd, 64) != 0) {
            sy_errf(err, err_len, "admin.listen %s: %s", spec, strerror(errno));
            close(fd);
            return -1;
        }
        a->unix_path = sy_xstrdup(path);
        snprintf(a->where, sizeof a->where, "%s", spec);
        return fd;
    }
    char host[256], port[8];
    int p;
    if (!sy_config_admin_split(spec, host, sizeof host, &p))
        return sy_errf(err, err_len, "admin.listen: \"%s\" is not HOST:PORT", spec), -1;
    snprintf(port, sizeof port, "%d", p);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0)
        return sy_errf(err, err_len, "admin.listen %s: %s", spec, gai_strerror(gai)), -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        sy_errf(err, err_len, "admin.listen %s: %s", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char addr[INET6_ADDRSTRLEN] = "?";
    int bound = p;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
            bound = ntohs(s6->sin6_port);
        } else {
            struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
            bound = ntohs(s4->sin_port);
        }
    }
    snprintf(a->where, sizeof a->where, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", addr,
             bound);
    return fd;
}

static void admin_free(sy_admin *a)
{
    if (a->token)
        OPENSSL_cleanse(a->token, strlen(a->token));
    free(a->token);
    sy_admin_tokens_free(&a->tokens);
    sy_admin_tls_free(a);
    free(a->unix_path);
    free(a);
}

/* After a reload (SIGHUP or POST /api/v1/reload), done or refused: the
 * token files of the configuration in force read again, so that a token
 * taken out of the file stops working at once.  A file that cannot be
 * read keeps the tokens read before, said in one line. */
static void reread_tokens(void *arg, bool reloaded)
{
    (void)reloaded;
    sy_admin *a = arg;
    const sy_admin_config *now = &sy_service_setup(a->sv)->cfg.admin;
    const char *many = now->tokens_file ? now->tokens_file : a->cfg->tokens_file;
    const char *one = now->token_file ? now->token_file : a->cfg->token_file;
    char err[512];
    if (many) {
        sy_admin_tokens t;
        if (sy_admin_tokens_load(many, &t, err, sizeof err) != 0) {
            sy_log(SY_LOG_ERROR, "admin", "tokens not read again: %s; the %zu token%s read "
                   "before stay in force", err, a->tokens.n, a->tokens.n == 1 ? "" : "s");
        } else {
            sy_admin_tokens_free(&a->tokens);
            a->tokens = t;
            sy_log(SY_LOG_INFO, "admin", "tokens read again: %zu from %s", t.n, many);
        }
    }
    if (one) {
        char *token = NULL;
        if (sy_admin_token_load(one, &token, err, sizeof err) != SY_OK) {
            sy_log(SY_LOG_ERROR, "admin", "token not read again: %s; the one read before "
                   "stays in force", err);
        } else {
            if (a->token)
                OPENSSL_cleanse(a->token, strlen(a->token));
            free(a->token);
            a->token = token;
        }
    }
}

static void closed(uv_handle_t *h)
{
    sy_admin *a = h->data;
    if (--a->n_open == 0)
        admin_free(a);
}

int sy_admin_start(sy_admin **out, sy_service *sv, const sy_admin_config *cfg, char *err,
                   size_t err_len)
{
    *out = NULL;
    char why[300];
    if (sy_libmicrohttpd_load(why, sizeof why) != 0) {
        sy_errf(err, err_len, "admin.listen %s: %s", cfg->listen, why);
        return SY_ENOTSUP;
    }
    sy_admin *a = calloc(1, sizeof *a);
    if (!a)
        return sy_errf(err, err_len, "out of memory"), SY_ENOMEM;
    a->sv = sv;
    a->cfg = cfg;
    a->io = &sy_admin_mhd_io;
    a->kick = kick;
    a->reads_open = sy_admin_listen_local(cfg->listen);
    if ((cfg->token_file &&
         sy_admin_token_load(cfg->token_file, &a->token, err, err_len) != SY_OK) ||
        (cfg->tokens_file &&
         sy_admin_tokens_load(cfg->tokens_file, &a->tokens, err, err_len) != 0) ||
        sy_admin_tls_load(a, err, err_len) != 0) {
        admin_free(a);
        return SY_EINVAL;
    }
    if (!a->reads_open && !a->token && a->tokens.n == 0) {
        sy_errf(err, err_len, "admin.listen %s is reachable from other machines: set "
                "admin.token_file or admin.tokens_file (%s:%d), every request then needs a "
                "token", cfg->listen, cfg->file, cfg->line);
        admin_free(a);
        return SY_EINVAL;
    }
    if (!a->reads_open && !a->tls_cert) {
        if (!cfg->insecure) {
            sy_errf(err, err_len, "admin.listen %s is reachable from other machines and speaks "
                    "plain HTTP: tokens would cross the network in clear; set admin.tls_cert "
                    "and admin.tls_key, or admin.insecure = true (%s:%d)", cfg->listen,
                    cfg->file, cfg->line);
            admin_free(a);
            return SY_EINVAL;
        }
        sy_log(SY_LOG_WARN, "admin", "admin.listen %s speaks plain HTTP to other machines "
               "(admin.insecure = true): tokens cross the network in clear", cfg->listen);
    }
    int fd = open_listener(a, cfg->listen, err, err_len);
    if (fd < 0) {
        admin_free(a);
        return SY_EIO;
    }
    /* With TLS the key and certificate come first; MHD_OPTION_ARRAY
     * ends an empty list at once. */
    struct MHD_OptionItem tls[] = {
        {a->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, a->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, a->tls_key},
        {a->tls_trust ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, a->tls_trust},
        {MHD_OPTION_END, 0, NULL},
    };
    a->d = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
            (a->tls_cert ? MHD_USE_TLS : 0),
        0, NULL, NULL, on_request, a, MHD_OPTION_ARRAY, tls, MHD_OPTION_EXTERNAL_LOGGER, log_mhd,
        a, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_connections_per_ip,
        MHD_OPTION_NOTIFY_CONNECTION, sy_admin_conn_notify, a, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(cfg->timeout_ms / 1000), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)cfg->max_header, MHD_OPTION_NOTIFY_COMPLETED, completed, a, MHD_OPTION_END);
    const union MHD_DaemonInfo *info =
        a->d ? MHD_get_daemon_info(a->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (!info) {
        sy_errf(err, err_len, "admin.listen %s: the HTTP server did not start%s", cfg->listen,
                a->tls_cert ? " (is admin.tls_key the key of admin.tls_cert?)" : "");
        if (a->d)
            MHD_stop_daemon(a->d);
        else
            close(fd);
        if (a->unix_path)
            unlink(a->unix_path);
        admin_free(a);
        return SY_EIO;
    }
    uv_timer_init(&sv->loop, &a->timer);
    a->timer.data = a;
    uv_poll_init(&sv->loop, &a->poll, info->epoll_fd);
    a->poll.data = a;
    a->n_open = 2;
    uv_poll_start(&a->poll, UV_READABLE, on_poll);
    kick(a);
    sv->on_reload = reread_tokens;
    sv->on_reload_arg = a;
    if (a->tokens.n)
        sy_log(SY_LOG_INFO, "admin", "listening on %s%s (%zu token%s with roles%s)", a->where,
               a->tls_cert ? " over TLS" : "",
               a->tokens.n, a->tokens.n == 1 ? "" : "s", a->token ? ", and admin.token_file's" : "");
    else
        sy_log(SY_LOG_INFO, "admin", "listening on %s%s (changes %s)", a->where,
               a->tls_cert ? " over TLS" : "",
               a->token ? "need the token" : "disabled: no admin.token_file");
    *out = a;
    return SY_OK;
}

const char *sy_admin_where(const sy_admin *a) { return a->where; }

void sy_admin_stop(sy_admin *a)
{
    if (!a)
        return;
    if (a->sv->on_reload_arg == a) {
        a->sv->on_reload = NULL;
        a->sv->on_reload_arg = NULL;
    }
    /* The handles go first: MHD closes the descriptor they watch. */
    uv_poll_stop(&a->poll);
    uv_timer_stop(&a->timer);
    a->stopping = true;
    /* MHD refuses to stop with suspended connections. */
    sy_admin_streams_end_all(a);
    MHD_stop_daemon(a->d);
    a->d = NULL;
    if (a->unix_path)
        unlink(a->unix_path);
    uv_close((uv_handle_t *)&a->poll, closed);
    uv_close((uv_handle_t *)&a->timer, closed);
}
