/* GET /api/v1/token: the token a request carries, its role and what it
 * may do, so that a page shows only the actions its token allows.  A
 * read: on a loopback listener it needs no token, and then says so. */
#include "admin/api.h"

#include <string.h>

#include "admin/auth.h"

int sy_api_token(sy_admin_req *rq)
{
    sy_admin *a = rq->admin;
    const char *h = sy_admin_header(rq, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *name = NULL;
    sy_admin_role role = a->reads_open ? SY_ROLE_READ : SY_ROLE_UNSET;
    if (h) {
        const sy_admin_token *k = sy_admin_tokens_match(&a->tokens, h);
        if (k) {
            name = k->name;
            role = k->role;
        } else if (a->token && sy_admin_bearer_ok(h, a->token)) {
            name = "token_file";
            role = SY_ROLE_ADMIN;
        } else {
            /* A page that kept a token taken out of the file forgets it. */
            return sy_admin_error(rq, 403, "the token is wrong");
        }
    }
    /* Every action above a read this role reaches, each named once. */
    json_t *may = json_array();
    for (size_t i = 0; i < sy_admin_n_routes; i++) {
        const sy_admin_route *r = &sy_admin_routes[i];
        if (r->role <= SY_ROLE_READ || r->role > role)
            continue;
        const char *action = sy_admin_route_action(r);
        bool seen = false;
        size_t j;
        json_t *v;
        json_array_foreach(may, j, v) seen |= strcmp(json_string_value(v), action) == 0;
        if (!seen)
            json_array_append_new(may, json_string(action));
    }
    return sy_admin_json(rq, 200, json_pack("{s:s?, s:s?, s:o}", "name", name, "role",
                                            role ? sy_admin_role_name(role) : NULL, "may",
                                            may));
}
