/*
 * admin/api.h -- the handlers the route table (admin/routes.c) names, one
 * group a file.  Each answers one request on the loop thread and returns
 * MHD_YES or MHD_NO.
 */
#ifndef SY_ADMIN_API_H
#define SY_ADMIN_API_H

#include "admin/internal.h"

/* admin/api_runs.c */
int sy_api_runs_list(sy_admin_req *rq);
int sy_api_run_get(sy_admin_req *rq);
int sy_api_run_submit(sy_admin_req *rq);
int sy_api_run_cancel(sy_admin_req *rq);
int sy_api_run_retry(sy_admin_req *rq);

/* admin/api_config.c */
int sy_api_health(sy_admin_req *rq);
int sy_api_workflows(sy_admin_req *rq);
int sy_api_workflow_get(sy_admin_req *rq);
int sy_api_instances(sy_admin_req *rq);
int sy_api_routes(sy_admin_req *rq);
int sy_api_reload(sy_admin_req *rq);

/* admin/api_host.c: the serving host's drain and its limits */
int sy_api_drain(sy_admin_req *rq);
int sy_api_limits(sy_admin_req *rq);

/* admin/api_logs.c */
int sy_api_run_logs(sy_admin_req *rq);

/* admin/api_events.c */
int sy_api_events(sy_admin_req *rq);
/* The stream's clients hear of a named event just recorded here soon,
 * not at the next look (admin/named_feed.h). */
void sy_admin_events_named_soon(sy_admin *a);

/* admin/api_named_events.c */
int sy_api_event_emit(sy_admin_req *rq);
int sy_api_named_events(sy_admin_req *rq);
int sy_api_triggers(sy_admin_req *rq);

/* admin/api_metrics.c */
int sy_api_metrics(sy_admin_req *rq);

/* admin/api_attempts.c */
int sy_api_run_attempts(sy_admin_req *rq);

/* admin/audit.c: GET /api/v1/audit */
int sy_api_audit(sy_admin_req *rq);

/* admin/api_token.c: GET /api/v1/token */
int sy_api_token(sy_admin_req *rq);

/* admin/static.c: the dashboard's files */
int sy_api_dashboard(sy_admin_req *rq);

#endif
