/* The host function table lent to plugins (sy_host_api in executor.h). */
#include "executor/host_api.h"

#include <switchyard/json_params.h>

#include "base/log.h"

void sy_completion_init(sy_completion *c, const char *who,
                        void (*on_complete)(sy_completion *, const sy_result *),
                        void *data)
{
    c->on_complete = on_complete;
    c->data = data;
    c->who = who;
    atomic_init(&c->completed, 0);
}

static void api_complete(sy_completion *c, const sy_result *r)
{
    if (!c) {
        sy_log(SY_LOG_ERROR, NULL, "plugin bug: complete() with a NULL completion");
        return;
    }
    if (atomic_exchange(&c->completed, 1)) {
        sy_log(SY_LOG_ERROR, c->who,
               "plugin bug: complete() called twice for one submit; ignored");
        return;
    }
    sy_result failed = {sizeof failed, SY_OUTCOME_FAILED, NULL, 0,
                        "plugin bug: complete() with a NULL or unsized result"};
    if (!r || !SY_HAS_FIELD(r, sy_result, error))
        r = &failed;
    c->on_complete(c, r);
}

static void api_log(sy_host *h, sy_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_vlog(level, h ? h->name : NULL, fmt, ap);
    va_end(ap);
}

static void api_wake(sy_host *h)
{
    if (h && h->on_wake)
        h->on_wake(h);
}

const sy_host_api sy_host_api_table = {
    .size = sizeof(sy_host_api),
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .complete = api_complete,
    .log = api_log,
    .wake = api_wake,
    /* Settings and task parameters are jansson objects (the views of
     * switchyard/json_params.h): the getters are the SDK's, the same the
     * conformance kit and the test host lend. */
    SY_SDK_JSON_PARAMS_INIT,
};
