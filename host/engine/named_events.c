/* Recording named events, for the commands and for plugins
 * (engine/named_events.h). */
#include "engine/named_events.h"

#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/internal.h"
#include "engine/start_triggers.h"
#include "executor/emit.h"
#include "store/named_events.h"
#include "workflow/start_trigger.h"

/* The payload as stored: compact JSON of an object. */
static char *payload(const char *data, size_t len, int64_t max, char *err, size_t err_len)
{
    if (!data)
        return sy_xstrdup("{}");
    if ((int64_t)len > max) {
        sy_errf(err, err_len, "the payload is %zu bytes, more than max_context_bytes %lld", len,
                (long long)max);
        return NULL;
    }
    json_error_t je;
    json_t *o = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
    if (!o || !json_is_object(o)) {
        if (o)
            sy_errf(err, err_len, "the payload must be a JSON object, e.g. {\"file\": \"a.csv\"}");
        else
            sy_errf(err, err_len, "the payload is not JSON: %s (column %d)", je.text,
                    je.column);
        json_decref(o);
        return NULL;
    }
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        sy_errf(err, err_len, "out of memory");
    return text;
}

int sy_event_record(sy_store *s, int64_t max, const char *name, const char *key,
                    const char *data, size_t data_len, int64_t now, int64_t *id,
                    bool *duplicate, char *err, size_t err_len)
{
    const char *why = name ? sy_event_name_problem(name) : "no event name";
    if (why) {
        sy_errf(err, err_len, "event name \"%s\": %s", name ? name : "", why);
        return SY_EINVAL;
    }
    if (key && (why = sy_event_key_problem(key))) {
        sy_errf(err, err_len, "event key: %s", why);
        return SY_EINVAL;
    }
    char *text = payload(data, data_len, max, err, err_len);
    if (!text)
        return data && (int64_t)data_len > max ? SY_ERANGE : SY_EINVAL;
    int rc = sy_store_emit(s, name, key, text, SY_EVENT_KEY_WINDOW_MS, now, id, duplicate);
    free(text);
    if (rc != SY_OK)
        sy_errf(err, err_len, "cannot record the event: %s", sy_store_errmsg(s));
    return rc;
}

/* Any thread, under the channel's lock: the loop is to look. */
static void wake_loop(void *arg)
{
    sy_engine *e = arg;
    sy_wake_send(&e->done);
}

void sy_engine_emits_open(sy_engine *e) { sy_emit_open(wake_loop, e); }

void sy_engine_emits_close(sy_engine *e) { sy_emit_close(e); }

void sy_engine_emits_serve(sy_engine *e)
{
    sy_emit_request *list = sy_emit_take();
    if (!list)
        return;
    bool recorded = false;
    for (sy_emit_request *q = list; q; q = q->next) {
        /* A host whose store failed, or whose lease lapsed, writes
         * nothing: the plugin is told, and may emit again later. */
        if (e->fatal || e->lapsed) {
            q->status = SY_ESTATE;
            sy_errf(q->err, sizeof q->err, "the host cannot write to its store now");
            continue;
        }
        q->status = sy_event_record(e->o.store, (int64_t)e->o.max_context_bytes, q->name,
                                    q->key, q->data, q->data_len, e->now(), &q->id,
                                    &q->duplicate, q->err, sizeof q->err);
        /* A bad name or payload is the plugin's mistake, and its answer
         * says so; a store failure is the operator's to see too. */
        if (q->status == SY_OK)
            recorded = true;
        else if (q->status != SY_EINVAL && q->status != SY_ERANGE)
            sy_log(SY_LOG_ERROR, q->host ? q->host->name : NULL, "a plugin's event \"%s\": %s",
                   q->name, q->err);
    }
    sy_emit_answer(list);
    if (recorded)
        sy_start_triggers_soon(e);
}
