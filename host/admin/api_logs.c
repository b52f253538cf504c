/* An attempt's logs: at once as one object, or with follow=true as a
 * chunked stream of JSON lines, polled from the store on the loop while
 * the run goes on (service/logs.h: the same cursor `logs --follow` uses). */
#include "admin/api.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "service/logs.h"

#define POLL_MS 250
/* A quiet stream gets an empty line this often: a suspended connection
 * never times out, and only a write finds a client that went away. */
#define KEEPALIVE_MS 15000
/* A client that has not taken this much yet is not given more. */
#define BACKLOG_MAX (256u << 10)

typedef struct follow {
    sy_admin_stream *s;
    uv_timer_t timer;
    sy_service *sv;
    int64_t run_id;
    char *task;
    uint32_t attempt;
    sy_logs_cursor cur;
    int64_t quiet_ms;   /* since the last line */
} follow;

static void timer_closed(uv_handle_t *h)
{
    follow *f = h->data;
    sy_logs_cursor_clear(&f->cur);
    free(f->task);
    free(f);
}

static void stream_gone(sy_admin_stream *s)
{
    follow *f = s->owner;
    f->s = NULL;
    uv_close((uv_handle_t *)&f->timer, timer_closed);
}

/* Sends what is new; false when the run has ended (or the read failed). */
static bool pump(follow *f)
{
    json_t *fresh = NULL;
    bool over = false;
    char err[512];
    if (sy_logs_next(f->sv->store, f->run_id, f->task, f->attempt, &f->cur, &fresh, &over, err,
                     sizeof err) != SY_OK) {
        char *line = sy_asprintf("{\"error\":\"%s\"}\n", "the logs could not be read");
        sy_log(SY_LOG_WARN, "admin", "logs of run %lld: %s", (long long)f->run_id, err);
        sy_admin_stream_write(f->s, line, strlen(line));
        free(line);
        return false;
    }
    size_t i;
    json_t *l;
    json_array_foreach(fresh, i, l) {
        char *text = json_dumps(l, JSON_COMPACT);
        if (text) {
            sy_admin_stream_write(f->s, text, strlen(text));
            sy_admin_stream_write(f->s, "\n", 1);
        }
        free(text);
    }
    f->quiet_ms = json_array_size(fresh) ? 0 : f->quiet_ms + POLL_MS;
    if (f->quiet_ms >= KEEPALIVE_MS) {
        sy_admin_stream_write(f->s, "\n", 1);
        f->quiet_ms = 0;
    }
    json_decref(fresh);
    return !over;
}

static void on_poll(uv_timer_t *t)
{
    follow *f = t->data;
    if (!f->s || sy_admin_stream_pending(f->s) > BACKLOG_MAX)
        return;
    if (!pump(f)) {
        uv_timer_stop(&f->timer);
        sy_admin_stream_end(f->s);
    }
}

int sy_api_run_logs(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    int64_t id;
    long long attempt;
    bool follow_;
    if (!sy_admin_cap_id(rq, 0, &id, &res) ||
        !sy_admin_query_int(rq, "attempt", 1, UINT32_MAX, 0, &attempt, &res) ||
        !sy_admin_query_bool(rq, "follow", &follow_, &res))
        return res;
    const char *task = sy_admin_query(rq, "task");
    sy_service *sv = rq->admin->sv;
    char err[512];
    if (!follow_) {
        json_t *got = NULL;
        int rc = sy_logs_read(sv->store, id, 0, task, (uint32_t)attempt, &got, err, sizeof err);
        if (rc != SY_OK)
            return sy_admin_error(rq, rc == SY_ENOENT ? 404 : 500, "%s", err);
        return sy_admin_json(rq, 200, got);
    }
    follow *f = calloc(1, sizeof *f);
    if (!f)
        return sy_admin_error(rq, 500, "out of memory");
    f->sv = sv;
    f->run_id = id;
    f->task = task ? sy_xstrdup(task) : NULL;
    f->attempt = (uint32_t)attempt;
    /* The first read decides between an error and a stream. */
    json_t *fresh = NULL;
    bool over = false;
    int rc = sy_logs_next(sv->store, id, task, f->attempt, &f->cur, &fresh, &over, err,
                          sizeof err);
    if (rc != SY_OK) {
        sy_logs_cursor_clear(&f->cur);
        free(f->task);
        free(f);
        return sy_admin_error(rq, rc == SY_ENOENT ? 404 : 500, "%s", err);
    }
    f->s = sy_admin_stream_open(rq, "application/x-ndjson", &res);
    if (!f->s) {
        json_decref(fresh);
        sy_logs_cursor_clear(&f->cur);
        free(f->task);
        free(f);
        return res;
    }
    f->s->owner = f;
    f->s->on_free = stream_gone;
    size_t i;
    json_t *l;
    json_array_foreach(fresh, i, l) {
        char *text = json_dumps(l, JSON_COMPACT);
        if (text) {
            sy_admin_stream_write(f->s, text, strlen(text));
            sy_admin_stream_write(f->s, "\n", 1);
        }
        free(text);
    }
    json_decref(fresh);
    uv_timer_init(&sv->loop, &f->timer);
    f->timer.data = f;
    if (over)
        sy_admin_stream_end(f->s);
    else
        uv_timer_start(&f->timer, on_poll, POLL_MS, POLL_MS);
    return res;
}
