/*
 * test_names.c -- the kubernetes plugin's pure parts, without a server
 * (so they also run under valgrind, where the end-to-end scripts skip):
 * Job names are DNS-1123 labels of at most 63 characters, the same for
 * the same (instance, run, task, attempt) and different otherwise; label
 * values are sanitised; kubeconfig files are read (contexts, relative
 * paths, base64 data, token files) and refused in one line naming the file
 * and the field, never holding the token; exec plugins' ExecCredential
 * (v1, v1beta1) and its RFC 3339 expiry read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../plugins/kubernetes/kubernetes.h"

static bool dns1123(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || !isalnum((unsigned char)s[0]) ||
        !isalnum((unsigned char)s[n - 1]))
        return false;
    for (const char *p = s; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
              *p == '-'))
            return false;
    return true;
}

static void test_job_names(void **state)
{
    (void)state;
    char a[64], b[64], c[64];
    sy_k8s_job_name("switchyard", "17", "extract", -1, 1, a);
    assert_true(dns1123(a));
    assert_int_equal(strncmp(a, "sy-17-extract-1-", 16), 0);
    sy_k8s_job_name("switchyard", "17", "extract", -1, 1, b);
    assert_string_equal(a, b); /* deterministic: what adoption rests on */
    sy_k8s_job_name("switchyard", "17", "extract", -1, 2, c);
    assert_string_not_equal(a, c);
    sy_k8s_job_name("other", "17", "extract", -1, 1, c);
    assert_string_not_equal(a, c); /* another deployment's instance */

    /* Long and odd task ids: cut, lowercased, still distinct. */
    char long_id[300];
    memset(long_id, 'X', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    sy_k8s_job_name("switchyard", "123456789012345678901234", long_id, -1, 12345,
                    a);
    assert_true(dns1123(a));
    long_id[250] = 'Y';
    sy_k8s_job_name("switchyard", "123456789012345678901234", long_id, -1, 12345,
                    b);
    assert_true(dns1123(b));
    assert_string_not_equal(a, b); /* same cut, another hash */
    sy_k8s_job_name("switchyard", "--", "__--..", -1, 1, a);
    assert_true(dns1123(a));
    sy_k8s_job_name("switchyard", "9", "Étape_1.ok", -1, 3, a);
    assert_true(dns1123(a));

    /* A map's elements share their task id: each names its own Job. */
    sy_k8s_job_name("switchyard", "17", "each", 0, 1, a);
    sy_k8s_job_name("switchyard", "17", "each", 1, 1, b);
    sy_k8s_job_name("switchyard", "17", "each", -1, 1, c);
    assert_true(dns1123(a));
    assert_int_equal(strncmp(a, "sy-17-each-e0-1-", 16), 0);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, c);
    assert_string_not_equal(b, c);
}

static void test_label_values(void **state)
{
    (void)state;
    char v[64];
    sy_k8s_label_value("switchyard", v);
    assert_string_equal(v, "switchyard");
    sy_k8s_label_value("-a b/c.", v);
    assert_string_equal(v, "a_b_c");
    sy_k8s_label_value("___", v);
    assert_string_equal(v, "x");
    char big[200];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sy_k8s_label_value(big, v);
    assert_int_equal(strlen(v), 63);
}

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int load(const char *text, const char *context, sy_k8s_conn *c,
                char *err, size_t len)
{
    put("config", text);
    char path[256];
    snprintf(path, sizeof path, "%s/config", dir);
    return sy_k8s_kubeconfig_load(path, context, c, err, len);
}

static void test_kubeconfig(void **state)
{
    (void)state;
    sy_k8s_conn c;
    char err[512];
    put("ca.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    put("token", "s3cret-token\n");
    const char *good =
        "apiVersion: v1\n"
        "clusters:\n"
        "- name: k\n"
        "  cluster:\n"
        "    server: https://10.0.0.1:6443/\n"
        "    certificate-authority: ca.pem\n"
        "- name: other\n"
        "  cluster: {server: https://other, certificate-authority-data: aGVsbG8=}\n"
        "contexts:\n"
        "- name: main\n"
        "  context: {cluster: k, user: u, namespace: etl}\n"
        "- name: second\n"
        "  context: {cluster: other, user: v}\n"
        "current-context: main\n"
        "users:\n"
        "- name: u\n"
        "  user: {tokenFile: token}\n"
        "- name: v\n"
        "  user: {token: inline-token}\n";
    assert_int_equal(load(good, NULL, &c, err, sizeof err), SY_OK);
    assert_string_equal(c.server, "https://10.0.0.1:6443");
    assert_string_equal(c.token, "s3cret-token"); /* the newline dropped */
    assert_non_null(c.token_file);                /* read again later */
    assert_string_equal(c.ns, "etl");
    assert_non_null(c.ca);
    assert_non_null(strstr(c.source, "context main"));
    sy_k8s_conn_free(&c);
    assert_int_equal(load(good, "second", &c, err, sizeof err), SY_OK);
    assert_string_equal(c.server, "https://other");
    assert_int_equal(c.ca_len, 5);
    assert_memory_equal(c.ca, "hello", 5);
    assert_string_equal(c.token, "inline-token");
    assert_null(c.token_file);
    assert_null(c.ns);
    sy_k8s_conn_free(&c);

    assert_int_not_equal(load(good, "third", &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "/config: contexts: no context named \"third\""));
    const char *skip =
        "clusters:\n- name: k\n  cluster: {server: https://x, insecure-skip-tls-verify: true}\n"
        "contexts:\n- name: m\n  context: {cluster: k, user: u}\ncurrent-context: m\n"
        "users:\n- name: u\n  user: {token: s3cret-token}\n";
    assert_int_not_equal(load(skip, NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "clusters[k].cluster.insecure-skip-tls-verify: refused"));
    assert_null(strstr(err, "s3cret"));
    const char *exec =
        "clusters:\n- name: k\n  cluster: {server: https://x}\n"
        "contexts:\n- name: m\n  context: {cluster: k, user: u}\ncurrent-context: m\n"
        "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1beta1,\n"
        "      command: no-such-auth-plugin, installHint: see the docs}\n";
    assert_int_not_equal(load(exec, NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "users[u].user.exec: command \"no-such-auth-plugin\" "
                                "not found on PATH; install it: see the docs"));
    const char *always =
        "clusters:\n- name: k\n  cluster: {server: https://x}\n"
        "contexts:\n- name: m\n  context: {cluster: k, user: u}\ncurrent-context: m\n"
        "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1,\n"
        "      command: sh, interactiveMode: Always}\n";
    assert_int_not_equal(load(always, NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "users[u].user.exec.interactiveMode: Always needs a terminal"));
    /* a relative command: the kubeconfig's directory; args and env */
    put("cred.sh", "#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
        "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%s-%s\"}}' \"$1\" \"$WHO\"\n");
    char script[256];
    snprintf(script, sizeof script, "%s/cred.sh", dir);
    chmod(script, 0700);
    const char *rel =
        "clusters:\n- name: k\n  cluster: {server: https://x}\n"
        "contexts:\n- name: m\n  context: {cluster: k, user: u}\ncurrent-context: m\n"
        "users:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1,\n"
        "      command: ./cred.sh, args: [s3cret], env: [{name: WHO, value: me}],\n"
        "      interactiveMode: Never, provideClusterInfo: true}\n";
    assert_int_equal(load(rel, NULL, &c, err, sizeof err), SY_OK);
    assert_string_equal(c.token, "s3cret-me");
    assert_non_null(c.exec);
    sy_k8s_conn_free(&c);
    assert_int_not_equal(load("clusters: [ {", NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "not YAML"));
    assert_int_not_equal(load("- just\n- a list\n", NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "not a mapping"));
    const char *noserver =
        "clusters:\n- name: k\n  cluster: {}\n"
        "contexts:\n- name: m\n  context: {cluster: k}\ncurrent-context: m\n";
    assert_int_not_equal(load(noserver, NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "clusters[k].cluster.server: not set"));
    const char *ftp =
        "clusters:\n- name: k\n  cluster: {server: ftp://x}\n"
        "contexts:\n- name: m\n  context: {cluster: k}\ncurrent-context: m\n";
    assert_int_not_equal(load(ftp, NULL, &c, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "clusters[k].cluster.server: must be https://"));
}

static void test_incluster(void **state)
{
    (void)state;
    sy_k8s_conn c;
    char err[512];
    bool found = true;
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(sy_k8s_incluster_load(dir, &c, &found, err, sizeof err), SY_OK);
    assert_false(found);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    put("namespace", "jobs\n");
    put("ca.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    assert_int_equal(sy_k8s_incluster_load(dir, &c, &found, err, sizeof err), SY_OK);
    assert_true(found);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    assert_string_equal(c.token, "s3cret-token");
    assert_string_equal(c.ns, "jobs");
    sy_k8s_conn_free(&c);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/none", dir);
    assert_int_not_equal(sy_k8s_incluster_load(sub, &c, &found, err, sizeof err), SY_OK);
    assert_non_null(strstr(err, "in-cluster service account: cannot read"));
    unsetenv("KUBERNETES_SERVICE_HOST");
}

/* ExecCredential (v1 and v1beta1): a token or a cert/key pair, the
 * expiry in RFC 3339; what is wrong said without the token. */
static void test_exec_credential(void **state)
{
    (void)state;
    const char *v1 = "client.authentication.k8s.io/v1";
    const char *b1 = "client.authentication.k8s.io/v1beta1";
    sy_k8s_cred c;
    char err[512];
    const char *tok = "{\"apiVersion\":\"client.authentication.k8s.io/v1\","
        "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"s3cret-exec\","
        "\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}";
    assert_int_equal(sy_k8s_exec_parse(tok, strlen(tok), v1, &c, err,
                                       sizeof err), SY_OK);
    assert_string_equal(c.token, "s3cret-exec");
    assert_int_equal(c.expiry_ms, 1893553445000LL);
    sy_k8s_cred_free(&c);
    /* the other version is refused, naming both */
    assert_int_equal(sy_k8s_exec_parse(tok, strlen(tok), b1, &c, err,
                                       sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "apiVersion"));
    assert_null(strstr(err, "s3cret"));
    const char *pair = "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
        "\"kind\":\"ExecCredential\",\"status\":{\"clientCertificateData\":"
        "\"CERT\",\"clientKeyData\":\"KEY\"}}";
    assert_int_equal(sy_k8s_exec_parse(pair, strlen(pair), b1, &c, err,
                                       sizeof err), SY_OK);
    assert_null(c.token);
    assert_string_equal(c.cert, "CERT");
    assert_string_equal(c.key, "KEY");
    assert_int_equal(c.expiry_ms, 0);
    sy_k8s_cred_free(&c);
    const char *bad[] = {
        "not json",
        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Pod\","
        "\"status\":{\"token\":\"s3cret-exec\"}}",
        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
        "\"ExecCredential\",\"status\":{}}",
        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
        "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"C\"}}",
        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
        "\"ExecCredential\",\"status\":{\"token\":\"s3cret-exec\","
        "\"expirationTimestamp\":\"tomorrow\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(sy_k8s_exec_parse(bad[i], strlen(bad[i]), v1, &c,
                                           err, sizeof err), SY_EINVAL);
        assert_null(strstr(err, "s3cret"));
        assert_null(strchr(err, '\n'));
    }
    int64_t ms;
    assert_int_equal(sy_k8s_rfc3339_ms("1970-01-01T00:00:01.250Z", &ms), SY_OK);
    assert_int_equal(ms, 1250);
    assert_int_equal(sy_k8s_rfc3339_ms("1970-01-01T02:00:00+02:00", &ms), SY_OK);
    assert_int_equal(ms, 0);
    assert_int_equal(sy_k8s_rfc3339_ms("1969-12-31T23:00:00-01:00", &ms), SY_OK);
    assert_int_equal(ms, 0);
    assert_int_equal(sy_k8s_rfc3339_ms("2030-01-02", &ms), SY_EINVAL);
    assert_int_equal(sy_k8s_rfc3339_ms("2030-01-02T03:04:05", &ms), SY_EINVAL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s", "/tmp/sy-k8s-names-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_names),
        cmocka_unit_test(test_label_values),
        cmocka_unit_test(test_kubeconfig),
        cmocka_unit_test(test_incluster),
        cmocka_unit_test(test_exec_credential),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    const char *names[] = {"config", "ca.pem", "token", "namespace", "ca.crt", "cred.sh"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return rc;
}
