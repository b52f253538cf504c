/*
 * noop: a benchmark executor that completes every task inside submit(), so
 * what is measured is the host's path alone.  With `record = "FILE"` it
 * keeps the monotonic time of every submit and writes them (nanoseconds,
 * one per line, in submit order) to FILE when destroyed: the hop latency of
 * a chain is the gap between consecutive submits.  With `output = true`
 * every task returns a small JSON object, {"task": ID, "attempt": N}, as a
 * real task would: the host then builds each input from its ancestors'
 * outputs.  With `trace = "PREFIX"` it keeps, for every submit, the
 * monotonic time it was called and the time its completion was handed
 * back, with the run, task and attempt, and writes them to PREFIX.PID
 * (the host's process: its owner id ends in it) when destroyed, one line
 * each: "START END RUN TASK ATTEMPT", nanoseconds: the hop latency of any
 * edge of a DAG, across hosts on one machine (bench/postgres).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/executor.h>

/* One traced submit; ids are cut at the field's size (the benchmark's are
 * short), so that tracing costs no allocation per task. */
typedef struct {
    long long start, end;
    unsigned attempt;
    char run[24], task[40];
} trace_entry;

struct sy_instance {
    const sy_host_api *api;
    char *record, *trace;
    int output;
    long long *t;
    size_t n, cap;
    trace_entry *tr;
    size_t n_tr, cap_tr;
};

static const sy_param_spec p_record = {sizeof(sy_param_spec), 0, "record", SY_PARAM_STRING,
                                       "file for submit timestamps"};
static const sy_param_spec p_output = {sizeof(sy_param_spec), 0, "output", SY_PARAM_BOOL,
                                       "return {\"task\": ID, \"attempt\": N}"};
static const sy_param_spec p_trace = {sizeof(sy_param_spec), 0, "trace", SY_PARAM_STRING,
                                      "prefix of the per-task trace file (PREFIX.PID)"};
static const sy_param_spec *const instance_params[] = {&p_record, &p_output, &p_trace, NULL};
static const sy_param_spec *const task_params[] = {NULL};

static int noop_create(const sy_host_api *api, sy_host *host, const sy_params *cfg,
                       sy_instance **out, char *err, size_t err_len)
{
    (void)host;
    (void)err;
    (void)err_len;
    sy_instance *in = calloc(1, sizeof *in);
    if (!in)
        return SY_ENOMEM;
    in->api = api;
    const char *rec = NULL;
    if (api->param_string(cfg, "record", &rec) == SY_OK)
        in->record = strdup(rec);
    const char *trace = NULL;
    if (api->param_string(cfg, "trace", &trace) == SY_OK)
        in->trace = strdup(trace);
    api->param_bool(cfg, "output", &in->output);
    *out = in;
    return SY_OK;
}

static void noop_destroy(sy_instance *in)
{
    FILE *f = in->record ? fopen(in->record, "w") : NULL;
    for (size_t i = 0; f && i < in->n; i++)
        fprintf(f, "%lld\n", in->t[i]);
    if (f)
        fclose(f);
    if (in->trace) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%ld", in->trace, (long)getpid());
        f = fopen(path, "w");
        for (size_t i = 0; f && i < in->n_tr; i++)
            fprintf(f, "%lld %lld %s %s %u\n", in->tr[i].start, in->tr[i].end, in->tr[i].run,
                    in->tr[i].task, in->tr[i].attempt);
        if (f)
            fclose(f);
    }
    free(in->record);
    free(in->trace);
    free(in->tr);
    free(in->t);
    free(in);
}

static int64_t noop_capacity(sy_instance *in)
{
    (void)in;
    return SY_CAPACITY_UNLIMITED;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void copy_id(char *to, size_t size, const char *from)
{
    size_t n = from ? strlen(from) : 0;
    if (n >= size)
        n = size - 1;
    memcpy(to, from ? from : "", n);
    to[n] = '\0';
}

static int noop_submit(sy_instance *in, const sy_task *task, sy_completion *c, char *err,
                       size_t err_len)
{
    (void)err;
    (void)err_len;
    long long start = in->trace ? now_ns() : 0;
    if (in->record) {
        if (in->n == in->cap) {
            size_t cap = in->cap ? in->cap * 2 : 4096;
            long long *t = realloc(in->t, cap * sizeof *t);
            if (!t)
                return SY_ENOMEM;
            in->t = t;
            in->cap = cap;
        }
        in->t[in->n++] = now_ns();
    }
    if (in->trace && in->n_tr == in->cap_tr) {
        size_t cap = in->cap_tr ? in->cap_tr * 2 : 4096;
        trace_entry *tr = realloc(in->tr, cap * sizeof *tr);
        if (!tr)
            return SY_ENOMEM;
        in->tr = tr;
        in->cap_tr = cap;
    }
    sy_result r = {.size = sizeof r, .outcome = SY_OUTCOME_SUCCEEDED};
    char output[256];
    if (in->output) {
        /* Task ids in the benchmark need no JSON escaping. */
        int n = snprintf(output, sizeof output, "{\"task\":\"%s\",\"attempt\":%u}",
                         task->task_id, (unsigned)task->attempt);
        if (n > 0 && (size_t)n < sizeof output) {
            r.output = output;
            r.output_len = (size_t)n;
        }
    }
    in->api->complete(c, &r);
    if (in->trace) {
        trace_entry *e = &in->tr[in->n_tr++];
        e->start = start;
        e->end = now_ns();
        e->attempt = (unsigned)task->attempt;
        copy_id(e->run, sizeof e->run, task->run_id);
        copy_id(e->task, sizeof e->task, task->task_id);
    }
    return SY_OK;
}

static int noop_cancel(sy_instance *in, sy_completion *c)
{
    (void)in;
    (void)c;
    return SY_ENOENT; /* nothing is ever in flight */
}

static const sy_executor noop = {
    SY_EXECUTOR_V1,
    .name = "noop",
    .version = "1.0.0",
    .description = "benchmark executor: completes every task inside submit",
    .instance_params = instance_params,
    .task_params = task_params,
    .create = noop_create,
    .destroy = noop_destroy,
    .capacity = noop_capacity,
    .submit = noop_submit,
    .cancel = noop_cancel,
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &noop; }
