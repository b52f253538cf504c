/* wake: sends from any number of threads are never lost, coalesce while
 * the loop is busy, and close leaves no descriptor behind. */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>
#include <uv.h>

#include "engine/wake.h"

typedef struct counts {
    atomic_long produced; /* items published before their send */
    long seen;            /* produced, as the last callback read it */
    long calls;
} counts;

static void on_wake(sy_wake *w)
{
    counts *c = w->data;
    c->calls++;
    c->seen = atomic_load(&c->produced);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Turns the loop until the callback has seen `want` items, or fails. */
static void turn_until(uv_loop_t *loop, counts *c, long want)
{
    int64_t until = now_ms() + 30000;
    while (c->seen < want) {
        if (now_ms() > until)
            fail_msg("the loop saw %ld of %ld items", c->seen, want);
        uv_run(loop, UV_RUN_ONCE);
    }
}

/* Many sends before the loop looks: one callback. */
static void test_coalesce(void **state)
{
    (void)state;
    uv_loop_t loop;
    /* libuv keeps a pipe of its own for the process from the first loop. */
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
    int before = open_fds();
    assert_int_equal(uv_loop_init(&loop), 0);
    counts c = {0};
    sy_wake w = {.data = &c};
    assert_int_equal(sy_wake_init(&loop, &w, on_wake), 0);
    for (int i = 0; i < 1000; i++) {
        atomic_fetch_add(&c.produced, 1);
        sy_wake_send(&w);
    }
    turn_until(&loop, &c, 1000);
    assert_int_equal(c.calls, 1);
    /* Nothing sent since: the next turn does not call back. */
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(c.calls, 1);
    /* A send after the callback wakes the loop again. */
    atomic_fetch_add(&c.produced, 1);
    sy_wake_send(&w);
    turn_until(&loop, &c, 1001);
    assert_int_equal(c.calls, 2);
    sy_wake_close(&w);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(open_fds(), before);
}

#define SENDERS 4
#define SENDS 20000

typedef struct sender {
    sy_wake *w;
    counts *c;
} sender;

static void *send_main(void *arg)
{
    sender *s = arg;
    for (int i = 0; i < SENDS; i++) {
        atomic_fetch_add(&s->c->produced, 1);
        sy_wake_send(s->w);
    }
    return NULL;
}

/* Senders racing the loop: after the last send the loop always sees the
 * last item (a lost wake-up would leave it waiting here forever). */
static void test_no_lost_wake(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    counts c = {0};
    sy_wake w = {.data = &c};
    assert_int_equal(sy_wake_init(&loop, &w, on_wake), 0);
    pthread_t t[SENDERS];
    sender s = {&w, &c};
    for (int i = 0; i < SENDERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, send_main, &s), 0);
    /* The loop turns while they send, and blocks between wakes. */
    turn_until(&loop, &c, (long)SENDERS * SENDS);
    for (int i = 0; i < SENDERS; i++)
        pthread_join(t[i], NULL);
    assert_true(c.calls >= 1);
    assert_true(c.calls <= (long)SENDERS * SENDS);
    sy_wake_close(&w);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coalesce),
        cmocka_unit_test(test_no_lost_wake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
