/*
 * settings.c -- the kubernetes executor's instance settings and task
 * parameters: declared for the host's checks (unknown keys, types, file
 * and line), then read and judged here.  Structured values (tolerations,
 * env, resources) are read from the view's JSON form (param_json), the
 * shape the Job manifest needs anyway.
 *
 * Label and annotation keys hold `.` and `/`, which a setting's name
 * cannot: node_selector and annotations are lists of "key=value".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubernetes.h"

#define SPEC(n, t, d) \
    static const sy_param_spec n##_spec = {sizeof(sy_param_spec), 0, #n, t, d}

SPEC(kubeconfig, SY_PARAM_STRING,
     "kubeconfig file (default $KUBECONFIG, then ~/.kube/config, then the "
     "in-cluster service account)");
SPEC(context, SY_PARAM_STRING,
     "the kubeconfig's context (default its current-context)");
SPEC(namespace, SY_PARAM_STRING,
     "namespace of the Jobs (default the context's, then \"default\")");
SPEC(image, SY_PARAM_STRING, "the container image of a task that names none");
SPEC(instance, SY_PARAM_STRING,
     "the switchyard.dev/instance label: the watches select it; hosts that "
     "take over each other's runs must share it (default \"switchyard\")");
SPEC(max_in_flight, SY_PARAM_INT,
     "Jobs that exist at once (default 500)");
SPEC(service_account, SY_PARAM_STRING, "the pods' service account");
SPEC(node_selector, SY_PARAM_ARRAY,
     "\"key=value\" node labels the pods need (a task adds its own)");
SPEC(tolerations, SY_PARAM_ARRAY,
     "the pods' tolerations: groups of key, operator, value, effect");
SPEC(image_pull_secrets, SY_PARAM_ARRAY, "names of image pull secrets");
SPEC(image_pull_timeout, SY_PARAM_DURATION,
     "how long a pod may fail to pull its image before the attempt fails "
     "(default 60s)");
SPEC(unschedulable_timeout, SY_PARAM_DURATION,
     "how long a pod may stay Unschedulable before the attempt fails "
     "(default 5m)");
SPEC(keep_finished, SY_PARAM_DURATION,
     "keep finished Jobs this long (ttlSecondsAfterFinished) instead of "
     "deleting each once its log is read");
SPEC(max_input, SY_PARAM_INT,
     "largest input context, bytes, passed as SWITCHYARD_INPUT (default "
     "131072)");
SPEC(retry_wait, SY_PARAM_DURATION,
     "a 429 on a create waits up to this long in the plugin; a longer "
     "Retry-After defers the attempt to the host (default 10s)");
SPEC(connect_timeout, SY_PARAM_DURATION,
     "to open a connection to the API server (default 5s)");
SPEC(service_account_dir, SY_PARAM_STRING,
     "where the in-cluster credentials are (default "
     "/var/run/secrets/kubernetes.io/serviceaccount)");
SPEC(command, SY_PARAM_ARRAY,
     "the container's command and arguments (default the image's)");
SPEC(env, SY_PARAM_GROUP, "environment variables of the container");
SPEC(resources, SY_PARAM_GROUP,
     "cpu, memory (requests and limits) and gpus (nvidia.com/gpu)");
SPEC(annotations, SY_PARAM_ARRAY, "\"key=value\" annotations of the pod");

const sy_param_spec *const sy_k8s_instance_params[] = {
    &kubeconfig_spec, &context_spec, &namespace_spec, &image_spec,
    &instance_spec, &max_in_flight_spec, &service_account_spec,
    &node_selector_spec, &tolerations_spec, &image_pull_secrets_spec,
    &image_pull_timeout_spec, &unschedulable_timeout_spec,
    &keep_finished_spec, &max_input_spec, &retry_wait_spec,
    &connect_timeout_spec, &service_account_dir_spec, NULL};

const sy_param_spec *const sy_k8s_task_params[] = {
    &image_spec, &command_spec, &env_spec, &resources_spec,
    &node_selector_spec, &annotations_spec, NULL};

static json_t *params_json(const sy_host_api *api, const sy_params *p)
{
    char *text = api->param_json(p);
    if (!text)
        return NULL;
    json_t *j = json_loads(text, 0, NULL);
    api->free_string(text);
    return j;
}

static int dup_opt(const sy_host_api *api, const sy_params *cfg,
                   const char *key, char **out, char *err, size_t err_len)
{
    const char *v = NULL;
    int rc = sy_sdk_param_string(api, cfg, key, NULL, &v, err, err_len);
    if (rc != SY_OK)
        return rc;
    if (v && !v[0]) {
        sy_sdk_errf(err, err_len, "%s: must not be empty", key);
        return SY_EINVAL;
    }
    *out = v ? strdup(v) : NULL;
    if (v && !*out) {
        /* A copy that failed must not read as a setting left out. */
        sy_sdk_errf(err, err_len, "%s: out of memory", key);
        return SY_ENOMEM;
    }
    return SY_OK;
}

/* "key=value" strings into an object (merged over `into`). */
static int pairs(json_t *list, const char *key, json_t *into, char *err,
                 size_t err_len)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) {
        const char *s = json_string_value(v);
        const char *eq = s ? strchr(s, '=') : NULL;
        if (!eq || eq == s) {
            sy_sdk_errf(err, err_len, "%s: element %zu must be a string "
                        "\"key=value\"", key, i + 1);
            return SY_EINVAL;
        }
        char *k = strndup(s, (size_t)(eq - s));
        int set = k ? json_object_set_new(into, k, json_string(eq + 1)) : -1;
        free(k);
        if (set != 0) {
            sy_sdk_errf(err, err_len, "%s: out of memory", key);
            return SY_ENOMEM;
        }
    }
    return SY_OK;
}

int sy_k8s_settings_read(const sy_host_api *api, const sy_params *cfg,
                         sy_k8s_settings *s, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    char *kubeconfig = NULL, *context = NULL, *sa_dir = NULL;
    int rc = dup_opt(api, cfg, "kubeconfig", &kubeconfig, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "context", &context, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "service_account_dir", &sa_dir, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "namespace", &s->ns, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "image", &s->image, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "instance", &s->instance, err, err_len);
    if (rc == SY_OK)
        rc = dup_opt(api, cfg, "service_account", &s->service_account, err,
                     err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, cfg, "max_in_flight",
                              SY_K8S_DEFAULT_MAX_IN_FLIGHT, 1,
                              SY_K8S_MAX_IN_FLIGHT, &s->max_in_flight, err,
                              err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_int(api, cfg, "max_input", SY_K8S_DEFAULT_MAX_INPUT,
                              2, 1024 * 1024, &s->max_input, err, err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "image_pull_timeout",
                                      SY_K8S_DEFAULT_PULL_TIMEOUT_MS, 1,
                                      INT64_MAX, &s->pull_timeout_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "unschedulable_timeout",
                                      SY_K8S_DEFAULT_UNSCHED_TIMEOUT_MS, 1,
                                      INT64_MAX, &s->unsched_timeout_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "keep_finished", -1000, 0,
                                      INT64_MAX, &s->keep_finished_s, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "retry_wait",
                                      SY_K8S_DEFAULT_RETRY_WAIT_MS, 0,
                                      3600 * 1000, &s->retry_wait_ms, err,
                                      err_len);
    if (rc == SY_OK)
        rc = sy_sdk_param_duration_ms(api, cfg, "connect_timeout", 5000, 1,
                                      600000, &s->connect_timeout_ms, err,
                                      err_len);
    if (rc != SY_OK)
        goto out;
    /* ms to whole seconds, rounded up; -1 (not set) stays -1. */
    s->keep_finished_s = s->keep_finished_s < 0 ? -1
                                                : (s->keep_finished_s + 999) / 1000;
    if (!s->instance && !(s->instance = strdup("switchyard"))) {
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
        goto out;
    }

    json_t *j = params_json(api, cfg);
    if (!j) {
        /* Without it node_selector, tolerations and image_pull_secrets
         * would read as absent. */
        sy_sdk_errf(err, err_len, "out of memory");
        rc = SY_ENOMEM;
        goto out;
    }
    json_t *ns = json_object_get(j, "node_selector");
    if (ns) {
        s->node_selector = json_object();
        rc = s->node_selector ? pairs(ns, "node_selector", s->node_selector,
                                      err, err_len)
                              : SY_ENOMEM;
        if (!s->node_selector)
            sy_sdk_errf(err, err_len, "node_selector: out of memory");
    }
    json_t *tol = json_object_get(j, "tolerations");
    size_t i;
    json_t *v;
    json_array_foreach(tol, i, v) {
        if (rc == SY_OK && !json_is_object(v)) {
            sy_sdk_errf(err, err_len, "tolerations: element %zu must be a "
                        "group (key, operator, value, effect)", i + 1);
            rc = SY_EINVAL;
        }
    }
    if (tol && rc == SY_OK)
        s->tolerations = json_incref(tol);
    json_t *ips = json_object_get(j, "image_pull_secrets");
    if (ips && rc == SY_OK) {
        s->image_pull_secrets = json_array();
        json_array_foreach(ips, i, v) {
            if (!s->image_pull_secrets ||
                json_array_append_new(s->image_pull_secrets,
                                      json_pack("{sO}", "name", v)) != 0) {
                sy_sdk_errf(err, err_len, "image_pull_secrets: out of "
                            "memory");
                rc = SY_ENOMEM;
                break;
            }
            if (!json_is_string(v)) {
                sy_sdk_errf(err, err_len, "image_pull_secrets: element %zu "
                            "must be a secret's name", i + 1);
                rc = SY_EINVAL;
                break;
            }
        }
    }
    json_decref(j);
    if (rc != SY_OK)
        goto out;

    /* The credentials: the setting, $KUBECONFIG (its first file), the
     * home directory's, then the in-cluster service account. */
    const char *path = kubeconfig;
    char buf[4096];
    bool explicit_path = path != NULL;
    if (!path) {
        const char *env = getenv("KUBECONFIG");
        if (env && env[0]) {
            snprintf(buf, sizeof buf, "%.*s", (int)strcspn(env, ":"), env);
            path = buf;
            explicit_path = true;
        } else if (getenv("HOME")) {
            snprintf(buf, sizeof buf, "%s/.kube/config", getenv("HOME"));
            if (access(buf, R_OK) == 0)
                path = buf;
        }
    }
    if (path) {
        rc = sy_k8s_kubeconfig_load(path, context, &s->conn, err, err_len);
    } else {
        bool found = false;
        if (context) {
            sy_sdk_errf(err, err_len, "context: set, but no kubeconfig was "
                        "found ($KUBECONFIG, ~/.kube/config)");
            rc = SY_EINVAL;
            goto out;
        }
        rc = sy_k8s_incluster_load(
            sa_dir ? sa_dir : "/var/run/secrets/kubernetes.io/serviceaccount",
            &s->conn, &found, err, err_len);
        if (rc == SY_OK && !found) {
            sy_sdk_errf(err, err_len, "no cluster: no kubeconfig setting, "
                        "no $KUBECONFIG, no ~/.kube/config, and not in a "
                        "cluster (KUBERNETES_SERVICE_HOST unset)");
            rc = SY_EINVAL;
        }
    }
    (void)explicit_path;
    if (rc != SY_OK)
        goto out;
    if (!s->ns && !(s->ns = strdup(s->conn.ns ? s->conn.ns : "default"))) {
        sy_sdk_errf(err, err_len, "namespace: out of memory");
        rc = SY_ENOMEM;
    }
out:
    free(kubeconfig);
    free(context);
    free(sa_dir);
    if (rc != SY_OK)
        sy_k8s_settings_free(s);
    return rc;
}

void sy_k8s_settings_free(sy_k8s_settings *s)
{
    sy_k8s_conn_free(&s->conn);
    free(s->ns);
    free(s->image);
    free(s->instance);
    free(s->service_account);
    json_decref(s->node_selector);
    json_decref(s->tolerations);
    json_decref(s->image_pull_secrets);
    memset(s, 0, sizeof *s);
}

/* ---- a task's container ------------------------------------------------------ */

/* A quantity: a string ("500m", "1Gi") or a number (2, 0.5). */
static json_t *quantity(json_t *v)
{
    if (json_is_string(v) && json_string_length(v) > 0)
        return json_incref(v);
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
        return json_string(b);
    }
    if (json_is_real(v) && json_real_value(v) >= 0) {
        char b[32];
        snprintf(b, sizeof b, "%g", json_real_value(v));
        return json_string(b);
    }
    return NULL;
}

static int read_resources(json_t *r, sy_k8s_spec *out, char *err,
                          size_t err_len)
{
    json_t *limits = json_object(), *requests = json_object();
    const char *k;
    json_t *v;
    int rc = SY_OK;
    json_object_foreach(r, k, v) {
        const char *name = strcmp(k, "cpu") == 0      ? "cpu"
                           : strcmp(k, "memory") == 0 ? "memory"
                           : strcmp(k, "gpus") == 0   ? "nvidia.com/gpu"
                                                      : NULL;
        json_t *q = quantity(v);
        if (!name || !q) {
            json_decref(q);
            sy_sdk_errf(err, err_len, !name ? "resources: unknown key \"%s\" "
                        "(cpu, memory, gpus)" : "resources.%s: must be a "
                        "quantity (\"500m\", \"1Gi\", 2)", k);
            rc = SY_EINVAL;
            break;
        }
        /* GPUs are only limits (Kubernetes sets the request to match);
         * cpu and memory are requested as much as they are limited, so
         * the pod is scheduled where it fits. */
        if (strcmp(k, "gpus") != 0)
            json_object_set(requests, name, q);
        json_object_set_new(limits, name, q);
    }
    if (rc == SY_OK && json_object_size(limits) > 0)
        out->resources = json_pack("{soso}", "limits", json_incref(limits),
                                   "requests", json_incref(requests));
    json_decref(limits);
    json_decref(requests);
    return rc;
}

int sy_k8s_spec_read(const sy_host_api *api, const sy_k8s_settings *s,
                     const sy_params *p, sy_k8s_spec *out, char *err,
                     size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->params = params_json(api, p);
    if (!out->params) {
        sy_sdk_errf(err, err_len, "out of memory");
        return SY_ENOMEM;
    }
    json_t *j = out->params;
    int rc = SY_OK;
    json_t *img = json_object_get(j, "image");
    out->image = json_is_string(img) ? json_string_value(img) : s->image;
    if (!out->image || !out->image[0]) {
        sy_sdk_errf(err, err_len, "image: not set, and the instance has no "
                    "default image");
        rc = SY_EINVAL;
        goto out;
    }
    json_t *cmd = json_object_get(j, "command"), *v;
    size_t i;
    /* The host checks the declared types of a workflow's keys; validate()
     * and submit() may be handed anything (the conformance kit does). */
    static const struct { const char *key; json_type type; const char *what; }
        shapes[] = {{"image", JSON_STRING, "a string"},
                    {"command", JSON_ARRAY, "a list of strings"},
                    {"env", JSON_OBJECT, "a group"},
                    {"resources", JSON_OBJECT, "a group"},
                    {"node_selector", JSON_ARRAY, "a list of \"key=value\""},
                    {"annotations", JSON_ARRAY, "a list of \"key=value\""}};
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        v = json_object_get(j, shapes[i].key);
        if (v && json_typeof(v) != shapes[i].type) {
            sy_sdk_errf(err, err_len, "%s: must be %s", shapes[i].key,
                        shapes[i].what);
            rc = SY_EINVAL;
            goto out;
        }
    }
    if (cmd) {
        json_array_foreach(cmd, i, v) if (!json_is_string(v)) {
            sy_sdk_errf(err, err_len, "command: element %zu must be a string",
                        i + 1);
            rc = SY_EINVAL;
            goto out;
        }
        out->command = json_incref(cmd);
    }
    out->env = json_array();
    json_t *env = json_object_get(j, "env");
    const char *k;
    json_object_foreach(env, k, v) {
        json_t *val = json_is_string(v) ? json_incref(v) : NULL;
        if (!val && (json_is_number(v) || json_is_boolean(v))) {
            char *t = json_dumps(v, JSON_ENCODE_ANY);
            val = json_string(t);
            free(t);
        }
        if (!val || strncmp(k, "SWITCHYARD_", 11) == 0) {
            json_decref(val);
            sy_sdk_errf(err, err_len, val ? "env.%s: SWITCHYARD_ names are "
                        "the plugin's" : "env.%s: must be a string or a "
                        "number", k);
            rc = SY_EINVAL;
            goto out;
        }
        json_array_append_new(out->env, json_pack("{ssso}", "name", k,
                                                  "value", val));
    }
    json_t *res = json_object_get(j, "resources");
    if (res && (rc = read_resources(res, out, err, err_len)) != SY_OK)
        goto out;
    json_t *ns = json_object_get(j, "node_selector");
    if (ns || s->node_selector) {
        out->node_selector = s->node_selector ? json_copy(s->node_selector)
                                              : json_object();
        if (ns && (rc = pairs(ns, "node_selector", out->node_selector, err,
                              err_len)) != SY_OK)
            goto out;
    }
    json_t *ann = json_object_get(j, "annotations");
    if (ann) {
        out->annotations = json_object();
        rc = pairs(ann, "annotations", out->annotations, err, err_len);
    }
out:
    if (rc != SY_OK)
        sy_k8s_spec_free(out);
    return rc;
}

void sy_k8s_spec_free(sy_k8s_spec *sp)
{
    json_decref(sp->params);
    json_decref(sp->command);
    json_decref(sp->env);
    json_decref(sp->resources);
    json_decref(sp->node_selector);
    json_decref(sp->annotations);
    memset(sp, 0, sizeof *sp);
}
