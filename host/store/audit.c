/* The audit trail's interface (store/audit.h): the arguments checked and
 * the strings bounded once here, for both implementations. */
#include <stdlib.h>
#include <string.h>

#include "store/driver.h"

/* A string cut to SY_AUDIT_TEXT_MAX bytes, not inside a UTF-8 sequence;
 * `buf` holds the copy when it had to be cut. */
static const char *bounded(const char *v, char *buf)
{
    if (!v || strlen(v) <= SY_AUDIT_TEXT_MAX)
        return v;
    size_t n = SY_AUDIT_TEXT_MAX - 3;
    while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
        n--;
    memcpy(buf, v, n);
    memcpy(buf + n, "...", 4);
    return buf;
}

int sy_store_add_audit(sy_store *s, const sy_audit_record *r)
{
    if (!s)
        return SY_EINVAL;
    if (!r || !r->who || !r->role || !r->action || !r->origin || !*r->action)
        return sy_store_fail(s, SY_EINVAL, "add_audit: who, role, action and origin are "
                             "required");
    char buf[6][SY_AUDIT_TEXT_MAX + 1];
    sy_audit_record c = *r;
    c.who = bounded(r->who, buf[0]);
    c.role = bounded(r->role, buf[1]);
    c.action = bounded(r->action, buf[2]);
    c.target = bounded(r->target, buf[3]);
    c.origin = bounded(r->origin, buf[4]);
    c.detail = bounded(r->detail, buf[5]);
    return s->ops->add_audit(s, &c);
}

int sy_store_list_audit(sy_store *s, const sy_audit_filter *f,
                        int (*cb)(void *arg, const sy_audit_record *r), void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!f || !cb || f->limit < 1 || f->limit > 100000)
        return sy_store_fail(s, SY_EINVAL, "list_audit: a filter with a limit from 1 to "
                             "100000, and a callback");
    return s->ops->list_audit(s, f, cb, arg);
}

int sy_store_delete_audit(sy_store *s, int64_t before, size_t *deleted)
{
    if (!s)
        return SY_EINVAL;
    if (!deleted)
        return sy_store_fail(s, SY_EINVAL, "delete_audit: deleted is NULL");
    *deleted = 0;
    return s->ops->delete_audit(s, before, deleted);
}
