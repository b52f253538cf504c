/* JSON replies, errors, query parameters and bodies. */
#include "admin/internal.h"

#include <stdint.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin/parse.h"

enum MHD_Result sy_admin_text(sy_admin_req *rq, unsigned status, const char *content_type,
                              const char *text, size_t len)
{
    const char *const headers[] = {MHD_HTTP_HEADER_CONTENT_TYPE, content_type,
                                   MHD_HTTP_HEADER_CACHE_CONTROL, "no-store",
                                   "X-Content-Type-Options", "nosniff", NULL};
    rq->status = status;
    return rq->admin->io->reply(rq, status, text, len, headers);
}

static enum MHD_Result send_text(sy_admin_req *rq, unsigned status, const char *text,
                                 size_t len)
{
    return sy_admin_text(rq, status, "application/json", text, len);
}

enum MHD_Result sy_admin_json(sy_admin_req *rq, unsigned status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text)
        return send_text(rq, 500, "{\"error\":\"out of memory\"}\n", 26);
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return MHD_NO;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    enum MHD_Result res = send_text(rq, status, line, n + 1);
    free(line);
    return res;
}

enum MHD_Result sy_admin_error(sy_admin_req *rq, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Cut for the audit trail; the reply has it whole. */
    snprintf(rq->note, sizeof rq->note, "%.*s", (int)sizeof rq->note - 1, msg);
    return sy_admin_json(rq, status, json_pack("{s:s}", "error", msg));
}

const char *sy_admin_query(sy_admin_req *rq, const char *key)
{
    return rq->admin->io->lookup(rq, false, key);
}

const char *sy_admin_header(sy_admin_req *rq, const char *name)
{
    return rq->admin->io->lookup(rq, true, name);
}

bool sy_admin_query_int(sy_admin_req *rq, const char *key, long long lo, long long hi,
                        long long def, long long *out, enum MHD_Result *res)
{
    const char *v = sy_admin_query(rq, key);
    if (!v) {
        *out = def;
        return true;
    }
    long long n;
    if (!sy_admin_parse_int(v, lo, hi, &n)) {
        *res = sy_admin_error(rq, 400, "query '%s': must be an integer from %lld to %lld", key,
                              lo, hi);
        return false;
    }
    *out = n;
    return true;
}

bool sy_admin_query_bool(sy_admin_req *rq, const char *key, bool *out, enum MHD_Result *res)
{
    const char *v = sy_admin_query(rq, key);
    if (!v) {
        *out = false;
        return true;
    }
    if (sy_admin_parse_bool(v, out))
        return true;
    *res = sy_admin_error(rq, 400, "query '%s': must be true or false", key);
    return false;
}

json_t *sy_admin_body(sy_admin_req *rq, enum MHD_Result *res)
{
    if (!rq->body || rq->len == 0)
        return json_object();
    json_error_t e;
    json_t *v = json_loadb(rq->body, rq->len, JSON_REJECT_DUPLICATES, &e);
    if (!v) {
        *res = sy_admin_error(rq, 400, "body: invalid JSON at line %d, column %d: %s", e.line,
                              e.column, e.text);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        *res = sy_admin_error(rq, 400, "body: must be a JSON object");
        return NULL;
    }
    return v;
}

bool sy_admin_cap_id(sy_admin_req *rq, size_t i, int64_t *id, enum MHD_Result *res)
{
    long long v;
    if (!sy_admin_parse_int(rq->caps[i], 1, INT64_MAX, &v)) {
        *res = sy_admin_error(rq, 400, "run id '%s': must be a positive integer", rq->caps[i]);
        return false;
    }
    *id = v;
    return true;
}
