/* The `admin` group: the admin API's listener and limits. */
#include "config/admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard/sdk.h>

#include "base/util.h"
#include "config/size.h"

#define SRC_FILE(s) config_setting_source_file(s)
#define SRC_LINE(s) ((int)config_setting_source_line(s))

static const char *const admin_keys =
    "listen, token_file, tokens_file, tls_cert, tls_key, tls_client_ca, insecure, max_body, max_header, max_connections, max_connections_per_ip, "
    "timeout, header_timeout, body_timeout, dashboard_dir";

bool sy_config_admin_split(const char *listen, char *host, size_t host_len, int *port)
{
    const char *colon;
    const char *h = listen;
    size_t hlen;
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':')
            return false;
        h = listen + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(listen, ':');
        if (!colon || memchr(listen, ':', (size_t)(colon - listen)))
            return false;
        hlen = (size_t)(colon - listen);
    }
    if (hlen == 0 || hlen >= host_len)
        return false;
    const char *p = colon + 1;
    if (!*p || strlen(p) > 5)
        return false;
    long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    if (v > 65535)
        return false;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)v;
    return true;
}

static int bad(const config_setting_t *s, sy_diags *d, const char *what)
{
    sy_error(d, SRC_FILE(s), SRC_LINE(s), "'admin.%s' must be %s", config_setting_name(s),
             what);
    return 1;
}

static int read_string(const config_setting_t *s, const char **out, sy_diags *d,
                       const char *what)
{
    const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s)
                                                                 : NULL;
    if (!v || !*v)
        return bad(s, d, what);
    *out = v;
    return 0;
}

/* Bytes: an integer, or "N", "NKiB", "NMiB". */
static int read_bytes(const config_setting_t *s, int64_t lo, int64_t hi, int64_t *out,
                      sy_diags *d)
{
    long long v = sy_cfg_size(s, hi);
    if (v < lo) {
        char what[160];
        snprintf(what, sizeof what, "a size from %lld to %lld bytes (an integer, or a string "
                 "such as \"64KiB\")", (long long)lo, (long long)hi);
        return bad(s, d, what);
    }
    *out = v;
    return 0;
}

/* A duration from 1 s to 1 h: milliseconds, or a string such as "30s". */
static int read_duration(const config_setting_t *s, int64_t *out, sy_diags *d)
{
    char why[200] = "";
    int64_t ms = -1;
    int t = config_setting_type(s);
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        ms = config_setting_get_int64(s);
    else if (t == CONFIG_TYPE_STRING &&
             sy_sdk_duration_parse(config_setting_get_string(s), &ms, why, sizeof why))
        ms = -1;
    if (ms < 1000 || ms > 3600 * 1000)
        return bad(s, d, "a duration from \"1s\" to \"1h\" (e.g. \"30s\")");
    *out = ms;
    return 0;
}

/* A count from 1 to 10000. */
static int read_count(const config_setting_t *s, int64_t *out, sy_diags *d)
{
    int t = config_setting_type(s);
    long long v = t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 ? config_setting_get_int64(s) : 0;
    if (v < 1 || v > 10000)
        return bad(s, d, "an integer from 1 to 10000");
    *out = v;
    return 0;
}

static int read_listen(sy_admin_config *a, const config_setting_t *s, const char *dir,
                       sy_diags *d)
{
    const char *v;
    const char *what = "\"HOST:PORT\" (e.g. \"127.0.0.1:8787\", \"[::1]:8787\") or "
                       "\"unix:PATH\"";
    if (read_string(s, &v, d, what))
        return 1;
    if (strncmp(v, "unix:", 5) == 0) {
        if (!v[5] || strlen(v + 5) > 100) /* sun_path holds 108 */
            return bad(s, d, "\"unix:PATH\" with a path of 1 to 100 bytes");
        char *path = sy_path_join(dir ? dir : ".", v + 5);
        free(a->listen);
        a->listen = sy_asprintf("unix:%s", path);
        free(path);
        if (strlen(a->listen + 5) > 107)
            return bad(s, d, "\"unix:PATH\" whose resolved path fits a socket (107 bytes)");
        return 0;
    }
    char host[256];
    int port;
    if (!sy_config_admin_split(v, host, sizeof host, &port))
        return bad(s, d, what);
    free(a->listen);
    a->listen = sy_xstrdup(v);
    return 0;
}

static int read_key(sy_admin_config *a, const config_setting_t *s, const char *dir,
                    sy_diags *d)
{
    const char *name = config_setting_name(s);
    if (strcmp(name, "listen") == 0)
        return read_listen(a, s, dir, d);
    if (strcmp(name, "token_file") == 0) {
        const char *v;
        if (read_string(s, &v, d, "a file name"))
            return 1;
        free(a->token_file);
        a->token_file = sy_path_join(dir ? dir : ".", v);
        return 0;
    }
    if (strcmp(name, "tls_cert") == 0 || strcmp(name, "tls_key") == 0 ||
        strcmp(name, "tls_client_ca") == 0) {
        const char *v;
        if (read_string(s, &v, d, "a file name (PEM)"))
            return 1;
        char **to = name[4] == 'k' ? &a->tls_key : name[5] == 'e' ? &a->tls_cert
                                                                   : &a->tls_client_ca;
        free(*to);
        *to = sy_path_join(dir ? dir : ".", v);
        return 0;
    }
    if (strcmp(name, "insecure") == 0) {
        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
            return bad(s, d, "true or false");
        a->insecure = config_setting_get_bool(s) != 0;
        return 0;
    }
    if (strcmp(name, "tokens_file") == 0) {
        const char *v;
        if (read_string(s, &v, d, "a file name"))
            return 1;
        free(a->tokens_file);
        a->tokens_file = sy_path_join(dir ? dir : ".", v);
        return 0;
    }
    if (strcmp(name, "dashboard_dir") == 0) {
        const char *v;
        if (read_string(s, &v, d, "a directory name"))
            return 1;
        free(a->dashboard_dir);
        a->dashboard_dir = sy_path_join(dir ? dir : ".", v);
        return 0;
    }
    if (strcmp(name, "max_body") == 0)
        return read_bytes(s, 1024, 64LL << 20, &a->max_body, d);
    if (strcmp(name, "max_header") == 0)
        return read_bytes(s, 4096, 1LL << 20, &a->max_header, d);
    if (strcmp(name, "max_connections") == 0)
        return read_count(s, &a->max_connections, d);
    if (strcmp(name, "max_connections_per_ip") == 0)
        return read_count(s, &a->max_connections_per_ip, d);
    if (strcmp(name, "timeout") == 0)
        return read_duration(s, &a->timeout_ms, d);
    if (strcmp(name, "header_timeout") == 0)
        return read_duration(s, &a->header_timeout_ms, d);
    if (strcmp(name, "body_timeout") == 0)
        return read_duration(s, &a->body_timeout_ms, d);
    sy_error(d, SRC_FILE(s), SRC_LINE(s), "unknown key 'admin.%s' (known: %s)", name,
             admin_keys);
    return 1;
}

int sy_config_admin_read(sy_admin_config *a, const config_setting_t *s, const char *dir,
                         sy_diags *d)
{
    sy_config_admin_free(a);
    a->max_body = 1 << 20;
    a->max_header = 16 << 10;
    a->max_connections = 256;
    a->max_connections_per_ip = 64;
    a->timeout_ms = 30000;
    a->header_timeout_ms = 10000;
    a->body_timeout_ms = 30000;
    a->listen = sy_xstrdup("127.0.0.1:8787");
    a->file = sy_xstrdup(SRC_FILE(s) ? SRC_FILE(s) : "");
    a->line = SRC_LINE(s);
    if (!config_setting_is_group(s)) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'admin' must be a group, e.g. admin = { "
                 "listen = \"127.0.0.1:8787\"; token_file = \"admin.token\"; }");
        return 1;
    }
    a->enabled = true;
    int errors = 0;
    for (int i = 0; i < config_setting_length(s); i++)
        errors += read_key(a, config_setting_get_elem(s, (unsigned)i), dir, d);
    if (!errors && !a->tls_cert != !a->tls_key) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'admin.%s' needs 'admin.%s' too (TLS takes a "
                 "certificate and its key)", a->tls_cert ? "tls_cert" : "tls_key",
                 a->tls_cert ? "tls_key" : "tls_cert");
        errors++;
    }
    if (!errors && a->tls_client_ca && !a->tls_cert) {
        sy_error(d, SRC_FILE(s), SRC_LINE(s), "'admin.tls_client_ca' needs TLS: set "
                 "'admin.tls_cert' and 'admin.tls_key'");
        errors++;
    }
    return errors;
}

void sy_config_admin_free(sy_admin_config *a)
{
    free(a->listen);
    free(a->token_file);
    free(a->tokens_file);
    free(a->tls_cert);
    free(a->tls_key);
    free(a->tls_client_ca);
    free(a->dashboard_dir);
    free(a->file);
    memset(a, 0, sizeof *a);
}
