/*
 * test_lambda.c -- the lambda plugin through its ABI, with the SDK's test
 * host, against the loopback Lambda endpoint (tests/lambda/server.py,
 * started here): what `switchyard run` cannot show.
 *
 *   - a thousand invocations in flight at once on the plugin's one thread
 *   - a 429 with Retry-After: DEFERRED with retry_after_ms and the Reason
 *     as note, capacity() 0 during the pause, wake() when it ends, the
 *     adaptive limit halved, and grown back by one after as many successes
 *   - cancel(): the note says the function may still complete (sync) or
 *     cannot be recalled (Event)
 *   - metrics: throttled by reason, errors by type, latency percentiles
 *
 * The environment names what was built: SY_LAMBDA_PLUGIN (the .so) and
 * SY_SRCDIR (for the server).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <switchyard/executor.h>
#include <switchyard/testhost.h>

static const sy_executor *desc;
static pid_t server;
static int port;
static char tmpdir[256];

/* ---- fixtures ------------------------------------------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int start_server(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/sy-lambda-unit-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return -1;
    char portfile[300], script[1024];
    snprintf(portfile, sizeof portfile, "%s/port", tmpdir);
    snprintf(script, sizeof script, "%s/tests/lambda/server.py",
             getenv("SY_SRCDIR") ? getenv("SY_SRCDIR") : ".");
    server = fork();
    if (server == 0) {
        /* A test that dies must not leave the server holding the pipe
         * the test driver reads. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        execlp("python3", "python3", script, "--port-file", portfile,
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        FILE *f = fopen(portfile, "r");
        if (f) {
            int ok = fscanf(f, "%d", &port) == 1;
            fclose(f);
            if (ok)
                return 0;
        }
        sleep_ms(50);
    }
    return -1;
}

static int setup(void **state)
{
    (void)state;
    const char *path = getenv("SY_LAMBDA_PLUGIN");
    void *dl = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!dl) {
        fprintf(stderr, "cannot open SY_LAMBDA_PLUGIN: %s\n", dlerror());
        return -1;
    }
    sy_executor_entry_fn entry = (sy_executor_entry_fn)(uintptr_t)dlsym(
        dl, SY_EXECUTOR_ENTRY_SYMBOL);
    desc = entry ? entry() : NULL;
    if (!desc)
        return -1;
    return start_server();
}

static int teardown(void **state)
{
    (void)state;
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Keeps the note of each completion in c->data (a 512-byte buffer). */
static void keep_note(sy_completion *c, const sy_result *r, int nth,
                      const char *malformed)
{
    (void)malformed;
    if (nth == 1 && c->data) {
        snprintf(c->data, 512, "%s", r->note ? r->note : "");
        *(int64_t *)((char *)c->data + 512) = r->retry_after_ms;
    }
}

typedef struct fixture {
    sy_host h;
    sy_instance *inst;
} fixture;

static void make(fixture *f, const char *extra)
{
    assert_int_equal(sy_sdk_test_host_init(&f->h, "lambda"), 0);
    f->h.on_complete = keep_note;
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "{\"endpoint_url\": \"http://127.0.0.1:%d\", "
             "\"access_key_id\": \"AKIDTEST\", "
             "\"secret_access_key\": \"secret/test+key\"%s%s}",
             port, extra ? ", " : "", extra ? extra : "");
    const sy_params *p = sy_sdk_test_host_params(&f->h, cfg);
    assert_non_null(p);
    char err[512] = "";
    int rc = desc->create(sy_sdk_test_host_api(), &f->h, p, &f->inst, err,
                          sizeof err);
    if (rc != SY_OK)
        fail_msg("create: %s", err);
}

static void unmake(fixture *f)
{
    desc->destroy(f->inst);
    sy_sdk_test_host_fini(&f->h);
}

static sy_task task_for(fixture *f, const char *params, const char *input)
{
    sy_task t = {
        .size = sizeof t, .attempt = 1, .ns = "public::lam::t",
        .run_id = "1", .task_id = "t", .input = input,
        .input_len = strlen(input),
        .params = sy_sdk_test_host_params(&f->h, params),
        .workflow = "lam", .base_dir = "/",
    };
    assert_non_null(t.params);
    return t;
}

typedef struct metric {
    const char *name;
    int64_t value;
    bool seen;
} metric;

static void find_metric(void *sink, const char *name, int64_t value)
{
    metric *m = sink;
    if (strcmp(name, m->name) == 0) {
        m->value = value;
        m->seen = true;
    }
}

static int64_t metric_of(fixture *f, const char *name)
{
    metric m = {name, 0, false};
    desc->metrics(f->inst, find_metric, &m);
    if (!m.seen)
        fail_msg("no metric %s", name);
    return m.value;
}

static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* ---- tests ---------------------------------------------------------------- */

#define N_WIDE 1000

static void test_thousand_in_flight(void **state)
{
    (void)state;
    fixture f;
    int before = threads_now();
    make(&f, "\"max_in_flight\": 1000");
    assert_int_equal(threads_now(), before + 1);
    sy_completion *c = calloc(N_WIDE, sizeof *c);
    assert_non_null(c);
    sy_task t = task_for(&f, "{\"function\": \"slow-1500\"}", "{\"n\": 1}");
    char err[256];
    for (int i = 0; i < N_WIDE; i++) {
        sy_sdk_test_completion_init(&c[i], &f.h, NULL);
        assert_int_equal(desc->submit(f.inst, &t, &c[i], err, sizeof err),
                         SY_OK);
    }
    assert_int_equal(desc->capacity(f.inst), 0);
    /* All of them on the wire together, on the one loop thread. */
    int64_t peak = 0, deadline = now_ms() + 20000;
    while (now_ms() < deadline && atomic_load(&f.h.completed) < N_WIDE) {
        int64_t inflight = metric_of(&f, "in_flight") - metric_of(&f, "queued");
        if (inflight > peak)
            peak = inflight;
        assert_true(threads_now() <= before + 1);
        sleep_ms(20);
    }
    assert_true(sy_sdk_test_host_wait(&f.h, N_WIDE, 20000));
    assert_int_equal(peak, N_WIDE);
    for (int i = 0; i < N_WIDE; i++) {
        assert_int_equal(atomic_load(&c[i].outcome), SY_OUTCOME_SUCCEEDED);
        sy_sdk_test_completion_fini(&c[i]);
    }
    assert_int_equal(metric_of(&f, "succeeded"), N_WIDE);
    assert_int_equal(desc->capacity(f.inst), N_WIDE);
    unmake(&f);
    free(c);
}

static void test_throttle_pauses(void **state)
{
    (void)state;
    fixture f;
    make(&f, "\"max_in_flight\": 8");
    char note[512 + 8];
    sy_completion c;
    sy_sdk_test_completion_init(&c, &f.h, note);
    sy_task t = task_for(&f, "{\"function\": \"throttle-1-unit\"}", "{}");
    char err[256];
    int64_t t_submit = now_ms();
    assert_int_equal(desc->submit(f.inst, &t, &c, err, sizeof err), SY_OK);
    assert_true(sy_sdk_test_host_wait(&f.h, 1, 5000));
    int64_t t_done = now_ms();
    assert_int_equal(atomic_load(&c.outcome), SY_OUTCOME_DEFERRED);
    assert_string_equal(note, "throttled: "
                              "ReservedFunctionConcurrentInvocationLimitExceeded");
    assert_int_equal(*(int64_t *)(note + 512), 1000);
    assert_non_null(strstr(c.error, "TooManyRequestsException"));
    /* Paused: no capacity until Retry-After has passed, then a wake. */
    assert_int_equal(desc->capacity(f.inst), 0);
    assert_int_equal(metric_of(&f, "paused"), 1);
    assert_int_equal(metric_of(&f, "limit"), 4);
    assert_int_equal(metric_of(&f, "deferred"), 1);
    assert_int_equal(metric_of(&f, "throttled.reserved_function_concurrent_"
                                    "invocation_limit_exceeded"), 1);
    sy_completion c2;
    sy_sdk_test_completion_init(&c2, &f.h, NULL);
    assert_int_equal(desc->submit(f.inst, &t, &c2, err, sizeof err),
                     SY_EBUSY);
    long wakes = atomic_load(&f.h.wakes);
    while (desc->capacity(f.inst) == 0 && now_ms() - t_done < 10000)
        sleep_ms(10);
    /* The pause began after the 429 came back, so after t_submit; the
     * upper bound is loose for slow runs (valgrind). */
    int64_t paused = now_ms() - t_submit;
    assert_true(paused >= 1000 && now_ms() - t_done < 6000);
    assert_true(atomic_load(&f.h.wakes) > wakes);
    assert_int_equal(desc->capacity(f.inst), 4);
    /* Offered again, it goes through. */
    assert_int_equal(desc->submit(f.inst, &t, &c2, err, sizeof err), SY_OK);
    assert_true(sy_sdk_test_host_wait(&f.h, 2, 5000));
    assert_int_equal(atomic_load(&c2.outcome), SY_OUTCOME_SUCCEEDED);
    /* Additive increase: one more slot after as many successes as the
     * limit (4): this one and three more. */
    assert_int_equal(metric_of(&f, "limit"), 4);
    sy_task echo = task_for(&f, "{\"function\": \"echo-aimd\"}", "{}");
    sy_completion more[3];
    for (int i = 0; i < 3; i++) {
        sy_sdk_test_completion_init(&more[i], &f.h, NULL);
        assert_int_equal(desc->submit(f.inst, &echo, &more[i], err,
                                      sizeof err), SY_OK);
    }
    assert_true(sy_sdk_test_host_wait(&f.h, 5, 5000));
    for (int i = 0; i < 100 && metric_of(&f, "limit") != 5; i++)
        sleep_ms(10);
    assert_int_equal(metric_of(&f, "limit"), 5);
    for (int i = 0; i < 3; i++)
        sy_sdk_test_completion_fini(&more[i]);
    sy_sdk_test_completion_fini(&c);
    sy_sdk_test_completion_fini(&c2);
    unmake(&f);
}

static void test_cancel_notes(void **state)
{
    (void)state;
    fixture f;
    make(&f, NULL);
    char n1[520], n2[520];
    sy_completion c1, c2;
    sy_sdk_test_completion_init(&c1, &f.h, n1);
    sy_sdk_test_completion_init(&c2, &f.h, n2);
    sy_task sync = task_for(&f, "{\"function\": \"slow-30000\"}", "{}");
    sy_task ev = task_for(&f, "{\"function\": \"slow-30000\", "
                              "\"invocation_type\": \"Event\"}", "{}");
    char err[256];
    assert_int_equal(desc->submit(f.inst, &sync, &c1, err, sizeof err), SY_OK);
    assert_int_equal(desc->submit(f.inst, &ev, &c2, err, sizeof err), SY_OK);
    sleep_ms(300);
    int64_t t0 = now_ms();
    assert_int_equal(desc->cancel(f.inst, &c1), SY_OK);
    assert_int_equal(desc->cancel(f.inst, &c2), SY_OK);
    assert_true(sy_sdk_test_host_wait(&f.h, 2, 2000));
    assert_true(now_ms() - t0 < 1000);
    assert_int_equal(atomic_load(&c1.outcome), SY_OUTCOME_CANCELLED);
    assert_int_equal(atomic_load(&c2.outcome), SY_OUTCOME_CANCELLED);
    assert_non_null(strstr(n1, "the function may still complete"));
    assert_non_null(strstr(n2, "an Event invocation cannot be recalled"));
    assert_int_equal(desc->cancel(f.inst, &c1), SY_ENOENT);
    /* The slots free right after complete() returns. */
    for (int i = 0; i < 100 && metric_of(&f, "in_flight") != 0; i++)
        sleep_ms(10);
    assert_int_equal(metric_of(&f, "in_flight"), 0);
    sy_sdk_test_completion_fini(&c1);
    sy_sdk_test_completion_fini(&c2);
    unmake(&f);
}

static void test_metrics(void **state)
{
    (void)state;
    fixture f;
    make(&f, NULL);
    sy_task ok = task_for(&f, "{\"function\": \"echo-m\"}", "{}");
    sy_task bad = task_for(&f, "{\"function\": \"fail-m\"}", "{}");
    sy_task gone = task_for(&f, "{\"function\": \"missing-m\"}", "{}");
    sy_completion c[5];
    char err[256];
    const sy_task *ts[5] = {&ok, &ok, &ok, &bad, &gone};
    for (int i = 0; i < 5; i++) {
        sy_sdk_test_completion_init(&c[i], &f.h, NULL);
        assert_int_equal(desc->submit(f.inst, ts[i], &c[i], err, sizeof err),
                         SY_OK);
    }
    assert_true(sy_sdk_test_host_wait(&f.h, 5, 5000));
    assert_int_equal(metric_of(&f, "submitted"), 5);
    assert_int_equal(metric_of(&f, "succeeded"), 3);
    assert_int_equal(metric_of(&f, "failed"), 2);
    assert_int_equal(metric_of(&f, "errors.value_error"), 1);
    assert_int_equal(metric_of(&f, "errors.resource_not_found_exception"), 1);
    assert_int_equal(metric_of(&f, "latency_ms.count"), 5);
    assert_true(metric_of(&f, "latency_ms.p50") >= 0);
    assert_true(metric_of(&f, "latency_ms.p99") >=
                metric_of(&f, "latency_ms.p50"));
    assert_int_equal(metric_of(&f, "limit"), 1000);
    for (int i = 0; i < 5; i++)
        sy_sdk_test_completion_fini(&c[i]);
    unmake(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thousand_in_flight),
        cmocka_unit_test(test_throttle_pauses),
        cmocka_unit_test(test_cancel_notes),
        cmocka_unit_test(test_metrics),
    };
    return cmocka_run_group_tests_name("lambda", tests, setup, teardown);
}
