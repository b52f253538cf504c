/* The context of a run fired for a schedule's tick. */
#include "workflow/tick.h"

#include <jansson.h>

char *sy_tick_context(const sy_workflow *wf, const sy_tz *tz, int64_t tick_ms)
{
    char utc[40], local[48];
    int64_t sec = tick_ms / 1000;
    sy_time_format(sec, 0, utc, sizeof utc);
    sy_time_format(sec, sy_tz_offset(tz, sec), local, sizeof local);
    json_t *o = json_pack("{s:{s:s, s:I, s:s, s:s, s:s}}", "schedule", "tick", utc, "tick_ms",
                          (json_int_t)tick_ms, "local", local, "timezone", tz->name,
                          "expression", wf->schedule);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return text;
}
