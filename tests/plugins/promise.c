/*
 * promise.c -- a correct synchronous executor (no settings, no parameters,
 * unlimited capacity; each task completes inside submit() with its input as
 * output) built once per promise of the executor contract, each build
 * breaking exactly that one, so the conformance kit can be shown to fail
 * it in its check and nowhere else (tests/sdk/conformance.sh):
 *
 *   -DBREAK_LATE          complete() again for the last task once the
 *                         instance has been idle 300 ms (a stray timer)
 *   -DBREAK_CANCEL_LATE   after cancel() answers SY_ENOENT, complete() the
 *                         task 300 ms later anyway
 *   -DBREAK_AFTER_DESTROY destroy() leaves a thread that completes the last
 *                         task again 300 ms later
 *   -DBREAK_DESTROY_THREAD destroy() leaves a thread running (5 s), one per
 *                         instance
 *   -DBREAK_CANCEL_BLOCKS cancel() sleeps 200 ms
 *   -DBREAK_FDS           opens /dev/null per task and never closes it
 *   -DBREAK_THREADS       starts a detached thread per task that never ends
 *   -DBREAK_MEMORY        keeps 64 KiB per task until destroy()
 *   -DBREAK_OVERSIZE      outputs 17 MiB, over the default max_context_bytes
 *                         (-DOVERSIZE_MIB=N: N MiB)
 *   -DBREAK_SLOW_SUBMIT   the first submit() of each instance sleeps past
 *                         SY_CALL_BOUND_MS (a blocking connect), the others
 *                         return at once
 *   -DBREAK_SLOW_CANCEL   the first cancel() of each instance sleeps past
 *                         SY_CALL_BOUND_MS
 *   -DBREAK_LONG_ERROR    fails the first task of each instance with a
 *                         100 KiB error text (a whole log pasted in), over
 *                         SY_RESULT_ERROR_MAX
 *   -DBREAK_RESULT_SIZE   hands complete() a sy_result whose size is garbage
 *   -DBREAK_RESULT_SIZE_ZERO  ... whose size is 0
 *   -DBREAK_SPEC_SIZE     declares a setting whose sy_param_spec size is
 *                         garbage
 *   -DBREAK_INPUT         writes into task->input (the byte it was)
 *   -DBREAK_SHARED_RESULT formats every output in one buffer shared by all
 *                         the threads that complete, without a lock
 *   -DBREAK_DEFER_NEGATIVE defers every other task with a negative
 *                         retry_after_ms
 *   -DKEEP_DEFERRED       breaks nothing: defers every other task (ABI 1.1)
 *   -DKEEP_RESUME         breaks nothing: has resume() (ABI 1.4), which
 *                         runs the attempt as submit() does
 *   -DBREAK_RESUME        has resume(), which refuses every attempt
 *
 * The stray thread of the late builds lives from create() to destroy()
 * (joined there), so only a check that waits for it sees it.  The leaks
 * are capped so that the checks that are not about them, which run
 * thousands of tasks, do not exhaust the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(KEEP_RESUME) || defined(BREAK_RESUME)
#define SY_EXECUTOR_MIN_MINOR 4
#endif
#include <switchyard/executor.h>
#include <switchyard/limits.h>

#define STRAY_MS 300
/* How long the slow builds' one slow call sleeps: past the host's bound. */
#define SLOW_MS (SY_CALL_BOUND_MS + 200)
#define MAX_LEAKS 512

struct sy_instance {
    const sy_host_api *api;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pthread_t stray;
    bool stray_running, stopping;
    sy_completion *last;      /* the last task completed (stray builds) */
    struct timespec due;      /* when the stray thread completes `last` */
    bool armed;
    long submits;
    long cancels;
    void **kept;              /* BREAK_MEMORY */
    size_t nkept, capkept;
};

#ifdef BREAK_SPEC_SIZE
static const sy_param_spec junk_spec = {
    .size = 0x7fff0001u, /* the bug */
    .name = "level",
    .type = SY_PARAM_INT,
};
static const sy_param_spec *const plugin_params[] = {&junk_spec, NULL};
#else
static const sy_param_spec *const plugin_params[] = {NULL};
#endif

/* Each build uses some of the helpers below. */
#define SOME_BUILDS __attribute__((unused))

SOME_BUILDS static struct timespec in_ms(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

SOME_BUILDS static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

#ifdef BREAK_LONG_ERROR
/* "aaaa...", 100 KiB, made once and kept for the process. */
static char *long_error;

static void make_long_error(void)
{
    size_t n = (size_t)100 << 10;
    long_error = malloc(n + 1);
    if (!long_error)
        return;
    memset(long_error, 'a', n);
    long_error[n] = '\0';
}
#endif

static void complete_with(const sy_host_api *api, sy_completion *c,
                          sy_outcome o, const char *output, size_t len)
{
    sy_result res = {.size = sizeof res, .outcome = o, .output = output,
                     .output_len = len, .error = NULL};
#ifdef BREAK_LONG_ERROR
    if (o == SY_OUTCOME_FAILED) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, make_long_error);
        res.output = NULL;
        res.output_len = 0;
        res.error = long_error; /* the bug: a whole log as the error */
    }
#endif
    if (o == SY_OUTCOME_DEFERRED) {
        res.error = "throttled";
        res.retry_after_ms = 5;
#ifdef BREAK_DEFER_NEGATIVE
        res.retry_after_ms = -5; /* the bug: a clock read backwards */
#endif
    }
#if defined(BREAK_RESULT_SIZE)
    res.size = 0x00c0ffeeu; /* the bug */
#elif defined(BREAK_RESULT_SIZE_ZERO)
    res.size = 0; /* the bug: an initialiser that forgot it */
#endif
    api->complete(c, &res);
}

/* ------------------------------------------------------------------------ */
/* The stray thread (the late builds)                                       */
/* ------------------------------------------------------------------------ */

SOME_BUILDS static void *stray_main(void *arg)
{
    sy_instance *inst = arg;
    pthread_mutex_lock(&inst->lock);
    while (!inst->stopping) {
        if (!inst->armed) {
            pthread_cond_wait(&inst->changed, &inst->lock);
            continue;
        }
        struct timespec due = inst->due;
        if (pthread_cond_timedwait(&inst->changed, &inst->lock, &due) !=
                ETIMEDOUT || !inst->armed)
            continue;
        sy_completion *c = inst->last;
        inst->armed = false;
        pthread_mutex_unlock(&inst->lock);
        complete_with(inst->api, c, SY_OUTCOME_SUCCEEDED, NULL, 0);
        pthread_mutex_lock(&inst->lock);
    }
    pthread_mutex_unlock(&inst->lock);
    return NULL;
}

/* Arms the stray thread to complete `c` STRAY_MS from now. */
SOME_BUILDS static void arm(sy_instance *inst, sy_completion *c)
{
    pthread_mutex_lock(&inst->lock);
    inst->last = c;
    inst->due = in_ms(STRAY_MS);
    inst->armed = true;
    pthread_cond_broadcast(&inst->changed);
    pthread_mutex_unlock(&inst->lock);
}

#ifdef BREAK_AFTER_DESTROY
typedef struct orphan {
    const sy_host_api *api;
    sy_completion *c;
} orphan;

static void *orphan_main(void *arg)
{
    orphan o = *(orphan *)arg;
    free(arg);
    sleep_ms(STRAY_MS);
    complete_with(o.api, o.c, SY_OUTCOME_SUCCEEDED, NULL, 0);
    return NULL;
}
#endif

#ifdef BREAK_DESTROY_THREAD
static void *lingering_main(void *arg)
{
    (void)arg;
    sleep_ms(5000);
    return NULL;
}
#endif

/* ------------------------------------------------------------------------ */
/* Per-task leaks                                                           */
/* ------------------------------------------------------------------------ */

#ifdef BREAK_THREADS
static void *forever(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}
#endif

static void leak_per_task(sy_instance *inst)
{
    static long leaked;
    if (__atomic_fetch_add(&leaked, 1, __ATOMIC_RELAXED) >= MAX_LEAKS)
        return;
#if defined(BREAK_FDS)
    (void)inst;
    (void)open("/dev/null", O_RDONLY | O_CLOEXEC); /* the bug */
#elif defined(BREAK_THREADS)
    (void)inst;
    pthread_t t; /* the bug: never joined, never ends */
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    if (pthread_create(&t, &a, forever, NULL) == 0)
        pthread_detach(t);
    pthread_attr_destroy(&a);
#else
    (void)inst;
#endif
}

#ifdef BREAK_MEMORY
/* Kept, not lost: LeakSanitizer stays quiet, the instance still grows. */
static void keep_per_task(sy_instance *inst)
{
    void *p = malloc(64 * 1024);
    if (!p)
        return;
    memset(p, 0x5a, 64 * 1024);
    pthread_mutex_lock(&inst->lock);
    if (inst->nkept == inst->capkept) {
        size_t cap = inst->capkept ? inst->capkept * 2 : 64;
        void **v = realloc(inst->kept, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&inst->lock);
            free(p);
            return;
        }
        inst->kept = v;
        inst->capkept = cap;
    }
    inst->kept[inst->nkept++] = p;
    pthread_mutex_unlock(&inst->lock);
}
#endif

#ifdef BREAK_OVERSIZE
#ifndef OVERSIZE_MIB
#define OVERSIZE_MIB 17
#endif
/* {"blob":"aaaa..."}, OVERSIZE_MIB MiB, made once and kept for the
 * process. */
static char *big;
static size_t big_len;

static void make_big(void)
{
    size_t n = (size_t)OVERSIZE_MIB << 20;
    big = malloc(n);
    if (!big)
        return;
    memset(big, 'a', n);
    memcpy(big, "{\"blob\":\"", 9);
    memcpy(big + n - 2, "\"}", 2);
    big_len = n;
}
#endif

/* ------------------------------------------------------------------------ */
/* The functions                                                            */
/* ------------------------------------------------------------------------ */

static int promise_create(const sy_host_api *api, sy_host *host,
                          const sy_params *config, sy_instance **out,
                          char *err, size_t err_len)
{
    (void)host;
    (void)config;
    (void)err;
    (void)err_len;
    sy_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return SY_ENOMEM;
    inst->api = api;
    pthread_mutex_init(&inst->lock, NULL);
    pthread_cond_init(&inst->changed, NULL);
#if defined(BREAK_LATE) || defined(BREAK_CANCEL_LATE)
    inst->stray_running =
        pthread_create(&inst->stray, NULL, stray_main, inst) == 0;
#endif
    *out = inst;
    return SY_OK;
}

static void promise_destroy(sy_instance *inst)
{
    pthread_mutex_lock(&inst->lock);
    inst->stopping = true;
    pthread_cond_broadcast(&inst->changed);
    pthread_mutex_unlock(&inst->lock);
    if (inst->stray_running)
        pthread_join(inst->stray, NULL);
#ifdef BREAK_DESTROY_THREAD
    pthread_t lingering;
    if (pthread_create(&lingering, NULL, lingering_main, NULL) == 0)
        pthread_detach(lingering); /* the bug */
#endif
#ifdef BREAK_AFTER_DESTROY
    orphan *o = inst->last ? malloc(sizeof *o) : NULL;
    pthread_t t;
    if (o) {
        o->api = inst->api;
        o->c = inst->last;
        if (pthread_create(&t, NULL, orphan_main, o) == 0)
            pthread_detach(t); /* the bug */
        else
            free(o);
    }
#endif
    for (size_t i = 0; i < inst->nkept; i++)
        free(inst->kept[i]);
    free(inst->kept);
    pthread_cond_destroy(&inst->changed);
    pthread_mutex_destroy(&inst->lock);
    free(inst);
}

static int64_t promise_capacity(sy_instance *inst)
{
    (void)inst;
    return SY_CAPACITY_UNLIMITED;
}

static int promise_submit(sy_instance *inst, const sy_task *task,
                          sy_completion *c, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    const char *output = task->input;
    size_t len = task->input_len;
    sy_outcome o = SY_OUTCOME_SUCCEEDED;
    long n = __atomic_fetch_add(&inst->submits, 1, __ATOMIC_RELAXED);
#ifdef BREAK_SLOW_SUBMIT
    if (n == 0)
        sleep_ms(SLOW_MS); /* the bug: a blocking connect */
#endif
#ifdef BREAK_INPUT
    /* The bug: writes into the host's input, as a parser working in place
     * would.  It writes back the byte it read, so the checks that hand out
     * ordinary memory see no change (and no race between submitters);
     * read-only pages catch the write all the same. */
    volatile char *in = (volatile char *)task->input;
    in[len - 1] = in[len - 1];
#endif
#ifdef BREAK_OVERSIZE
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_big);
    if (big) {
        output = big;
        len = big_len;
    }
#endif
#ifdef BREAK_MEMORY
    keep_per_task(inst);
#endif
#ifdef BREAK_SHARED_RESULT
    /* The bug: one scratch buffer for every thread that completes.  Only
     * the digits are rewritten, so each output stays valid JSON: only a
     * task that gets another's number shows it. */
    static char shared[] = "{\"n\":\"000000000000\"}";
    char *digits = shared + 6;
    long v = n;
    for (int i = 11; i >= 0; i--, v /= 10)
        digits[i] = (char)('0' + v % 10);
    output = shared;
    len = sizeof shared - 1;
#endif
#if defined(KEEP_DEFERRED) || defined(BREAK_DEFER_NEGATIVE)
    if (n % 2 == 1)
        o = SY_OUTCOME_DEFERRED;
#endif
#ifdef BREAK_LONG_ERROR
    if (n == 0)
        o = SY_OUTCOME_FAILED;
#endif
    (void)n;
    leak_per_task(inst);
    complete_with(inst->api, c, o, output, len);
#if defined(BREAK_LATE)
    arm(inst, c);
#elif defined(BREAK_AFTER_DESTROY)
    pthread_mutex_lock(&inst->lock);
    inst->last = c;
    pthread_mutex_unlock(&inst->lock);
#endif
    return SY_OK;
}

static int promise_cancel(sy_instance *inst, sy_completion *c)
{
    (void)inst;
    (void)c;
#ifdef BREAK_SLOW_CANCEL
    if (__atomic_fetch_add(&inst->cancels, 1, __ATOMIC_RELAXED) == 0)
        sleep_ms(SLOW_MS); /* the bug */
#endif
#ifdef BREAK_CANCEL_BLOCKS
    sleep_ms(200); /* the bug */
#endif
#ifdef BREAK_CANCEL_LATE
    arm(inst, c); /* the bug: it has ended, and is completed again */
#endif
    return SY_ENOENT;
}

#if defined(KEEP_RESUME) || defined(BREAK_RESUME)
/* No earlier host's work exists here: resuming an attempt starts it. */
static int promise_resume(sy_instance *inst, const sy_task *task, sy_completion *c, char *err,
                          size_t err_len)
{
#ifdef BREAK_RESUME
    (void)inst, (void)task, (void)c;
    return snprintf(err, err_len, "resume is not supported after all"), SY_ENOTSUP;
#else
    return promise_submit(inst, task, c, err, err_len);
#endif
}
#endif

static const sy_executor desc = {
    SY_EXECUTOR_V1,
    .name = PROMISE_NAME,
    .version = "1.0.0",
    .description = "breaks one promise of the executor contract "
                   "(conformance kit test)",
    .instance_params = plugin_params,
    .task_params = NULL,
    .create = promise_create,
    .destroy = promise_destroy,
    .capacity = promise_capacity,
    .submit = promise_submit,
    .cancel = promise_cancel,
#if defined(KEEP_RESUME) || defined(BREAK_RESUME)
    .resume = promise_resume,
#endif
};

SY_EXPORT const sy_executor *sy_executor_entry(void) { return &desc; }
