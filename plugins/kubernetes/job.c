/*
 * job.c -- one attempt as one batch/v1 Job: its name, labels and manifest.
 *
 * The name is a function of (instance, run, task, attempt) alone, so that
 * every host that ever starts or resumes the attempt asks for the same
 * Job, and the API server's AlreadyExists is what makes it one:
 *
 *     sy-<run>-<task, cut>-<attempt>-<8 hex of a hash of all four>
 *
 * (DNS-1123: lowercase letters, digits and `-`, at most 63).  The cut
 * parts are for people; the hash is what keeps two tasks whose names cut
 * alike apart.  Labels carry the same facts, sanitised to label values;
 * annotations carry them in full.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubernetes.h"

/* FNV-1a 64: stable across hosts, builds and versions, which is all a
 * name needs (the API server, not the hash, guards against collisions:
 * a colliding create is an adoption of the other Job, whose labels we
 * check in follow.c). */
static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Lowercase [a-z0-9-] of `in`, runs of anything else as one `-`, at most
 * `max` characters, no `-` at either end. */
static size_t dns_part(const char *in, char *out, size_t max)
{
    size_t n = 0;
    for (const char *p = in; *p && n < max; p++) {
        char c = (char)tolower((unsigned char)*p);
        if (!isalnum((unsigned char)c) || (unsigned char)c > 127)
            c = '-';
        if (c == '-' && (n == 0 || out[n - 1] == '-'))
            continue;
        out[n++] = c;
    }
    while (n > 0 && out[n - 1] == '-')
        n--;
    out[n] = '\0';
    return n;
}

void sy_k8s_job_name(const char *instance, const char *run,
                     const char *task, int64_t element, uint32_t attempt,
                     char out[SY_K8S_NAME_MAX + 1])
{
    /* An element of a map shares its task's id: its index goes into the
     * name ("e17-3", element 17 attempt 3) and the hash, so that two
     * elements never name one Job. */
    char att[48];
    if (element >= 0)
        snprintf(att, sizeof att, "e%" PRId64 "-%" PRIu32, element, attempt);
    else
        snprintf(att, sizeof att, "%" PRIu32, attempt);
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, instance, strlen(instance) + 1);
    h = fnv(h, run, strlen(run) + 1);
    h = fnv(h, task, strlen(task) + 1);
    h = fnv(h, att, strlen(att));
    char r[24], t[64];
    if (dns_part(run, r, 16) == 0)
        strcpy(r, "r");
    /* "sy-" R "-" T "-" ATT "-" 8HEX */
    size_t fixed = 3 + strlen(r) + 1 + 1 + strlen(att) + 1 + 8;
    size_t room = SY_K8S_NAME_MAX - fixed;
    if (dns_part(task, t, room < sizeof t - 1 ? room : sizeof t - 1) == 0)
        strcpy(t, "t");
    snprintf(out, SY_K8S_NAME_MAX + 1, "sy-%s-%s-%s-%08" PRIx32, r, t, att,
             (uint32_t)(h ^ (h >> 32)));
}

void sy_k8s_label_value(const char *in, char out[SY_K8S_NAME_MAX + 1])
{
    size_t n = 0;
    for (const char *p = in; *p && n < SY_K8S_NAME_MAX; p++) {
        unsigned char c = (unsigned char)*p;
        out[n++] = (c < 128 && (isalnum(c) || c == '-' || c == '_' ||
                                c == '.')) ? (char)c : '_';
    }
    out[n] = '\0';
    size_t start = 0;
    while (start < n && !isalnum((unsigned char)out[start]))
        start++;
    while (n > start && !isalnum((unsigned char)out[n - 1]))
        n--;
    memmove(out, out + start, n - start);
    out[n - start] = '\0';
    if (!out[0])
        strcpy(out, "x");
}

static void task_hash(const char *task, char out[17])
{
    uint64_t h = fnv(0xcbf29ce484222325ull, task, strlen(task));
    snprintf(out, 17, "%016" PRIx64, h);
}

int sy_k8s_job_manifest(const sy_k8s_settings *s, const sy_task *task,
                        const sy_k8s_spec *sp, sy_k8s_job *job, char *err,
                        size_t err_len)
{
    char inst[SY_K8S_NAME_MAX + 1], run[SY_K8S_NAME_MAX + 1], th[17],
        att[16], elem[24];
    sy_k8s_label_value(s->instance, inst);
    sy_k8s_label_value(task->run_id, run);
    task_hash(task->task_id, th);
    snprintf(att, sizeof att, "%" PRIu32, task->attempt);
    /* A 1.3 host's sy_task has no element: it runs no map's elements
     * through a plugin that needs 1.4 anyway. */
    int64_t element = SY_HAS_FIELD(task, sy_task, element) ? task->element : -1;
    snprintf(elem, sizeof elem, "%" PRId64, element);
    sy_k8s_job_name(s->instance, task->run_id, task->task_id, element,
                    task->attempt, job->name);

    json_t *labels = json_pack("{ssssssss}", "switchyard.dev/instance", inst,
                               "switchyard.dev/run", run,
                               "switchyard.dev/task-hash", th,
                               "switchyard.dev/attempt", att);
    json_t *annotations = json_pack(
        "{ssssssssss}", "switchyard.dev/instance", s->instance,
        "switchyard.dev/run", task->run_id, "switchyard.dev/task",
        task->task_id, "switchyard.dev/namespace", task->ns,
        "switchyard.dev/attempt", att);
    if (labels && annotations && element >= 0) {
        json_object_set_new(labels, "switchyard.dev/element", json_string(elem));
        json_object_set_new(annotations, "switchyard.dev/element", json_string(elem));
    }
    /* The pod's labels: the Job's, and the Job's name, which is how the
     * pod watch finds an attempt whatever the cluster's own labels are. */
    json_t *pod_labels = json_copy(labels);
    json_object_set_new(pod_labels, "switchyard.dev/job",
                        json_string(job->name));

    json_t *env = json_array();
    json_array_append_new(env, json_pack("{ssss#}", "name", "SWITCHYARD_INPUT",
                                         "value", task->input,
                                         (int)task->input_len));
    json_array_append_new(env, json_pack("{ssss}", "name", "SWITCHYARD_RUN_ID",
                                         "value", task->run_id));
    json_array_append_new(env, json_pack("{ssss}", "name",
                                         "SWITCHYARD_TASK_ID", "value",
                                         task->task_id));
    json_array_append_new(env, json_pack("{ssss}", "name",
                                         "SWITCHYARD_ATTEMPT", "value", att));
    json_array_extend(env, sp->env);

    json_t *container = json_pack("{sssssO}", "name", "task", "image",
                                  sp->image, "env", env);
    json_decref(env);
    if (sp->command)
        json_object_set(container, "command", sp->command);
    if (sp->resources) {
        json_object_set(container, "resources", sp->resources);
        json_t *mem = json_object_get(json_object_get(sp->resources, "limits"),
                                      "memory");
        if (json_is_string(mem))
            snprintf(job->memory_limit, sizeof job->memory_limit, "%s",
                     json_string_value(mem));
    }

    json_t *pod_spec = json_pack("{sss[o]}", "restartPolicy", "Never",
                                 "containers", container);
    if (s->service_account)
        json_object_set_new(pod_spec, "serviceAccountName",
                            json_string(s->service_account));
    if (sp->node_selector && json_object_size(sp->node_selector) > 0)
        json_object_set(pod_spec, "nodeSelector", sp->node_selector);
    if (s->tolerations)
        json_object_set(pod_spec, "tolerations", s->tolerations);
    if (s->image_pull_secrets)
        json_object_set(pod_spec, "imagePullSecrets", s->image_pull_secrets);

    json_t *tmeta = json_pack("{so}", "labels", pod_labels);
    if (sp->annotations)
        json_object_set(tmeta, "annotations", sp->annotations);

    /* One pod, never restarted: a retry is the host's decision, under a
     * new attempt number and so a new Job. */
    json_t *spec = json_pack("{siso}", "backoffLimit", 0, "template",
                             json_pack("{soso}", "metadata", tmeta, "spec",
                                       pod_spec));
    job->deadline_s = task->timeout_ms > 0 ? (task->timeout_ms + 999) / 1000
                                           : 0;
    if (job->deadline_s > 0)
        json_object_set_new(spec, "activeDeadlineSeconds",
                            json_integer(job->deadline_s));
    if (s->keep_finished_s >= 0)
        json_object_set_new(spec, "ttlSecondsAfterFinished",
                            json_integer(s->keep_finished_s));

    json_t *m = json_pack("{sssss{sssoso}so}", "apiVersion", "batch/v1",
                          "kind", "Job", "metadata", "name", job->name,
                          "labels", labels, "annotations", annotations,
                          "spec", spec);
    job->manifest = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    if (!job->manifest) {
        sy_sdk_errf(err, err_len, "cannot build the Job's manifest (out of "
                    "memory, or a parameter that is not UTF-8)");
        return SY_ENOMEM;
    }
    return SY_OK;
}
