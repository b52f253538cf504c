/*
 * kubernetes.c -- fuzz target: the kubernetes plugin's readers of what
 * the API server and the user's files say (plugins/kubernetes/): one line
 * of a watch stream (event.c: ADDED/MODIFIED/DELETED, BOOKMARK, an ERROR
 * with a 410 Status), what a Job or pod object says (event.c's
 * sy_k8s_state_read, what judge.c decides by), an exec credential
 * plugin's ExecCredential and its
 * RFC 3339 expiry (exec_auth.c), and a kubeconfig file (kubeconfig.c,
 * libyaml).  The server, the credential plugin and the kubeconfig are
 * another program's output, so any bytes must read as something or be
 * refused with one line, never crash the host.
 *
 * Input: every line through the watch reader and each event's object,
 * and the whole input (an object, or a list's items), as a Job and a
 * pod; the whole input as an ExecCredential, as a timestamp and as a kubeconfig file.  Properties:
 * an event with an object has a type, and its resourceVersion, uid and
 * name come from that object; a pod's state reads from that pod (or
 * none when another Job owns it), with a phase and a waiting reason
 * always set; a refused credential or kubeconfig says
 * why in one line; an accepted credential has a token or both halves of
 * a client certificate; an accepted kubeconfig has an http(s) server.
 */
#include "fuzz.h"

#include <string.h>

#include "kubernetes.h"

static void check_err(const char *err, const char *what)
{
    SY_FUZZ_CHECK(err[0] != '\0', "%s refused without a message", what);
    SY_FUZZ_CHECK(strchr(err, '\n') == NULL, "%s: a message over lines: %s",
                  what, err);
}

static void read_state(json_t *obj)
{
    sy_k8s_state st;
    const char *uids[] = {NULL, "", sy_k8s_uid(obj, true), "another-uid"};
    for (size_t i = 0; i < sizeof uids / sizeof uids[0]; i++) {
        sy_k8s_state_read(obj, obj, uids[i], &st);
        SY_FUZZ_CHECK(st.pod == NULL || st.pod == obj, "a pod from elsewhere");
        SY_FUZZ_CHECK(st.phase && st.wait_reason, "a NULL phase or reason");
        const char *owner = sy_k8s_uid(obj, true);
        if (uids[i] && uids[i][0] && owner && strcmp(owner, uids[i]) != 0)
            SY_FUZZ_CHECK(st.pod == NULL, "another Job's pod read");
        if (!st.pod)
            SY_FUZZ_CHECK(!st.disruption && !st.evicted && !st.terminated &&
                          !st.waiting && !st.unschedulable,
                          "a state without a pod");
    }
    sy_k8s_state_read(NULL, NULL, NULL, &st);
    SY_FUZZ_CHECK(!st.pod && !st.failed && !st.complete, "a state of nothing");
}

static void read_objects(const char *text, size_t len)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return;
    }
    read_state(root);
    json_t *it;
    size_t i;
    json_array_foreach(json_object_get(root, "items"), i, it)
        read_state(it);
    json_decref(root);
}

static void read_event(const char *line, size_t len)
{
    sy_k8s_event ev;
    sy_k8s_event_kind kind = sy_k8s_event_read(line, len, &ev);
    SY_FUZZ_CHECK(kind == ev.kind, "the kind returned is not the kind kept");
    if (kind == SY_K8S_EVENT_OBJECT || kind == SY_K8S_EVENT_BOOKMARK) {
        SY_FUZZ_CHECK(ev.type && json_is_object(ev.object),
                      "an event without a type or an object");
        SY_FUZZ_CHECK(ev.rv == sy_k8s_meta_str(ev.object, "resourceVersion",
                                                NULL),
                      "a resourceVersion from elsewhere");
        /* What watch.c's apply() reads of it. */
        (void)sy_k8s_uid(ev.object, false);
        (void)sy_k8s_uid(ev.object, true);
        (void)sy_k8s_meta_str(ev.object, "labels", "switchyard.dev/job");
        (void)sy_k8s_meta_str(ev.object, "name", NULL);
        read_state(ev.object);
    } else {
        SY_FUZZ_CHECK(ev.object == NULL && ev.rv == NULL,
                      "a skipped event hands out an object");
    }
    sy_k8s_event_free(&ev);
}

static void read_credential(const char *text, size_t len)
{
    char err[512] = "";
    sy_k8s_cred c;
    if (sy_k8s_exec_parse(text, len, "client.authentication.k8s.io/v1", &c,
                          err, sizeof err) == SY_OK) {
        SY_FUZZ_CHECK(c.token || c.cert, "a credential with nothing in it");
        SY_FUZZ_CHECK(!c.cert == !c.key, "half a client certificate");
        sy_k8s_cred_free(&c);
    } else {
        check_err(err, "ExecCredential");
        SY_FUZZ_CHECK(!c.token && !c.cert && !c.key,
                      "a refused credential keeps a secret");
    }
}

/* Device and proc files (/dev/zero, /dev/stdin) test the machine, not
 * the reader: a kubeconfig naming one is not loaded. */
static bool names_device(const char *text)
{
    return strstr(text, "/dev") || strstr(text, "/proc") ||
           strstr(text, "/sys");
}

static void read_kubeconfig(const uint8_t *data, size_t size, const char *text)
{
    if (names_device(text))
        return;
    const char *path = sy_fuzz_write("config", data, size);
    char err[512] = "";
    sy_k8s_conn conn;
    if (sy_k8s_kubeconfig_load(path, NULL, &conn, err, sizeof err) == SY_OK) {
        SY_FUZZ_CHECK(conn.server && (strncmp(conn.server, "https://", 8) == 0 ||
                                      strncmp(conn.server, "http://", 7) == 0),
                      "server \"%s\"", conn.server ? conn.server : "(none)");
    } else {
        check_err(err, "kubeconfig");
    }
    sy_k8s_conn_free(&conn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = sy_fuzz_str(data, size);
    if (!text)
        return 0;
    /* The stream's lines as the bytes came, NULs and all: json_loadb
     * takes a length, as the watch's line reader hands it. */
    const char *line = (const char *)data, *end = line + size;
    for (;;) {
        const char *nl = size ? memchr(line, '\n', (size_t)(end - line)) : NULL;
        read_event(line, nl ? (size_t)(nl - line) : (size_t)(end - line));
        if (!nl)
            break;
        line = nl + 1;
    }
    read_objects((const char *)data, size);
    read_credential((const char *)data, size);
    int64_t ms;
    (void)sy_k8s_rfc3339_ms(text, &ms);
    read_kubeconfig(data, size, text);
    free(text);
    return 0;
}
