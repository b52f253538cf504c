/*
 * stats.c -- capacity (max_in_flight, the adaptive limit, the pause after
 * a 429) and the metrics: the conventional ones, then in_flight, limit,
 * paused, retries, connections (opened), http2 (answers over HTTP/2),
 * deferred, throttled.REASON, errors.TYPE and latency
 * percentiles (latency_ms.p50, .p90, .p99, .max).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lambda.h"

void sy_lambda_stats_init(sy_lambda_stats *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
}

void sy_lambda_stats_fini(sy_lambda_stats *s)
{
    pthread_mutex_destroy(&s->mu);
}

void sy_lambda_stats_latency(sy_lambda_stats *s, uint64_t ns)
{
    double us = (double)ns / 1000.0;
    int b = us < 1.0 ? 0 : (int)(4.0 * log2(us));
    if (b >= SY_LAMBDA_HIST)
        b = SY_LAMBDA_HIST - 1;
    pthread_mutex_lock(&s->mu);
    s->hist[b]++;
    s->hist_n++;
    pthread_mutex_unlock(&s->mu);
}

/* "ReservedFunctionConcurrentInvocationLimitExceeded" becomes
 * "reserved_function_concurrent_invocation_limit_exceeded": metric names
 * are lowercase words joined by `_`. */
static void metric_word(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 2 < cap; p++) {
        unsigned char c = (unsigned char)*p;
        if (isupper(c)) {
            if (n > 0 && out[n - 1] != '_' &&
                (islower((unsigned char)p[-1]) ||
                 (p[1] && islower((unsigned char)p[1]))))
                out[n++] = '_';
            out[n++] = (char)tolower(c);
        } else if (isalnum(c)) {
            out[n++] = (char)c;
        } else if (n > 0 && out[n - 1] != '_') {
            out[n++] = '_';
        }
    }
    while (n > 0 && out[n - 1] == '_')
        n--;
    if (n == 0)
        out[n++] = 'x';
    out[n] = '\0';
}

void sy_lambda_stats_name(sy_lambda_stats *s, sy_lambda_names *t,
                          const char *name)
{
    char w[96];
    metric_word(name ? name : "unknown", w, sizeof w);
    pthread_mutex_lock(&s->mu);
    size_t i = 0;
    while (i < t->n && strcmp(t->name[i], w) != 0)
        i++;
    if (i < t->n) {
        t->count[i]++;
    } else if (t->n < SY_LAMBDA_NAMES) {
        snprintf(t->name[t->n], sizeof t->name[0], "%s", w);
        t->count[t->n++] = 1;
    } else {
        t->other++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* The latency (ms) below which `q` of the answers fell, from the
 * histogram: the upper edge of the bucket that crosses q. */
static int64_t percentile_ms(const int64_t *hist, int64_t n, double q)
{
    if (n == 0)
        return 0;
    int64_t want = (int64_t)ceil(q * (double)n), seen = 0;
    for (int b = 0; b < SY_LAMBDA_HIST; b++) {
        seen += hist[b];
        if (seen >= want)
            return (int64_t)llround(exp2((b + 1) / 4.0) / 1000.0);
    }
    return 0;
}

int64_t sy_lambda_capacity(sy_instance *inst)
{
    if (atomic_load(&inst->paused_until) > 0)
        return 0;
    int64_t free_ = atomic_load(&inst->limit) - atomic_load(&inst->used);
    return free_ > 0 ? free_ : 0;
}

void sy_lambda_aimd_success(sy_instance *inst)
{
    if (!inst->set.adaptive)
        return;
    int64_t limit = atomic_load(&inst->limit);
    if (limit >= inst->set.max_in_flight)
        return;
    if (++inst->aimd_acc >= limit) {
        inst->aimd_acc = 0;
        atomic_store(&inst->limit, limit + 1);
        inst->api->wake(inst->host);
    }
}

void sy_lambda_aimd_throttled(sy_instance *inst)
{
    if (!inst->set.adaptive)
        return;
    int64_t now = inst->now_ms();
    if (inst->aimd_last_cut && now - inst->aimd_last_cut < 500)
        return;
    inst->aimd_last_cut = now;
    inst->aimd_acc = 0;
    int64_t limit = atomic_load(&inst->limit);
    atomic_store(&inst->limit, limit / 2 > 1 ? limit / 2 : 1);
}

static void emit_names(const char *prefix, const sy_lambda_names *t,
                       sy_metric_fn emit, void *sink)
{
    char name[160];
    for (size_t i = 0; i < t->n; i++) {
        snprintf(name, sizeof name, "%s.%s", prefix, t->name[i]);
        emit(sink, name, t->count[i]);
    }
    if (t->other) {
        snprintf(name, sizeof name, "%s.other", prefix);
        emit(sink, name, t->other);
    }
}

void sy_lambda_stats_emit(sy_instance *inst, sy_metric_fn emit, void *sink)
{
    sy_lambda_stats *s = &inst->stats;
    int64_t by[5], done = 0;
    for (int i = 0; i < 5; i++)
        done += by[i] = atomic_load(&s->by_outcome[i]);
    int64_t submitted = atomic_load(&s->submitted);
    int64_t active = submitted - done;
    emit(sink, "active", active > 0 ? active : 0);
    emit(sink, "queued", atomic_load(&s->queued));
    emit(sink, "capacity", sy_lambda_capacity(inst));
    emit(sink, "submitted", submitted);
    emit(sink, "succeeded", by[SY_OUTCOME_SUCCEEDED]);
    emit(sink, "failed", by[SY_OUTCOME_FAILED]);
    emit(sink, "timed_out", by[SY_OUTCOME_TIMED_OUT]);
    emit(sink, "cancelled", by[SY_OUTCOME_CANCELLED]);
    emit(sink, "deferred", by[SY_OUTCOME_DEFERRED]);
    emit(sink, "in_flight", atomic_load(&inst->used));
    emit(sink, "limit", atomic_load(&inst->limit));
    emit(sink, "max_in_flight", inst->set.max_in_flight);
    emit(sink, "paused", atomic_load(&inst->paused_until) > 0);
    emit(sink, "retries", atomic_load(&s->retries));
    emit(sink, "connections", atomic_load(&s->connections));
    emit(sink, "http2", atomic_load(&s->http2));

    /* Copied under the lock, emitted outside it: emit() is the host's. */
    int64_t hist[SY_LAMBDA_HIST], n;
    sy_lambda_names thr, errs;
    pthread_mutex_lock(&s->mu);
    memcpy(hist, s->hist, sizeof hist);
    n = s->hist_n;
    thr = s->throttled;
    errs = s->errors;
    pthread_mutex_unlock(&s->mu);
    emit(sink, "latency_ms.count", n);
    emit(sink, "latency_ms.p50", percentile_ms(hist, n, 0.50));
    emit(sink, "latency_ms.p90", percentile_ms(hist, n, 0.90));
    emit(sink, "latency_ms.p99", percentile_ms(hist, n, 0.99));
    emit(sink, "latency_ms.max", percentile_ms(hist, n, 1.0));
    emit_names("throttled", &thr, emit, sink);
    emit_names("errors", &errs, emit, sink);
}
