/* Emitting a named event (service/named_events.h). */
#include "service/named_events.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/util.h"
#include "store/named_events.h"
#include "workflow/start_trigger.h"

/* The payload as stored: compact JSON of an object. */
static char *payload(const char *data, int64_t max, char *err, size_t err_len)
{
    if (!data)
        return sy_xstrdup("{}");
    if ((int64_t)strlen(data) > max) {
        sy_errf(err, err_len, "the payload is %zu bytes, more than max_context_bytes %lld",
                strlen(data), (long long)max);
        return NULL;
    }
    json_error_t je;
    json_t *o = json_loads(data, JSON_REJECT_DUPLICATES, &je);
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

int sy_service_emit(sy_service *sv, const char *name, const char *key, const char *data,
                    int64_t *id, bool *duplicate, char *err, size_t err_len)
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
    int64_t max = sv->setup.cfg.max_context_bytes;
    char *text = payload(data, max, err, err_len);
    if (!text)
        return data && (int64_t)strlen(data) > max ? SY_ERANGE : SY_EINVAL;
    int rc = sy_store_emit(sv->store, name, key, text, SY_EVENT_KEY_WINDOW_MS,
                           sy_clock_now_ms(), id, duplicate);
    free(text);
    if (rc == SY_OK && sv->engine)
        sy_engine_triggers_soon(sv->engine);
    if (rc != SY_OK)
        sy_errf(err, err_len, "cannot record the event: %s", sy_store_errmsg(sv->store));
    return rc;
}
