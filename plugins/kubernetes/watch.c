/*
 * watch.c -- the instance's two watches and the object cache they fill.
 *
 * One watch on Jobs and one on Pods, each with the label selector
 * switchyard.dev/instance=<instance>: a thousand Jobs in flight cost two
 * connections, and no attempt polls.  Each watch lists first, then
 * watches from the list's resourceVersion with bookmarks on, and keeps the
 * newest resourceVersion it has seen (events and bookmarks), so that:
 *
 *   the server closes the stream    watch again from that version, after
 *   (timeout, restart, fault)       a backoff that grows while streams
 *                                   end with nothing delivered
 *   410 Gone (an ERROR event with   the version is too old: list again
 *   code 410, or an HTTP 410)       and watch from the new list's
 *   any other failure               list again after the backoff
 *
 * Every object seen is kept by Job name (a pod by its switchyard.dev/job
 * label) in the cache, whether an attempt follows it yet or not: a Job
 * adopted after a restart may have finished before its attempt is
 * resumed, and the list says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubernetes.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

/* ---- the cache ----------------------------------------------------------------- */

static size_t bucket(const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h % SY_K8S_BUCKETS;
}

sy_k8s_entry *sy_k8s_entry_get(sy_instance *inst, const char *name,
                               bool create)
{
    size_t b = bucket(name);
    for (sy_k8s_entry *e = inst->buckets[b]; e; e = e->hnext)
        if (strcmp(e->name, name) == 0)
            return e;
    if (!create || strlen(name) > SY_K8S_NAME_MAX)
        return NULL;
    sy_k8s_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->hnext = inst->buckets[b];
    inst->buckets[b] = e;
    return e;
}

void sy_k8s_entry_release(sy_instance *inst, sy_k8s_entry *e)
{
    /* Kept while an attempt follows it or the Job still exists. */
    if (e->att || (e->job && !e->job_gone))
        return;
    for (sy_k8s_entry **p = &inst->buckets[bucket(e->name)]; *p;
         p = &(*p)->hnext)
        if (*p == e) {
            *p = e->hnext;
            break;
        }
    json_decref(e->job);
    json_decref(e->pod);
    free(e);
}

/* One object from a list or an event into the cache. */
static void apply(sy_instance *inst, sy_k8s_watch *w, const char *type,
                  json_t *obj)
{
    const char *name = w->pods ? sy_k8s_meta_str(obj, "labels", "switchyard.dev/job")
                               : sy_k8s_meta_str(obj, "name", NULL);
    if (!name)
        return;
    bool deleted = strcmp(type, "DELETED") == 0;
    sy_k8s_entry *e = sy_k8s_entry_get(inst, name, !deleted);
    if (!e)
        return;
    /* Once an attempt knows its Job's uid, what belongs to an earlier
     * Job of the same name (deleted, its pod still terminating) is not
     * the attempt's news. */
    const char *uid = sy_k8s_uid(obj, w->pods);
    if (e->att && e->att->uid[0] && uid && strcmp(uid, e->att->uid) != 0)
        return;
    if (w->pods) {
        /* A Job has one pod (backoffLimit 0, restartPolicy Never); a
         * deleted pod keeps its last state: an evicted or preempted pod
         * is judged by it. */
        json_decref(e->pod);
        e->pod = json_incref(obj);
        e->pod_gone = deleted;
    } else {
        json_decref(e->job);
        e->job = json_incref(obj);
        e->job_gone = deleted;
    }
    if (e->att)
        sy_k8s_follow_update(inst, e);
    else if (deleted && (w->pods ? !e->job || e->job_gone : true))
        sy_k8s_entry_release(inst, e);
}

/* What a list no longer holds was deleted while no watch was open (the
 * DELETED event is lost with a 410): a Job an attempt follows, made
 * before the list was asked for, is gone; a pod keeps its last state,
 * marked gone. */
static void forget_missing(sy_instance *inst, sy_k8s_watch *w, json_t *seen)
{
    for (size_t b = 0; b < SY_K8S_BUCKETS; b++) {
        sy_k8s_entry *e = inst->buckets[b];
        while (e) {
            sy_k8s_entry *next = e->hnext;
            bool present = json_object_get(seen, e->name) != NULL;
            sy_k8s_job *att = e->att;
            if (!present && w->pods && e->pod && !e->pod_gone) {
                e->pod_gone = true;
                if (att)
                    sy_k8s_follow_update(inst, e);
            } else if (!present && !w->pods && e->job && !e->job_gone) {
                if (!att) {
                    e->job_gone = true;
                    sy_k8s_entry_release(inst, e);
                } else if (att->state == SY_K8S_FOLLOWING &&
                           att->created_ms < w->list_ms) {
                    e->job_gone = true;
                    sy_k8s_follow_update(inst, e);
                }
            }
            e = next;
        }
    }
}

/* ---- list and watch ---------------------------------------------------------------- */

static void start(sy_k8s_watch *w);

static void on_backoff(uv_timer_t *t)
{
    start(t->data);
}

static void restart_later(sy_k8s_watch *w, bool relist)
{
    if (relist)
        w->rv[0] = '\0';
    if (w->got_event)
        w->backoff_ms = 0;
    w->got_event = false;
    int64_t d = w->backoff_ms;
    w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : BACKOFF_MIN_MS;
    if (w->backoff_ms > BACKOFF_MAX_MS)
        w->backoff_ms = BACKOFF_MAX_MS;
    uv_timer_start(&w->timer, on_backoff, (uint64_t)d, 0);
}

static void on_line(sy_instance *inst, sy_k8s_req *r, char *line,
                    size_t len)
{
    sy_k8s_watch *w = r->arg;
    sy_k8s_event ev;
    switch (sy_k8s_event_read(line, len, &ev)) {
    case SY_K8S_EVENT_SKIP:
        break;
    case SY_K8S_EVENT_GONE:
        atomic_fetch_add(&inst->stats.gone_410, 1);
        w->rv[0] = '\0'; /* the stream's end relists */
        break;
    case SY_K8S_EVENT_BOOKMARK:
    case SY_K8S_EVENT_OBJECT:
        if (ev.rv)
            snprintf(w->rv, sizeof w->rv, "%s", ev.rv);
        w->got_event = true;
        if (ev.kind == SY_K8S_EVENT_OBJECT)
            apply(inst, w, ev.type, ev.object);
        break;
    }
    sy_k8s_event_free(&ev);
}

static void on_watch_done(sy_instance *inst, sy_k8s_req *r)
{
    sy_k8s_watch *w = r->arg;
    long status = r->status;
    CURLcode code = r->code;
    sy_k8s_req_free(r);
    w->req = NULL;
    if (status == 410) {
        atomic_fetch_add(&inst->stats.gone_410, 1);
        w->rv[0] = '\0';
    }
    atomic_fetch_add(&inst->stats.watch_restarts, 1);
    if (status != 200 && status != 410 && status != 0)
        inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: the %s watch "
                       "answered HTTP %ld; listing again",
                       w->pods ? "pod" : "job", status);
    else if (code != CURLE_OK && status == 0)
        inst->api->log(inst->host, SY_LOG_DEBUG, "kubernetes: the %s watch "
                       "ended: %s", w->pods ? "pod" : "job",
                       curl_easy_strerror(code));
    /* An empty rv (410, or another failure) makes the restart a list. */
    restart_later(w, status != 200 && status != 0);
}

static void on_list_done(sy_instance *inst, sy_k8s_req *r)
{
    sy_k8s_watch *w = r->arg;
    w->req = NULL;
    json_t *j = NULL;
    if (r->code == CURLE_OK && r->status == 200)
        j = json_loadb(r->body ? r->body : "", r->body_len, 0, NULL);
    const char *rv = sy_k8s_meta_str(j, "resourceVersion", NULL);
    if (!rv) {
        char msg[256];
        if (r->code != CURLE_OK)
            snprintf(msg, sizeof msg, "%s", curl_easy_strerror(r->code));
        else
            sy_k8s_status_message(r, msg, sizeof msg);
        inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: cannot list "
                       "%s in %s (HTTP %ld): %s", w->pods ? "pods" : "jobs",
                       inst->set.ns, r->status, msg);
        sy_k8s_req_free(r);
        json_decref(j);
        restart_later(w, true);
        return;
    }
    snprintf(w->rv, sizeof w->rv, "%s", rv);
    atomic_fetch_add(&inst->stats.relists, 1);
    json_t *items = json_object_get(j, "items"), *it;
    size_t i;
    json_t *seen = json_object();
    json_array_foreach(items, i, it) {
        const char *name = w->pods ? sy_k8s_meta_str(it, "labels", "switchyard.dev/job")
                                   : sy_k8s_meta_str(it, "name", NULL);
        if (name)
            json_object_set_new(seen, name, json_true());
        apply(inst, w, "MODIFIED", it);
    }
    forget_missing(inst, w, seen);
    json_decref(seen);
    sy_k8s_req_free(r);
    json_decref(j);
    w->backoff_ms = 0;
    w->got_event = false;
    start(w);
}

static void start(sy_k8s_watch *w)
{
    sy_instance *inst = w->inst;
    char path[1024], err[256];
    bool list = w->rv[0] == '\0';
    if (list)
        snprintf(path, sizeof path, "%s?labelSelector=%s", w->path,
                 inst->selector);
    else
        snprintf(path, sizeof path, "%s?watch=true&labelSelector=%s"
                 "&resourceVersion=%s&allowWatchBookmarks=true"
                 "&timeoutSeconds=300", w->path, inst->selector, w->rv);
    sy_k8s_req *r = sy_k8s_req_new(inst, "GET", path, NULL,
                                   list ? on_list_done : on_watch_done, w);
    if (!r) {
        restart_later(w, list);
        return;
    }
    if (list) {
        r->limit = 256u << 20;
    } else {
        r->stream = true;
        r->line = on_line;
        r->limit = 16u << 20; /* one event's line */
    }
    if (sy_k8s_http_start(inst, r, err, sizeof err) != SY_OK) {
        inst->api->log(inst->host, SY_LOG_WARN, "kubernetes: %s", err);
        sy_k8s_req_free(r);
        restart_later(w, list);
        return;
    }
    w->req = r;
    w->listing = list;
    if (list)
        w->list_ms = sy_k8s_now_ms();
}

static void init_one(sy_instance *inst, sy_k8s_watch *w, bool pods)
{
    w->inst = inst;
    w->pods = pods;
    snprintf(w->path, sizeof w->path, pods ? "/api/v1/namespaces/%s/pods"
                                           : "/apis/batch/v1/namespaces/%s/jobs",
             inst->set.ns);
    uv_timer_init(sy_http_loop_uv(inst->http), &w->timer);
    w->timer.data = w;
}

void sy_k8s_watch_start(sy_instance *inst)
{
    char v[SY_K8S_NAME_MAX + 1];
    sy_k8s_label_value(inst->set.instance, v);
    /* `=` and `/` percent-encoded in the query. */
    snprintf(inst->selector, sizeof inst->selector,
             "switchyard.dev%%2Finstance%%3D%s", v);
    init_one(inst, &inst->watch_jobs, false);
    init_one(inst, &inst->watch_pods, true);
    start(&inst->watch_jobs);
    start(&inst->watch_pods);
}

void sy_k8s_watch_stop(sy_instance *inst)
{
    sy_k8s_watch *ws[2] = {&inst->watch_jobs, &inst->watch_pods};
    for (int i = 0; i < 2; i++) {
        if (ws[i]->req) {
            sy_k8s_http_abort(inst, ws[i]->req);
            sy_k8s_req_free(ws[i]->req);
            ws[i]->req = NULL;
        }
        if (ws[i]->inst)
            uv_timer_stop(&ws[i]->timer);
    }
}
