/*
 * event.c -- reading one line of a watch stream (newline-delimited JSON
 * events) into what the watch acts on, with no instance and no cache:
 * the API server's bytes are another program's output, so this is the
 * part the reliability suite fuzzes (tests/fuzz/kubernetes.c), apart
 * from the loop and the cache that watch.c keeps; and reading what a
 * Job and its pod say (sy_k8s_state_read) for judge.c, which decides.
 */
#include <string.h>

#include "kubernetes.h"

const char *sy_k8s_meta_str(json_t *obj, const char *a, const char *b)
{
    json_t *m = json_object_get(json_object_get(obj, "metadata"), a);
    if (b)
        m = json_object_get(m, b);
    return json_is_string(m) ? json_string_value(m) : NULL;
}

const char *sy_k8s_uid(json_t *obj, bool owner)
{
    json_t *m = json_object_get(obj, "metadata");
    if (owner)
        m = json_array_get(json_object_get(m, "ownerReferences"), 0);
    return json_string_value(json_object_get(m, "uid"));
}

sy_k8s_event_kind sy_k8s_event_read(const char *line, size_t len,
                                    sy_k8s_event *out)
{
    memset(out, 0, sizeof *out);
    out->root = json_loadb(line, len, 0, NULL);
    out->type = json_string_value(json_object_get(out->root, "type"));
    json_t *obj = json_object_get(out->root, "object");
    if (!out->type || !json_is_object(obj))
        return out->kind = SY_K8S_EVENT_SKIP;
    if (strcmp(out->type, "ERROR") == 0) {
        /* A Status object: only 410 Gone (the version is too old) asks
         * for something, a relist; any other error is the stream's end. */
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        return out->kind = code == 410 ? SY_K8S_EVENT_GONE
                                       : SY_K8S_EVENT_SKIP;
    }
    out->object = obj;
    out->rv = sy_k8s_meta_str(obj, "resourceVersion", NULL);
    return out->kind = strcmp(out->type, "BOOKMARK") == 0
                           ? SY_K8S_EVENT_BOOKMARK
                           : SY_K8S_EVENT_OBJECT;
}

void sy_k8s_event_free(sy_k8s_event *ev)
{
    json_decref(ev->root);
    memset(ev, 0, sizeof *ev);
}

/* ---- what a Job and its pod say -------------------------------------------- */

/* The condition `type` of `obj` with status "True", or NULL. */
static json_t *cond(json_t *obj, const char *type)
{
    json_t *a = json_object_get(json_object_get(obj, "status"), "conditions");
    json_t *c;
    size_t i;
    json_array_foreach(a, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && s && strcmp(t, type) == 0 && strcmp(s, "True") == 0)
            return c;
    }
    return NULL;
}

const char *sy_k8s_str(json_t *o, const char *key, const char *def)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : def;
}

/* The state of the pod's (only) container: {"waiting"|"running"|
 * "terminated": {...}}. */
static json_t *cstate(json_t *pod, const char *which)
{
    json_t *cs = json_array_get(json_object_get(json_object_get(pod, "status"),
                                                "containerStatuses"), 0);
    return json_object_get(json_object_get(cs, "state"), which);
}

void sy_k8s_state_read(json_t *job, json_t *pod, const char *uid,
                       sy_k8s_state *out)
{
    memset(out, 0, sizeof *out);
    const char *owner = sy_k8s_uid(pod, true);
    if (pod && uid && uid[0] && owner && strcmp(owner, uid) != 0)
        pod = NULL; /* an earlier Job's pod */
    out->pod = pod;
    json_t *st = json_object_get(pod, "status");
    out->phase = sy_k8s_str(st, "phase", "");
    out->disruption = cond(pod, "DisruptionTarget");
    out->evicted = strcmp(sy_k8s_str(st, "reason", ""), "Evicted") == 0;
    out->terminated = cstate(pod, "terminated");
    out->waiting = cstate(pod, "waiting");
    out->wait_reason = sy_k8s_str(out->waiting, "reason", "");
    json_t *a = json_object_get(st, "conditions");
    size_t i;
    json_t *c;
    json_array_foreach(a, i, c)
        if (strcmp(sy_k8s_str(c, "type", ""), "PodScheduled") == 0 &&
            strcmp(sy_k8s_str(c, "status", ""), "False") == 0 &&
            strcmp(sy_k8s_str(c, "reason", ""), "Unschedulable") == 0)
            out->unschedulable = c;
    out->failed = cond(job, "Failed");
    out->complete = cond(job, "Complete") != NULL;
}
