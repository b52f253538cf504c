/* The routes the admin listener serves: one line each.  A new endpoint is
 * a handler (admin/api.h) and a line here, as `GET /metrics` is: its
 * handler renders into a buffer and answers with sy_admin_text.
 * SY_ADMIN_CHANGE asks for the bearer token, SY_ADMIN_BODY reads a JSON
 * body (admin/router.h); the last column is the role the token needs:
 * read every GET, operate submit, cancel, retry and emit, admin reload
 * and drain (admin/tokens.h).  Pools and limits change by a reload. */
#include "admin/api.h"

const sy_admin_route sy_admin_routes[] = {
    {"GET", "/api/v1/health", sy_api_health, 0, SY_ROLE_READ},
    {"GET", "/api/v1/runs", sy_api_runs_list, 0, SY_ROLE_READ},
    {"POST", "/api/v1/runs", sy_api_run_submit, SY_ADMIN_CHANGE | SY_ADMIN_BODY, SY_ROLE_OPERATE},
    {"GET", "/api/v1/runs/{}", sy_api_run_get, 0, SY_ROLE_READ},
    {"POST", "/api/v1/runs/{}/cancel", sy_api_run_cancel, SY_ADMIN_CHANGE, SY_ROLE_OPERATE},
    {"DELETE", "/api/v1/runs/{}", sy_api_run_cancel, SY_ADMIN_CHANGE, SY_ROLE_OPERATE},
    {"POST", "/api/v1/runs/{}/retry", sy_api_run_retry, SY_ADMIN_CHANGE | SY_ADMIN_BODY, SY_ROLE_OPERATE},
    {"GET", "/api/v1/runs/{}/logs", sy_api_run_logs, 0, SY_ROLE_READ},
    {"GET", "/api/v1/workflows", sy_api_workflows, 0, SY_ROLE_READ},
    {"GET", "/api/v1/workflows/{}", sy_api_workflow_get, 0, SY_ROLE_READ},
    {"GET", "/api/v1/instances", sy_api_instances, 0, SY_ROLE_READ},
    {"GET", "/api/v1/routes", sy_api_routes, 0, SY_ROLE_READ},
    {"GET", "/api/v1/events", sy_api_events, 0, SY_ROLE_READ},
    {"POST", "/api/v1/events", sy_api_event_emit, SY_ADMIN_CHANGE | SY_ADMIN_BODY, SY_ROLE_OPERATE},
    {"GET", "/api/v1/named-events", sy_api_named_events, 0, SY_ROLE_READ},
    {"GET", "/api/v1/triggers", sy_api_triggers, 0, SY_ROLE_READ},
    {"POST", "/api/v1/reload", sy_api_reload, SY_ADMIN_CHANGE, SY_ROLE_ADMIN},
    /* The serving host stops as on its first SIGTERM. */
    {"POST", "/api/v1/drain", sy_api_drain, SY_ADMIN_CHANGE, SY_ROLE_ADMIN},
    {"GET", "/api/v1/limits", sy_api_limits, 0, SY_ROLE_READ},
    {"GET", "/metrics", sy_api_metrics, 0, SY_ROLE_READ},
    {"GET", "/api/v1/runs/{}/attempts", sy_api_run_attempts, 0, SY_ROLE_READ},
    /* The token's own role: what a page may offer. */
    {"GET", "/api/v1/token", sy_api_token, SY_ADMIN_IDENTIFY, SY_ROLE_READ},
    /* Who changed what is for those who may change everything. */
    {"GET", "/api/v1/audit", sy_api_audit, 0, SY_ROLE_ADMIN},
    {"GET", "/", sy_api_dashboard, SY_ADMIN_OPEN, SY_ROLE_OPEN},
    {"GET", "/dashboard/{}", sy_api_dashboard, SY_ADMIN_OPEN, SY_ROLE_OPEN},
};

const size_t sy_admin_n_routes = sizeof sy_admin_routes / sizeof sy_admin_routes[0];
