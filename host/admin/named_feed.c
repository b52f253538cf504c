/* Named events told to the event stream (admin/named_feed.h). */
#include "admin/named_feed.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "store/named_events.h"

struct sy_admin_named_feed {
    uv_timer_t timer;
    sy_store *store;            /* borrowed: the service's */
    sy_admin_named_feed_fn fn;
    void *arg;
    int64_t last;               /* the id of the newest event told */
    bool known;                 /* last is read (the first look may fail) */
    bool failing;               /* the last look failed: said once */
};

typedef struct seen {
    json_t *list;               /* newest first, as the store lists them */
    int64_t after;
} seen;

static int note(void *arg, const sy_named_event *ev)
{
    seen *s = arg;
    if (ev->id <= s->after)
        return 0; /* told already */
    size_t bytes = ev->data ? strlen(ev->data) : 0;
    json_t *o = json_pack("{s:I, s:s, s:s?, s:I, s:I}", "event_id", (json_int_t)ev->id, "name",
                          ev->name, "key", ev->key, "created", (json_int_t)ev->created,
                          "data_bytes", (json_int_t)bytes);
    if (!o)
        return 0;
    if (!ev->key)
        json_object_set_new(o, "key", json_null());
    json_t *data = bytes <= SY_ADMIN_NAMED_FEED_DATA_MAX ? json_loads(ev->data, 0, NULL) : NULL;
    if (data)
        json_object_set_new(o, "data", data);
    json_array_append_new(s->list, o);
    return 0;
}

/* Lists `limit` of the newest events into s; false when the store failed
 * (said once). */
static bool list(sy_admin_named_feed *f, size_t limit, seen *s)
{
    if (sy_store_list_named_events(f->store, NULL, limit, note, s) == SY_OK) {
        f->failing = false;
        return true;
    }
    if (!f->failing)
        sy_log(SY_LOG_WARN, "admin", "the event stream cannot read named events: %s",
               sy_store_errmsg(f->store));
    f->failing = true;
    return false;
}

static void look(uv_timer_t *t)
{
    sy_admin_named_feed *f = t->data;
    /* The newest first: most looks find nothing new, and read one row. */
    seen s = {json_array(), f->last};
    if (!s.list || !list(f, 1, &s)) {
        json_decref(s.list);
        return;
    }
    /* The first look that reads only finds where to start. */
    bool tell = f->known;
    f->known = true;
    if (!json_array_size(s.list)) {
        json_decref(s.list);
        return;
    }
    int64_t newest = json_integer_value(json_object_get(json_array_get(s.list, 0), "event_id"));
    /* Ids only grow: no more than newest - last events are new. */
    if (tell && newest - f->last > 1) {
        json_decref(s.list);
        int64_t n = newest - f->last;
        s = (seen){json_array(), f->last};
        if (!s.list || !list(f, n < SY_ADMIN_NAMED_FEED_BATCH ? (size_t)n
                                                             : SY_ADMIN_NAMED_FEED_BATCH, &s)) {
            json_decref(s.list);
            return;
        }
    }
    /* Oldest first, as they were recorded. */
    for (size_t i = json_array_size(s.list); i-- > 0;) {
        json_t *o = json_array_get(s.list, i);
        f->last = json_integer_value(json_object_get(o, "event_id"));
        char *text = tell ? json_dumps(o, JSON_COMPACT) : NULL;
        if (text)
            f->fn(f->arg, text);
        free(text);
    }
    json_decref(s.list);
}

sy_admin_named_feed *sy_admin_named_feed_start(sy_admin *a, sy_admin_named_feed_fn fn,
                                               void *arg)
{
    sy_admin_named_feed *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->store = a->sv->store;
    f->fn = fn;
    f->arg = arg;
    uv_timer_init(&a->sv->loop, &f->timer);
    f->timer.data = f;
    /* Where to start: at once. */
    look(&f->timer);
    uv_timer_start(&f->timer, look, SY_ADMIN_NAMED_FEED_MS, SY_ADMIN_NAMED_FEED_MS);
    return f;
}

void sy_admin_named_feed_now(sy_admin_named_feed *f)
{
    if (f)
        look(&f->timer);
}

void sy_admin_named_feed_soon(sy_admin_named_feed *f)
{
    if (f)
        uv_timer_start(&f->timer, look, 0, SY_ADMIN_NAMED_FEED_MS);
}

static void free_feed(uv_handle_t *h) { free(h->data); }

void sy_admin_named_feed_stop(sy_admin_named_feed *f)
{
    if (f)
        uv_close((uv_handle_t *)&f->timer, free_feed);
}
