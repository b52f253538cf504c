/*
 * tasks.c -- a task library for the thread executor's tests
 * (switchyard/task.h).  Functions:
 *
 *   ok_echo           output = the input object with "ok": true added
 *   fail_with_error   fails with "failed on purpose: REASON" (param reason)
 *   fail_silently     returns 3 without set_error
 *   not_object        succeeds with the output "[1,2]"
 *   segv              crashes (a real SIGSEGV)
 *   slow_cancellable  loops until cancelled() is true, then fails
 *   sleep_ms          sleeps param `ms` milliseconds, output {"slept":ms}
 *   count_concurrency counts how many calls run at once (max kept)
 *   info_params       output: its info and params `x` (int), `name` (string)
 *   record_run        appends "ROUND TASK ATTEMPT" to $CRASHLOOP_WITNESS
 *                     (ROUND: $CRASHLOOP_ROUND, else 0), then sleeps 0-19 ms
 *
 * tasklib_running() / tasklib_max_running() / tasklib_reset() let a test
 * that dlopens this library read the counters.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/task.h>

SY_TASK_LIBRARY;

static atomic_int running, max_running;

SY_TASK_EXPORT int tasklib_running(void);
SY_TASK_EXPORT int tasklib_max_running(void);
SY_TASK_EXPORT void tasklib_reset(void);

SY_TASK_EXPORT int tasklib_running(void) { return atomic_load(&running); }
SY_TASK_EXPORT int tasklib_max_running(void)
{
    return atomic_load(&max_running);
}
SY_TASK_EXPORT void tasklib_reset(void)
{
    atomic_store(&running, 0);
    atomic_store(&max_running, 0);
}

static void enter(void)
{
    int now = atomic_fetch_add(&running, 1) + 1;
    int max = atomic_load(&max_running);
    while (now > max && !atomic_compare_exchange_weak(&max_running, &max, now))
        ;
}

static void leave(void) { atomic_fetch_sub(&running, 1); }

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

#define TASK(name) \
    SY_TASK_EXPORT int name(const sy_task_api *api, sy_task_ctx *ctx); \
    SY_TASK_EXPORT int name(const sy_task_api *api, sy_task_ctx *ctx)

TASK(ok_echo)
{
    size_t len = 0;
    const char *in = api->input(ctx, &len);
    const char *brace = strchr(in, '{');
    const char *rest = brace ? brace + 1 : "}";
    while (*rest == ' ' || *rest == '\n' || *rest == '\t')
        rest++;
    char *out = NULL;
    int n = asprintf(&out, "{\"ok\":true%s%s", *rest == '}' ? "" : ",", rest);
    if (n < 0) {
        api->set_error(ctx, "out of memory");
        return 1;
    }
    api->set_output(ctx, out, (size_t)n);
    free(out);
    return 0;
}

TASK(fail_with_error)
{
    const char *reason = "no reason given";
    api->param_string(api->params(ctx), "reason", &reason);
    api->set_output(ctx, "{\"ignored\":true}", 16);
    api->set_error(ctx, "failed on purpose: %s", reason);
    return 1;
}

TASK(fail_silently)
{
    (void)api;
    (void)ctx;
    return 3;
}

TASK(not_object)
{
    api->set_output(ctx, "[1,2]", 5);
    return 0;
}

/* Opaque to the compiler, so the store below is a real fault, not a trap
 * it could prove; the sanitizers are told to stand aside. */
static int *volatile nowhere;

SY_TASK_EXPORT int segv(const sy_task_api *api, sy_task_ctx *ctx);
SY_TASK_EXPORT __attribute__((no_sanitize("address", "undefined"))) int
segv(const sy_task_api *api, sy_task_ctx *ctx)
{
    (void)api;
    (void)ctx;
    *nowhere = 42;
    return 0;
}

TASK(slow_cancellable)
{
    enter();
    long loops = 0;
    while (!api->cancelled(ctx)) {
        nap_ms(2);
        loops++;
    }
    leave();
    api->log(ctx, SY_LOG_INFO, "stopped after %ld loops", loops);
    api->set_error(ctx, "stopped: cancelled");
    return 1;
}

TASK(sleep_ms)
{
    int64_t ms = 10;
    api->param_int(api->params(ctx), "ms", &ms);
    enter();
    for (int64_t i = 0; i < ms && !api->cancelled(ctx); i++)
        nap_ms(1);
    leave();
    char out[64];
    int n = snprintf(out, sizeof out, "{\"slept\":%lld}", (long long)ms);
    api->set_output(ctx, out, (size_t)n);
    return 0;
}

TASK(count_concurrency)
{
    (void)ctx;
    (void)api;
    enter();
    /* Long enough for the others to overlap, short enough for 10,000. */
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
    leave();
    return 0;
}

TASK(info_params)
{
    const sy_task_info *i = api->info(ctx);
    const sy_params *p = api->params(ctx);
    int64_t x = -1;
    const char *name = "";
    int rx = api->param_int(p, "x", &x);
    int rn = api->param_string(p, "name", &name);
    int missing = api->param_int(p, "nope", &x) == SY_ENOENT;
    api->log(ctx, SY_LOG_INFO, "info_params running for %s", i->ns);
    char out[1024];
    int n = snprintf(out, sizeof out,
                     "{\"ns\":\"%s\",\"run_id\":\"%s\",\"task_id\":\"%s\","
                     "\"attempt\":%u,\"x\":%lld,\"name\":\"%s\","
                     "\"rc\":[%d,%d],\"missing\":%s,\"abi\":%u,\"size_ok\":%s}",
                     i->ns, i->run_id, i->task_id, i->attempt, (long long)x,
                     name, rx, rn, missing ? "true" : "false", api->abi_major,
                     SY_HAS_FIELD(api, sy_task_api, log) ? "true" : "false");
    api->set_output(ctx, out, (size_t)n);
    return 0;
}

/* The crash loop's witness (tests/integration/crashloop.sh): one line per
 * execution, written with one O_APPEND write so lines from concurrent
 * attempts never interleave, before the work, so an execution that a kill
 * cuts short still shows.  The file and the round come from the host's
 * environment (a function task has no settings of its own to carry them). */
TASK(record_run)
{
    const sy_task_info *i = api->info(ctx);
    const char *file = getenv("CRASHLOOP_WITNESS");
    const char *round = getenv("CRASHLOOP_ROUND");
    if (!file) {
        api->set_error(ctx, "record_run needs CRASHLOOP_WITNESS");
        return 1;
    }
    char line[256];
    int n = snprintf(line, sizeof line, "%s %s %u\n", round ? round : "0",
                     i->task_id, i->attempt);
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || n <= 0 || write(fd, line, (size_t)n) != n) {
        if (fd >= 0)
            close(fd);
        api->set_error(ctx, "record_run cannot append to its file");
        return 1;
    }
    close(fd);
    /* 0 to 19 ms, by task: the loop's kills land in work of every length. */
    unsigned h = 0;
    for (const char *c = i->task_id; *c; c++)
        h = h * 31u + (unsigned char)*c;
    for (unsigned k = 0; k < h % 20 && !api->cancelled(ctx); k++)
        nap_ms(1);
    return 0;
}
