/* The channel behind sy_host_api.emit_event (executor/emit.h): a call with
 * no sink open, or from the sink's own thread, is refused at once with
 * SY_ESTATE; a plugin thread's call waits until the loop answers, and
 * gets its status, id and reason; closing answers what is queued, and
 * leaves a sink opened since by another engine. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "executor/emit.h"
#include "executor/host_api.h"

static atomic_int wakes;

static void count_wake(void *arg)
{
    (void)arg;
    atomic_fetch_add(&wakes, 1);
}

typedef struct {
    const char *name;
    int rc;
    int64_t id;
    char err[256];
} call;

static void *emitter(void *arg)
{
    call *c = arg;
    c->rc = sy_host_api_table.emit_event(NULL, c->name, "k", "{\"a\": 1}", 8, &c->id, c->err,
                                         sizeof c->err);
    return NULL;
}

/* Polls the queue until `n` requests wait (the emitters queue from their
 * own threads), and takes them. */
static sy_emit_request *take(size_t n)
{
    sy_emit_request *all = NULL;
    size_t got = 0;
    for (int i = 0; i < 5000 && got < n; i++) {
        sy_emit_request *q = sy_emit_take();
        while (q) {
            sy_emit_request *next = q->next;
            q->next = all;
            all = q;
            got++;
            q = next;
        }
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(got, n);
    return all;
}

static void test_no_sink(void **state)
{
    (void)state;
    char err[128];
    int64_t id = -1;
    assert_int_equal(sy_host_api_table.emit_event(NULL, "a", NULL, NULL, 0, &id, err, sizeof err),
                     SY_ESTATE);
    assert_string_equal(err, "the host runs no workflows now: no event is recorded");
    assert_int_equal(id, -1);
}

static void test_from_the_sink_thread(void **state)
{
    (void)state;
    sy_emit_open(count_wake, NULL);
    char err[256];
    assert_int_equal(sy_host_api_table.emit_event(NULL, "a", NULL, NULL, 0, NULL, err, sizeof err),
                     SY_ESTATE);
    assert_non_null(strstr(err, "from inside a call of the host"));
    assert_null(sy_emit_take());
    sy_emit_close(NULL);
}

static void test_answered(void **state)
{
    (void)state;
    atomic_store(&wakes, 0);
    sy_emit_open(count_wake, NULL);
    call ok = {.name = "ok"}, bad = {.name = "bad"};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, emitter, &ok);
    pthread_create(&t2, NULL, emitter, &bad);
    sy_emit_request *list = take(2);
    assert_true(atomic_load(&wakes) >= 2);
    for (sy_emit_request *q = list; q; q = q->next) {
        assert_string_equal(q->key, "k");
        assert_int_equal(q->data_len, 8);
        if (strcmp(q->name, "ok") == 0) {
            q->status = SY_OK;
            q->id = 42;
        } else {
            q->status = SY_EINVAL;
            strcpy(q->err, "event name \"bad\": refused");
        }
    }
    sy_emit_answer(list);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert_int_equal(ok.rc, SY_OK);
    assert_int_equal(ok.id, 42);
    assert_int_equal(bad.rc, SY_EINVAL);
    assert_int_equal(bad.id, 0);
    assert_string_equal(bad.err, "event name \"bad\": refused");
    sy_emit_close(NULL);
}

static void test_close_answers_the_queue(void **state)
{
    (void)state;
    sy_emit_open(count_wake, NULL);
    call c = {.name = "late"};
    pthread_t t;
    pthread_create(&t, NULL, emitter, &c);
    /* Waits until it is queued, then puts it back as the loop found it. */
    for (int i = 0; i < 5000 && atomic_load(&wakes) == 0; i++) {
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    sy_emit_close(NULL);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, SY_ESTATE);
    assert_string_equal(c.err, "the host stopped running workflows");
}

/* Two engines of one process: the first closing leaves the second's
 * sink open. */
static void test_close_of_another_sink(void **state)
{
    (void)state;
    int first, second;
    sy_emit_open(count_wake, &first);
    sy_emit_open(count_wake, &second);
    sy_emit_close(&first);
    call c = {.name = "still"};
    pthread_t t;
    pthread_create(&t, NULL, emitter, &c);
    sy_emit_request *list = take(1);
    list->status = SY_OK;
    list->id = 7;
    sy_emit_answer(list);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, SY_OK);
    assert_int_equal(c.id, 7);
    sy_emit_close(&second);
}

static int reset(void **state)
{
    (void)state;
    atomic_store(&wakes, 0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_no_sink, reset),
        cmocka_unit_test_setup(test_from_the_sink_thread, reset),
        cmocka_unit_test_setup(test_answered, reset),
        cmocka_unit_test_setup(test_close_answers_the_queue, reset),
        cmocka_unit_test_setup(test_close_of_another_sink, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
