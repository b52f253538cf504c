/*
 * driver.c -- the kit's side of the ABI: it plays the host for one
 * instance, counting every submit, completion and wake.
 *
 * Each submit gets its own record (kit_call) that lives until the check
 * ends, so a plugin that completes late, twice, or after refusing always
 * writes into memory the kit still owns and the kit can say which task it
 * was.
 */
#include "kit.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Time and threads                                                         */
/* ------------------------------------------------------------------------ */

double kit_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

void kit_sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec t;
    t.tv_sec = (time_t)(ms / 1000);
    t.tv_nsec = (long)((ms - (double)t.tv_sec * 1000) * 1e6);
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

double kit_scaled(const kit *k, double ms, double cap)
{
    double f = k->scale;
    if (cap > 0 && f > cap)
        f = cap;
    return ms * f;
}

/* Entries of a /proc directory, or -1. */
static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

int kit_thread_count(void)
{
    return count_entries("/proc/self/task");
}

void kit_thread_names(char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    long self = (long)syscall(SYS_gettid);
    size_t used = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strtol(e->d_name, NULL, 10) == self)
            continue;
        char path[64], name[32] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%.20s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(name, sizeof name, f))
                name[strcspn(name, "\n")] = '\0';
            fclose(f);
        }
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    closedir(d);
}

/* Less the one opendir() holds while it counts. */
int kit_fd_count(void)
{
    int n = count_entries("/proc/self/fd");
    return n > 0 ? n - 1 : n;
}

int kit_wait_threads(const kit *k, int want, double ms)
{
    double until = kit_now_ms() + ms * k->scale;
    int n = kit_thread_count();
    while (n > want && kit_now_ms() < until) {
        kit_sleep_ms(5);
        n = kit_thread_count();
    }
    return n;
}

const char *kit_status_name(int status)
{
    switch (status) {
    case SY_OK: return "SY_OK";
    case SY_EINVAL: return "SY_EINVAL";
    case SY_ENOMEM: return "SY_ENOMEM";
    case SY_EBUSY: return "SY_EBUSY";
    case SY_ENOENT: return "SY_ENOENT";
    case SY_ETYPE: return "SY_ETYPE";
    case SY_ERANGE: return "SY_ERANGE";
    case SY_ENOTSUP: return "SY_ENOTSUP";
    case SY_EIO: return "SY_EIO";
    case SY_ESTATE: return "SY_ESTATE";
    case SY_EINTERNAL: return "SY_EINTERNAL";
    default: return "an unknown status";
    }
}

const char *kit_outcome_name(int outcome)
{
    switch (outcome) {
    case SY_OUTCOME_SUCCEEDED: return "succeeded";
    case SY_OUTCOME_FAILED: return "failed";
    case SY_OUTCOME_TIMED_OUT: return "timed_out";
    case SY_OUTCOME_CANCELLED: return "cancelled";
    case SY_OUTCOME_DEFERRED: return "deferred";
    default: return "invalid";
    }
}

/* ------------------------------------------------------------------------ */
/* What the plugin calls                                                    */
/* ------------------------------------------------------------------------ */

static void signal_change(kit_inst *ki)
{
    pthread_mutex_lock(&ki->lock);
    pthread_cond_broadcast(&ki->changed);
    pthread_mutex_unlock(&ki->lock);
}

static void note_malformed(kit_inst *ki, const kit_call *call,
                           const char *why)
{
    pthread_mutex_lock(&ki->lock);
    if (atomic_fetch_add(&ki->malformed, 1) == 0)
        snprintf(ki->malformed_why, sizeof ki->malformed_why, "%s: %s",
                 call->task_id, why);
    pthread_mutex_unlock(&ki->lock);
}

/* An output over max_context_bytes is counted (the output-size check
 * judges it) and never read, as the host reads none of it. */
static bool oversize(kit_inst *ki, const kit_call *call, const sy_result *r)
{
    if (!r->output || r->output_len <= ki->k->in.max_context_bytes)
        return false;
    pthread_mutex_lock(&ki->lock);
    if (atomic_fetch_add(&ki->oversize, 1) == 0) {
        ki->oversize_len = r->output_len;
        snprintf(ki->oversize_task, sizeof ki->oversize_task, "%s",
                 call->task_id);
    }
    pthread_mutex_unlock(&ki->lock);
    return true;
}

/* An error text over SY_RESULT_ERROR_MAX is counted (the output-size
 * check judges it): the host keeps only its head. */
static void long_error(kit_inst *ki, const kit_call *call, const sy_result *r)
{
    if (!r->error)
        return;
    size_t len = strlen(r->error);
    if (len <= SY_RESULT_ERROR_MAX)
        return;
    pthread_mutex_lock(&ki->lock);
    if (atomic_fetch_add(&ki->long_errors, 1) == 0) {
        ki->long_error_len = len;
        snprintf(ki->long_error_task, sizeof ki->long_error_task, "%s",
                 call->task_id);
    }
    pthread_mutex_unlock(&ki->lock);
}

/* A succeeded attempt's output must be a JSON object (or absent). */
static void check_output(kit_inst *ki, const kit_call *call,
                         const sy_result *r)
{
    if (oversize(ki, call, r) || r->outcome != SY_OUTCOME_SUCCEEDED ||
        !r->output)
        return;
    json_error_t je;
    json_t *v = json_loadb(r->output, r->output_len, JSON_DECODE_ANY, &je);
    if (!v) {
        char why[200];
        snprintf(why, sizeof why, "output is not JSON: %s", je.text);
        note_malformed(ki, call, why);
    } else if (!json_is_object(v)) {
        note_malformed(ki, call, "output is JSON but not an object");
    }
    json_decref(v);
}

/* The result-stable probe.  `result` is plugin-owned until complete()
 * returns: a plugin that formats results in memory another of its threads
 * writes at the same time (one scratch buffer for every worker, no lock)
 * hands the host a result that changes while it is being copied, and a
 * task gets another task's output.  The bytes are read, the thread pauses
 * for a moment (the other threads go on), and they are read again. */
#define PROBE_BYTES 512
#define PROBE_PAUSE_US 200

static size_t probe_take(char *dst, const char *src, size_t len)
{
    if (!src)
        return 0;
    if (len > PROBE_BYTES)
        len = PROBE_BYTES;
    memcpy(dst, src, len);
    return len;
}

static void probe_result(kit_inst *ki, const kit_call *call,
                         const sy_result *r)
{
    char out[PROBE_BYTES], err[PROBE_BYTES];
    size_t out_len = r->output_len <= ki->host.max_output ?
                         probe_take(out, r->output, r->output_len) : 0;
    size_t err_len = r->error ? probe_take(err, r->error,
                                           strnlen(r->error, PROBE_BYTES)) : 0;
    int outcome = (int)r->outcome;
    struct timespec pause = {0, PROBE_PAUSE_US * 1000L};
    nanosleep(&pause, NULL);
    const char *what = NULL;
    if ((int)r->outcome != outcome)
        what = "its outcome";
    else if (out_len && memcmp(out, r->output, out_len) != 0)
        what = "its output";
    else if (err_len && (!r->error || memcmp(err, r->error, err_len) != 0))
        what = "its error text";
    if (!what)
        return;
    if (atomic_fetch_add(&ki->unstable, 1) == 0) {
        for (size_t i = 0; i < out_len; i++) /* one line */
            if ((unsigned char)out[i] < 0x20)
                out[i] = '?';
        pthread_mutex_lock(&ki->lock);
        snprintf(ki->unstable_why, sizeof ki->unstable_why,
                 "task %s: %s changed while complete() was reading it%s%.*s"
                 "%s", call->task_id, what, out_len ? " (it was " : "",
                 (int)(out_len > 60 ? 60 : out_len), out,
                 out_len ? ")" : "");
        pthread_mutex_unlock(&ki->lock);
    }
}

/* The first completion of a submit. */
static void first_completion(kit_call *call, const sy_result *r)
{
    kit_inst *ki = call->ki;
    int o = (int)r->outcome;
    /* DEFERRED (ABI 1.1) is one valid completion: the task goes back
     * Ready uncharged, and the kit's host says 1.1. */
    if (o < SY_OUTCOME_SUCCEEDED || o > SY_OUTCOME_DEFERRED)
        note_malformed(ki, call, "outcome is not a sy_outcome value");
    else
        atomic_fetch_add(&ki->outcomes[o], 1);
    if (o == SY_OUTCOME_DEFERRED &&
        SY_HAS_FIELD(r, sy_result, retry_after_ms) && r->retry_after_ms < 0)
        note_malformed(ki, call, "DEFERRED with a negative retry_after_ms");
    check_output(ki, call, r);
    long_error(ki, call, r);
    if (r->error && o != SY_OUTCOME_CANCELLED) {
        pthread_mutex_lock(&ki->lock);
        if (!ki->first_error[0])
            snprintf(ki->first_error, sizeof ki->first_error, "%s: %s",
                     kit_outcome_name(o), r->error);
        pthread_mutex_unlock(&ki->lock);
    }
    atomic_store(&call->outcome, o);
    atomic_fetch_add(&ki->completed, 1);
    signal_change(ki);
}

/* A size the test host took (1.0's or more) may still be garbage: see
 * KIT_MAX_STRUCT_SIZE.  NULL when plausible, else why not, in buf. */
static const char *size_problem(const sy_result *r, char *buf, size_t len)
{
    if (!r || (r->size % _Alignof(sy_result) == 0 &&
               r->size <= KIT_MAX_STRUCT_SIZE))
        return NULL;
    snprintf(buf, len, "sy_result.size is %u, not the size of any sy_result "
             "layout (%zu in this header): set it to sizeof(sy_result)",
             (unsigned)r->size, sizeof(sy_result));
    return buf;
}

/* Every complete() call, inside the test host's, which has counted a
 * second one in host.doubles (and logged it, as the real host does) and
 * stood in a FAILED result for a malformed one. */
static void on_complete(sy_completion *c, const sy_result *r, int nth,
                        const char *malformed)
{
    kit_call *call = c->data;
    kit_inst *ki = call->ki;
    double t0 = kit_now_ms();
    bool inside = atomic_load(&call->in_submit) &&
                  pthread_equal(call->submitter, pthread_self());
    if (nth == 1 && inside)
        atomic_fetch_add(&ki->inside_submit, 1);
    if (atomic_load(&call->state) == CALL_REFUSED)
        atomic_fetch_add(&ki->after_refusal, 1);
    char why[200];
    if (!malformed)
        malformed = size_problem(r, why, sizeof why);
    if (malformed)
        note_malformed(ki, call, malformed);
    if (nth == 1 && ki->probe_stable && !malformed)
        probe_result(ki, call, r);
    if (nth == 1)
        first_completion(call, r);
    /* The kit's own reading of the result (a parse of a large output) is
     * not the plugin's time in submit(). */
    if (inside)
        call->kit_ms += kit_now_ms() - t0;
}

/* The test host has counted the wake in host.wakes. */
static void on_wake(sy_host *h)
{
    signal_change(h->data);
}

/* ------------------------------------------------------------------------ */
/* Instances                                                                */
/* ------------------------------------------------------------------------ */

int kit_inst_init(kit_inst *ki, kit_ctx *x, size_t ncalls)
{
    memset(ki, 0, sizeof *ki);
    ki->k = x->k;
    ki->d = x->d;
    ki->api = sy_sdk_test_host_api();
    if (sy_sdk_test_host_init(&ki->host, "conformance") != 0)
        return -1;
    ki->host.log_level = x->k->log_level;
    ki->host.on_complete = on_complete;
    ki->host.on_wake = on_wake;
    ki->host.data = ki;
    ki->host.max_output = x->k->in.max_context_bytes;
    ki->calls = calloc(ncalls, sizeof *ki->calls);
    if (!ki->calls) {
        sy_sdk_test_host_fini(&ki->host);
        return -1;
    }
    ki->ncalls = ncalls;
    atomic_init(&ki->next, 0);
    pthread_mutex_init(&ki->lock, NULL);
    pthread_cond_init(&ki->changed, NULL);
    return 0;
}

/* The records handed out so far. */
static size_t used_calls(kit_inst *ki)
{
    size_t n = atomic_load(&ki->next);
    return n < ki->ncalls ? n : ki->ncalls;
}

void kit_inst_fini(kit_inst *ki)
{
    for (size_t i = 0; i < used_calls(ki); i++)
        sy_sdk_test_completion_fini(&ki->calls[i].c);
    sy_sdk_test_host_fini(&ki->host);
    free(ki->calls);
    ki->calls = NULL;
    pthread_cond_destroy(&ki->changed);
    pthread_mutex_destroy(&ki->lock);
}

int kit_create(kit_inst *ki, const json_t *settings, char *err,
               size_t err_len)
{
    sy_instance *inst = NULL;
    int rc = ki->d->create(ki->api, &ki->host, sy_sdk_params_view(settings),
                           &inst, err, err_len);
    ki->inst = rc == SY_OK ? inst : NULL;
    return rc;
}

void kit_destroy(kit_inst *ki)
{
    if (ki->inst)
        ki->d->destroy(ki->inst);
    ki->inst = NULL;
}

/* ------------------------------------------------------------------------ */
/* Submits                                                                  */
/* ------------------------------------------------------------------------ */

kit_call *kit_call_new(kit_inst *ki, const json_t *params)
{
    size_t i = atomic_fetch_add(&ki->next, 1);
    if (i >= ki->ncalls)
        return NULL;
    kit_call *call = &ki->calls[i];
    const kit_inputs *in = &ki->k->in;
    call->ki = ki;
    /* Stores, not atomic_init: the capacity check scans records while
     * other threads fill new ones. */
    atomic_store(&call->state, CALL_FREE);
    atomic_store(&call->outcome, -1);
    atomic_store(&call->in_submit, false);
    snprintf(call->ns, sizeof call->ns, "conformance::kit::task-%zu", i);
    snprintf(call->task_id, sizeof call->task_id, "task-%zu", i);
    call->task.size = (uint32_t)sizeof call->task;
    call->task.attempt = 1;
    call->task.ns = call->ns;
    call->task.run_id = "conformance-run";
    call->task.task_id = call->task_id;
    call->task.input = ki->input ? ki->input : in->input;
    call->task.input_len = strlen(call->task.input);
    call->task.params = sy_sdk_params_view(params);
    call->task.timeout_ms = 0;
    call->task.workflow = "kit";
    call->task.base_dir = in->base_dir;
    call->task.element = -1;
    sy_sdk_test_completion_init(&call->c, &ki->host, call);
    return call;
}

int kit_submit(kit_inst *ki, kit_call *call, double *ms, char *err,
               size_t err_len)
{
    char scratch[512];
    if (!err || err_len == 0) {
        err = scratch;
        err_len = sizeof scratch;
    }
    err[0] = '\0';
    call->submitter = pthread_self();
    atomic_store(&call->state, CALL_SUBMITTING);
    atomic_store(&call->in_submit, true);
    call->kit_ms = 0;
    double t0 = kit_now_ms();
    int rc = (ki->resume_calls ? ki->d->resume : ki->d->submit)(ki->inst, &call->task,
                                                                &call->c, err, err_len);
    double t1 = kit_now_ms() - call->kit_ms;
    atomic_store(&call->in_submit, false);
    call->status = rc;
    kit_note_duration(ki, call, ki->resume_calls ? "resume" : "submit", t1 - t0);
    if (ms)
        *ms = t1 - t0;
    if (rc == SY_OK) {
        atomic_store(&call->state, CALL_ACCEPTED);
        atomic_fetch_add(&ki->accepted, 1);
        return rc;
    }
    atomic_store(&call->state, CALL_REFUSED);
    atomic_fetch_add(rc == SY_EBUSY ? &ki->busy : &ki->refused, 1);
    if (atomic_load(&call->c.calls) > 0)
        atomic_fetch_add(&ki->after_refusal, 1);
    return rc;
}

long kit_in_flight(kit_inst *ki)
{
    long done = atomic_load(&ki->completed);
    return atomic_load(&ki->accepted) - done;
}

bool kit_wait_for(kit_inst *ki, double ms, bool (*cond)(kit_inst *, void *),
                  void *arg)
{
    double until = kit_now_ms() + ms * ki->k->scale;
    pthread_mutex_lock(&ki->lock);
    bool ok;
    while (!(ok = cond(ki, arg))) {
        double left = until - kit_now_ms();
        if (left <= 0)
            break;
        /* Short slices: a condition may also change without a signal
         * (a gauge the plugin updates after complete()). */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double slice = left < 20 ? left : 20;
        ts.tv_nsec += (long)(slice * 1e6);
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&ki->changed, &ki->lock, &ts);
    }
    pthread_mutex_unlock(&ki->lock);
    return ok;
}

static bool all_done(kit_inst *ki, void *arg)
{
    (void)arg;
    return atomic_load(&ki->completed) >= atomic_load(&ki->accepted);
}

bool kit_wait_all(kit_inst *ki, double ms)
{
    return kit_wait_for(ki, ms, all_done, NULL);
}

/* ------------------------------------------------------------------------ */
/* Verdicts over all calls                                                  */
/* ------------------------------------------------------------------------ */

static const char *first_with(kit_inst *ki, int state, int min_calls,
                              int max_calls)
{
    size_t n = used_calls(ki);
    for (size_t i = 0; i < n; i++) {
        kit_call *c = &ki->calls[i];
        int calls = atomic_load(&c->c.calls);
        if ((state < 0 || atomic_load(&c->state) == state) &&
            calls >= min_calls && calls <= max_calls)
            return c->task_id;
    }
    return "?";
}

bool kit_once_ok(kit_inst *ki, char *msg, size_t len)
{
    long twice = atomic_load(&ki->host.doubles);
    long refused = atomic_load(&ki->after_refusal);
    long bad = atomic_load(&ki->malformed);
    if (twice > 0) {
        snprintf(msg, len, "complete() called twice: %ld extra call%s "
                 "(first: %s)", twice, twice == 1 ? "" : "s",
                 first_with(ki, -1, 2, 1 << 30));
        return false;
    }
    if (refused > 0) {
        snprintf(msg, len, "complete() called for %ld submit%s that "
                 "submit() refused (first: %s)", refused,
                 refused == 1 ? "" : "s",
                 first_with(ki, CALL_REFUSED, 1, 1 << 30));
        return false;
    }
    if (bad > 0) {
        pthread_mutex_lock(&ki->lock);
        snprintf(msg, len, "%ld malformed result%s (first: %s)", bad,
                 bad == 1 ? "" : "s", ki->malformed_why);
        pthread_mutex_unlock(&ki->lock);
        return false;
    }
    return true;
}

void kit_describe_missing(kit_inst *ki, char *msg, size_t len)
{
    size_t n = used_calls(ki);
    long missing = 0;
    const char *first = NULL;
    for (size_t i = 0; i < n; i++) {
        kit_call *c = &ki->calls[i];
        if (atomic_load(&c->state) == CALL_ACCEPTED &&
            atomic_load(&c->c.calls) == 0) {
            if (!first)
                first = c->task_id;
            missing++;
        }
    }
    snprintf(msg, len, "%ld of %ld accepted submit%s never completed within "
             "%.0fs (first: %s)", missing, atomic_load(&ki->accepted),
             atomic_load(&ki->accepted) == 1 ? "" : "s",
             KIT_DEADLINE_MS * ki->k->scale / 1000, first ? first : "?");
}
