/*
 * check_lifecycle.c -- destroy() after draining leaves no thread behind
 * and nothing completes after it; metrics() agree with what the kit
 * counted.
 */
#include "checks.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BATCH 100
#define LONG_BATCH 4

/* Submits `n` quick tasks (patiently) and, with long_task, a few long ones
 * that are cancelled.  False with r failed. */
static bool workload(kit_inst *ki, long n, kit_report *r)
{
    char err[512];
    double until = kit_now_ms() + KIT_BUDGET_MS * ki->k->scale;
    for (long i = 0; i < n && kit_now_ms() < until; i++) {
        int rc = kit_submit_patient(ki, ki->k->in.task, until, NULL, NULL,
                                    err, sizeof err);
        if (rc == SY_EBUSY || rc == SY_ENOMEM)
            break;
        if (rc != SY_OK) {
            kit_fail_refused(r, rc, err);
            return false;
        }
    }
    if (!ki->k->in.long_task)
        return true;
    if (!kit_wait_all(ki, KIT_DEADLINE_MS))
        return true; /* kit_close() reports it */
    for (int i = 0; i < LONG_BATCH && kit_now_ms() < until + 1000; i++) {
        kit_call *call = kit_call_new(ki, ki->k->in.long_task);
        if (!call || kit_submit(ki, call, NULL, err, sizeof err) != SY_OK)
            break;
    }
    kit_sleep_ms(20); /* let some start */
    kit_cancel_all(ki);
    return true;
}

/* ------------------------------------------------------------------------ */
/* destroy                                                                  */
/* ------------------------------------------------------------------------ */

/* The first record completed more than once, for the report. */
static const char *first_again(kit_inst *ki)
{
    size_t n = atomic_load(&ki->next);
    for (size_t i = 0; i < n && i < ki->ncalls; i++)
        if (atomic_load(&ki->calls[i].c.calls) > 1)
            return ki->calls[i].task_id;
    return "?";
}

/* Drains, destroys and watches: a thread destroy() left running may still
 * complete a task, so the records stay until the threads are gone (and,
 * on a failure, for good: the child then exits without freeing them). */
static bool destroy_watched(kit_inst *ki, int before, const char *when,
                            kit_report *r)
{
    char msg[400];
    if (!kit_wait_all(ki, KIT_DEADLINE_MS)) {
        kit_fail_undrained(ki, r);
        return false;
    }
    if (!kit_once_ok(ki, msg, sizeof msg)) {
        kit_fail(r, "%s", msg);
        return false;
    }
    long extra = atomic_load(&ki->host.doubles);
    kit_destroy(ki);
    int after = kit_wait_threads(ki->k, before, 1000);
    long late = atomic_load(&ki->host.doubles) - extra;
    if (late > 0) {
        kit_fail(r, "complete() called after destroy() returned: %ld "
                 "call%s (first: %s) from a thread destroy() left running; "
                 "stop and join every thread in destroy()", late,
                 late == 1 ? "" : "s", first_again(ki));
        return false;
    }
    if (after > before) {
        kit_fail(r, "%d thread%s still running after destroy() %s (%d "
                 "before create()): stop and join every thread in destroy()",
                 after - before, after - before == 1 ? "" : "s", when,
                 before);
        return false;
    }
    kit_inst_fini(ki);
    return true;
}

kit_verdict kit_check_destroy(kit_ctx *x, kit_report *r)
{
    int start = kit_thread_count();
    kit_inst ki;
    /* The baseline is taken after one idle instance came and went: a
     * library may start a thread on first use and keep it for the life of
     * the process, out of any destroy()'s reach (NVML's driver does, at
     * the first nvmlInit, and keeps it past nvmlShutdown and dlclose).
     * Every instance after it, with work or without, must leave no more
     * threads than that; one that grows per instance still fails. */
    if (!kit_open(x, &ki, 1, r))
        return KIT_FAIL;
    kit_destroy(&ki);
    kit_inst_fini(&ki);
    int before = kit_wait_threads(x->k, start, 200);
    char kept[256] = "";
    if (before > start)
        kit_thread_names(kept, sizeof kept);
    if (!kit_open(x, &ki, BATCH * 20 + LONG_BATCH, r) ||
        !workload(&ki, BATCH, r))
        return KIT_FAIL;
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS))
        return kit_fail_undrained(&ki, r);
    int during = kit_thread_count();
    /* Destroy at once: a worker still finishing cancelled work must be
     * stopped and joined, not left behind. */
    if (!destroy_watched(&ki, before, "after work", r))
        return KIT_FAIL;
    if (!kit_open(x, &ki, 1, r) ||
        !destroy_watched(&ki, before, "of an idle instance", r))
        return KIT_FAIL;
    if (before > start)
        return kit_pass(r, "threads: %d before create(), %d after a first "
                        "create()/destroy() (kept for the process by a "
                        "library: %s), %d while running, %d after destroy(); "
                        "nothing completed after it", start, before, kept,
                        during, kit_thread_count());
    return kit_pass(r, "threads: %d before create(), %d while running, %d "
                    "after destroy(); nothing completed after it", before,
                    during, kit_thread_count());
}

/* ------------------------------------------------------------------------ */
/* metrics                                                                  */
/* ------------------------------------------------------------------------ */

#define MAX_METRICS 128

typedef struct metric_sink {
    int n;
    struct {
        char name[64];
        int64_t value;
    } v[MAX_METRICS];
    char problem[160]; /* the first bad name or duplicate */
} metric_sink;

static bool name_ok(const char *s)
{
    if (!s || !*s || *s == '.' || s[strlen(s) - 1] == '.' || strstr(s, ".."))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.'))
            return false;
    return true;
}

static void emit(void *arg, const char *name, int64_t value)
{
    metric_sink *s = arg;
    if (!name_ok(name)) {
        if (!s->problem[0])
            snprintf(s->problem, sizeof s->problem, "metric name %s%.60s%s "
                     "is not lowercase words joined by '_' and '.'",
                     name ? "\"" : "", name ? name : "NULL", name ? "\"" : "");
        return;
    }
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0) {
            if (!s->problem[0])
                snprintf(s->problem, sizeof s->problem, "metric '%.60s' "
                         "reported twice in one call", name);
            return;
        }
    if (s->n < MAX_METRICS) {
        snprintf(s->v[s->n].name, sizeof s->v[s->n].name, "%s", name);
        s->v[s->n++].value = value;
    }
}

static bool get(const metric_sink *s, const char *name, int64_t *out)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0) {
            *out = s->v[i].value;
            return true;
        }
    return false;
}

static const char *const required[] = {"active", "submitted", "succeeded",
                                       "failed", "timed_out", "cancelled",
                                       NULL};
static const char *const outcome_names[] = {"succeeded", "failed",
                                            "timed_out", "cancelled"};

/* Writes why a reading is inconsistent; returns false for `return`. */
static bool why_not(char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool why_not(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return false;
}

static bool outcomes_match(kit_inst *ki, const metric_sink *s, int64_t *sum,
                           char *msg, size_t len)
{
    for (int i = 0; i < 4; i++) {
        int64_t v = 0;
        get(s, outcome_names[i], &v);
        *sum += v;
        long seen = atomic_load(&ki->outcomes[i]);
        if (v != seen)
            return why_not(msg, len, "'%s' is %lld, but %ld completions "
                           "were %s", outcome_names[i], (long long)v, seen,
                           outcome_names[i]);
    }
    /* DEFERRED (1.1) has no conventional counter: one the plugin reports
     * must agree; without one, the kit's count closes the sum. */
    long deferred = atomic_load(&ki->outcomes[SY_OUTCOME_DEFERRED]);
    int64_t v = deferred;
    if (get(s, "deferred", &v) && v != deferred)
        return why_not(msg, len, "'deferred' is %lld, but %ld completions "
                       "were deferred", (long long)v, deferred);
    *sum += v;
    return true;
}

/* Compares one reading with the kit's counts at quiescence.  True when
 * consistent; else why not in msg. */
static bool consistent(kit_inst *ki, const metric_sink *s, char *msg,
                       size_t len)
{
    int64_t v, active = 0, submitted = 0, sum = 0;
    if (s->problem[0])
        return why_not(msg, len, "%s", s->problem);
    for (const char *const *n = required; *n; n++)
        if (!get(s, *n, &v))
            return why_not(msg, len, "metric '%s' is not reported (the "
                           "conventional names are in executor.h)", *n);
    get(s, "active", &active);
    get(s, "submitted", &submitted);
    long accepted = atomic_load(&ki->accepted);
    if (submitted != accepted)
        return why_not(msg, len, "'submitted' is %lld, but %ld submits were "
                       "accepted", (long long)submitted, accepted);
    if (active != 0)
        return why_not(msg, len, "'active' is %lld with every submit "
                       "completed", (long long)active);
    if (!outcomes_match(ki, s, &sum, msg, len))
        return false;
    if (sum + active != submitted)
        return why_not(msg, len, "succeeded + failed + timed_out + cancelled "
                       "+ active = %lld, not submitted (%lld)",
                       (long long)(sum + active), (long long)submitted);
    if (get(s, "queued", &v) && v != 0)
        return why_not(msg, len, "'queued' is %lld with every submit "
                       "completed", (long long)v);
    return true;
}

typedef struct poller {
    kit_inst *ki;
    atomic_bool stop;
    long reads;
} poller;

/* Reads metrics over and over while the workload runs: metrics() is
 * called concurrently with everything else in a host. */
static void *poll_metrics(void *arg)
{
    poller *p = arg;
    while (!atomic_load(&p->stop)) {
        metric_sink s;
        memset(&s, 0, sizeof s);
        p->ki->d->metrics(p->ki->inst, emit, &s);
        p->reads++;
        kit_sleep_ms(0.2);
    }
    return NULL;
}

kit_verdict kit_check_metrics(kit_ctx *x, kit_report *r)
{
    if (!x->d->metrics)
        return kit_skip(r, "no metrics() (optional)");
    kit_inst ki;
    if (!kit_open(x, &ki, BATCH * 20 + LONG_BATCH, r))
        return KIT_FAIL;
    poller p = {&ki, false, 0};
    pthread_t t;
    bool polling = pthread_create(&t, NULL, poll_metrics, &p) == 0;
    bool ok = workload(&ki, BATCH, r);
    atomic_store(&p.stop, true);
    if (polling)
        pthread_join(t, NULL);
    if (!ok)
        return KIT_FAIL;
    if (!kit_wait_all(&ki, KIT_DEADLINE_MS))
        return kit_fail_undrained(&ki, r);
    /* Gauges may settle a moment after the last completion arrives. */
    char msg[256] = "";
    metric_sink s;
    bool same = false;
    double until = kit_now_ms() + 1000 * x->k->scale;
    do {
        memset(&s, 0, sizeof s);
        x->d->metrics(ki.inst, emit, &s);
        same = consistent(&ki, &s, msg, sizeof msg);
        if (!same)
            kit_sleep_ms(10);
    } while (!same && kit_now_ms() < until);
    if (!same)
        return kit_fail(r, "%s", msg);
    kit_note(r, "%d metrics reported; read %ld times during the workload",
             s.n, p.reads);
    int64_t submitted = 0;
    get(&s, "submitted", &submitted);
    if (!kit_close(&ki, r))
        return KIT_FAIL;
    return kit_pass(r, "submitted %lld = outcomes + active, as counted",
                    (long long)submitted);
}
