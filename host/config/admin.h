/*
 * config/admin.h -- the `admin` group of switchyard.cfg: where the admin
 * HTTP API listens (host/admin/) and its limits.  No group: no listener.
 *
 *   admin = {
 *     listen = "127.0.0.1:8787";   # "HOST:PORT", "[V6]:PORT", "unix:PATH"
 *     token_file = "admin.token";  # bearer token for changes (mode 0600)
 *     tokens_file = "tokens";      # tokens with roles, as digests (0600)
 *     tls_cert = "admin.crt";      # TLS: the certificate chain (PEM) ...
 *     tls_key = "admin.key";       # ... and its key (PEM, mode 0600)
 *     tls_client_ca = "clients.crt"; # every client shows a certificate
 *                                  # this CA signed
 *     insecure = false;            # true: plain HTTP on a listener other
 *                                  # machines reach (warned at each start)
 *     max_body = "64KiB";          # request body, else 413
 *     max_header = "16KiB";        # request line and headers, else 431
 *     max_connections = 256;       # at once, streams included
 *     max_connections_per_ip = 64; # from one address (a Unix socket: none)
 *     timeout = "30s";             # an idle connection is closed after it
 *     header_timeout = "10s";      # request line and headers within it
 *     body_timeout = "30s";        # the body within it, once headers came
 *     dashboard_dir = "dashboard"; # the web page's files (default: installed)
 *   };
 *
 * Threading: no shared state; any thread.
 */
#ifndef SY_CONFIG_ADMIN_H
#define SY_CONFIG_ADMIN_H

#include <stdbool.h>
#include <stdint.h>

#include <libconfig.h>

#include "base/diagnostics.h"

typedef struct sy_admin_config {
    bool enabled;            /* the group is there */
    char *listen;            /* owned: "HOST:PORT" or "unix:PATH" (PATH
                                resolved against the config's directory) */
    char *token_file;        /* owned, resolved likewise; NULL: none (its
                                one token has the role admin) */
    char *tls_cert;          /* owned, resolved likewise: PEM certificate
                                chain; with tls_key the listener speaks
                                TLS only; NULL: plain HTTP */
    char *tls_key;           /* owned, resolved likewise: its PEM key, a
                                file of this user's, mode 0600 or 0400 */
    char *tls_client_ca;     /* owned, resolved likewise: with TLS, every
                                request needs a client certificate this
                                CA (PEM) signed, else 403; NULL: none */
    bool insecure;           /* plain HTTP allowed on a listener other
                                machines reach; default false: `serve`
                                refuses it without TLS */
    char *tokens_file;       /* owned, resolved likewise: lines "NAME ROLE
                                SHA256-HEX" (admin/tokens.h); NULL: none.
                                Neither file: every change is refused */
    int64_t max_body;        /* bytes (default 1 MiB) */
    int64_t max_header;      /* bytes (default 16 KiB) */
    int64_t max_connections; /* default 256 */
    int64_t max_connections_per_ip; /* default 64: one client, however
                                slow, leaves the rest to the others */
    int64_t timeout_ms;      /* idle; default 30 s; whole seconds */
    int64_t header_timeout_ms; /* the request line and headers must have
                                come this long after the connection opened
                                (or answered its previous request), however
                                often bytes arrive; default 10 s */
    int64_t body_timeout_ms; /* the body, this long after the headers;
                                default 30 s */
    char *dashboard_dir;     /* owned, resolved like token_file; NULL: the
                                installed $(pkgdatadir)/dashboard */
    char *file;              /* owned: where the group is written */
    int line;
} sy_admin_config;

/* Reads the group `s` (paths relative to `dir`) into *a; the number of
 * errors added to d, each naming the field (admin.KEY) at its line. */
int sy_config_admin_read(sy_admin_config *a, const config_setting_t *s, const char *dir,
                         sy_diags *d);

void sy_config_admin_free(sy_admin_config *a);

/* Splits "HOST:PORT" or "[V6]:PORT" into host (without brackets) and
 * port (0 to 65535).  false when it is neither. */
bool sy_config_admin_split(const char *listen, char *host, size_t host_len, int *port);

#endif
