/*
 * switchyard/http.h -- libcurl's multi interface driven by a libuv loop on
 * a thread of its own.
 *
 * For executor plugins whose tasks are HTTP requests (the lambda and
 * kubernetes plugins): one thread keeps thousands of transfers on the wire
 * and costs nothing while they wait.  curl says which sockets to watch and
 * when to wake (CURLMOPT_SOCKETFUNCTION, CURLMOPT_TIMERFUNCTION); a
 * uv_poll_t per socket and one uv_timer_t watch them and hand readiness
 * back with curl_multi_socket_action().  Host threads reach the loop
 * through two queues and one uv_async_t, so submit() and cancel() never
 * block on the network.
 *
 * An optional part of the SDK: the code is in libswitchyard-sdk-http.a
 * (sdk/http_loop.c), apart from libswitchyard-sdk.a, so a plugin that makes
 * no HTTP request links neither libcurl nor libuv.  Build with
 * $(pkg-config --cflags --libs switchyard-sdk-http), which names
 * libswitchyard-sdk, libcurl and libuv too.
 *
 * Use, in create():
 *
 *   sy_http_loop_new(&ops, arg, &loop, err, err_len)  the loop, not running
 *   sy_http_loop_multi(loop), sy_http_loop_uv(loop)
 *                    set the multi's options (MAXCONNECTS...), start the
 *                    plugin's own uv handles on the loop
 *   sy_http_loop_start(loop, err, err_len)        the thread runs
 *
 * then sy_http_loop_post() from submit(), sy_http_loop_post_cancel() from
 * cancel(), and sy_http_loop_free() in destroy().  On the loop thread the
 * plugin adds easy handles to the multi (curl_multi_add_handle) and gets
 * each one back in ops.done when its transfer ends.
 *
 * Threading: sy_http_loop_post() and sy_http_loop_post_cancel() may be
 * called from any thread, at any time between _start and _free, and never
 * block beyond a short mutex hold.  _new, _start and _free are called by
 * one thread (create() and destroy()), never on the loop thread.  Every
 * callback in sy_http_loop_ops runs on the loop thread (ops.stopping also
 * on the thread calling _free, when the loop never started), one at a
 * time: the multi, every easy handle added to it and every handle on the
 * uv loop are the loop thread's alone once _start has returned.
 *
 * Errors: functions that can fail return a sy_status (SY_OK, SY_ENOMEM,
 * SY_EINTERNAL) and write one line into the caller-owned (err, err_len),
 * truncated to fit; on failure nothing is left to free.  A socket curl asks
 * to watch that cannot be watched (out of memory) is refused to curl (-1
 * from the socket callback), which then fails transfers as
 * CURLMOPT_SOCKETFUNCTION documents; the loop goes on.
 *
 * Ownership: the loop is the caller's from _new to _free.  The ops are
 * copied; `arg` stays the caller's and must outlive the loop.  A posted
 * sy_http_link stays the caller's memory: the loop holds it from the post
 * until it is handed to ops.posted or ops.cancelled, and never after.
 */
#ifndef SWITCHYARD_HTTP_H
#define SWITCHYARD_HTTP_H

#include <stddef.h>

#include <curl/curl.h>
#include <uv.h>

#include <switchyard/sdk.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_http_loop sy_http_loop;

/* A link in one of the loop's queues, embedded in the plugin's own item
 * (a job): no allocation per post.  An item in both queues at once (posted,
 * then cancelled before the loop woke) needs two links.  SY_HTTP_ITEM
 * gives the item back from its link. */
typedef struct sy_http_link {
    struct sy_http_link *next; /* the loop's while queued */
} sy_http_link;

#define SY_HTTP_ITEM(link, type, member) \
    ((type *)(void *)((char *)(link) - offsetof(type, member)))

/* What the loop calls, each on the loop thread, with the `arg` given to
 * sy_http_loop_new() first (usually a static const table per plugin).
 * started, progress and stopping may be NULL; posted, cancelled and done
 * may not (a plugin that never posts cancels still names a function). */
typedef struct sy_http_loop_ops {
    /* Once, first, before the loop runs: a plugin starts its first
     * transfers here (curl forbids nothing on this thread). */
    void (*started)(void *arg);
    /* Each item sy_http_loop_post() queued, oldest first, once: the link
     * is the plugin's again (it may free its item or post it anew). */
    void (*posted)(void *arg, sy_http_link *link);
    /* Each item sy_http_loop_post_cancel() queued, oldest first, once;
     * after every ops.posted of the same wake, so an item posted and
     * then cancelled before the loop woke is seen posted first. */
    void (*cancelled)(void *arg, sy_http_link *link);
    /* After every curl_multi_socket_action(), before the finished
     * transfers are handed to ops.done: a plugin reading a stream takes
     * what arrived (its own requests may be started here, outside curl's
     * callbacks). */
    void (*progress)(void *arg);
    /* A transfer ended (`result`: CURLE_OK, or why not).  The handle has
     * already been removed from the multi and is the plugin's: clean it
     * up, keep it, or add it again. */
    void (*done)(void *arg, CURL *easy, CURLcode result);
    /* _free() was called: the last call.  Drop every easy handle the
     * plugin holds (added ones too: remove them); the multi still exists.
     * After it the loop cleans up the multi (closing the kept-alive
     * connections), closes every handle left on the uv loop without a close
     * callback (a plugin whose handle owns memory closes it here itself)
     * and ends the thread. */
    void (*stopping)(void *arg);
} sy_http_loop_ops;

/* A loop, not yet running: *out is set on SY_OK.  Calls
 * curl_global_init() once per process (safe from two instances'
 * create() at once); SY_EINTERNAL if libcurl cannot start, SY_ENOMEM. */
int sy_http_loop_new(const sy_http_loop_ops *ops, void *arg,
                     sy_http_loop **out, char *err, size_t err_len);

/* The libuv loop and the curl multi handle: for the plugin's own handles
 * and options before _start, for the loop thread after.  Valid until
 * _free (the multi: until ops.stopping returns). */
uv_loop_t *sy_http_loop_uv(sy_http_loop *loop);
CURLM *sy_http_loop_multi(sy_http_loop *loop);

/* Starts the thread: ops.started, then the loop until _free.  SY_OK, or
 * SY_EINTERNAL (no thread); on failure the loop is as _new left it and
 * still needs _free. */
int sy_http_loop_start(sy_http_loop *loop, char *err, size_t err_len);

/* Any thread: hands `link` to the loop, which passes it to ops.posted
 * (or ops.cancelled) soon.  Never fails; no-op when loop or link is
 * NULL. */
void sy_http_loop_post(sy_http_loop *loop, sy_http_link *link);
void sy_http_loop_post_cancel(sy_http_loop *loop, sy_http_link *link);

/* A plugin's cancel(), when its in-flight table (switchyard/sdk.h) holds
 * each attempt's cancel link as the value (sy_sdk_inflight_add(in, c,
 * &job->cancel_link)): takes the entry, so the loop alone completes the
 * attempt, and posts the link to ops.cancelled.  SY_OK, or SY_ENOENT when
 * the attempt was completed (or is being completed) already.  Any thread;
 * never blocks. */
int sy_http_loop_cancel(sy_http_loop *loop, sy_sdk_inflight *in,
                        sy_completion *c);

/* Stops the loop and frees it: items queued before the call are still
 * handed to ops.posted and ops.cancelled, then ops.stopping runs, the
 * handles are closed and the thread joined.  Nothing may be posted once
 * it is called.  NULL is a no-op. */
void sy_http_loop_free(sy_http_loop *loop);

#ifdef __cplusplus
}
#endif

#endif
