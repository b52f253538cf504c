/*
 * test_thread.c -- the thread executor, driven through its ABI alone.
 *
 * The plugin is loaded with the host's loader (sy_plugins_load_file) and
 * given the host's function table (sy_host_api_table); tasks are sy_task
 * structs built here, completions arrive through sy_completion callbacks on
 * the plugin's threads.  The environment names what was built:
 *
 *   SY_THREAD_PLUGIN        the plugin (.../plugins/thread/.libs/thread.so)
 *   SY_TASKLIB              the test task library (tests/tasklib/tasks.c)
 *   SWITCHYARD_TASK_RUNNER  switchyard-task-runner, for isolated functions
 *   SY_SRCDIR               the source tree (tests/bin/tree.sh)
 *
 * Output that is not a JSON object is passed through by the plugin; the
 * host rejects it when it processes the completion (hostapi/dispatcher),
 * so here only the pass-through is asserted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <switchyard/json_params.h>

#include "executor/host_api.h"
#include "executor/plugin.h"

/* Waits in tests are bounded by this, never asserted on. */
#define PATIENCE_MS 30000

/* ------------------------------------------------------------------------ */
/* The loaded plugin and task library                                      */
/* ------------------------------------------------------------------------ */

static sy_plugins registry;
static const sy_executor *X;
static char lib_dir[PATH_MAX];   /* the task library's directory: base_dir */
static char lib_name[256];       /* its file name: "tasks.so" */
static void *lib_handle;
static int (*lib_running)(void);
static int (*lib_max_running)(void);
static void (*lib_reset)(void);

static const char *need_env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "test_thread: %s is not set (see the top of "
                        "tests/plugins/test_thread.c)\n", name);
        return NULL;
    }
    return v;
}

static int load_tasklib(void)
{
    const char *lib = need_env("SY_TASKLIB");
    if (!lib || !realpath(lib, lib_dir))
        return -1;
    char *slash = strrchr(lib_dir, '/');
    snprintf(lib_name, sizeof lib_name, "%s", slash + 1);
    *slash = '\0';
    lib_handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!lib_handle) {
        fprintf(stderr, "test_thread: %s\n", dlerror());
        return -1;
    }
    void *a = dlsym(lib_handle, "tasklib_running");
    void *b = dlsym(lib_handle, "tasklib_max_running");
    void *c = dlsym(lib_handle, "tasklib_reset");
    if (!a || !b || !c)
        return -1;
    memcpy(&lib_running, &a, sizeof a);
    memcpy(&lib_max_running, &b, sizeof b);
    memcpy(&lib_reset, &c, sizeof c);
    return 0;
}

/* The loader refuses a plugin in a directory others may write to (a build
 * tree made under umask 002, say), so the test loads a copy kept in a
 * private directory. */
static char plugin_dir[64];

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[1 << 14];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc == 0 ? chmod(to, 0755) : -1;
}

static int group_setup(void **state)
{
    (void)state;
    const char *built = need_env("SY_THREAD_PLUGIN");
    if (!built || !need_env("SWITCHYARD_TASK_RUNNER") || !need_env("SY_SRCDIR"))
        return -1;
    char path[PATH_MAX];
    snprintf(plugin_dir, sizeof plugin_dir, "/tmp/sy_test_thread_XXXXXX");
    if (!mkdtemp(plugin_dir))
        return -1;
    snprintf(path, sizeof path, "%s/thread.so", plugin_dir);
    if (copy_file(built, path) != 0) {
        fprintf(stderr, "test_thread: cannot copy %s: %s\n", built,
                strerror(errno));
        return -1;
    }
    sy_plugins_init(&registry);
    sy_plugin *p = sy_plugins_load_file(&registry, path);
    if (!p || p->state != SY_PLUGIN_LOADED) {
        fprintf(stderr, "test_thread: %s refused: %s\n", path,
                p && p->reason ? p->reason : "?");
        return -1;
    }
    X = p->desc;
    return load_tasklib();
}

static void remove_tree(const char *dir);

static int group_teardown(void **state)
{
    (void)state;
    sy_plugins_free(&registry);
    if (lib_handle)
        dlclose(lib_handle);
    if (plugin_dir[0])
        remove_tree(plugin_dir);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* A host for one instance                                                  */
/* ------------------------------------------------------------------------ */

typedef struct fixture {
    sy_instance *inst;
    struct sy_host host;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int completed;        /* completions seen */
    int wakes;            /* wake() calls seen */
    int64_t min_cap_at_wake;
    int wake_before_complete; /* wakes that came before their completion */
    int want_wakes;       /* for wait_wakes() */
} fixture;

typedef struct rec {
    sy_completion c;
    sy_task task;
    json_t *params;       /* owned */
    fixture *f;
    char err[512];        /* submit()'s message */
    bool done;
    int order;            /* 1 for the first completion the fixture saw */
    sy_outcome outcome;
    char *output;         /* copies of the result */
    size_t output_len;
    char *error;
    char *log_out, *log_err; /* sy_result.log_* copied; NULL for none */
    size_t log_err_dropped, log_err_cut;
} rec;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void on_wake(sy_host *h)
{
    fixture *f = h->data;
    int64_t cap = X->capacity(f->inst);
    pthread_mutex_lock(&f->mu);
    f->wakes++;
    if (cap < f->min_cap_at_wake)
        f->min_cap_at_wake = cap;
    if (f->wakes > f->completed)
        f->wake_before_complete++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static void on_complete(sy_completion *c, const sy_result *r)
{
    rec *x = c->data;
    fixture *f = x->f;
    char *out = r->output ? strndup(r->output, r->output_len) : NULL;
    char *err = r->error ? strdup(r->error) : NULL;
    char *lo = r->log_stdout ? strndup(r->log_stdout, r->log_stdout_len) : NULL;
    char *le = r->log_stderr ? strndup(r->log_stderr, r->log_stderr_len) : NULL;
    pthread_mutex_lock(&f->mu);
    x->log_out = lo;
    x->log_err = le;
    x->log_err_dropped = r->log_stderr_dropped;
    x->log_err_cut = r->log_stderr_cut;
    x->outcome = r->outcome;
    x->output = out;
    x->output_len = r->output ? r->output_len : 0;
    x->error = err;
    x->done = true;
    x->order = ++f->completed;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* Creates an instance from JSON settings; NULL with *err on refusal. */
static fixture *try_start(const char *settings, char *err, size_t err_len)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->host.name = "thread-test";
    f->host.on_wake = on_wake;
    f->host.data = f;
    f->min_cap_at_wake = INT64_MAX;
    json_error_t je;
    json_t *cfg = json_loads(settings, 0, &je);
    assert_non_null(cfg);
    err[0] = '\0';
    int rc = X->create(&sy_host_api_table, &f->host, sy_sdk_params_view(cfg),
                       &f->inst, err, err_len);
    json_decref(cfg);
    if (rc != SY_OK) {
        assert_true(err[0] != '\0');
        pthread_cond_destroy(&f->cv);
        pthread_mutex_destroy(&f->mu);
        free(f);
        return NULL;
    }
    return f;
}

static fixture *start(const char *settings)
{
    char err[512];
    fixture *f = try_start(settings, err, sizeof err);
    if (!f)
        fail_msg("create(%s) refused: %s", settings, err);
    return f;
}

static void stop(fixture *f)
{
    X->destroy(f->inst);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

static rec *new_rec(fixture *f, json_t *params)
{
    assert_non_null(params);
    rec *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->f = f;
    r->params = params;
    sy_completion_init(&r->c, "thread-test", on_complete, r);
    r->task = (sy_task){
        .size = sizeof(sy_task),
        .attempt = 1,
        .ns = "public::test::t",
        .run_id = "run-1",
        .task_id = "t",
        .input = "{}",
        .input_len = 2,
        .params = sy_sdk_params_view(params),
        .timeout_ms = 0,
        .workflow = "test",
        .base_dir = lib_dir,
    };
    return r;
}

static void free_rec(rec *r)
{
    if (!r)
        return;
    sy_completion_retire(&r->c);
    json_decref(r->params);
    free(r->output);
    free(r->error);
    free(r->log_out);
    free(r->log_err);
    free(r);
}

/* {"function": "tasks.so:NAME"} plus more keys from json_pack's `more`. */
static json_t *fn_params(const char *name)
{
    char spec[PATH_MAX];
    snprintf(spec, sizeof spec, "%s:%s", lib_name, name);
    return json_pack("{s:s}", "function", spec);
}

static int submit(fixture *f, rec *r)
{
    r->err[0] = '\0';
    return X->submit(f->inst, &r->task, sy_completion_token(&r->c), r->err, sizeof r->err);
}

static void submit_ok(fixture *f, rec *r)
{
    int rc = submit(f, r);
    if (rc != SY_OK)
        fail_msg("submit refused (%d): %s", rc, r->err);
}

static bool is_done(fixture *f, rec *r)
{
    pthread_mutex_lock(&f->mu);
    bool d = r->done;
    pthread_mutex_unlock(&f->mu);
    return d;
}

static void wait_done(fixture *f, rec *r)
{
    int64_t until = now_ms() + PATIENCE_MS;
    pthread_mutex_lock(&f->mu);
    while (!r->done && now_ms() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&f->cv, &f->mu, &ts);
    }
    bool done = r->done;
    pthread_mutex_unlock(&f->mu);
    if (!done)
        fail_msg("the attempt did not complete within %d ms", PATIENCE_MS);
}

/* Waits until cond(arg) holds; fails the test after PATIENCE_MS. */
static void wait_until(bool (*cond)(void *), void *arg, const char *what)
{
    int64_t until = now_ms() + PATIENCE_MS;
    while (!cond(arg)) {
        if (now_ms() > until)
            fail_msg("timed out waiting for %s", what);
        nap_ms(2);
    }
}

static bool running_is(void *n) { return lib_running() == *(int *)n; }

static void wait_running(int n)
{
    char what[64];
    snprintf(what, sizeof what, "%d task functions running", n);
    wait_until(running_is, &n, what);
}

static rec *run(fixture *f, json_t *params)
{
    rec *r = new_rec(f, params);
    submit_ok(f, r);
    wait_done(f, r);
    return r;
}

static void assert_contains(const char *s, const char *needle)
{
    if (!s)
        fail_msg("NULL does not contain \"%s\"", needle);
    if (!strstr(s, needle))
        fail_msg("\"%s\" does not contain \"%s\"", s, needle);
}

static void assert_outcome(const rec *r, sy_outcome want)
{
    if (r->outcome != want)
        fail_msg("outcome %d, want %d (error: %s)", (int)r->outcome, (int)want,
                 r->error ? r->error : "none");
}

/* The output parsed as JSON (caller decrefs). */
static json_t *output_json(const rec *r)
{
    assert_non_null(r->output);
    json_error_t je;
    json_t *j = json_loadb(r->output, r->output_len, 0, &je);
    if (!j)
        fail_msg("output is not JSON: %s (%s)", r->output, je.text);
    return j;
}

/* Metrics ---------------------------------------------------------------- */

typedef struct msink {
    char name[64][48];
    int64_t v[64];
    int n;
} msink;

static void sink_fn(void *s, const char *name, int64_t v)
{
    msink *m = s;
    if (m->n < 64) {
        snprintf(m->name[m->n], sizeof m->name[0], "%s", name);
        m->v[m->n++] = v;
    }
}

static int64_t metric(fixture *f, const char *name)
{
    msink m = {.n = 0};
    X->metrics(f->inst, sink_fn, &m);
    for (int i = 0; i < m.n; i++)
        if (strcmp(m.name[i], name) == 0)
            return m.v[i];
    fail_msg("no metric %s", name);
    return -1;
}

static void assert_metrics_add_up(fixture *f)
{
    int64_t sum = metric(f, "active") + metric(f, "succeeded") +
                  metric(f, "failed") + metric(f, "timed_out") +
                  metric(f, "cancelled");
    assert_int_equal(sum, metric(f, "submitted"));
}

/* A fresh private directory under /tmp. */
static void temp_dir(char *out, size_t len)
{
    snprintf(out, len, "/tmp/sy_test_thread_XXXXXX");
    assert_non_null(mkdtemp(out));
}

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------------ */
/* The descriptor and settings                                              */
/* ------------------------------------------------------------------------ */

static bool declares(const sy_param_spec *const *v, const char *name,
                     sy_param_type type)
{
    for (; v && *v; v++)
        if (strcmp((*v)->name, name) == 0 && (*v)->type == type)
            return true;
    return false;
}

static void test_descriptor(void **state)
{
    (void)state;
    assert_string_equal(X->name, "thread");
    const sy_param_spec *const *t = X->task_params;
    assert_true(declares(t, "function", SY_PARAM_STRING));
    assert_true(declares(t, "command", SY_PARAM_ARRAY));
    assert_true(declares(t, "env", SY_PARAM_GROUP));
    assert_true(declares(t, "cwd", SY_PARAM_STRING));
    assert_true(declares(t, "output", SY_PARAM_STRING));
    assert_true(declares(t, "max_output_bytes", SY_PARAM_INT));
    assert_true(declares(t, "kill_grace", SY_PARAM_DURATION));
    assert_true(declares(t, "isolate", SY_PARAM_BOOL));
    assert_true(declares(t, "blocking", SY_PARAM_BOOL));
    const sy_param_spec *const *i = X->instance_params;
    assert_true(declares(i, "workers", SY_PARAM_INT));
    assert_true(declares(i, "blocking_workers", SY_PARAM_INT));
    assert_true(declares(i, "isolate", SY_PARAM_BOOL));
    assert_true(declares(i, "runner", SY_PARAM_STRING));
    assert_true(declares(i, "pin_workers", SY_PARAM_BOOL));
    assert_non_null(X->validate);
    assert_non_null(X->metrics);
}

static void test_settings_refused(void **state)
{
    (void)state;
    char err[512];
    assert_null(try_start("{\"workers\":0}", err, sizeof err));
    assert_contains(err, "workers must be an integer from 1");
    assert_null(try_start("{\"blocking_workers\":\"two\"}", err, sizeof err));
    assert_contains(err, "blocking_workers");
    assert_null(try_start("{\"kill_grace\":\"soon\"}", err, sizeof err));
    assert_contains(err, "kill_grace must be a duration");
    assert_null(try_start("{\"isolate\":true,"
                          "\"runner\":\"/nonexistent/runner\"}", err,
                          sizeof err));
    assert_contains(err, "/nonexistent/runner cannot be run");
    assert_null(try_start("{\"pin_workers\":\"yes\"}", err, sizeof err));
    assert_contains(err, "pin_workers must be a boolean");
    fixture *f = start("{\"workers\":3,\"blocking_workers\":1}");
    assert_int_equal(X->capacity(f->inst), 3);
    assert_int_equal(metric(f, "default.workers"), 3);
    assert_int_equal(metric(f, "blocking.workers"), 1);
    stop(f);
}

/* ------------------------------------------------------------------------ */
/* Function tasks                                                           */
/* ------------------------------------------------------------------------ */

static void test_function_success(void **state)
{
    (void)state;
    fixture *f = start("{\"workers\":2}");
    rec *r = new_rec(f, fn_params("ok_echo"));
    r->task.input = "{\"a\":1}";
    r->task.input_len = strlen(r->task.input);
    submit_ok(f, r);
    wait_done(f, r);
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    assert_null(r->error);
    json_t *out = output_json(r);
    assert_true(json_is_true(json_object_get(out, "ok")));
    assert_int_equal(json_integer_value(json_object_get(out, "a")), 1);
    json_decref(out);
    assert_int_equal(metric(f, "succeeded"), 1);
    assert_metrics_add_up(f);
    free_rec(r);
    stop(f);
}

static void test_function_info_and_params(void **state)
{
    (void)state;
    fixture *f = start("{}");
    json_t *p = fn_params("info_params");
    json_object_set_new(p, "x", json_integer(7));
    json_object_set_new(p, "name", json_string("seven"));
    rec *r = new_rec(f, p);
    r->task.attempt = 2;
    submit_ok(f, r);
    wait_done(f, r);
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    json_t *out = output_json(r);
    assert_string_equal(json_string_value(json_object_get(out, "ns")),
                        "public::test::t");
    assert_string_equal(json_string_value(json_object_get(out, "run_id")),
                        "run-1");
    assert_int_equal(json_integer_value(json_object_get(out, "attempt")), 2);
    assert_int_equal(json_integer_value(json_object_get(out, "x")), 7);
    assert_string_equal(json_string_value(json_object_get(out, "name")),
                        "seven");
    assert_true(json_is_true(json_object_get(out, "missing")));
    assert_int_equal(json_integer_value(json_object_get(out, "abi")), 1);
    assert_true(json_is_true(json_object_get(out, "size_ok")));
    json_decref(out);
    free_rec(r);
    stop(f);
}

static void test_function_error(void **state)
{
    (void)state;
    fixture *f = start("{}");
    json_t *p = fn_params("fail_with_error");
    json_object_set_new(p, "reason", json_string("disk on fire"));
    rec *r = run(f, p);
    assert_outcome(r, SY_OUTCOME_FAILED);
    assert_string_equal(r->error, "failed on purpose: disk on fire");
    /* The output it set before failing is dropped. */
    assert_null(r->output);
    rec *s = run(f, fn_params("fail_silently"));
    assert_outcome(s, SY_OUTCOME_FAILED);
    assert_contains(s->error, "returned 3 without an error message");
    assert_int_equal(metric(f, "failed"), 2);
    assert_metrics_add_up(f);
    free_rec(r);
    free_rec(s);
    stop(f);
}

/* The plugin hands the text on as it is; the host (hostapi/dispatcher)
 * rejects anything but a JSON object. */
static void test_function_output_not_object(void **state)
{
    (void)state;
    fixture *f = start("{}");
    rec *r = run(f, fn_params("not_object"));
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    assert_int_equal(r->output_len, 5);
    assert_string_equal(r->output, "[1,2]");
    free_rec(r);
    stop(f);
}

static void test_function_timeout(void **state)
{
    (void)state;
    fixture *f = start("{}");
    rec *r = new_rec(f, fn_params("slow_cancellable"));
    r->task.timeout_ms = 100;
    submit_ok(f, r);
    wait_done(f, r);
    assert_outcome(r, SY_OUTCOME_TIMED_OUT);
    /* "ran past its timeout of 100 ms" (or, on a very slow machine,
     * "timed out before it started (timeout 100 ms)"). */
    assert_contains(r->error, "100 ms");
    assert_int_equal(metric(f, "timed_out"), 1);
    free_rec(r);
    stop(f);
}

static int validate(fixture *f, json_t *p, char *err, size_t err_len)
{
    err[0] = '\0';
    int rc = X->validate(f->inst, sy_sdk_params_view(p), lib_dir, err, err_len);
    json_decref(p);
    return rc;
}

static void expect_invalid(fixture *f, json_t *p, const char *msg)
{
    char err[512];
    int rc = validate(f, p, err, sizeof err);
    if (rc == SY_OK)
        fail_msg("validate accepted what should fail with \"%s\"", msg);
    assert_contains(err, msg);
}

static void test_validate(void **state)
{
    (void)state;
    fixture *f = start("{}");
    char err[512];
    assert_int_equal(validate(f, fn_params("ok_echo"), err, sizeof err),
                     SY_OK);
    assert_int_equal(validate(f, json_pack("{s:[s,s]}", "command", "true",
                                           "x"), err, sizeof err), SY_OK);
    expect_invalid(f, fn_params("no_such_symbol"),
                   "has no symbol no_such_symbol");
    expect_invalid(f, json_pack("{s:s}", "function", "missing.so:f"),
                   "cannot open task library");
    expect_invalid(f, json_pack("{s:s}", "function", "tasks.so"),
                   "expected \"path/to/lib.so:symbol\"");
    expect_invalid(f, json_pack("{s:s}", "function", "tasks.so:9x"),
                   "not a C symbol name");
    expect_invalid(f, json_pack("{s:s,s:[s]}", "function", "a.so:f",
                                "command", "true"), "exclusive");
    expect_invalid(f, json_pack("{s:b}", "blocking", 1),
                   "needs function = \"lib.so:symbol\" or command");
    expect_invalid(f, json_pack("{s:s}", "command", "true"),
                   "command must be a list of strings");
    expect_invalid(f, json_pack("{s:[]}", "command"), "command is empty");
    expect_invalid(f, json_pack("{s:[s,i]}", "command", "echo", 3),
                   "command[1] must be a string");
    expect_invalid(f, json_pack("{s:[s],s:{s:i}}", "command", "env", "env",
                                "N", 1), "env.N must be a string");
    expect_invalid(f, json_pack("{s:[s],s:s}", "command", "true", "output",
                                "yaml"), "output must be \"json\" or \"none\"");
    expect_invalid(f, json_pack("{s:[s],s:i}", "command", "true",
                                "max_output_bytes", 0),
                   "max_output_bytes must be a positive integer");
    expect_invalid(f, json_pack("{s:[s],s:b}", "command", "true", "isolate",
                                1), "isolate applies only to function tasks");
    json_t *p = fn_params("ok_echo");
    json_object_set_new(p, "cwd", json_string("/"));
    expect_invalid(f, p, "cwd applies only to command tasks");
    p = fn_params("no_such_symbol");
    json_object_set_new(p, "isolate", json_true());
    /* Isolated: checked by the runner, not opened in the host. */
    expect_invalid(f, p, "has no symbol no_such_symbol");
    stop(f);
}

static void test_submit_bad_params(void **state)
{
    (void)state;
    fixture *f = start("{}");
    rec *r = new_rec(f, json_pack("{s:s}", "cwd", "/"));
    assert_int_equal(submit(f, r), SY_EINVAL);
    assert_contains(r->err, "needs function");
    /* A task library that is missing fails the attempt, not the submit. */
    rec *s = run(f, json_pack("{s:s}", "function", "missing.so:f"));
    assert_outcome(s, SY_OUTCOME_FAILED);
    assert_contains(s->error, "cannot open task library");
    assert_false(r->done);
    assert_int_equal(metric(f, "submitted"), 1);
    free_rec(r);
    free_rec(s);
    stop(f);
}

/* ------------------------------------------------------------------------ */
/* Command tasks                                                            */
/* ------------------------------------------------------------------------ */

static json_t *sh(const char *script)
{
    return json_pack("{s:[s,s,s]}", "command", "sh", "-c", script);
}

static void test_command_success(void **state)
{
    (void)state;
    fixture *f = start("{}");
    rec *r = run(f, sh("cat >/dev/null; echo '{\"x\": 1}'"));
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    json_t *out = output_json(r);
    assert_int_equal(json_integer_value(json_object_get(out, "x")), 1);
    json_decref(out);
    /* The input is on stdin: 1 MiB through cat, both pipes at once. */
    size_t n = 1 << 20;
    char *big = malloc(n + 16);
    assert_non_null(big);
    int k = snprintf(big, n + 16, "{\"k\":\"");
    memset(big + k, 'x', n - (size_t)k - 2);
    memcpy(big + n - 2, "\"}", 3);
    rec *s = new_rec(f, json_pack("{s:[s]}", "command", "cat"));
    s->task.input = big;
    s->task.input_len = n;
    submit_ok(f, s);
    wait_done(f, s);
    assert_outcome(s, SY_OUTCOME_SUCCEEDED);
    assert_int_equal(s->output_len, n);
    assert_memory_equal(s->output, big, n);
    free(big);
    free_rec(r);
    free_rec(s);
    stop(f);
}

static void test_command_output_none(void **state)
{
    (void)state;
    fixture *f = start("{}");
    json_t *p = sh("echo this is not json");
    json_object_set_new(p, "output", json_string("none"));
    rec *r = run(f, p);
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    assert_null(r->output);
    /* Without it, the text is handed on for the host to reject. */
    rec *s = run(f, sh("echo this is not json"));
    assert_outcome(s, SY_OUTCOME_SUCCEEDED);
    assert_contains(s->output, "this is not json");
    free_rec(r);
    free_rec(s);
    stop(f);
}

static void test_command_failure(void **state)
{
    (void)state;
    fixture *f = start("{}");
    rec *r = run(f, sh("echo partial output; echo oops-detail >&2; exit 3"));
    assert_outcome(r, SY_OUTCOME_FAILED);
    assert_contains(r->error, "exited with status 3");
    assert_contains(r->error, "oops-detail");
    assert_null(r->output);
    /* What it wrote goes to the attempt's logs: stdout, not the output of
     * a failed command, and stderr. */
    assert_string_equal(r->log_out, "partial output\n");
    assert_string_equal(r->log_err, "oops-detail\n");
    rec *s = run(f, json_pack("{s:[s]}", "command", "/nonexistent/prog"));
    assert_outcome(s, SY_OUTCOME_FAILED);
    assert_contains(s->error, "cannot run /nonexistent/prog");
    rec *t = run(f, sh("kill -9 $$"));
    assert_outcome(t, SY_OUTCOME_FAILED);
    assert_contains(t->error, "killed by signal 9");
    /* The error is one line: the last of stderr, cut to its end. */
    rec *u = run(f, sh("head -c 100000 /dev/zero | tr '\\0' a >&2; "
                       "echo >&2; echo END-MARK >&2; exit 1"));
    assert_outcome(u, SY_OUTCOME_FAILED);
    assert_contains(u->error, "exited with status 1: END-MARK");
    assert_null(strchr(u->error, '\n'));
    assert_true(strlen(u->error) < 600);
    /* The logs get its first 32 KiB and its last 64 KiB, and the count
     * of the bytes between them. */
    assert_int_equal(strlen(u->log_err), 32768 + 65536);
    assert_int_equal(u->log_err_dropped, 100000 + 10 - 65536 - 32768);
    assert_int_equal(u->log_err_cut, 32768);
    free_rec(u);
    free_rec(r);
    free_rec(s);
    free_rec(t);
    stop(f);
}

static bool file_exists(void *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0;
}

/* The command is a shell that starts a child ignoring SIGTERM.  On timeout
 * the group gets SIGTERM (the shell dies), then SIGKILL (the child dies).
 * This process is made a subreaper so the orphaned child comes back to it:
 * then its end can be checked (killed by SIGKILL) and nothing is left. */
static void test_command_timeout_kills_tree(void **state)
{
    (void)state;
    char dir[64], pidfile[PATH_MAX], script[PATH_MAX];
    temp_dir(dir, sizeof dir);
    snprintf(pidfile, sizeof pidfile, "%s/pids", dir);
    snprintf(script, sizeof script, "%s/tests/bin/tree.sh",
             getenv("SY_SRCDIR"));
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    fixture *f = start("{}");
    rec *r = new_rec(f, json_pack("{s:[s,s,s],s:s}", "command", "sh", script,
                                  pidfile, "kill_grace", "300ms"));
    r->task.timeout_ms = 1000;
    submit_ok(f, r);
    wait_until(file_exists, pidfile, "tree.sh to write its pids");
    wait_done(f, r);
    assert_outcome(r, SY_OUTCOME_TIMED_OUT);
    assert_contains(r->error, "timed out after 1000 ms");
    FILE *fp = fopen(pidfile, "r");
    assert_non_null(fp);
    int shell = 0, child = 0;
    assert_int_equal(fscanf(fp, "%d %d", &shell, &child), 2);
    fclose(fp);
    /* The command itself: reaped by the plugin, no zombie. */
    assert_int_equal(kill(shell, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(waitpid(shell, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    /* Its child ignored SIGTERM and was killed. */
    int st = 0;
    pid_t w = 0;
    for (int64_t until = now_ms() + PATIENCE_MS; w == 0 && now_ms() < until;
         nap_ms(2))
        w = waitpid(child, &st, WNOHANG);
    assert_int_equal(w, child);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGKILL);
    assert_int_equal(kill(child, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
    assert_int_equal(metric(f, "timed_out"), 1);
    free_rec(r);
    stop(f);
    remove_tree(dir);
}

static void test_command_max_output(void **state)
{
    (void)state;
    fixture *f = start("{}");
    json_t *p = sh("head -c 100000 /dev/zero");
    json_object_set_new(p, "max_output_bytes", json_integer(1000));
    rec *r = run(f, p);
    assert_outcome(r, SY_OUTCOME_FAILED);
    assert_contains(r->error, "more than max_output_bytes = 1000 bytes");
    assert_null(r->output);
    /* Exactly at the limit is fine. */
    p = sh("printf '{\"k\":\"%0992d\"}' 0");
    json_object_set_new(p, "max_output_bytes", json_integer(1000));
    rec *s = run(f, p);
    assert_outcome(s, SY_OUTCOME_SUCCEEDED);
    assert_int_equal(s->output_len, 1000);
    free_rec(r);
    free_rec(s);
    stop(f);
}

static void test_command_env_and_cwd(void **state)
{
    (void)state;
    char dir[64], sub[PATH_MAX], real[PATH_MAX];
    temp_dir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_non_null(realpath(sub, real));
    assert_int_equal(setenv("SY_THREAD_TEST_INHERITED", "yes", 1), 0);
    fixture *f = start("{}");
    const char *script =
        "printf '{\"v\":\"%s\",\"d\":\"%s\",\"r\":\"%s\",\"a\":\"%s\","
        "\"i\":\"%s\"}' \"$MYVAR\" \"$(pwd -P)\" \"$SWITCHYARD_RUN_ID\" "
        "\"$SWITCHYARD_ATTEMPT\" \"$SY_THREAD_TEST_INHERITED\"";
    json_t *p = sh(script);
    json_object_set_new(p, "env", json_pack("{s:s}", "MYVAR", "hello world"));
    json_object_set_new(p, "cwd", json_string("sub"));
    rec *r = new_rec(f, p);
    r->task.base_dir = dir;
    r->task.attempt = 4;
    submit_ok(f, r);
    wait_done(f, r);
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    json_t *out = output_json(r);
    assert_string_equal(json_string_value(json_object_get(out, "v")),
                        "hello world");
    assert_string_equal(json_string_value(json_object_get(out, "d")), real);
    assert_string_equal(json_string_value(json_object_get(out, "r")), "run-1");
    assert_string_equal(json_string_value(json_object_get(out, "a")), "4");
    assert_string_equal(json_string_value(json_object_get(out, "i")), "yes");
    json_decref(out);
    /* Without cwd, a command runs in the workflow file's directory. */
    rec *s = new_rec(f, sh("printf '{\"d\":\"%s\"}' \"$(pwd -P)\""));
    s->task.base_dir = sub;
    submit_ok(f, s);
    wait_done(f, s);
    out = output_json(s);
    assert_string_equal(json_string_value(json_object_get(out, "d")), real);
    json_decref(out);
    /* A missing directory fails the attempt with its name. */
    p = sh("true");
    json_object_set_new(p, "cwd", json_string("nowhere"));
    rec *t = new_rec(f, p);
    t->task.base_dir = dir;
    submit_ok(f, t);
    wait_done(f, t);
    assert_outcome(t, SY_OUTCOME_FAILED);
    assert_contains(t->error, "nowhere");
    unsetenv("SY_THREAD_TEST_INHERITED");
    free_rec(r);
    free_rec(s);
    free_rec(t);
    stop(f);
    remove_tree(dir);
}

/* ------------------------------------------------------------------------ */
/* Cancel                                                                   */
/* ------------------------------------------------------------------------ */

/* The CPUs a command may run on, as the kernel lists them ("0-3", "2"),
 * from the command's own /proc entry. */
static char *command_cpus(fixture *f)
{
    rec *r = run(f, sh("cat >/dev/null; printf '{\"cpus\":\"%s\"}' "
                       "\"$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "
                       "/proc/self/status)\""));
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    json_t *out = output_json(r);
    char *cpus = strdup(json_string_value(json_object_get(out, "cpus")));
    json_decref(out);
    free_rec(r);
    assert_non_null(cpus);
    return cpus;
}

static char *own_cpus(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    assert_non_null(fp);
    char line[512], *cpus = NULL;
    while (!cpus && fgets(line, sizeof line, fp))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            char *v = line + 18 + strspn(line + 18, " \t");
            v[strcspn(v, "\n")] = '\0';
            cpus = strdup(v);
        }
    fclose(fp);
    assert_non_null(cpus);
    return cpus;
}

/* pin_workers: each worker of the default pool has one CPU, handed out
 * round-robin, and what it spawns runs there; without it (the default) a
 * command may run on every CPU the host may. */
static void test_pin_workers(void **state)
{
    (void)state;
    char *all = own_cpus();
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    int n = CPU_COUNT(&set);

    fixture *f = start("{\"workers\":1}");
    assert_int_equal(metric(f, "default.pinned"), 0);
    char *cpus = command_cpus(f);
    assert_string_equal(cpus, all);
    free(cpus);
    stop(f);

    /* One worker more than CPUs: every worker still gets one. */
    char settings[128];
    snprintf(settings, sizeof settings,
             "{\"workers\":%d,\"pin_workers\":true}", n + 1);
    f = start(settings);
    assert_int_equal(metric(f, "default.pinned"), n + 1);
    assert_int_equal(metric(f, "blocking.pinned"), 0);
    for (int i = 0; i < 4; i++) {
        cpus = command_cpus(f);
        char *end = NULL;
        long cpu = strtol(cpus, &end, 10);
        if (*end != '\0' || cpu < 0 || !CPU_ISSET((int)cpu, &set))
            fail_msg("a pinned worker's command ran on \"%s\", not one of "
                     "this process's CPUs (%s)", cpus, all);
        free(cpus);
    }
    stop(f);
    free(all);
}

static void test_cancel_queued(void **state)
{
    (void)state;
    lib_reset();
    fixture *f = start("{\"workers\":1,\"queue_depth\":1}");
    rec *a = new_rec(f, fn_params("slow_cancellable"));
    rec *b = new_rec(f, fn_params("ok_echo"));
    rec *c = new_rec(f, fn_params("ok_echo"));
    submit_ok(f, a);
    wait_running(1);
    submit_ok(f, b); /* queued behind a */
    assert_int_equal(X->capacity(f->inst), 0);
    assert_int_equal(submit(f, c), SY_EBUSY);
    assert_int_equal(metric(f, "queued"), 1);
    /* A queued attempt completes inside cancel(), and frees its place. */
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&b->c)), SY_OK);
    assert_true(is_done(f, b));
    assert_outcome(b, SY_OUTCOME_CANCELLED);
    assert_contains(b->error, "cancelled while queued");
    assert_int_equal(f->wakes, 1);
    assert_false(is_done(f, a));
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&b->c)), SY_ENOENT);
    assert_int_equal(X->capacity(f->inst), 1);
    /* The running one stops when the function sees cancelled(). */
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&a->c)), SY_OK);
    wait_done(f, a);
    assert_outcome(a, SY_OUTCOME_CANCELLED);
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&a->c)), SY_ENOENT);
    assert_int_equal(metric(f, "cancelled"), 2);
    assert_metrics_add_up(f);
    free_rec(a);
    free_rec(b);
    free_rec(c);
    stop(f);
}

static void test_cancel_running_command(void **state)
{
    (void)state;
    char dir[64], pidfile[PATH_MAX], script[PATH_MAX + 64];
    temp_dir(dir, sizeof dir);
    snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
    snprintf(script, sizeof script, "echo $$ > %s; exec sleep 30", pidfile);
    fixture *f = start("{}");
    rec *r = new_rec(f, sh(script));
    submit_ok(f, r);
    wait_until(file_exists, pidfile, "the command to start");
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&r->c)), SY_OK);
    wait_done(f, r);
    assert_outcome(r, SY_OUTCOME_CANCELLED);
    assert_contains(r->error, "terminated");
    FILE *fp = fopen(pidfile, "r");
    assert_non_null(fp);
    int pid = 0;
    assert_int_equal(fscanf(fp, "%d", &pid), 1);
    fclose(fp);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    free_rec(r);
    stop(f);
    remove_tree(dir);
}

/* Opens the FIFO `path` for writing once its reader has (ENXIO until then)
 * and writes a line: the command reading it goes on. */
static void open_gate(const char *path)
{
    int64_t until = now_ms() + PATIENCE_MS;
    int fd;
    while ((fd = open(path, O_WRONLY | O_NONBLOCK)) < 0) {
        if (errno != ENXIO || now_ms() > until)
            fail_msg("cannot open the gate %s: %s", path, strerror(errno));
        nap_ms(2);
    }
    assert_int_equal(write(fd, "go\n", 3), 3);
    close(fd);
}

static json_t *gated(const char *gate)
{
    char script[PATH_MAX + 32];
    snprintf(script, sizeof script, "read x < %s", gate);
    return sh(script);
}

static void wait_wakes(fixture *f, int n);

/* A worker that finishes with more queued reports what it finished once
 * the next command runs: never later than that start, never lost, and in
 * order, whatever comes next (a command, a function, a command that cannot
 * start, nothing). */
static void test_report_before_next_ends(void **state)
{
    (void)state;
    char dir[64], gate_a[PATH_MAX], gate_b[PATH_MAX];
    temp_dir(dir, sizeof dir);
    snprintf(gate_a, sizeof gate_a, "%s/a", dir);
    snprintf(gate_b, sizeof gate_b, "%s/b", dir);
    assert_int_equal(mkfifo(gate_a, 0600), 0);
    assert_int_equal(mkfifo(gate_b, 0600), 0);
    fixture *f = start("{\"workers\":1,\"queue_depth\":4}");
    rec *a = new_rec(f, gated(gate_a));
    rec *b = new_rec(f, gated(gate_b));
    rec *c = new_rec(f, fn_params("ok_echo"));
    rec *d = new_rec(f, json_pack("{s:[s]}", "command",
                                  "/nonexistent/no-such-program"));
    rec *e = new_rec(f, sh("exit 0"));
    submit_ok(f, a);
    submit_ok(f, b);
    submit_ok(f, c);
    submit_ok(f, d);
    submit_ok(f, e);
    open_gate(gate_a);
    /* b runs and waits at its gate: a must be reported meanwhile. */
    wait_done(f, a);
    assert_outcome(a, SY_OUTCOME_SUCCEEDED);
    assert_false(is_done(f, b));
    open_gate(gate_b);
    wait_done(f, e);
    assert_true(is_done(f, b) && is_done(f, c) && is_done(f, d));
    assert_outcome(b, SY_OUTCOME_SUCCEEDED);
    assert_outcome(c, SY_OUTCOME_SUCCEEDED);
    assert_outcome(d, SY_OUTCOME_FAILED);
    assert_contains(d->error, "no-such-program");
    assert_outcome(e, SY_OUTCOME_SUCCEEDED);
    const rec *in_order[] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++)
        assert_int_equal(in_order[i]->order, i + 1);
    wait_wakes(f, 5); /* each comes just after its completion */
    assert_int_equal(metric(f, "active"), 0);
    assert_metrics_add_up(f);
    rec *all[] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++)
        free_rec(all[i]);
    stop(f);
    remove_tree(dir);
}

/* A command's end raises no SIGCHLD in the host: the worker that started
 * it does not block the signal (even when the thread that made the
 * instance does, as this one does), so its default action (ignore) drops
 * it there instead of waking whichever host thread does not block it. */
static void test_no_sigchld_for_host(void **state)
{
    (void)state;
    sigset_t chld, old, pending;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&chld, NULL, &zero) == SIGCHLD)
        ; /* what earlier tests left pending */
    fixture *f = start("{\"workers\":2}");
    rec *r = run(f, sh("exit 0"));
    assert_outcome(r, SY_OUTCOME_SUCCEEDED);
    json_t *iso = fn_params("ok_echo");
    json_object_set_new(iso, "isolate", json_true());
    rec *q = run(f, iso); /* a forked worker process is a child too */
    assert_outcome(q, SY_OUTCOME_SUCCEEDED);
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGCHLD));
    free_rec(r);
    free_rec(q);
    stop(f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------------ */
/* Isolated functions                                                       */
/* ------------------------------------------------------------------------ */

static void test_isolated(void **state)
{
    (void)state;
    fixture *f = start("{\"isolate\":true}");
    rec *r = run(f, fn_params("segv"));
    assert_outcome(r, SY_OUTCOME_FAILED);
    assert_contains(r->error, "isolated function crashed: signal 11 "
                              "(Segmentation fault)");
    /* Only that attempt failed: this process and the instance go on. */
    rec *s = new_rec(f, fn_params("ok_echo"));
    s->task.input = "{\"b\":2}";
    s->task.input_len = 7;
    submit_ok(f, s);
    wait_done(f, s);
    assert_outcome(s, SY_OUTCOME_SUCCEEDED);
    json_t *out = output_json(s);
    assert_true(json_is_true(json_object_get(out, "ok")));
    assert_int_equal(json_integer_value(json_object_get(out, "b")), 2);
    json_decref(out);
    json_t *p = fn_params("fail_with_error");
    json_object_set_new(p, "reason", json_string("isolated"));
    rec *t = run(f, p);
    assert_outcome(t, SY_OUTCOME_FAILED);
    assert_string_equal(t->error, "failed on purpose: isolated");
    p = fn_params("info_params");
    json_object_set_new(p, "x", json_integer(11));
    rec *u = run(f, p);
    assert_outcome(u, SY_OUTCOME_SUCCEEDED);
    out = output_json(u);
    assert_int_equal(json_integer_value(json_object_get(out, "x")), 11);
    assert_string_equal(json_string_value(json_object_get(out, "ns")),
                        "public::test::t");
    json_decref(out);
    rec *v = new_rec(f, fn_params("slow_cancellable"));
    submit_ok(f, v);
    nap_ms(50);
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&v->c)), SY_OK);
    wait_done(f, v);
    assert_outcome(v, SY_OUTCOME_CANCELLED);
    assert_int_equal(metric(f, "succeeded"), 2);
    assert_int_equal(metric(f, "failed"), 2);
    free_rec(r);
    free_rec(s);
    free_rec(t);
    free_rec(u);
    free_rec(v);
    stop(f);
}

/* A task may ask for isolation on an instance that does not default to it. */
static void test_isolated_per_task(void **state)
{
    (void)state;
    fixture *f = start("{}");
    json_t *p = fn_params("segv");
    json_object_set_new(p, "isolate", json_true());
    rec *r = run(f, p);
    assert_outcome(r, SY_OUTCOME_FAILED);
    assert_contains(r->error, "signal 11");
    free_rec(r);
    stop(f);
}

/* ------------------------------------------------------------------------ */
/* Pools and capacity                                                       */
/* ------------------------------------------------------------------------ */

static void test_blocking_pool(void **state)
{
    (void)state;
    lib_reset();
    fixture *f = start("{\"workers\":2,\"blocking_workers\":2}");
    rec *b[3];
    for (int i = 0; i < 3; i++) {
        json_t *p = fn_params(i < 2 ? "slow_cancellable" : "sleep_ms");
        json_object_set_new(p, "blocking", json_true());
        b[i] = new_rec(f, p);
    }
    submit_ok(f, b[0]);
    submit_ok(f, b[1]);
    wait_running(2);
    /* The blocking pool is full, the default pool is not. */
    assert_int_equal(submit(f, b[2]), SY_EBUSY);
    assert_int_equal(X->capacity(f->inst), 2);
    assert_int_equal(metric(f, "blocking.active"), 2);
    assert_int_equal(metric(f, "blocking.capacity"), 0);
    assert_int_equal(metric(f, "default.active"), 0);
    for (int i = 0; i < 20; i++) {
        rec *s = run(f, fn_params("ok_echo"));
        assert_outcome(s, SY_OUTCOME_SUCCEEDED);
        free_rec(s);
    }
    assert_false(is_done(f, b[0]));
    assert_false(is_done(f, b[1]));
    assert_false(is_done(f, b[2]));
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&b[0]->c)), SY_OK);
    wait_done(f, b[0]);
    submit_ok(f, b[2]);
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&b[1]->c)), SY_OK);
    wait_done(f, b[1]);
    wait_done(f, b[2]);
    assert_outcome(b[0], SY_OUTCOME_CANCELLED);
    assert_outcome(b[1], SY_OUTCOME_CANCELLED);
    assert_outcome(b[2], SY_OUTCOME_SUCCEEDED);
    assert_int_equal(metric(f, "blocking.succeeded"), 1);
    assert_int_equal(metric(f, "blocking.cancelled"), 2);
    assert_int_equal(metric(f, "default.succeeded"), 20);
    assert_metrics_add_up(f);
    for (int i = 0; i < 3; i++)
        free_rec(b[i]);
    stop(f);
}

static bool wakes_reach(void *arg)
{
    fixture *f = arg;
    pthread_mutex_lock(&f->mu);
    bool ok = f->wakes >= f->want_wakes;
    pthread_mutex_unlock(&f->mu);
    return ok;
}

static void wait_wakes(fixture *f, int n)
{
    f->want_wakes = n;
    wait_until(wakes_reach, f, "wake() calls");
}

static void test_wake_exact(void **state)
{
    (void)state;
    lib_reset();
    fixture *f = start("{\"workers\":2,\"blocking_workers\":1}");
    rec *a = new_rec(f, fn_params("slow_cancellable"));
    rec *b = new_rec(f, fn_params("slow_cancellable"));
    rec *c = new_rec(f, fn_params("sleep_ms"));
    json_t *p = fn_params("sleep_ms");
    json_object_set_new(p, "blocking", json_true());
    rec *d = new_rec(f, p);
    submit_ok(f, a);
    submit_ok(f, b);
    wait_running(2);
    assert_int_equal(X->capacity(f->inst), 0);
    assert_int_equal(submit(f, c), SY_EBUSY);
    assert_int_equal(submit(f, c), SY_EBUSY);
    assert_int_equal(f->wakes, 0);
    /* Each wake() is awaited before the next submit, so the capacity it
     * sees is the freed place, not one a racing submit already took. */
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&a->c)), SY_OK);
    wait_done(f, a);
    wait_wakes(f, 1);
    submit_ok(f, c);
    assert_int_equal(X->cancel(f->inst, sy_completion_token(&b->c)), SY_OK);
    wait_done(f, b);
    wait_done(f, c);
    wait_wakes(f, 3);
    submit_ok(f, d); /* a place of the blocking pool frees too */
    wait_done(f, d);
    /* destroy() joins the workers: every wake() has been made by then. */
    X->destroy(f->inst);
    f->inst = NULL;
    assert_int_equal(f->completed, 4);
    assert_int_equal(f->wakes, 4);
    assert_int_equal(f->wake_before_complete, 0);
    assert_true(f->min_cap_at_wake >= 1);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
    free_rec(a);
    free_rec(b);
    free_rec(c);
    free_rec(d);
}

/* 10,000 submits from 4 threads against 3 workers: each retries after
 * SY_EBUSY once wake() has been called; the task function counts how many
 * calls run at once. */
#define MANY 10000
#define SUBMITTERS 4
#define MANY_WORKERS 3

typedef struct storm {
    fixture *f;
    rec *recs;
    json_t *params;
    int first, count;
    atomic_int errors;
} storm;

static int wakes_now(fixture *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->wakes;
    pthread_mutex_unlock(&f->mu);
    return n;
}

/* Sleeps until wake() has been called more than `seen` times in all.
 * After SY_EBUSY every place was taken, so a wake must follow: false when
 * none came in two seconds (a lost wake). */
static bool wait_wake(fixture *f, int seen)
{
    int64_t until = now_ms() + 2000;
    pthread_mutex_lock(&f->mu);
    while (f->wakes == seen && now_ms() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&f->cv, &f->mu, &ts);
    }
    bool woken = f->wakes != seen;
    pthread_mutex_unlock(&f->mu);
    return woken;
}

static void *storm_main(void *arg)
{
    storm *s = arg;
    for (int i = s->first; i < s->first + s->count; i++) {
        rec *r = &s->recs[i];
        r->f = s->f;
        sy_completion_init(&r->c, "thread-test", on_complete, r);
        r->task = (sy_task){.size = sizeof(sy_task), .attempt = 1,
                            .ns = "public::storm::t", .run_id = "storm",
                            .task_id = "t", .input = "{}", .input_len = 2,
                            .params = sy_sdk_params_view(s->params),
                            .workflow = "storm", .base_dir = lib_dir};
        for (;;) {
            int seen = wakes_now(s->f);
            int64_t cap = X->capacity(s->f->inst);
            if (cap < 0 || cap > MANY_WORKERS)
                atomic_fetch_add(&s->errors, 1);
            int rc = X->submit(s->f->inst, &r->task, sy_completion_token(&r->c), r->err,
                               sizeof r->err);
            if (rc == SY_OK)
                break;
            if (rc != SY_EBUSY || !wait_wake(s->f, seen)) {
                atomic_fetch_add(&s->errors, 1);
                return NULL;
            }
        }
    }
    return NULL;
}

static bool all_completed(void *arg)
{
    fixture *f = arg;
    pthread_mutex_lock(&f->mu);
    bool d = f->completed == MANY;
    pthread_mutex_unlock(&f->mu);
    return d;
}

static void test_capacity_under_storm(void **state)
{
    (void)state;
    lib_reset();
    fixture *f = start("{\"workers\":3}");
    rec *recs = calloc(MANY, sizeof *recs);
    assert_non_null(recs);
    json_t *params = fn_params("count_concurrency");
    storm s[SUBMITTERS];
    pthread_t th[SUBMITTERS];
    for (int i = 0; i < SUBMITTERS; i++) {
        s[i] = (storm){.f = f, .recs = recs, .params = params,
                       .first = i * (MANY / SUBMITTERS),
                       .count = MANY / SUBMITTERS};
        atomic_init(&s[i].errors, 0);
        assert_int_equal(pthread_create(&th[i], NULL, storm_main, &s[i]), 0);
    }
    for (int i = 0; i < SUBMITTERS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < SUBMITTERS; i++)
        assert_int_equal(atomic_load(&s[i].errors), 0);
    wait_until(all_completed, f, "10,000 completions");
    int ok = 0;
    for (int i = 0; i < MANY; i++)
        ok += recs[i].done && recs[i].outcome == SY_OUTCOME_SUCCEEDED;
    assert_int_equal(ok, MANY);
    assert_true(lib_max_running() >= 1);
    assert_true(lib_max_running() <= MANY_WORKERS);
    assert_int_equal(metric(f, "submitted"), MANY);
    assert_int_equal(metric(f, "succeeded"), MANY);
    assert_int_equal(metric(f, "active"), 0);
    assert_int_equal(metric(f, "capacity"), MANY_WORKERS);
    stop(f);
    for (int i = 0; i < MANY; i++) {
        sy_completion_retire(&recs[i].c);
        free(recs[i].output);
        free(recs[i].error);
    }
    free(recs);
    json_decref(params);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptor),
        cmocka_unit_test(test_settings_refused),
        cmocka_unit_test(test_pin_workers),
        cmocka_unit_test(test_report_before_next_ends),
        cmocka_unit_test(test_no_sigchld_for_host),
        cmocka_unit_test(test_function_success),
        cmocka_unit_test(test_function_info_and_params),
        cmocka_unit_test(test_function_error),
        cmocka_unit_test(test_function_output_not_object),
        cmocka_unit_test(test_function_timeout),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_submit_bad_params),
        cmocka_unit_test(test_command_success),
        cmocka_unit_test(test_command_output_none),
        cmocka_unit_test(test_command_failure),
        cmocka_unit_test(test_command_timeout_kills_tree),
        cmocka_unit_test(test_command_max_output),
        cmocka_unit_test(test_command_env_and_cwd),
        cmocka_unit_test(test_cancel_queued),
        cmocka_unit_test(test_cancel_running_command),
        cmocka_unit_test(test_isolated),
        cmocka_unit_test(test_isolated_per_task),
        cmocka_unit_test(test_blocking_pool),
        cmocka_unit_test(test_wake_exact),
        cmocka_unit_test(test_capacity_under_storm),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
