/* The gpu plugin through its ABI, on the SDK's test host and the fake
 * NVML: capacity is the queue, a task that can never fit is refused, a
 * queued attempt is cancelled at once, a critical Xid completes the
 * running attempt DEFERRED with the device, Xid and time in its note and
 * shows in metrics(), an application Xid does not, the operator's control
 * file drains, and a machine without NVML has no device. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <switchyard/executor.h>
#include <switchyard/testhost.h>

#define UUID0 "GPU-00000000-aaaa-0000-0000-000000000000"
#define UUID1 "GPU-11111111-bbbb-0000-0000-000000000000"

static const sy_executor *d;
static char dir[256], fake[512], events[512], control[512], devices[512];

/* One test's host and instance. */
typedef struct fix {
    sy_host h;
    sy_instance *inst;
} fix;

static char last_note[1024];
static int64_t last_retry;

static void on_complete(sy_completion *c, const sy_result *r, int nth,
                        const char *malformed)
{
    (void)c, (void)malformed;
    if (nth == 1 && SY_HAS_FIELD(r, sy_result, note)) {
        snprintf(last_note, sizeof last_note, "%s", r->note ? r->note : "");
        last_retry = r->retry_after_ms;
    }
}

static int create(fix *f, const char *extra)
{
    char json[2048];
    memset(f, 0, sizeof *f);
    assert_int_equal(sy_sdk_test_host_init(&f->h, "gpu-test"), 0);
    f->h.log_level = -1;
    f->h.on_complete = on_complete;
    snprintf(json, sizeof json, "{\"nvml_library\": \"%s\", "
             "\"health_interval\": \"10ms\", \"kill_grace\": \"100ms\", "
             "\"control_file\": \"%s\"%s%s}", fake, control,
             extra ? ", " : "", extra ? extra : "");
    const sy_params *cfg = sy_sdk_test_host_params(&f->h, json);
    assert_non_null(cfg);
    char err[512] = "";
    int rc = d->create(sy_sdk_test_host_api(), &f->h, cfg, &f->inst, err,
                       sizeof err);
    if (rc != SY_OK)
        print_message("create: %s\n", err);
    return rc;
}

static void destroy(fix *f)
{
    d->destroy(f->inst);
    sy_sdk_test_host_fini(&f->h);
}

static sy_task task_of(fix *f, const char *params)
{
    sy_task t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    t.attempt = 1;
    t.ns = "public::w::t";
    t.run_id = "1";
    t.task_id = "t";
    t.input = "{}";
    t.input_len = 2;
    t.params = sy_sdk_test_host_params(&f->h, params);
    t.workflow = "w";
    t.base_dir = "/";
    assert_non_null(t.params);
    return t;
}

/* A metric by name; -1 when absent. */
typedef struct metric_find {
    const char *name;
    int64_t value;
} metric_find;

static void find_one(void *sink, const char *name, int64_t v)
{
    metric_find *m = sink;
    if (strcmp(m->name, name) == 0)
        m->value = v;
}

static int64_t metric(fix *f, const char *name)
{
    metric_find m = {name, -1};
    d->metrics(f->inst, find_one, &m);
    return m.value;
}

static void wait_metric(fix *f, const char *name, int64_t want)
{
    for (int i = 0; i < 500 && metric(f, name) != want; i++)
        usleep(10000);
    assert_int_equal(metric(f, name), want);
}

static void append(const char *path, const char *line)
{
    FILE *fp = fopen(path, "a");
    assert_non_null(fp);
    fputs(line, fp);
    fclose(fp);
}

static void test_capacity_is_the_queue(void **st)
{
    (void)st;
    fix f;
    assert_int_equal(create(&f, "\"queue_length\": 2"), SY_OK);
    assert_int_equal(d->capacity(f.inst), 2);
    assert_int_equal(metric(&f, "devices"), 2);
    sy_task t = task_of(&f, "{\"command\": [\"/bin/sleep\", \"30\"], "
                            "\"gpus\": 2}");
    sy_completion c[3];
    char err[256];
    for (int i = 0; i < 3; i++)
        sy_sdk_test_completion_init(&c[i], &f.h, NULL);
    assert_int_equal(d->submit(f.inst, &t, &c[0], err, sizeof err), SY_OK);
    assert_int_equal(d->submit(f.inst, &t, &c[1], err, sizeof err), SY_OK);
    assert_int_equal(d->capacity(f.inst), 0);
    assert_int_equal(d->submit(f.inst, &t, &c[2], err, sizeof err), SY_EBUSY);
    wait_metric(&f, "running", 1);
    assert_int_equal(metric(&f, "queued"), 1);
    /* The queued one ends from inside cancel(), the running one soon. */
    assert_int_equal(d->cancel(f.inst, &c[1]), SY_OK);
    assert_int_equal(atomic_load(&c[1].outcome), SY_OUTCOME_CANCELLED);
    assert_int_equal(d->cancel(f.inst, &c[0]), SY_OK);
    assert_true(sy_sdk_test_host_wait(&f.h, 2, 10000));
    assert_int_equal(atomic_load(&c[0].outcome), SY_OUTCOME_CANCELLED);
    assert_int_equal(d->cancel(f.inst, &c[0]), SY_ENOENT);
    /* wake() follows each completion, from the completing thread. */
    for (int i = 0; i < 500 && atomic_load(&f.h.wakes) < 2; i++)
        usleep(10000);
    assert_true(atomic_load(&f.h.wakes) >= 2);
    destroy(&f);
    for (int i = 0; i < 3; i++)
        sy_sdk_test_completion_fini(&c[i]);
}

static void test_refuses_what_never_fits(void **st)
{
    (void)st;
    fix f;
    assert_int_equal(create(&f, NULL), SY_OK);
    sy_task t = task_of(&f, "{\"command\": [\"true\"], \"gpus\": 3}");
    sy_completion c;
    sy_sdk_test_completion_init(&c, &f.h, NULL);
    char err[256] = "";
    assert_int_equal(d->submit(f.inst, &t, &c, err, sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "needs 3 GPUs"));
    assert_int_equal(d->validate(f.inst, t.params, "/", err, sizeof err),
                     SY_EINVAL);
    const sy_params *bad = sy_sdk_test_host_params(
        &f.h, "{\"command\": [\"true\"], \"gpu_memory\": \"20X\"}");
    assert_int_equal(d->validate(f.inst, bad, "/", err, sizeof err),
                     SY_EINVAL);
    assert_string_equal(err, "gpu_memory: must be a size such as \"20G\" or "
                             "\"512M\", got \"20X\"");
    destroy(&f);
    sy_sdk_test_completion_fini(&c);
}

static void test_xid_defers_and_drains(void **st)
{
    (void)st;
    fix f;
    assert_int_equal(create(&f, "\"retry_after\": \"250ms\""), SY_OK);
    sy_task t = task_of(&f, "{\"command\": [\"/bin/sleep\", \"30\"], "
                            "\"gpus\": 2}");
    sy_completion c;
    sy_sdk_test_completion_init(&c, &f.h, NULL);
    char err[256];
    assert_int_equal(d->submit(f.inst, &t, &c, err, sizeof err), SY_OK);
    wait_metric(&f, "running", 1);
    append(events, "xid " UUID1 " 13\n");      /* the application's */
    append(events, "xid " UUID0 " 79\n");      /* the device's */
    assert_true(sy_sdk_test_host_wait(&f.h, 1, 10000));
    assert_int_equal(atomic_load(&c.outcome), SY_OUTCOME_DEFERRED);
    assert_non_null(strstr(last_note, UUID0));
    assert_non_null(strstr(last_note, "Xid 79 at 20"));
    assert_int_equal(last_retry, 250);
    assert_int_equal(metric(&f, "deferred"), 1);
    assert_int_equal(metric(&f, "xid_events"), 2);
    assert_int_equal(metric(&f, "device.0.drained"), 1);
    assert_int_equal(metric(&f, "device.0.xid"), 79);
    assert_true(metric(&f, "device.0.drained_at") > 0);
    assert_int_equal(metric(&f, "device.1.drained"), 0);
    assert_int_equal(metric(&f, "devices_drained"), 1);
    /* Resumed by the operator. */
    append(control, "resume " UUID0 "\n");
    wait_metric(&f, "device.0.drained", 0);
    destroy(&f);
    sy_sdk_test_completion_fini(&c);
}

static void test_ecc_and_manual_drain(void **st)
{
    (void)st;
    fix f;
    assert_int_equal(create(&f, NULL), SY_OK);
    append(events, "ecc " UUID1 "\n");
    wait_metric(&f, "device.1.ecc", 1);
    assert_int_equal(metric(&f, "device.1.drained"), 1);
    assert_int_equal(metric(&f, "ecc_events"), 1);
    append(control, "drain " UUID0 " maintenance\n");
    wait_metric(&f, "device.0.manual", 1);
    assert_int_equal(metric(&f, "devices_drained"), 2);
    append(control, "resume " UUID0 "\nresume " UUID1 "\n");
    wait_metric(&f, "devices_drained", 0);
    destroy(&f);
}

static void test_restriction(void **st)
{
    (void)st;
    fix f;
    assert_int_equal(create(&f, "\"devices\": [\"" UUID1 "\"]"), SY_OK);
    assert_int_equal(metric(&f, "devices"), 1);
    destroy(&f);
    assert_int_equal(create(&f, "\"devices\": [\"GPU-nope\"]"), SY_OK);
    assert_int_equal(metric(&f, "devices"), 0);
    destroy(&f);
}

static void test_no_nvml(void **st)
{
    (void)st;
    fix f;
    memset(&f, 0, sizeof f);
    assert_int_equal(sy_sdk_test_host_init(&f.h, "gpu-test"), 0);
    f.h.log_level = -1;
    const sy_params *cfg = sy_sdk_test_host_params(
        &f.h, "{\"nvml_library\": \"/nonexistent/libnvidia-ml.so.1\"}");
    char err[256] = "";
    assert_int_equal(d->create(sy_sdk_test_host_api(), &f.h, cfg, &f.inst,
                               err, sizeof err), SY_OK);
    assert_int_equal(metric(&f, "devices"), 0);
    assert_int_equal(metric(&f, "nvml"), 0);
    sy_task t = task_of(&f, "{\"command\": [\"true\"]}");
    sy_completion c;
    sy_sdk_test_completion_init(&c, &f.h, NULL);
    assert_int_equal(d->submit(f.inst, &t, &c, err, sizeof err), SY_EINVAL);
    assert_non_null(strstr(err, "no GPU on this instance: cannot load "
                                "/nonexistent/libnvidia-ml.so.1"));
    destroy(&f);
    sy_sdk_test_completion_fini(&c);
}

static void test_priority_order(void **st)
{
    (void)st;
    fix f;
    char order[600], params[1024];
    snprintf(order, sizeof order, "%s/order.txt", dir);
    unlink(order);
    assert_int_equal(create(&f, "\"devices\": [\"" UUID0 "\"]"), SY_OK);
    /* One device: a blocker, then a low and a high priority task; the
     * high one runs first although it came last. */
    static const char *const names[] = {"blocker", "low", "high"};
    static const int prio[] = {0, -5, 5};
    sy_task t[3];
    sy_completion c[3];
    char err[256];
    for (int i = 0; i < 3; i++) {
        snprintf(params, sizeof params, "{\"command\": [\"sh\", \"-c\", "
                 "\"echo %s >>%s; sleep %s\"], \"priority\": %d}", names[i],
                 order, i == 0 ? "0.3" : "0", prio[i]);
        t[i] = task_of(&f, params);
        sy_sdk_test_completion_init(&c[i], &f.h, NULL);
        assert_int_equal(d->submit(f.inst, &t[i], &c[i], err, sizeof err),
                         SY_OK);
        if (i == 0)
            wait_metric(&f, "running", 1);
    }
    assert_true(sy_sdk_test_host_wait(&f.h, 3, 10000));
    FILE *fp = fopen(order, "r");
    assert_non_null(fp);
    char got[64] = "";
    size_t n = fread(got, 1, sizeof got - 1, fp);
    got[n] = '\0';
    fclose(fp);
    assert_string_equal(got, "blocker\nhigh\nlow\n");
    destroy(&f);
    for (int i = 0; i < 3; i++)
        sy_sdk_test_completion_fini(&c[i]);
    unlink(order);
}

/* Writes the fake's devices; read at the next create (each test destroys
 * its instances, so NVML is shut down between tests). */
static void write_devices(const char *text)
{
    FILE *fp = fopen(devices, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

#define TWO_GPUS UUID0 " H100-SXM5-80GB 81920 0 0\n" UUID1 " H100-SXM5-80GB " \
                 "81920 0 0\n"

static void test_mig(void **st)
{
    (void)st;
    write_devices(UUID0 " A100-SXM4-40GB 40960 1 0\n" UUID1 " H100 81920 0 0\n"
                  "mig " UUID0 " MIG-aaaa-0 A100-MIG-3g.20gb 20096\n"
                  "mig " UUID0 " MIG-aaaa-1 A100-MIG-3g.20gb 20096\n");
    fix f;
    assert_int_equal(create(&f, NULL), SY_OK);
    assert_int_equal(metric(&f, "devices"), 2);      /* whole by default */
    destroy(&f);
    assert_int_equal(create(&f, "\"mig\": true"), SY_OK);
    assert_int_equal(metric(&f, "devices"), 3);
    sy_task t = task_of(&f, "{\"command\": [\"sh\", \"-c\", \"printf "
                            "'{\\\"u\\\": \\\"%s\\\"}' "
                            "\\\"$CUDA_VISIBLE_DEVICES\\\"\"], "
                            "\"gpu_model\": \"*MIG*\"}");
    sy_completion c;
    sy_sdk_test_completion_init(&c, &f.h, NULL);
    char err[256];
    assert_int_equal(d->submit(f.inst, &t, &c, err, sizeof err), SY_OK);
    assert_true(sy_sdk_test_host_wait(&f.h, 1, 10000));
    assert_int_equal(atomic_load(&c.outcome), SY_OUTCOME_SUCCEEDED);
    assert_non_null(strstr(c.output, "\"MIG-aaaa-"));
    /* An Xid on the GPU drains both of its MIG instances. */
    append(events, "xid " UUID0 " 48\n");
    wait_metric(&f, "devices_drained", 2);
    assert_int_equal(metric(&f, "device.0.xid"), 48);
    assert_int_equal(metric(&f, "device.2.drained"), 0);
    /* The operator resumes the GPU by its UUID: both come back. */
    append(control, "resume " UUID0 "\n");
    wait_metric(&f, "devices_drained", 0);
    destroy(&f);
    /* Listing the GPU keeps its instances; listing one keeps one. */
    assert_int_equal(create(&f, "\"mig\": true, \"devices\": [\"" UUID0 "\"]"),
                     SY_OK);
    assert_int_equal(metric(&f, "devices"), 2);
    destroy(&f);
    assert_int_equal(create(&f, "\"mig\": true, \"devices\": [\"MIG-aaaa-1\"]"),
                     SY_OK);
    assert_int_equal(metric(&f, "devices"), 1);
    destroy(&f);
    sy_sdk_test_completion_fini(&c);
    write_devices(TWO_GPUS);
}

static void test_bad_settings(void **st)
{
    (void)st;
    static const char *const bad[][2] = {
        {"\"queue_length\": 0", "queue_length: must be an integer between 1"},
        {"\"policy\": \"lifo\"", "policy: must be \"easy\", \"fifo\" or"},
        {"\"max_wait\": {\"gpus_x\": \"1h\"}", "max_wait: unknown key \"gpus_x\""},
        {"\"max_wait\": {\"gpus_8\": \"soon\"}", "max_wait.gpus_8: must be a positive duration"},
        {"\"devices\": [7]", "devices: element 1 must be a UUID"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sy_host h;
        sy_instance *inst = NULL;
        char json[1024], err[256] = "";
        assert_int_equal(sy_sdk_test_host_init(&h, "gpu-test"), 0);
        h.log_level = -1;
        snprintf(json, sizeof json, "{\"nvml_library\": \"%s\", %s}", fake,
                 bad[i][0]);
        const sy_params *cfg = sy_sdk_test_host_params(&h, json);
        assert_int_not_equal(d->create(sy_sdk_test_host_api(), &h, cfg,
                                       &inst, err, sizeof err), SY_OK);
        if (!strstr(err, bad[i][1]))
            fail_msg("%s: got \"%s\"", bad[i][0], err);
        sy_sdk_test_host_fini(&h);
    }
}

int main(void)
{
    const char *build = getenv("SY_BUILDDIR");
    if (!build) {
        printf("1..0 # SKIP SY_BUILDDIR is not set (run it with make check)\n");
        return 0;
    }
    char plugin[512];
    snprintf(plugin, sizeof plugin, "%s/plugins/gpu/.libs/gpu.so", build);
    snprintf(fake, sizeof fake, "%s/tests/gpu/.libs/fakenvml.so", build);
    snprintf(dir, sizeof dir, "%s", "/tmp/sy-gpu-unit-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(devices, sizeof devices, "%s/devices.txt", dir);
    snprintf(events, sizeof events, "%s/events.txt", dir);
    snprintf(control, sizeof control, "%s/control.txt", dir);
    FILE *fp = fopen(devices, "w");
    if (!fp)
        return 1;
    fputs(TWO_GPUS, fp);
    fclose(fp);
    setenv("SY_FAKE_NVML_DEVICES", devices, 1);
    setenv("SY_FAKE_NVML_EVENTS", events, 1);
    void *lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    sy_executor_entry_fn entry;
    void *sym = dlsym(lib, SY_EXECUTOR_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof sym);
    d = entry();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity_is_the_queue),
        cmocka_unit_test(test_refuses_what_never_fits),
        cmocka_unit_test(test_xid_defers_and_drains),
        cmocka_unit_test(test_ecc_and_manual_drain),
        cmocka_unit_test(test_restriction),
        cmocka_unit_test(test_no_nvml),
        cmocka_unit_test(test_mig),
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_bad_settings),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(devices);
    unlink(events);
    unlink(control);
    rmdir(dir);
    dlclose(lib);
    return rc;
}
