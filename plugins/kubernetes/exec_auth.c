/*
 * exec_auth.c -- client.authentication.k8s.io exec credential plugins
 * (users[].user.exec), as kubectl runs them: the command (relative to the
 * kubeconfig's directory when it holds a `/`, else on PATH) with its args
 * and env, KUBERNETES_EXEC_INFO holding an ExecCredential (spec.cluster
 * with provideClusterInfo), stdin /dev/null (we never have a terminal),
 * its stdout an ExecCredential: status.token, or status.clientCertificate
 * Data and clientKeyData, and an optional expirationTimestamp.
 *
 * create() runs it once (blocking, bounded).  After, the loop refreshes:
 * a timer before the expiry (a minute, or half the credential's life when
 * shorter) and a 401 start a helper thread that runs the command; its
 * result comes back through a uv_async_t, and new requests carry it.
 * The token and key never go into a message: an error names the file,
 * the field, the exit status and the tail of the command's stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "kubernetes.h"

extern char **environ;

#define EXEC_TIMEOUT_MS 30000
#define EXEC_OUT_MAX (1 << 20)
#define EXEC_TAIL 200

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wipe(char *p)
{
    if (p) {
        OPENSSL_cleanse(p, strlen(p));
        free(p);
    }
}

void sy_k8s_cred_free(sy_k8s_cred *c)
{
    wipe(c->token);
    free(c->cert);
    if (c->key) {
        OPENSSL_cleanse(c->key, c->key_len);
        free(c->key);
    }
    memset(c, 0, sizeof *c);
}

void sy_k8s_exec_free(sy_k8s_exec *x)
{
    if (!x)
        return;
    for (char **a = x->argv; a && *a; a++)
        free(*a);
    free(x->argv);
    for (char **a = x->env; a && *a; a++)
        free(*a);
    free(x->env);
    free(x->api_version);
    free(x->info);
    free(x);
}

/* ---- ExecCredential --------------------------------------------------------- */

int sy_k8s_rfc3339_ms(const char *s, int64_t *out)
{
    struct tm tm = {0};
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2d%*[Tt ]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
               &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n == 0)
        return SY_EINVAL;
    const char *p = s + n;
    int64_t ms = 0;
    if (*p == '.') {
        int64_t scale = 100;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            ms += (*p - '0') * scale;
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm, k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &k) != 2 || k != 5)
            return SY_EINVAL;
        off = (hh * 60L + mm) * 60L * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return SY_EINVAL;
    }
    if (*p || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
        tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return SY_EINVAL;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    *out = ((int64_t)t - off) * 1000 + ms;
    return SY_OK;
}

int sy_k8s_exec_parse(const char *text, size_t len, const char *api_version,
                      sy_k8s_cred *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je), *st;
    int rc = SY_EINVAL;
    const char *v, *tok, *cert, *key, *exp;
    if (!json_is_object(root)) {
        sy_sdk_errf(err, err_len, "its output is not an ExecCredential "
                    "(JSON: line %d: %.80s)", je.line, je.text);
        goto out;
    }
    v = json_string_value(json_object_get(root, "apiVersion"));
    if (!v || strcmp(v, api_version) != 0) {
        sy_sdk_errf(err, err_len, "its ExecCredential's apiVersion is "
                    "\"%.80s\", not \"%s\"", v ? v : "", api_version);
        goto out;
    }
    v = json_string_value(json_object_get(root, "kind"));
    st = json_object_get(root, "status");
    if (!v || strcmp(v, "ExecCredential") != 0 || !json_is_object(st)) {
        sy_sdk_errf(err, err_len, "its output is not an ExecCredential "
                    "with a status (kind \"%.40s\")", v ? v : "");
        goto out;
    }
    tok = json_string_value(json_object_get(st, "token"));
    cert = json_string_value(json_object_get(st, "clientCertificateData"));
    key = json_string_value(json_object_get(st, "clientKeyData"));
    exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    if ((cert && cert[0]) != (key && key[0])) {
        sy_sdk_errf(err, err_len, "its ExecCredential has only one of "
                    "status.clientCertificateData and status.clientKeyData");
        goto out;
    }
    if (!(tok && tok[0]) && !(cert && cert[0])) {
        sy_sdk_errf(err, err_len, "its ExecCredential has neither "
                    "status.token nor status.clientCertificateData");
        goto out;
    }
    if (exp && exp[0] && sy_k8s_rfc3339_ms(exp, &out->expiry_ms) != SY_OK) {
        sy_sdk_errf(err, err_len, "its ExecCredential's status."
                    "expirationTimestamp \"%.60s\" is not RFC 3339", exp);
        goto out;
    }
    if (tok && tok[0])
        out->token = strdup(tok);
    if (cert && cert[0]) {
        out->cert = strdup(cert);
        out->cert_len = strlen(cert);
        out->key = strdup(key);
        out->key_len = strlen(key);
    }
    rc = SY_OK;
out:
    if (root) {
        /* the token lives in jansson's copy too */
        json_t *s = json_object_get(root, "status");
        const char *t = json_string_value(json_object_get(s, "token"));
        if (t)
            OPENSSL_cleanse((char *)t, strlen(t));
        t = json_string_value(json_object_get(s, "clientKeyData"));
        if (t)
            OPENSSL_cleanse((char *)t, strlen(t));
    }
    json_decref(root);
    if (rc != SY_OK)
        sy_k8s_cred_free(out);
    return rc;
}

/* ---- the configuration ---------------------------------------------------------- */

static char *search_path(const char *cmd)
{
    const char *path = getenv("PATH");
    if (!path || !path[0])
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        char *full = NULL;
        if (asprintf(&full, "%.*s/%s", (int)n, n ? path : ".", cmd) < 0)
            return NULL;
        if (access(full, X_OK) == 0)
            return full;
        free(full);
        path += n + (end ? 1 : 0);
    }
    return NULL;
}

static char **strv_push(char **v, size_t *n, char *s)
{
    char **nv = realloc(v, (*n + 2) * sizeof *nv);
    if (!nv) {
        free(s);
        return v;
    }
    nv[(*n)++] = s;
    nv[*n] = NULL;
    return nv;
}

int sy_k8s_exec_read(json_t *exec, const char *where, const char *dir,
                     const char *path, sy_k8s_conn *conn, char *err,
                     size_t err_len)
{
    sy_k8s_exec *x = calloc(1, sizeof *x);
    if (!x)
        return SY_ENOMEM;
    snprintf(x->where, sizeof x->where, "kubeconfig %.300s: %.160s.exec",
             path, where);
    const char *v = json_string_value(json_object_get(exec, "apiVersion"));
    const char *cmd = json_string_value(json_object_get(exec, "command"));
    const char *hint = json_string_value(json_object_get(exec, "installHint"));
    const char *mode = json_string_value(json_object_get(exec,
                                                         "interactiveMode"));
    const char *pci = json_string_value(json_object_get(exec,
                                                        "provideClusterInfo"));
    int rc = SY_EINVAL;
    size_t na = 0, ne = 0, i;
    json_t *e;
    if (!v || (strcmp(v, "client.authentication.k8s.io/v1") != 0 &&
               strcmp(v, "client.authentication.k8s.io/v1beta1") != 0)) {
        sy_sdk_errf(err, err_len, "%s.apiVersion: must be client.authentica"
                    "tion.k8s.io/v1 or v1beta1, got \"%.80s\"", x->where,
                    v ? v : "");
        goto out;
    }
    if (mode && strcmp(mode, "Always") == 0) {
        sy_sdk_errf(err, err_len, "%s.interactiveMode: Always needs a "
                    "terminal, and the plugin never has one; use IfAvailable "
                    "or Never", x->where);
        goto out;
    }
    if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable")) {
        sy_sdk_errf(err, err_len, "%s.interactiveMode: must be Never, "
                    "IfAvailable or Always, got \"%.40s\"", x->where, mode);
        goto out;
    }
    if (!cmd || !cmd[0]) {
        sy_sdk_errf(err, err_len, "%s.command: not set", x->where);
        goto out;
    }
    char *full = NULL;
    if (strchr(cmd, '/')) {
        while (cmd[0] == '.' && cmd[1] == '/')
            cmd += 2;
        if (asprintf(&full, "%s%s%s", cmd[0] == '/' ? "" : dir,
                     cmd[0] == '/' ? "" : "/", cmd) < 0)
            full = NULL;
        if (full && access(full, X_OK) != 0) {
            sy_sdk_errf(err, err_len, "%s: command \"%.200s\" cannot be run: "
                        "%s%s%.200s", x->where, full, strerror(errno),
                        hint ? "; install it: " : "", hint ? hint : "");
            free(full);
            goto out;
        }
    } else if (!(full = search_path(cmd))) {
        sy_sdk_errf(err, err_len, "%s: command \"%.200s\" not found on PATH"
                    "%s%.200s", x->where, cmd,
                    hint ? "; install it: " : "", hint ? hint : "");
        goto out;
    }
    if (!full) {
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
        goto out;
    }
    x->argv = strv_push(NULL, &na, full);
    json_array_foreach(json_object_get(exec, "args"), i, e)
        if (json_is_string(e))
            x->argv = strv_push(x->argv, &na, strdup(json_string_value(e)));
    json_array_foreach(json_object_get(exec, "env"), i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        const char *val = json_string_value(json_object_get(e, "value"));
        char *kv = NULL;
        if (!n || !n[0]) {
            sy_sdk_errf(err, err_len, "%s.env[%zu].name: not set", x->where,
                        i);
            goto out;
        }
        if (asprintf(&kv, "%s=%s", n, val ? val : "") >= 0)
            x->env = strv_push(x->env, &ne, kv);
    }
    x->api_version = strdup(v);
    /* KUBERNETES_EXEC_INFO: always set, as client-go does. */
    json_t *info = json_pack("{s:s, s:s, s:{s:b}}", "apiVersion", v, "kind",
                             "ExecCredential", "spec", "interactive", 0);
    if (pci && strcmp(pci, "true") == 0 && info) {
        json_t *cl = json_pack("{s:s}", "server", conn->server);
        if (conn->ca) {
            char *b = malloc(4 * (conn->ca_len / 3 + 1) + 1);
            if (b) {
                EVP_EncodeBlock((unsigned char *)b,
                                (const unsigned char *)conn->ca,
                                (int)conn->ca_len);
                json_object_set_new(cl, "certificate-authority-data",
                                    json_string(b));
            }
            free(b);
        }
        json_t *cfg = json_object_get(exec, "config");
        if (cfg)
            json_object_set(cl, "config", cfg);
        json_object_set_new(json_object_get(info, "spec"), "cluster", cl);
    }
    x->info = info ? json_dumps(info, JSON_COMPACT) : NULL;
    json_decref(info);
    if (!x->argv || !x->api_version || !x->info) {
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
        goto out;
    }
    sy_k8s_cred cred;
    if ((rc = sy_k8s_exec_run(x, NULL, &cred, err, err_len)) != SY_OK)
        goto out;
    conn->token = cred.token;
    conn->cert = cred.cert;
    conn->cert_len = cred.cert_len;
    conn->key = cred.key;
    conn->key_len = cred.key_len;
    conn->expiry_ms = cred.expiry_ms;
    conn->exec = x;
    return SY_OK;
out:
    sy_k8s_exec_free(x);
    return rc;
}

/* ---- running it ------------------------------------------------------------------- */

/* The last line-ish of stderr, on one line. */
static void tail_of(const char *buf, size_t len, char *out, size_t out_len)
{
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        len--;
    size_t start = len > EXEC_TAIL ? len - EXEC_TAIL : 0, j = 0;
    for (size_t i = start; i < len && j + 1 < out_len; i++)
        out[j++] = (buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')
                       ? ' ' : buf[i];
    out[j] = '\0';
}

int sy_k8s_exec_run(const sy_k8s_exec *x, _Atomic int *child,
                    sy_k8s_cred *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc = SY_EIO, st = 0;
    char **env = NULL, *info = NULL, *obuf = NULL, ebuf[4096], tail[256];
    size_t ne = 0, olen = 0, elen = 0;
    pid_t pid = -1;
    posix_spawn_file_actions_t fa;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "KUBERNETES_EXEC_INFO=", 21) != 0)
            env = strv_push(env, &ne, strdup(*e));
    for (char **e = x->env; e && *e; e++)
        env = strv_push(env, &ne, strdup(*e));
    if (asprintf(&info, "KUBERNETES_EXEC_INFO=%s", x->info) >= 0)
        env = strv_push(env, &ne, info);
    obuf = malloc(EXEC_OUT_MAX + 1);
    if (!env || !obuf || pipe2(po, O_CLOEXEC) != 0 ||
        pipe2(pe, O_CLOEXEC) != 0) {
        sy_sdk_errf(err, err_len, "%s: cannot run \"%.200s\": %s", x->where,
                    x->argv[0], strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    int e = posix_spawn(&pid, x->argv[0], &fa, NULL, x->argv, env);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    if (e != 0) {
        sy_sdk_errf(err, err_len, "%s: cannot run \"%.200s\": %s", x->where,
                    x->argv[0], strerror(e));
        goto out;
    }
    if (child)
        *child = (int)pid;
    int64_t deadline = mono_ms() + EXEC_TIMEOUT_MS;
    bool timed_out = false;
    while (po[0] >= 0 || pe[0] >= 0) {
        struct pollfd p[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        if (poll(p, 2, (int)left) < 0 && errno != EINTR)
            break;
        for (int k = 0; k < 2; k++) {
            int *fd = k ? &pe[0] : &po[0];
            if (*fd < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[4096];
            ssize_t n = read(*fd, chunk, sizeof chunk);
            if (n <= 0) {
                close(*fd);
                *fd = -1;
            } else if (k == 0) {
                size_t c = olen + (size_t)n > EXEC_OUT_MAX
                               ? EXEC_OUT_MAX - olen : (size_t)n;
                memcpy(obuf + olen, chunk, c);
                olen += c;
            } else {
                /* keep the newest bytes: the tail is what is told */
                if ((size_t)n >= sizeof ebuf) {
                    memcpy(ebuf, chunk + n - sizeof ebuf, sizeof ebuf);
                    elen = sizeof ebuf;
                } else {
                    if (elen + (size_t)n > sizeof ebuf) {
                        size_t drop = elen + (size_t)n - sizeof ebuf;
                        memmove(ebuf, ebuf + drop, elen - drop);
                        elen -= drop;
                    }
                    memcpy(ebuf + elen, chunk, (size_t)n);
                    elen += (size_t)n;
                }
            }
        }
    }
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (child)
        *child = 0;
    tail_of(ebuf, elen, tail, sizeof tail);
    if (timed_out) {
        sy_sdk_errf(err, err_len, "%s: command \"%.200s\" did not finish in "
                    "%d s%s%s", x->where, x->argv[0], EXEC_TIMEOUT_MS / 1000,
                    tail[0] ? "; stderr: " : "", tail);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char how[64];
        if (WIFEXITED(st))
            snprintf(how, sizeof how, "exited with status %d",
                     WEXITSTATUS(st));
        else
            snprintf(how, sizeof how, "was killed by signal %d",
                     WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        sy_sdk_errf(err, err_len, "%s: command \"%.200s\" %s%s%s", x->where,
                    x->argv[0], how, tail[0] ? "; stderr: " : "", tail);
    } else {
        char why[300];
        obuf[olen] = '\0';
        rc = sy_k8s_exec_parse(obuf, olen, x->api_version, out, why,
                               sizeof why);
        if (rc != SY_OK)
            sy_sdk_errf(err, err_len, "%s: command \"%.200s\": %s", x->where,
                        x->argv[0], why);
    }
out:
    for (int k = 0; k < 2; k++) {
        if (po[k] >= 0)
            close(po[k]);
        if (pe[k] >= 0)
            close(pe[k]);
    }
    if (obuf) {
        OPENSSL_cleanse(obuf, olen);
        free(obuf);
    }
    for (char **p = env; p && *p; p++)
        free(*p);
    free(env);
    return rc;
}
