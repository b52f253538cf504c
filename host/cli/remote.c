/* `--host URL`: the commands over the admin API, with libcurl. */
#include "cli/remote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "admin/auth.h"
#include "base/util.h"

const char *sy_remote_escape(const char *s, char *buf, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (; *s && o + 4 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~' || c == ':') {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    buf[o] = '\0';
    return buf;
}

#ifndef SY_HAVE_LIBCURL

int sy_remote_json(const sy_cli *cli, const char *cmd, const char *method, const char *path,
                   const json_t *body, json_t **out)
{
    (void)cli, (void)method, (void)path, (void)body;
    *out = NULL;
    fprintf(stderr, "switchyard: %s: --host needs libcurl, which this build lacks "
            "(apt-get install libcurl4-openssl-dev, then configure again)\n", cmd);
    return SY_EXIT_USAGE;
}

int sy_remote_json_header(const sy_cli *cli, const char *cmd, const char *method,
                          const char *path, const char *header, const json_t *body,
                          json_t **out)
{
    (void)header;
    return sy_remote_json(cli, cmd, method, path, body, out);
}

int sy_remote_lines(const sy_cli *cli, const char *cmd, const char *path,
                    void (*line)(const char *text, void *arg), void *arg)
{
    (void)line, (void)arg;
    json_t *none;
    return sy_remote_json(cli, cmd, "GET", path, NULL, &none);
}

#else

#include "cli/libcurl.h"

typedef struct reply {
    char *buf;
    size_t len;
    void (*line)(const char *text, void *arg);
    void *arg;
    long status;
    CURL *curl;
    const char *header; /* one more request header ("Name: value"); NULL */
} reply;

/* Lines are handed on as they complete, once the status says success. */
static void flush_lines(reply *r)
{
    char *nl;
    size_t off = 0;
    while ((nl = memchr(r->buf + off, '\n', r->len - off))) {
        *nl = '\0';
        r->line(r->buf + off, r->arg);
        off = (size_t)(nl - r->buf) + 1;
    }
    memmove(r->buf, r->buf + off, r->len - off);
    r->len -= off;
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
    reply *r = arg;
    size_t len = size * n;
    char *nb = realloc(r->buf, r->len + len + 1);
    if (!nb)
        return 0;
    memcpy(nb + r->len, data, len);
    r->buf = nb;
    r->len += len;
    r->buf[r->len] = '\0';
    if (r->line) {
        curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &r->status);
        if (r->status >= 200 && r->status < 300)
            flush_lines(r);
    }
    return len;
}

/* The token: --token-file, else $SWITCHYARD_TOKEN_FILE; none is fine for
 * reads.  Checked as the host checks its own (0600, this user's). */
static int token_header(const sy_cli *cli, const char *cmd, char **hdr)
{
    *hdr = NULL;
    const char *path = cli->token_file;
    if (!path) {
        const char *env = getenv("SWITCHYARD_TOKEN_FILE");
        path = env && *env ? env : NULL;
    }
    if (!path)
        return SY_EXIT_OK;
    char *tok = NULL, err[512];
    if (sy_admin_token_load(path, &tok, err, sizeof err) != 0) {
        /* The message names admin.token_file, the host's key: say ours. */
        const char *why = strchr(err, ':');
        fprintf(stderr, "switchyard: %s: --token-file %s%s\n", cmd, path, why ? why : "");
        return SY_EXIT_USAGE;
    }
    *hdr = sy_asprintf("Authorization: Bearer %s", tok);
    explicit_bzero(tok, strlen(tok));
    free(tok);
    return SY_EXIT_OK;
}

/* The client certificate's key (--key, else --cert's file, which then
 * holds it): a secret, so refused as the host refuses its own key when
 * others may read it.  SY_EXIT_OK, or SY_EXIT_USAGE after one line. */
static int client_key_ok(const sy_cli *cli, const char *cmd)
{
    if (cli->key_file && !cli->cert_file) {
        fprintf(stderr, "switchyard: %s: --key %s needs --cert (the certificate it is the key "
                "of)\n", cmd, cli->key_file);
        return SY_EXIT_USAGE;
    }
    const char *key = cli->key_file ? cli->key_file : cli->cert_file;
    if (!key)
        return SY_EXIT_OK;
    const char *opt = cli->key_file ? "--key" : "--cert";
    struct stat st;
    if (stat(key, &st) != 0) {
        fprintf(stderr, "switchyard: %s: %s %s: %s\n", cmd, opt, key, strerror(errno));
        return SY_EXIT_USAGE;
    }
    if (cli->key_file && (st.st_mode & 077)) {
        fprintf(stderr, "switchyard: %s: --key %s: mode %04o lets others read it; chmod 600 "
                "%s\n", cmd, key, (unsigned)(st.st_mode & 07777), key);
        return SY_EXIT_USAGE;
    }
    return SY_EXIT_OK;
}

static int request(const sy_cli *cli, const char *cmd, const char *method, const char *path,
                   const json_t *body, reply *r)
{
    const char *host = cli->host;
    char *url = NULL, *auth = NULL, *text = NULL;
    struct curl_slist *h = NULL;
    int rc = client_key_ok(cli, cmd);
    if (rc == SY_EXIT_OK)
        rc = token_header(cli, cmd, &auth);
    if (rc != SY_EXIT_OK)
        return rc;
    char why_not[300];
    if (sy_libcurl_load(why_not, sizeof why_not) != 0) {
        free(auth);
        fprintf(stderr, "switchyard: %s: --host: %s\n", cmd, why_not);
        return SY_EXIT_FAIL;
    }
    CURL *c = curl_easy_init();
    if (!c) {
        free(auth);
        fprintf(stderr, "switchyard: %s: cannot start libcurl\n", cmd);
        return SY_EXIT_FAIL;
    }
    r->curl = c;
    if (strncmp(host, "unix:", 5) == 0) {
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, host + 5);
        url = sy_asprintf("http://localhost%s", path);
    } else if (strncmp(host, "http://", 7) == 0 || strncmp(host, "https://", 8) == 0) {
        size_t n = strlen(host);
        while (n && host[n - 1] == '/')
            n--;
        url = sy_asprintf("%.*s%s", (int)n, host, path);
    } else {
        curl_easy_cleanup(c);
        free(auth);
        fprintf(stderr, "switchyard: %s: --host %s: give http://HOST:PORT, https://HOST:PORT or unix:PATH\n", cmd,
                host);
        return SY_EXIT_USAGE;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    /* https: verified against the system's CAs, or --ca-file's. */
    if (cli->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, cli->ca_file);
    /* A client certificate, for a host whose admin.tls_client_ca asks for
     * one (PEM; the key in the same file without --key). */
    if (cli->cert_file) {
        curl_easy_setopt(c, CURLOPT_SSLCERT, cli->cert_file);
        curl_easy_setopt(c, CURLOPT_SSLKEY, cli->key_file ? cli->key_file : cli->cert_file);
    }
    char why[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, why);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    if (!r->line)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    if (auth)
        h = curl_slist_append(h, auth);
    if (r->header)
        h = curl_slist_append(h, r->header);
    if (body) {
        text = json_dumps(body, JSON_COMPACT);
        h = curl_slist_append(h, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text ? text : "{}");
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    CURLcode cc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    if (cc != CURLE_OK) {
        fprintf(stderr, "switchyard: %s: %s: %s\n", cmd, host,
                why[0] ? why : curl_easy_strerror(cc));
        rc = SY_EXIT_FAIL;
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (auth) {
        explicit_bzero(auth, strlen(auth));
        free(auth);
    }
    free(text);
    free(url);
    return rc;
}

/* An error reply: its message, and what to do about a missing token. */
static int failed(const char *cmd, const reply *r)
{
    json_t *v = r->buf ? json_loads(r->buf, 0, NULL) : NULL;
    const char *msg = json_string_value(json_object_get(v, "error"));
    fprintf(stderr, "switchyard: %s: %s%s\n", cmd, msg ? msg : "the host answered HTTP ",
            r->status == 401 ? " (give --token-file FILE or SWITCHYARD_TOKEN_FILE)"
            : r->status == 403 && msg && strstr(msg, "client certificate")
                ? " (give --cert FILE and --key FILE)"
                : "");
    if (!msg)
        fprintf(stderr, "  (HTTP %ld)\n", r->status);
    json_decref(v);
    return SY_EXIT_FAIL;
}

int sy_remote_json(const sy_cli *cli, const char *cmd, const char *method, const char *path,
                   const json_t *body, json_t **out)
{
    return sy_remote_json_header(cli, cmd, method, path, NULL, body, out);
}

int sy_remote_json_header(const sy_cli *cli, const char *cmd, const char *method,
                          const char *path, const char *header, const json_t *body,
                          json_t **out)
{
    *out = NULL;
    reply r = {.header = header};
    int rc = request(cli, cmd, method, path, body, &r);
    if (rc == SY_EXIT_OK && (r.status < 200 || r.status >= 300))
        rc = failed(cmd, &r);
    if (rc == SY_EXIT_OK) {
        json_error_t e;
        *out = json_loadb(r.buf ? r.buf : "", r.len, 0, &e);
        if (!*out) {
            fprintf(stderr, "switchyard: %s: the host's reply is not JSON: %s\n", cmd, e.text);
            rc = SY_EXIT_FAIL;
        }
    }
    free(r.buf);
    return rc;
}

int sy_remote_lines(const sy_cli *cli, const char *cmd, const char *path,
                    void (*line)(const char *text, void *arg), void *arg)
{
    reply r = {.line = line, .arg = arg};
    int rc = request(cli, cmd, "GET", path, NULL, &r);
    if (rc == SY_EXIT_OK && (r.status < 200 || r.status >= 300))
        rc = failed(cmd, &r);
    else if (rc == SY_EXIT_OK && r.len) {
        flush_lines(&r);
        if (r.len) /* a last line without its newline */
            line(r.buf, arg);
    }
    free(r.buf);
    return rc;
}

#endif
