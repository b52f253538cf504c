/* switchyard/http.h: posts reach the loop thread once each, oldest first,
 * and a cancel after its post; a transfer to a loopback server comes back
 * through ops.done off the multi; a cancel through the in-flight table
 * wins once; a loop never started still calls ops.stopping. */
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include <switchyard/http.h>

#define ITEMS 64

typedef struct item {
    int id;
    int seen_posted;   /* order it was seen in, 1-based; 0 not yet */
    int seen_cancelled;
    sy_http_link posted;
    sy_http_link cancelled;
} item;

typedef struct fixture {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int order;        /* loop thread, read under mu */
    int cancels;
    int dones;
    long status;
    CURLcode result;
    bool in_multi;    /* the handle was still in the multi in done */
    bool on_loop;     /* callbacks ran off the creating thread */
    pthread_t creator;
    int stopping;
    sy_http_loop *loop;
    item items[ITEMS];
} fixture;

static void on_posted(void *arg, sy_http_link *link)
{
    fixture *f = arg;
    item *it = SY_HTTP_ITEM(link, item, posted);
    pthread_mutex_lock(&f->mu);
    it->seen_posted = ++f->order;
    f->on_loop = !pthread_equal(pthread_self(), f->creator);
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

static void on_cancelled(void *arg, sy_http_link *link)
{
    fixture *f = arg;
    item *it = SY_HTTP_ITEM(link, item, cancelled);
    pthread_mutex_lock(&f->mu);
    it->seen_cancelled = ++f->order;
    f->cancels++;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

static void on_done(void *arg, CURL *e, CURLcode result)
{
    fixture *f = arg;
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    /* A handle no longer in the multi can be removed again harmlessly, and
     * cleaned up: ops.done owns it. */
    f->in_multi = curl_multi_remove_handle(sy_http_loop_multi(f->loop), e)
                  != CURLM_OK;
    curl_easy_cleanup(e);
    pthread_mutex_lock(&f->mu);
    f->status = status;
    f->result = result;
    f->dones++;
    pthread_cond_broadcast(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

static void on_stopping(void *arg)
{
    ((fixture *)arg)->stopping++;
}

static const sy_http_loop_ops ops = {
    .posted = on_posted, .cancelled = on_cancelled, .done = on_done,
    .stopping = on_stopping,
};

/* The fixture with its loop made, not yet started. */
static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cond, NULL);
    f->creator = pthread_self();
    for (int i = 0; i < ITEMS; i++)
        f->items[i].id = i;
    char err[256] = "";
    assert_int_equal(sy_http_loop_new(&ops, f, &f->loop, err, sizeof err),
                     SY_OK);
}

static void start(fixture *f)
{
    char err[256] = "";
    assert_int_equal(sy_http_loop_start(f->loop, err, sizeof err), SY_OK);
    assert_string_equal(err, "");
}

static void fixture_fini(fixture *f)
{
    pthread_cond_destroy(&f->cond);
    pthread_mutex_destroy(&f->mu);
}

/* Waits (10 s at most) until *counter reaches want. */
static bool wait_for(fixture *f, const int *counter, int want)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&f->mu);
    int rc = 0;
    while (*counter < want && rc == 0)
        rc = pthread_cond_timedwait(&f->cond, &f->mu, &ts);
    bool ok = *counter >= want;
    pthread_mutex_unlock(&f->mu);
    return ok;
}

static void test_posts_in_order(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    start(&f);
    for (int i = 0; i < ITEMS; i++) {
        sy_http_loop_post(f.loop, &f.items[i].posted);
        if (i % 4 == 0) /* some cancelled at once, maybe in the same wake */
            sy_http_loop_post_cancel(f.loop, &f.items[i].cancelled);
    }
    assert_true(wait_for(&f, &f.order, ITEMS + ITEMS / 4));
    sy_http_loop_free(f.loop);
    assert_true(f.on_loop);
    assert_int_equal(f.stopping, 1);
    for (int i = 0; i < ITEMS; i++) {
        assert_true(f.items[i].seen_posted > 0);
        if (i > 0)
            assert_true(f.items[i].seen_posted > f.items[i - 1].seen_posted);
        if (i % 4 == 0)
            assert_true(f.items[i].seen_cancelled > f.items[i].seen_posted);
        else
            assert_int_equal(f.items[i].seen_cancelled, 0);
    }
    fixture_fini(&f);
}

/* A one-shot HTTP server on loopback: answers one request 204. */
static void *serve_one(void *arg)
{
    int ls = *(int *)arg;
    int c = accept(ls, NULL, NULL);
    if (c >= 0) {
        char buf[4096];
        size_t got = 0;
        while (got < sizeof buf - 1) {
            ssize_t n = read(c, buf + got, sizeof buf - 1 - got);
            if (n <= 0)
                break;
            got += (size_t)n;
            buf[got] = '\0';
            if (strstr(buf, "\r\n\r\n"))
                break;
        }
        const char *answer = "HTTP/1.1 204 No Content\r\n"
                             "Connection: close\r\n\r\n";
        ssize_t w = write(c, answer, strlen(answer));
        (void)w;
        close(c);
    }
    return NULL;
}

static void test_transfer_done(void **state)
{
    (void)state;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 1), 0);
    assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &alen), 0);
    pthread_t server;
    assert_int_equal(pthread_create(&server, NULL, serve_one, &ls), 0);

    fixture f;
    fixture_init(&f);
    /* Added before the thread runs: the loop is still the caller's. */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(a.sin_port));
    CURL *e = curl_easy_init();
    assert_non_null(e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    assert_int_equal(curl_multi_add_handle(sy_http_loop_multi(f.loop), e),
                     CURLM_OK);
    start(&f);
    assert_true(wait_for(&f, &f.dones, 1));
    sy_http_loop_free(f.loop);
    pthread_join(server, NULL);
    close(ls);
    assert_int_equal(f.result, CURLE_OK);
    assert_int_equal(f.status, 204);
    assert_false(f.in_multi);
    assert_int_equal(f.dones, 1);
    fixture_fini(&f);
}

static void test_cancel_once(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    start(&f);
    sy_sdk_inflight in;
    assert_int_equal(sy_sdk_inflight_init(&in), SY_OK);
    sy_completion *c = (sy_completion *)&f.items[0]; /* any unique key */
    assert_int_equal(sy_sdk_inflight_add(&in, c, &f.items[0].cancelled),
                     SY_OK);
    assert_int_equal(sy_http_loop_cancel(f.loop, &in, c), SY_OK);
    assert_int_equal(sy_http_loop_cancel(f.loop, &in, c), SY_ENOENT);
    assert_true(wait_for(&f, &f.cancels, 1));
    sy_http_loop_free(f.loop);
    assert_int_equal(f.cancels, 1);
    assert_true(f.items[0].seen_cancelled > 0);
    sy_sdk_inflight_fini(&in);
    fixture_fini(&f);
}

static void test_never_started(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    uv_timer_t t; /* a plugin's own handle, closed by the loop */
    assert_int_equal(uv_timer_init(sy_http_loop_uv(f.loop), &t), 0);
    sy_http_loop_free(f.loop);
    assert_int_equal(f.stopping, 1);
    assert_int_equal(f.order, 0);
    sy_http_loop_free(NULL);
    sy_http_loop_post(NULL, NULL);
    fixture_fini(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_posts_in_order),
        cmocka_unit_test(test_transfer_done),
        cmocka_unit_test(test_cancel_once),
        cmocka_unit_test(test_never_started),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
