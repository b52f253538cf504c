/* Cancel, whoever holds the run: a request for a live host, the deed for
 * a run whose host is gone. */
#include "service/service.h"

#include <stdio.h>

#include "service/runs.h"

int sy_service_cancel(sy_service *sv, int64_t run_id, sy_run_state *state, char *err,
                      size_t err_len)
{
    int rc = sy_runs_cancel(sv->store, run_id, state, err, err_len);
    if (rc != SY_OK || *state == SY_RUN_CANCELLED)
        return rc;
    /* The request is recorded.  Claiming the run tells a live holder from
     * a gone one: a live host's lease refuses the claim, and it stops the
     * run itself; otherwise this process ends it now. */
    sy_engine_opts mode = {0};
    if (sy_service_start(sv, &mode, err, err_len) != SY_OK)
        return SY_OK; /* the request stands; a host that takes the run ends it */
    char why[256];
    if (sy_engine_adopt(sv->engine, run_id, true, why, sizeof why) != SY_OK)
        return SY_OK;
    sy_service_run(sv);
    sy_run_record r;
    if (sy_store_get_run(sv->store, run_id, &r) == SY_OK) {
        *state = r.state;
        sy_run_record_clear(&r);
    }
    return SY_OK;
}

int sy_service_cancel_served(sy_service *sv, int64_t run_id, sy_run_state *state, char *err,
                             size_t err_len)
{
    int rc = sy_runs_cancel(sv->store, run_id, state, err, err_len);
    if (rc != SY_OK || *state == SY_RUN_CANCELLED)
        return rc;
    /* A run this host holds is stopped now rather than at the next poll
     * for cancel requests; one another host holds, by that host. */
    if (sv->engine && sy_engine_cancel(sv->engine, run_id, "cancel requested") == SY_OK)
        *state = SY_RUN_RUNNING;
    return SY_OK;
}
