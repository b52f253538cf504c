/* GET /api/v1/token: the token a request carries, its role and what it
 * may do (found by admin/request.c: SY_ADMIN_IDENTIFY), so that a page
 * shows only the actions its token allows.  A read: on a loopback
 * listener it needs no token, and then says so. */
#include "admin/api.h"

int sy_api_token(sy_admin_req *rq)
{
    /* A page that kept a token taken out of the file forgets it. */
    if (rq->token_unknown)
        return sy_admin_error(rq, 403, "the token is wrong");
    json_t *may = json_array();
    for (size_t i = 0; i < rq->n_may; i++)
        json_array_append_new(may, json_string(rq->may[i]));
    return sy_admin_json(rq, 200, json_pack("{s:s?, s:s?, s:o}", "name",
                                            rq->who[0] ? rq->who : NULL, "role",
                                            rq->role ? sy_admin_role_name(rq->role) : NULL,
                                            "may", may));
}
