/* sy_host_api.attempt_process (ABI 1.2) through the engine: a plugin
 * thread's call returns once the group is in the store, fenced by the
 * attempt; one from the loop's own thread is written at once; an attempt
 * that is over, a foreign token, and an engine that stopped are refused.
 * attempt_process_async (1.3): the ask returns at once, the record is
 * written by the next turn and answered on the loop thread after its
 * commit; from the loop thread it is answered before the ask returns; an
 * engine that stops answers what waits with SY_ESTATE. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <switchyard/process.h>

#include "fake.h"
#include "store/store.h"

static const char *const WF = "workflow = { name = \"w\"; tasks = (\n"
                              "  { id = \"a\"; hold = true; },\n"
                              "  { id = \"b\"; hold = true; }\n"
                              "); };\n";

typedef struct {
    sy_completion *c;
    int64_t pgid;
    int rc;
    atomic_int done;
} caller;

static void *call(void *arg)
{
    caller *k = arg;
    k->rc = fake.api->attempt_process(k->c, k->pgid, 777);
    atomic_store(&k->done, 1);
    return NULL;
}

typedef struct {
    size_t n;
    sy_process_record last;
    char machine[128], boot[64], host[64];
} seen;

static int collect(void *arg, const sy_process_record *p)
{
    seen *s = arg;
    s->n++;
    s->last = *p;
    snprintf(s->machine, sizeof s->machine, "%s", p->machine ? p->machine : "-");
    snprintf(s->boot, sizeof s->boot, "%s", p->boot_id ? p->boot_id : "-");
    snprintf(s->host, sizeof s->host, "%s", p->host ? p->host : "-");
    return 0;
}

static seen records(fake_env *env)
{
    seen s = {0};
    assert_int_equal(sy_store_list_processes(env->store, env->run_id, collect, &s), SY_OK);
    return s;
}

static sy_completion *token_of(const char *task_id)
{
    for (size_t i = 0; i < fake.n_subs; i++)
        if (strcmp(fake.subs[i].task_id, task_id) == 0 && !fake.subs[i].done)
            return fake.subs[i].c;
    fail_msg("no attempt of %s held", task_id);
    return NULL;
}

/* From a plugin thread: the call waits for the loop's batch, and when it
 * returns SY_OK the record is in the store with this machine and boot. */
static void test_from_plugin_thread(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WF);
    fake_turn(&env);
    caller k = {.c = token_of("a"), .pgid = 4242};
    atomic_init(&k.done, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, call, &k), 0);
    for (int i = 0; i < 2000 && !atomic_load(&k.done); i++) {
        fake_turn(&env);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    pthread_join(th, NULL);
    assert_int_equal(k.rc, SY_OK);
    seen s = records(&env);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.last.pgid, 4242);
    assert_int_equal(s.last.attempt, 1);
    assert_int_equal(s.last.idx, 0);
    assert_true(s.last.start_time == 777);
    assert_string_equal(s.host, FAKE_OWNER);
    char machine[128], boot[64];
    if (sy_process_machine_id(machine, sizeof machine) == 0)
        assert_string_equal(s.machine, machine);
    if (sy_process_boot_id(boot, sizeof boot) == 0)
        assert_string_equal(s.boot, boot);
    fake_close(&env);
}

/* From the loop's own thread (inside submit(), say): written at once. */
static void test_from_loop_thread(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WF);
    fake_turn(&env);
    assert_int_equal(fake.api->attempt_process(token_of("b"), 5151, 9), SY_OK);
    seen s = records(&env);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.last.idx, 1);
    assert_int_equal(s.last.pgid, 5151);
    fake_close(&env);
}

/* An attempt that completed, a token nobody handed out, NULL, and a pgid
 * that names no group are refused, and nothing is recorded. */
static void test_refused(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WF);
    fake_turn(&env);
    sy_completion *a = token_of("a");
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake.api->attempt_process(a, 4242, 1), SY_ESTATE);
    assert_int_equal(fake.api->attempt_process((sy_completion *)(uintptr_t)0x7777, 4242, 1),
                     SY_EINVAL);
    assert_int_equal(fake.api->attempt_process(NULL, 4242, 1), SY_EINVAL);
    assert_int_equal(fake.api->attempt_process(token_of("b"), 1, 1), SY_EINVAL);
    assert_int_equal(fake.api->attempt_process(token_of("b"), 0, 1), SY_EINVAL);
    assert_int_equal(records(&env).n, 0);
    fake_close(&env);
}

typedef struct {
    int calls, status;
    pthread_t thread;
} answer_seen;

static void on_answer(void *arg, int status)
{
    answer_seen *a = arg;
    a->calls++;
    a->status = status;
    a->thread = pthread_self();
}

typedef struct {
    sy_completion *c;
    answer_seen *seen;
    int rc;
} asker;

static void *ask(void *arg)
{
    asker *k = arg;
    k->rc = fake.api->attempt_process_async(k->c, 4343, 888, on_answer, k->seen);
    return NULL;
}

/* From a plugin thread: the ask returns before anything is written; the
 * next turn writes the record and answers it on the loop's thread, after
 * its commit, once; no thread waited. */
static void test_async_from_plugin_thread(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WF);
    fake_turn(&env);
    answer_seen heard = {0};
    asker k = {.c = token_of("a"), .seen = &heard, .rc = -100};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, ask, &k), 0);
    pthread_join(th, NULL);
    assert_int_equal(k.rc, SY_OK);
    assert_int_equal(heard.calls, 0);
    assert_int_equal(records(&env).n, 0);
    fake_turn(&env);
    assert_int_equal(heard.calls, 1);
    assert_int_equal(heard.status, SY_OK);
    assert_true(pthread_equal(heard.thread, pthread_self()));
    seen s = records(&env);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.last.pgid, 4343);
    assert_true(s.last.start_time == 888);
    fake_turn(&env);
    assert_int_equal(heard.calls, 1);
    sy_engine_counters n;
    sy_engine_counters_get(env.engine, &n);
    assert_int_equal(n.process_records, 1);
    assert_int_equal(n.process_wait_ns, 0);
    fake_close(&env);
}

/* From the loop's own thread: written and answered before the ask
 * returns. */
static void test_async_from_loop_thread(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WF);
    fake_turn(&env);
    answer_seen heard = {0};
    assert_int_equal(fake.api->attempt_process_async(token_of("b"), 5252, 9, on_answer, &heard),
                     SY_OK);
    assert_int_equal(heard.calls, 1);
    assert_int_equal(heard.status, SY_OK);
    assert_int_equal(records(&env).n, 1);
    fake_close(&env);
}

/* Refusals at the ask return at once and never answer; an ask still
 * waiting when the engine stops is answered SY_ESTATE, and nothing is
 * recorded for it. */
static void test_async_refused(void **state)
{
    (void)state;
    fake_env env;
    fake_open(&env, WF);
    fake_turn(&env);
    answer_seen none = {0};
    sy_completion *a = token_of("a");
    fake_complete(&env, "a", SY_OUTCOME_SUCCEEDED);
    assert_int_equal(fake.api->attempt_process_async(a, 4242, 1, on_answer, &none), SY_ESTATE);
    assert_int_equal(fake.api->attempt_process_async(token_of("b"), 1, 1, on_answer, &none),
                     SY_EINVAL);
    assert_int_equal(fake.api->attempt_process_async(token_of("b"), 4242, 1, NULL, NULL),
                     SY_EINVAL);
    assert_int_equal(none.calls, 0);
    answer_seen heard = {0};
    asker k = {.c = token_of("b"), .seen = &heard, .rc = -100};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, ask, &k), 0);
    pthread_join(th, NULL);
    assert_int_equal(k.rc, SY_OK);
    assert_int_equal(records(&env).n, 0);
    fake_close(&env);
    assert_int_equal(heard.calls, 1);
    assert_int_equal(heard.status, SY_ESTATE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_plugin_thread),
        cmocka_unit_test(test_from_loop_thread),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_async_from_plugin_thread),
        cmocka_unit_test(test_async_from_loop_thread),
        cmocka_unit_test(test_async_refused),
    };
    return cmocka_run_group_tests_name("process", tests, NULL, NULL);
}
