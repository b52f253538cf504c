/*
 * admin/router.h -- the route table and matching a request against it:
 * the path decides 404, the method 405.  Pure: no I/O, any thread.
 */
#ifndef SY_ADMIN_ROUTER_H
#define SY_ADMIN_ROUTER_H

#include <stdbool.h>
#include <stddef.h>

#include "admin/tokens.h"

#define SY_ADMIN_MAX_CAPS 2
#define SY_ADMIN_CAP_LEN 256

struct sy_admin_req;

/* What a route needs beyond a reader. */
enum {
    SY_ADMIN_CHANGE = 1u << 0, /* changes something: the bearer token */
    SY_ADMIN_BODY = 1u << 1,   /* reads a JSON body */
    SY_ADMIN_OPEN = 1u << 2,   /* installed files: no token on any listener */
    SY_ADMIN_IDENTIFY = 1u << 3, /* the handler is told the token sent, even
                                    where none is needed, and what its role
                                    may do (admin/request.c) */
};

typedef struct sy_admin_route {
    const char *method;  /* "GET", "POST" */
    const char *pattern; /* "/api/v1/runs/{}/cancel": {} is one segment */
    int (*handler)(struct sy_admin_req *rq); /* an enum MHD_Result */
    unsigned flags;
    sy_admin_role role;  /* the role a token needs (admin/tokens.h); every
                            route names one (tests/admin/test_roles) */
} sy_admin_route;

/* The routes served (admin/routes.c), `sy_admin_n_routes` of them. */
extern const sy_admin_route sy_admin_routes[];
extern const size_t sy_admin_n_routes;

/* What a route does, in one word, for the audit trail and GET
 * /api/v1/token: its path's last word ("cancel", "retry", "reload",
 * "audit"), "submit" for POST /api/v1/runs, "cancel" for a DELETE. */
const char *sy_admin_route_action(const sy_admin_route *r);

enum { SY_ROUTE_FOUND = 0, SY_ROUTE_NO_PATH = 404, SY_ROUTE_NO_METHOD = 405 };

/* Finds the route for `method` and `path` (no query) in t[0..n): fills
 * caps with its {} segments (each under SY_ADMIN_CAP_LEN, percent-decoded
 * by the server already) and returns SY_ROUTE_FOUND; or
 * SY_ROUTE_NO_METHOD with the methods the path has in `allow` ("GET,
 * POST"); or SY_ROUTE_NO_PATH.  A HEAD matches GET. */
int sy_admin_route_find(const sy_admin_route *t, size_t n, const char *method,
                        const char *path, const sy_admin_route **out,
                        char caps[][SY_ADMIN_CAP_LEN], char *allow, size_t allow_len);

#endif
