/*
 * test_thread_record.c -- the thread plugin's command records through the
 * SDK's test host (switchyard/testhost.h), which answers
 * attempt_process_async as a test tells it to.
 *
 * Asked without waiting (ABI 1.3): a command whose record is recorded
 * succeeds, one record per command; a refusal that comes while the
 * command runs kills its group at once (SIGKILL, not after the grace) and
 * ends the attempt cancelled (the host no longer runs it) or failed (the
 * host could not write); a refusal that comes after the command ended
 * still turns its report into that cancellation, and the report waits
 * for the answer (the ABI's order: the record before the attempt's end).
 *
 * SY_THREAD_PLUGIN names the plugin (.../plugins/thread/.libs/thread.so).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <switchyard/executor.h>
#include <switchyard/testhost.h>

/* Waits are bounded by this, never asserted on. */
#define PATIENCE_MS 30000

static const sy_executor *d;

typedef struct fix {
    sy_host h;
    sy_instance *inst;
    sy_completion c;
} fix;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void start(fix *f, int answer, int64_t answer_ms)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(sy_sdk_test_host_init(&f->h, "thread-record"), 0);
    f->h.log_level = -1;
    f->h.process_answer = answer;
    f->h.process_answer_ms = answer_ms;
    const sy_params *cfg = sy_sdk_test_host_params(&f->h, "{\"workers\": 1}");
    assert_non_null(cfg);
    char err[512] = "";
    int rc = d->create(sy_sdk_test_host_api(), &f->h, cfg, &f->inst, err, sizeof err);
    if (rc != SY_OK)
        fail_msg("create: %s", err);
}

/* Runs `script` under /bin/sh as one command task; returns how long it
 * took from the submit to the completion, in ms. */
static int64_t run_command(fix *f, const char *script)
{
    char params[512];
    snprintf(params, sizeof params,
             "{\"command\": [\"/bin/sh\", \"-c\", \"%s\"], \"kill_grace\": \"20s\"}", script);
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
    sy_sdk_test_completion_init(&f->c, &f->h, NULL);
    char err[512] = "";
    int64_t t0 = now_ms();
    if (d->submit(f->inst, &t, &f->c, err, sizeof err) != SY_OK)
        fail_msg("submit: %s", err);
    assert_true(sy_sdk_test_host_wait(&f->h, 1, PATIENCE_MS));
    return now_ms() - t0;
}

static void stop(fix *f)
{
    d->destroy(f->inst);
    sy_sdk_test_completion_fini(&f->c);
    sy_sdk_test_host_fini(&f->h);
}

static void assert_contains(const char *s, const char *needle)
{
    if (!s || !strstr(s, needle))
        fail_msg("\"%s\" does not contain \"%s\"", s ? s : "(null)", needle);
}

/* Recorded: the command runs to its end; one record was asked. */
static void test_recorded(void **state)
{
    (void)state;
    fix f;
    start(&f, SY_OK, 50);
    run_command(&f, "echo '{\\\"ok\\\": 1}'");
    assert_int_equal(atomic_load(&f.c.outcome), SY_OUTCOME_SUCCEEDED);
    assert_string_equal(f.c.output, "{\"ok\": 1}\n");
    assert_int_equal(atomic_load(&f.h.processes), 1);
    stop(&f);
}

/* Refused while it runs: the group (a child of the shell too) is killed
 * at once, not after the 20 s grace, and the attempt is cancelled. */
static void test_refused_while_running(void **state)
{
    (void)state;
    fix f;
    start(&f, SY_ESTATE, 200);
    int64_t took = run_command(&f, "sleep 30 & wait; echo survived");
    assert_true(took < 10000);
    assert_int_equal(atomic_load(&f.c.outcome), SY_OUTCOME_CANCELLED);
    assert_contains(f.c.error, "no longer runs this attempt");
    assert_null(f.c.output);
    stop(&f);
}

/* Refused with a store error, answered before the command's first poll:
 * failed, naming the status. */
static void test_store_failed(void **state)
{
    (void)state;
    fix f;
    start(&f, SY_EIO, 0);
    run_command(&f, "sleep 30");
    assert_int_equal(atomic_load(&f.c.outcome), SY_OUTCOME_FAILED);
    assert_contains(f.c.error, "could not record");
    stop(&f);
}

/* Refused after the command ended: the report waited for the answer
 * (the completion came no sooner than it) and says the host no longer
 * runs the attempt, not that it succeeded. */
static void test_refused_after_the_end(void **state)
{
    (void)state;
    fix f;
    start(&f, SY_ESTATE, 700);
    int64_t took = run_command(&f, "true");
    assert_true(took >= 700);
    assert_int_equal(atomic_load(&f.c.outcome), SY_OUTCOME_CANCELLED);
    assert_contains(f.c.error, "no longer runs this attempt");
    stop(&f);
}

int main(void)
{
    const char *plugin = getenv("SY_THREAD_PLUGIN");
    if (!plugin || !*plugin) {
        fprintf(stderr, "test_thread_record: SY_THREAD_PLUGIN is not set\n");
        return 1;
    }
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
        cmocka_unit_test(test_recorded),
        cmocka_unit_test(test_refused_while_running),
        cmocka_unit_test(test_store_failed),
        cmocka_unit_test(test_refused_after_the_end),
    };
    return cmocka_run_group_tests_name("thread_record", tests, NULL, NULL);
}
