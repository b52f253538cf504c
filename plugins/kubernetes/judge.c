/*
 * judge.c -- what an attempt's Job and pod say, as the watches last saw
 * them: run on every change of either (and when a bound below expires),
 * on the loop thread, for an attempt whose Job exists (FOLLOWING).
 *
 *   pod evicted, or a DisruptionTarget condition   DEFERRED (not charged)
 *   container terminated OOMKilled                 FAILED, the memory limit
 *   waiting on an image pull for the bound         FAILED, the kubelet's words
 *   Unschedulable for the bound                    FAILED, the scheduler's
 *   the Job gone while it ran                      FAILED
 *   Job Failed, DeadlineExceeded                   TIMED_OUT
 *   Job Complete                                   the log read for the output
 *   Job Failed, the container's end known          the log's tail, exit code
 *
 * The order matters: a pod's own end says more than its Job's condition
 * (an OOMKilled pod fails its Job with a bare BackoffLimitExceeded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubernetes.h"

static void on_bound(uv_timer_t *t)
{
    sy_k8s_job *job = t->data;
    sy_k8s_judge(job->inst, job);
}

/* A condition that may clear by itself, failed once it lasts `bound`. */
static bool bounded(sy_instance *inst, sy_k8s_job *job, int64_t *since,
                    int64_t bound)
{
    int64_t now = sy_k8s_now_ms();
    if (*since == 0)
        *since = now;
    if (now - *since >= bound)
        return true;
    sy_k8s_job_timer(inst, job, bound - (now - *since), on_bound);
    return false;
}

void sy_k8s_judge(sy_instance *inst, sy_k8s_job *job)
{
    if (job->state != SY_K8S_FOLLOWING)
        return;
    sy_k8s_entry *e = job->entry;
    json_t *j = e->job;
    if (!job->uid[0] && j && !e->job_gone && sy_k8s_uid(j, false))
        snprintf(job->uid, sizeof job->uid, "%s", sy_k8s_uid(j, false));
    sy_k8s_state st;
    sy_k8s_state_read(j, e->pod, job->uid, &st);
    json_t *pod = st.pod;
    const char *phase = st.phase;
    if (pod && strcmp(phase, "Running") == 0 && !job->running_seen) {
        job->running_seen = true;
        atomic_fetch_add(&inst->stats.run_latency_ms,
                         sy_k8s_now_ms() - job->created_ms);
        atomic_fetch_add(&inst->stats.run_latency_n, 1);
    }
    json_t *dt = st.disruption;
    if (dt || st.evicted) {
        if (dt || strcmp(phase, "Failed") == 0 || e->pod_gone) {
            const char *why = dt ? sy_k8s_str(dt, "reason", "DisruptionTarget")
                                 : "Evicted";
            bool pre = strstr(why, "Preemption") != NULL;
            sy_k8s_decide(inst, job, SY_OUTCOME_DEFERRED,
                   pre ? "preempted" : "evicted", "pod %s (%s): %s; "
                   "retried without charging an attempt",
                   pre ? "preempted" : "evicted", why,
                   sy_k8s_str(dt ? dt : json_object_get(pod, "status"), "message",
                        ""));
            return;
        }
    }
    json_t *term = st.terminated;
    if (term && strcmp(sy_k8s_str(term, "reason", ""), "OOMKilled") == 0) {
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "oom_killed", "OOMKilled "
               "(memory limit %s): exit code %lld",
               job->memory_limit[0] ? job->memory_limit : "none set",
               (long long)json_integer_value(json_object_get(term,
                                                             "exitCode")));
        return;
    }
    json_t *wait = st.waiting;
    const char *wr = st.wait_reason;
    if (strcmp(wr, "ErrImagePull") == 0 || strcmp(wr, "ImagePullBackOff") == 0 ||
        strcmp(wr, "InvalidImageName") == 0 ||
        strcmp(wr, "ErrImageNeverPull") == 0) {
        if (strcmp(wr, "ImagePullBackOff") != 0 || !job->log) {
            free(job->log); /* the most telling message, until used */
            job->log = strdup(sy_k8s_str(wait, "message", wr));
        }
        if (bounded(inst, job, &job->pull_since_ms,
                    inst->set.pull_timeout_ms)) {
            char *m = job->log;
            job->log = NULL;
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "image_pull", "%s for %lld "
                   "s (image_pull_timeout): %s", wr,
                   (long long)((sy_k8s_now_ms() - job->pull_since_ms) / 1000),
                   m ? m : "");
            free(m);
        }
        return;
    }
    job->pull_since_ms = 0;
    json_t *ps = st.unschedulable;
    if (ps) {
        if (bounded(inst, job, &job->unsched_since_ms,
                    inst->set.unsched_timeout_ms))
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "unschedulable",
                   "Unschedulable for %lld s (unschedulable_timeout): %s",
                   (long long)((sy_k8s_now_ms() - job->unsched_since_ms) /
                               1000), sy_k8s_str(ps, "message", ""));
        return;
    }
    job->unsched_since_ms = 0;
    if (job->timer_live)
        uv_timer_stop(&job->timer);
    if (e->job_gone) {
        sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "gone", "Job %s was deleted "
               "by someone else before it finished", job->name);
        return;
    }
    json_t *failed = st.failed;
    if (failed && strcmp(sy_k8s_str(failed, "reason", ""), "DeadlineExceeded") == 0) {
        sy_k8s_decide(inst, job, SY_OUTCOME_TIMED_OUT, "deadline", "DeadlineExceeded:"
               " the Job ran past activeDeadlineSeconds (%lld s): %s",
               (long long)job->deadline_s, sy_k8s_str(failed, "message", ""));
        return;
    }
    if (st.complete && pod)
        sy_k8s_read_log(inst, job, true);
    else if (failed && term)
        sy_k8s_read_log(inst, job, false);
    else if (failed && (!pod || e->pod_gone || strcmp(phase, "Failed") != 0)) {
        /* The pod watch may lag the Job's: give it a moment to say how
         * the container ended before failing with the Job's words. */
        if (bounded(inst, job, &job->pod_wait_since_ms, 2000))
            sy_k8s_decide(inst, job, SY_OUTCOME_FAILED, "exit_code",
                          "the Job failed (%s): %s",
                          sy_k8s_str(failed, "reason", "?"),
                          sy_k8s_str(failed, "message", ""));
    }
}
