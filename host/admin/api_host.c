/* The serving host itself: POST /api/v1/drain stops it as its first
 * SIGTERM would, GET /api/v1/limits shows what `switchyard limits --json`
 * prints. */
#include "admin/api.h"

#include <stdio.h>

#include "base/clock.h"
#include "service/limits.h"

int sy_api_drain(sy_admin_req *rq)
{
    sy_service *sv = rq->admin->sv;
    if (!sv->engine)
        return sy_admin_error(rq, 409, "no engine to drain");
    if (sy_engine_draining(sv->engine))
        return sy_admin_error(rq, 409, "the host is draining already");
    char names[512] = "";
    size_t running = sy_engine_running(sv->engine, names, sizeof names);
    int64_t grace_ms = sy_engine_grace_left_ms(sv->engine);
    /* The drain starts once this answer is out (admin/server.c): a host
     * with nothing running stops at once, and would close the listener
     * before the client heard why. */
    rq->drain_after = true;
    snprintf(rq->note, sizeof rq->note, "waits for %zu running task%s", running,
             running == 1 ? "" : "s");
    return sy_admin_json(rq, 202,
                         json_pack("{s:b, s:I, s:s, s:I}", "draining", 1, "running",
                                   (json_int_t)running, "tasks", names, "grace_s",
                                   (json_int_t)((grace_ms + 999) / 1000)));
}

int sy_api_limits(sy_admin_req *rq)
{
    sy_service *sv = rq->admin->sv;
    char err[512];
    json_t *got = sy_limits_list(sv->store, &sy_service_setup(sv)->cfg.flow, sy_clock_now_ms(),
                                 err, sizeof err);
    if (!got)
        return sy_admin_error(rq, 500, "limits: %s", err);
    return sy_admin_json(rq, 200, got);
}
