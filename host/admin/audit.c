/* The admin API's part of the audit trail: each change request recorded
 * (admin/request.c calls sy_admin_audit), and GET /api/v1/audit. */
#include "admin/api.h"

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "service/audit.h"

void sy_admin_audit(sy_admin_req *rq)
{
    char origin[128] = "-";
    if (rq->admin->io->peer)
        rq->admin->io->peer(rq, origin, sizeof origin);
    char target[320];
    if (rq->target[0])
        snprintf(target, sizeof target, "%s", rq->target);
    else if (strstr(rq->route->pattern, "{}")) /* caps[] is set for its {} only */
        snprintf(target, sizeof target, "run %s", rq->caps[0]);
    else
        target[0] = '\0';
    bool ok = rq->status > 0 && rq->status < 400;
    sy_audit_record r = {
        .who = rq->who[0] ? rq->who : "-",
        .role = rq->role ? sy_admin_role_name(rq->role) : "-",
        .action = sy_admin_route_action(rq->route),
        .target = target[0] ? target : NULL,
        .origin = origin,
        .ok = ok,
        .status = (int)rq->status,
        .detail = rq->note[0] ? rq->note : NULL,
    };
    sy_service_audit(rq->admin->sv, &r);
}

static int add_row(void *arg, const sy_audit_record *r)
{
    json_array_append_new(arg, sy_audit_json(r));
    return 0;
}

int sy_api_audit(sy_admin_req *rq)
{
    enum MHD_Result res = MHD_NO;
    long long limit, since, until, before;
    if (!sy_admin_query_int(rq, "limit", 1, 1000, 100, &limit, &res) ||
        !sy_admin_query_int(rq, "since", 0, INT64_MAX, 0, &since, &res) ||
        !sy_admin_query_int(rq, "until", 0, INT64_MAX, 0, &until, &res) ||
        !sy_admin_query_int(rq, "before", 0, INT64_MAX, 0, &before, &res))
        return res;
    sy_audit_filter f = {.since = since, .until = until, .before = before,
                         .who = sy_admin_query(rq, "who"),
                         .action = sy_admin_query(rq, "action"), .limit = (size_t)limit};
    json_t *rows = json_array();
    sy_store *st = rq->admin->sv->store;
    if (sy_store_list_audit(st, &f, add_row, rows) != SY_OK) {
        json_decref(rows);
        return sy_admin_error(rq, 500, "audit: %s", sy_store_errmsg(st));
    }
    /* The next page holds the rows before the last (oldest) of this one. */
    size_t n = json_array_size(rows);
    json_t *next = n == (size_t)limit
                       ? json_incref(json_object_get(json_array_get(rows, n - 1), "id"))
                       : json_null();
    return sy_admin_json(rq, 200, json_pack("{s:o, s:o}", "audit", rows, "next_before", next));
}
