/*
 * noop: a benchmark executor that completes every task inside submit(), so
 * what is measured is the host's path alone.  With `record = "FILE"` it
 * keeps the monotonic time of every submit and writes them (nanoseconds,
 * one per line, in submit order) to FILE when destroyed: the hop latency of
 * a chain is the gap between consecutive submits.  With `output = true`
 * every task returns a small JSON object, {"task": ID, "attempt": N}, as a
 * real task would: the host then builds each input from its ancestors'
 * outputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <switchyard/executor.h>

struct sy_instance {
    const sy_host_api *api;
    char *record;
    int output;
    long long *t;
    size_t n, cap;
};

static const sy_param_spec p_record = {sizeof(sy_param_spec), 0, "record", SY_PARAM_STRING,
                                       "file for submit timestamps"};
static const sy_param_spec p_output = {sizeof(sy_param_spec), 0, "output", SY_PARAM_BOOL,
                                       "return {\"task\": ID, \"attempt\": N}"};
static const sy_param_spec *const instance_params[] = {&p_record, &p_output, NULL};
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
    free(in->record);
    free(in->t);
    free(in);
}

static int64_t noop_capacity(sy_instance *in)
{
    (void)in;
    return SY_CAPACITY_UNLIMITED;
}

static int noop_submit(sy_instance *in, const sy_task *task, sy_completion *c, char *err,
                       size_t err_len)
{
    (void)err;
    (void)err_len;
    if (in->record) {
        if (in->n == in->cap) {
            size_t cap = in->cap ? in->cap * 2 : 4096;
            long long *t = realloc(in->t, cap * sizeof *t);
            if (!t)
                return SY_ENOMEM;
            in->t = t;
            in->cap = cap;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        in->t[in->n++] = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
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
