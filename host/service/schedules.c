/* Schedules as data: each scheduled workflow, its last tick and its next
 * ones. */
#include "service/schedules.h"

#include <stdlib.h>

#include "base/tz.h"
#include "base/util.h"
#include "workflow/cron.h"

static json_t *when(const sy_tz *tz, int64_t sec)
{
    char buf[48];
    sy_time_format(sec, sy_tz_offset(tz, sec), buf, sizeof buf);
    return json_string(buf);
}

static json_t *one(sy_store *st, const sy_workflow *wf, int64_t now_ms, size_t count,
                   char *err, size_t err_len, int *rc)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "tenant", wf->tenant, "name",
                          wf->name, "schedule", wf->schedule, "timezone",
                          wf->timezone ? wf->timezone : "UTC", "catchup",
                          sy_catchup_name(wf->catchup), "catchup_max",
                          (json_int_t)wf->catchup_max);
    char why[512] = "";
    sy_cron cron;
    sy_tz *tz = NULL;
    if (!sy_cron_parse(wf->schedule, &cron, why, sizeof why))
        tz = sy_tz_load(wf->timezone, why, sizeof why);
    int64_t last = 0, run = 0;
    *rc = sy_store_last_tick(st, wf->tenant, wf->name, &last, &run);
    if (*rc != SY_OK)
        sy_errf(err, err_len, "%s", sy_store_errmsg(st));
    json_t *next = json_array();
    int64_t t = now_ms / 1000;
    for (size_t i = 0; tz && i < count; i++) {
        t = sy_cron_next(&cron, tz, t);
        if (t == INT64_MAX)
            break;
        json_array_append_new(next, when(tz, t));
    }
    sy_tz *utc = tz ? NULL : sy_tz_load(NULL, NULL, 0);
    json_object_set_new(o, "last_tick", last ? when(tz ? tz : utc, last / 1000) : json_null());
    json_object_set_new(o, "last_run", last && run ? json_integer(run) : json_null());
    json_object_set_new(o, "next", next);
    json_object_set_new(o, "error", tz ? json_null() : json_string(why));
    sy_tz_free(utc);
    sy_tz_free(tz);
    return o;
}

int sy_schedules_list(sy_store *st, sy_workflow *const *wfs, size_t n, int64_t now_ms,
                      size_t count, json_t **out, char *err, size_t err_len)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        if (!wfs[i]->schedule)
            continue;
        int rc = SY_OK;
        json_array_append_new(list, one(st, wfs[i], now_ms, count, err, err_len, &rc));
        if (rc != SY_OK) {
            json_decref(list);
            return rc;
        }
    }
    *out = list;
    return SY_OK;
}
