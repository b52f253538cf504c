/* Matching a request against the route table. */
#include "admin/router.h"

#include <stdio.h>
#include <string.h>

/* Whether `path` fits `pattern`, each {} taking one non-empty segment. */
static bool fits(const char *pattern, const char *path, char caps[][SY_ADMIN_CAP_LEN])
{
    size_t ncap = 0;
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (p[0] == '{' && p[1] == '}') {
            size_t n = strcspn(s, "/");
            if (n == 0 || n >= SY_ADMIN_CAP_LEN || ncap >= SY_ADMIN_MAX_CAPS)
                return false;
            memcpy(caps[ncap], s, n);
            caps[ncap++][n] = '\0';
            s += n;
            p += 2;
        } else if (*p++ != *s++) {
            return false;
        }
    }
    return !*p && !*s;
}

int sy_admin_route_find(const sy_admin_route *t, size_t n, const char *method,
                        const char *path, const sy_admin_route **out,
                        char caps[][SY_ADMIN_CAP_LEN], char *allow, size_t allow_len)
{
    const char *want = strcmp(method, "HEAD") == 0 ? "GET" : method;
    bool path_known = false;
    size_t off = 0;
    if (allow_len)
        allow[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char scratch[SY_ADMIN_MAX_CAPS][SY_ADMIN_CAP_LEN];
        if (!fits(t[i].pattern, path, scratch))
            continue;
        if (strcmp(t[i].method, want) == 0) {
            memcpy(caps, scratch, sizeof scratch);
            *out = &t[i];
            return SY_ROUTE_FOUND;
        }
        path_known = true;
        if (off < allow_len)
            off += (size_t)snprintf(allow + off, allow_len - off, "%s%s", off ? ", " : "",
                                    t[i].method);
    }
    *out = NULL;
    return path_known ? SY_ROUTE_NO_METHOD : SY_ROUTE_NO_PATH;
}

const char *sy_admin_route_action(const sy_admin_route *r)
{
    if (strcmp(r->method, "DELETE") == 0)
        return "cancel";
    const char *slash = strrchr(r->pattern, '/');
    const char *last = slash ? slash + 1 : r->pattern;
    return strcmp(last, "runs") == 0 ? "submit" : last;
}
