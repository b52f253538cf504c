/*
 * kubeconfig.c -- where the cluster is and who we are to it.
 *
 * A kubeconfig file is YAML (clusters, users, contexts, current-context);
 * libyaml loads it as a document, which becomes a jansson tree (every
 * scalar a string) so the fields are read as kubectl reads them.  Paths
 * in it are relative to the file's directory.  What we refuse, we name:
 * the file and the field, never a secret's value.  TLS is never switched
 * off: `insecure-skip-tls-verify: true` is refused, not obeyed.
 *
 * Without a kubeconfig, the in-cluster service account: the API server at
 * KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, its token, CA and
 * namespace from /var/run/secrets/kubernetes.io/serviceaccount.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "kubernetes.h"

static void wipe_free(char *p, size_t len)
{
    if (p) {
        OPENSSL_cleanse(p, len);
        free(p);
    }
}

void sy_k8s_conn_free(sy_k8s_conn *c)
{
    free(c->server);
    free(c->ca);
    wipe_free(c->token, c->token ? strlen(c->token) : 0);
    free(c->cert);
    wipe_free(c->key, c->key_len);
    free(c->ns);
    free(c->token_file);
    sy_k8s_exec_free(c->exec);
    memset(c, 0, sizeof *c);
}

/* ---- YAML to JSON --------------------------------------------------------- */

/* An allocation that fails while the tree is built sets *oom, so that a
 * file read for want of memory is reported as that, never as a file that
 * lacks the fields the tree lost. */
static json_t *node_json(yaml_document_t *d, yaml_node_t *n, int depth,
                         bool *oom)
{
    if (!n || depth > 64)
        return json_null();
    json_t *v = NULL;
    switch (n->type) {
    case YAML_SCALAR_NODE:
        v = json_stringn((const char *)n->data.scalar.value,
                         n->data.scalar.length);
        break;
    case YAML_SEQUENCE_NODE:
        v = json_array();
        for (yaml_node_item_t *i = n->data.sequence.items.start;
             v && i < n->data.sequence.items.top; i++)
            if (json_array_append_new(v, node_json(d, yaml_document_get_node(
                                                          d, *i),
                                                   depth + 1, oom)) != 0)
                *oom = true;
        break;
    case YAML_MAPPING_NODE:
        v = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             v && p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(d, p->key);
            if (!k || k->type != YAML_SCALAR_NODE)
                continue;
            char *key = strndup((const char *)k->data.scalar.value,
                                k->data.scalar.length);
            if (!key || json_object_set_new(v, key, node_json(d,
                                            yaml_document_get_node(d, p->value),
                                            depth + 1, oom)) != 0)
                *oom = true;
            free(key);
        }
        break;
    default:
        v = json_null();
        break;
    }
    if (!v)
        *oom = true;
    return v;
}

static json_t *load_yaml(const char *path, int *rc, char *err,
                         size_t err_len)
{
    *rc = SY_EINVAL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOMEM)
            *rc = SY_ENOMEM;
        sy_sdk_errf(err, err_len, "kubeconfig %s: cannot open: %s", path,
                    strerror(errno));
        return NULL;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    json_t *root = NULL;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        *rc = SY_ENOMEM;
        sy_sdk_errf(err, err_len, "kubeconfig %s: out of memory", path);
        return NULL;
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        /* libyaml says YAML_MEMORY_ERROR when its own allocation failed,
         * and nothing at all (YAML_NO_ERROR) when a copy of a tag in its
         * loader did: the file may be fine either way. */
        if (parser.error == YAML_MEMORY_ERROR ||
            parser.error == YAML_NO_ERROR) {
            *rc = SY_ENOMEM;
            sy_sdk_errf(err, err_len, "kubeconfig %s: out of memory while "
                        "reading it", path);
        } else {
            sy_sdk_errf(err, err_len, "kubeconfig %s: line %zu: not YAML: "
                        "%s", path, parser.problem_mark.line + 1,
                        parser.problem ? parser.problem : "parse error");
        }
    } else {
        yaml_node_t *top = yaml_document_get_root_node(&doc);
        bool oom = false;
        root = top ? node_json(&doc, top, 0, &oom) : NULL;
        if (oom) {
            json_decref(root);
            root = NULL;
            *rc = SY_ENOMEM;
            sy_sdk_errf(err, err_len, "kubeconfig %s: out of memory while "
                        "reading it", path);
        } else if (!json_is_object(root)) {
            json_decref(root);
            root = NULL;
            sy_sdk_errf(err, err_len, "kubeconfig %s: not a mapping of "
                        "clusters, users and contexts", path);
        }
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return root;
}

/* ---- fields ----------------------------------------------------------------- */

static const char *str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) && json_string_length(v) > 0
               ? json_string_value(v) : NULL;
}

/* The `inner` object of the element named `name` of list `list`
 * (clusters[].cluster, users[].user, contexts[].context). */
static json_t *named(json_t *root, const char *list, const char *name,
                     const char *inner)
{
    json_t *a = json_object_get(root, list), *v;
    size_t i;
    json_array_foreach(a, i, v) {
        const char *n = str(v, "name");
        if (n && strcmp(n, name) == 0) {
            json_t *o = json_object_get(v, inner);
            if (json_is_object(o))
                return o;
            /* Missing or not a mapping: read as empty.  jansson's null
             * is static (no allocation to fail) and has no fields. */
            return json_null();
        }
    }
    return NULL;
}

/* A whole small file, NUL-terminated; NULL with errno (EFBIG when over
 * `max`: a token or a certificate is never that large). */
static char *read_file(const char *path, size_t *len, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(max + 1);
    if (!buf) {
        fclose(f);
        errno = ENOMEM;
        return NULL;
    }
    size_t n = fread(buf, 1, max + 1, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad || n > max) {
        wipe_free(buf, n);
        errno = bad ? EIO : EFBIG;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* NULL with errno: ENOMEM, or EINVAL for text that is not base64. */
static char *b64_decode(const char *in, size_t *len)
{
    size_t n = strlen(in);
    unsigned char *out = malloc(n + 1);
    if (!out) {
        errno = ENOMEM;
        return NULL;
    }
    int k = EVP_DecodeBlock(out, (const unsigned char *)in, (int)n);
    if (k < 0) {
        free(out);
        errno = EINVAL;
        return NULL;
    }
    for (size_t i = n; i > 0 && in[i - 1] == '=' && k > 0; i--)
        k--;
    out[k] = '\0';
    *len = (size_t)k;
    return (char *)out;
}

/* FIELD or FIELD-data of `o`: a file (relative to dir) or base64 text.
 * *out NULL when neither is set. */
static int file_or_data(json_t *o, const char *field, const char *dir,
                        const char *file, const char *where, char **out,
                        size_t *len, char *err, size_t err_len)
{
    char data_key[64];
    snprintf(data_key, sizeof data_key, "%s-data", field);
    const char *data = str(o, data_key), *path = str(o, field);
    *out = NULL;
    *len = 0;
    if (data) {
        *out = b64_decode(data, len);
        if (!*out && errno == ENOMEM) {
            sy_sdk_errf(err, err_len, "kubeconfig %s: %s.%s: out of memory",
                        file, where, data_key);
            return SY_ENOMEM;
        }
        if (!*out) {
            sy_sdk_errf(err, err_len, "kubeconfig %s: %s.%s: not base64",
                        file, where, data_key);
            return SY_EINVAL;
        }
        return SY_OK;
    }
    if (!path)
        return SY_OK;
    char full[4096];
    if (path[0] == '/' || !dir)
        snprintf(full, sizeof full, "%s", path);
    else
        snprintf(full, sizeof full, "%s/%s", dir, path);
    *out = read_file(full, len, 1 << 20);
    if (!*out) {
        int e = errno;
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.%s: cannot read %s: %s",
                    file, where, field, full, strerror(e));
        return e == ENOMEM ? SY_ENOMEM : SY_EIO;
    }
    return SY_OK;
}

static int check_server(const char *server, const char *file,
                        const char *where, char *err, size_t err_len)
{
    if (strncmp(server, "https://", 8) != 0 &&
        strncmp(server, "http://", 7) != 0) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.server: must be "
                    "https://HOST[:PORT], got \"%.80s\"", file, where, server);
        return SY_EINVAL;
    }
    return SY_OK;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* Trailing newlines (token files end with one) are not the token's. */
static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

int sy_k8s_read_token(const char *path, char **out)
{
    size_t len;
    char *t = read_file(path, &len, 64 * 1024);
    if (!t)
        return SY_EIO;
    chomp(t);
    *out = t;
    return SY_OK;
}

static int read_user(json_t *user, const char *uname, const char *dir,
                     const char *path, sy_k8s_conn *out, char *err,
                     size_t err_len)
{
    char where[160];
    snprintf(where, sizeof where, "users[%.100s].user", uname);
    json_t *exec = json_object_get(user, "exec");
    if (json_is_object(exec))
        return sy_k8s_exec_read(exec, where, dir, path, out, err, err_len);
    if (exec && !json_is_null(exec)) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.exec: must be a "
                    "mapping (apiVersion, command, args, env)", path, where);
        return SY_EINVAL;
    }
    if (json_object_get(user, "auth-provider")) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.auth-provider: not "
                    "supported; use a token, a tokenFile, a client "
                    "certificate or an exec plugin", path, where);
        return SY_EINVAL;
    }
    const char *token = str(user, "token"), *tf = str(user, "tokenFile");
    if (token && !(out->token = strdup(token))) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.token: out of memory",
                    path, where);
        return SY_ENOMEM;
    } else if (!token && tf) {
        char full[4096];
        snprintf(full, sizeof full, "%s%s%s", tf[0] == '/' ? "" : dir,
                 tf[0] == '/' ? "" : "/", tf);
        if (sy_k8s_read_token(full, &out->token) != SY_OK) {
            int e = errno;
            sy_sdk_errf(err, err_len, "kubeconfig %s: %s.tokenFile: cannot "
                        "read %s: %s", path, where, full, strerror(e));
            return e == ENOMEM ? SY_ENOMEM : SY_EIO;
        }
        if (!(out->token_file = strdup(full))) {
            sy_sdk_errf(err, err_len, "kubeconfig %s: %s.tokenFile: out of "
                        "memory", path, where);
            return SY_ENOMEM;
        }
    }
    int rc = file_or_data(user, "client-certificate", dir, path, where,
                          &out->cert, &out->cert_len, err, err_len);
    if (rc == SY_OK)
        rc = file_or_data(user, "client-key", dir, path, where, &out->key,
                          &out->key_len, err, err_len);
    if (rc != SY_OK)
        return rc;
    if ((out->cert == NULL) != (out->key == NULL)) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s: client-certificate "
                    "and client-key go together; only one is set", path,
                    where);
        return SY_EINVAL;
    }
    if (str(user, "username") || str(user, "password")) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.username: basic "
                    "authentication is not supported", path, where);
        return SY_EINVAL;
    }
    return SY_OK;
}

int sy_k8s_kubeconfig_load(const char *path, const char *context,
                           sy_k8s_conn *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    int rc;
    json_t *root = load_yaml(path, &rc, err, err_len);
    if (!root)
        return rc;
    rc = SY_EINVAL;
    char *dir = dir_of(path);
    if (!dir) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: out of memory", path);
        rc = SY_ENOMEM;
        goto out;
    }
    const char *ctx_name = context ? context : str(root, "current-context");
    json_t *ctx, *cluster, *user = NULL;
    const char *cname, *uname;
    if (!ctx_name) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: current-context: not set, "
                    "and no `context` setting names one", path);
        goto out;
    }
    ctx = named(root, "contexts", ctx_name, "context");
    if (!ctx) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: contexts: no context "
                    "named \"%.100s\"", path, ctx_name);
        goto out;
    }
    cname = str(ctx, "cluster");
    uname = str(ctx, "user");
    if (!cname) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: contexts[%.100s].context."
                    "cluster: not set", path, ctx_name);
        goto out;
    }
    cluster = named(root, "clusters", cname, "cluster");
    if (!cluster) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: clusters: no cluster "
                    "named \"%.100s\" (context %.100s)", path, cname,
                    ctx_name);
        goto out;
    }
    if (uname) {
        user = named(root, "users", uname, "user");
        if (!user) {
            sy_sdk_errf(err, err_len, "kubeconfig %s: users: no user named "
                        "\"%.100s\" (context %.100s)", path, uname, ctx_name);
            goto out;
        }
    }
    char where[160];
    snprintf(where, sizeof where, "clusters[%.100s].cluster", cname);
    const char *server = str(cluster, "server");
    if (!server) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.server: not set", path,
                    where);
        goto out;
    }
    if ((rc = check_server(server, path, where, err, err_len)) != SY_OK)
        goto out;
    const char *skip = str(cluster, "insecure-skip-tls-verify");
    if (skip && strcmp(skip, "false") != 0) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.insecure-skip-tls-"
                    "verify: refused; the plugin always verifies the "
                    "server (give certificate-authority instead)", path,
                    where);
        rc = SY_EINVAL;
        goto out;
    }
    if (!(out->server = strdup(server))) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: %s.server: out of memory",
                    path, where);
        rc = SY_ENOMEM;
        goto out;
    }
    size_t n = strlen(out->server);
    while (n > 0 && out->server[n - 1] == '/')
        out->server[--n] = '\0';
    rc = file_or_data(cluster, "certificate-authority", dir, path, where,
                      &out->ca, &out->ca_len, err, err_len);
    if (rc == SY_OK && user)
        rc = read_user(user, uname, dir, path, out, err, err_len);
    if (rc != SY_OK)
        goto out;
    if (str(ctx, "namespace") &&
        !(out->ns = strdup(str(ctx, "namespace")))) {
        sy_sdk_errf(err, err_len, "kubeconfig %s: contexts[%.100s].context."
                    "namespace: out of memory", path, ctx_name);
        rc = SY_ENOMEM;
        goto out;
    }
    snprintf(out->source, sizeof out->source, "kubeconfig %.400s, context "
             "%.80s", path, ctx_name);
    rc = SY_OK;
out:
    if (rc != SY_OK)
        sy_k8s_conn_free(out);
    free(dir);
    json_decref(root);
    return rc;
}

int sy_k8s_incluster_load(const char *sa_dir, sy_k8s_conn *out, bool *found,
                          char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    *found = false;
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !host[0])
        return SY_OK;
    *found = true;
    char path[4096], url[600];
    size_t len;
    /* An IPv6 service address needs brackets in a URL. */
    bool v6 = strchr(host, ':') != NULL;
    snprintf(url, sizeof url, "https://%s%.256s%s:%.16s", v6 ? "[" : "",
             host, v6 ? "]" : "", port && port[0] ? port : "443");
    if (!(out->server = strdup(url))) {
        sy_sdk_errf(err, err_len, "in-cluster service account: out of "
                    "memory");
        return SY_ENOMEM;
    }
    snprintf(path, sizeof path, "%s/token", sa_dir);
    if (sy_k8s_read_token(path, &out->token) != SY_OK) {
        sy_sdk_errf(err, err_len, "in-cluster service account: cannot read "
                    "%s: %s", path, strerror(errno));
        sy_k8s_conn_free(out);
        return SY_EIO;
    }
    if (!(out->token_file = strdup(path))) {
        sy_sdk_errf(err, err_len, "in-cluster service account: out of "
                    "memory");
        sy_k8s_conn_free(out);
        return SY_ENOMEM;
    }
    snprintf(path, sizeof path, "%s/ca.crt", sa_dir);
    out->ca = read_file(path, &out->ca_len, 1 << 20);
    if (!out->ca) {
        sy_sdk_errf(err, err_len, "in-cluster service account: cannot read "
                    "%s: %s", path, strerror(errno));
        sy_k8s_conn_free(out);
        return SY_EIO;
    }
    snprintf(path, sizeof path, "%s/namespace", sa_dir);
    out->ns = read_file(path, &len, 4096);
    if (out->ns)
        chomp(out->ns);
    snprintf(out->source, sizeof out->source, "in-cluster service account "
             "(%.400s)", sa_dir);
    return SY_OK;
}
