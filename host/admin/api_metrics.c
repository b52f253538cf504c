/* GET /metrics: the host's Prometheus exposition (service/metrics.h). */
#include "admin/api.h"

#include <stdlib.h>

#include "service/metrics.h"

int sy_api_metrics(sy_admin_req *rq)
{
    char *text = NULL;
    size_t len = 0;
    int rc = sy_metrics_render(rq->admin->sv, &text, &len);
    if (rc != SY_OK)
        return sy_admin_error(rq, rc == SY_ESTATE ? 503 : 500, "the metrics could not be made");
    enum MHD_Result res = sy_admin_text(rq, 200, SY_METRICS_CONTENT_TYPE, text, len);
    free(text);
    return res;
}
