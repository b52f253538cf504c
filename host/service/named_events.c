/* Emitting a named event (service/named_events.h). */
#include "service/named_events.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "engine/named_events.h"

int sy_service_emit(sy_service *sv, const char *name, const char *key, const char *data,
                    int64_t *id, bool *duplicate, char *err, size_t err_len)
{
    int rc = sy_event_record(sv->store, sv->setup.cfg.max_context_bytes, name, key, data,
                             data ? strlen(data) : 0, sy_clock_now_ms(), id, duplicate, err,
                             err_len);
    if (rc == SY_OK && sv->engine)
        sy_engine_triggers_soon(sv->engine);
    return rc;
}
