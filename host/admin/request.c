/* A request's way through, whatever carries it (the io): the route, who
 * may go on, the body's announced length, then the handler.  No I/O of
 * its own: every look at the request and every reply is the io's. */
#include "admin/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/auth.h"
#include "base/log.h"

/* Who may go on: a token whose role is the route's or above; reads need
 * none on a listener only this machine reaches. */
static enum MHD_Result refuse(sy_admin_req *rq, bool *refused)
{
    sy_admin *a = rq->admin;
    sy_admin_role need = rq->route->role;
    *refused = false;
    if (need == SY_ROLE_OPEN || (need == SY_ROLE_READ && a->reads_open))
        return MHD_YES;
    *refused = true;
    if (!a->token && a->tokens.n == 0)
        return sy_admin_error(rq, 403, "changes are disabled: admin.token_file is not set "
                              "(nor admin.tokens_file)");
    const char *h = sy_admin_header(rq, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h) {
        static const char msg[] = "{\"error\":\"a token is required\"}";
        const char *const headers[] = {MHD_HTTP_HEADER_CONTENT_TYPE, "application/json",
                                       MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer", NULL};
        rq->status = 401;
        snprintf(rq->note, sizeof rq->note, "a token is required");
        return a->io->reply(rq, 401, msg, sizeof msg - 1, headers);
    }
    const sy_admin_token *k = sy_admin_tokens_match(&a->tokens, h);
    if (k) {
        snprintf(rq->who, sizeof rq->who, "%s", k->name);
        rq->role = k->role;
        if (k->role < need)
            return sy_admin_error(rq, 403, "token '%s' has the role %s; %s %s needs %s", k->name,
                                  sy_admin_role_name(k->role), rq->method, rq->path,
                                  sy_admin_role_name(need));
    } else if (a->token && sy_admin_bearer_ok(h, a->token)) {
        snprintf(rq->who, sizeof rq->who, "token_file");
        rq->role = SY_ROLE_ADMIN;
    } else {
        return sy_admin_error(rq, 403, "the token is wrong");
    }
    *refused = false;
    return MHD_YES;
}

/* For a route with SY_ADMIN_IDENTIFY: the token sent (if any) and what
 * its role reaches, for a handler that says so (GET /api/v1/token). */
static void identify(sy_admin_req *rq)
{
    sy_admin *a = rq->admin;
    const char *h = sy_admin_header(rq, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!rq->role)
        rq->role = a->reads_open ? SY_ROLE_READ : SY_ROLE_UNSET;
    if (h && !rq->who[0]) {
        const sy_admin_token *k = sy_admin_tokens_match(&a->tokens, h);
        if (k) {
            snprintf(rq->who, sizeof rq->who, "%s", k->name);
            rq->role = k->role;
        } else if (a->token && sy_admin_bearer_ok(h, a->token)) {
            snprintf(rq->who, sizeof rq->who, "token_file");
            rq->role = SY_ROLE_ADMIN;
        } else {
            rq->token_unknown = true;
        }
    }
    for (size_t i = 0; i < sy_admin_n_routes; i++) {
        const sy_admin_route *r = &sy_admin_routes[i];
        if (r->role <= SY_ROLE_READ || r->role > rq->role)
            continue;
        const char *action = sy_admin_route_action(r);
        bool seen = false;
        for (size_t j = 0; j < rq->n_may; j++)
            seen |= strcmp(rq->may[j], action) == 0;
        if (!seen && rq->n_may < sizeof rq->may / sizeof rq->may[0])
            rq->may[rq->n_may++] = action;
    }
}

static enum MHD_Result no_method(sy_admin_req *rq, const char *allow)
{
    const char *m = rq->method;
    /* Only a method known to be harmless is echoed back. */
    bool known = strcmp(m, "GET") == 0 || strcmp(m, "POST") == 0 || strcmp(m, "DELETE") == 0 ||
                 strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0;
    char msg[160];
    int n = snprintf(msg, sizeof msg, "{\"error\":\"%s is not allowed here (allowed: %s)\"}\n",
                     known ? m : "the method", allow);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = (int)strlen(msg);
    const char *const headers[] = {MHD_HTTP_HEADER_CONTENT_TYPE, "application/json",
                                   MHD_HTTP_HEADER_ALLOW, allow, NULL};
    return rq->admin->io->reply(rq, 405, msg, (size_t)n, headers);
}

bool sy_admin_screen(sy_admin_req *rq, enum MHD_Result *res)
{
    sy_admin *a = rq->admin;
    char allow[64];
    int found = sy_admin_route_find(sy_admin_routes, sy_admin_n_routes, rq->method, rq->path,
                                    &rq->route, rq->caps, allow, sizeof allow);
    if (found == SY_ROUTE_NO_PATH) {
        *res = sy_admin_error(rq, 404, "no such path: %s", rq->path);
        return true;
    }
    if (found == SY_ROUTE_NO_METHOD) {
        *res = no_method(rq, allow);
        return true;
    }
    bool refused;
    *res = refuse(rq, &refused);
    /* Refused before the body is read, by its announced length. */
    const char *cl = sy_admin_header(rq, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!refused && cl && strtoull(cl, NULL, 10) > (unsigned long long)a->cfg->max_body) {
        *res = sy_admin_error(rq, 413, "the body is over admin.max_body (%lld bytes)",
                              (long long)a->cfg->max_body);
        refused = true;
    }
    if (!refused && (rq->route->flags & SY_ADMIN_IDENTIFY))
        identify(rq);
    if (refused) {
        /* A change refused is a change tried: the trail shows it. */
        if (rq->route->flags & SY_ADMIN_CHANGE)
            sy_admin_audit(rq);
        return true;
    }
    *res = MHD_YES;
    return false;
}

/* Whether a body is no body: nothing, or an empty JSON object (clients
 * that always send an object send {} for none). */
static bool body_empty(const sy_admin_req *rq)
{
    if (!rq->len)
        return true;
    json_t *v = json_loadb(rq->body, rq->len, 0, NULL);
    bool empty = json_is_object(v) && json_object_size(v) == 0;
    json_decref(v);
    return empty;
}

enum MHD_Result sy_admin_answer(sy_admin_req *rq)
{
    if (!(rq->route->flags & SY_ADMIN_BODY) && !body_empty(rq)) {
        enum MHD_Result res = sy_admin_error(rq, 400, "body: this request takes none (or {})");
        if (rq->route->flags & SY_ADMIN_CHANGE)
            sy_admin_audit(rq);
        return res;
    }
    if (rq->route->flags & SY_ADMIN_CHANGE)
        sy_log(SY_LOG_INFO, "admin", "%s %s%s%s%s", rq->method, rq->path,
               rq->who[0] ? " (token '" : "", rq->who, rq->who[0] ? "')" : "");
    enum MHD_Result res = (enum MHD_Result)rq->route->handler(rq);
    if (rq->route->flags & SY_ADMIN_CHANGE)
        sy_admin_audit(rq);
    return res;
}
