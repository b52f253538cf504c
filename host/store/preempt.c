/* The store's interface for cancel requests (store/preempt.h): the
 * arguments checked once here, for both implementations. */
#include <string.h>

#include "store/driver.h"
#include "store/preempt.h"

int sy_store_request_slot_cancel(sy_store *s, const char *key, int64_t now, const char *why,
                            bool *asked)
{
    if (!s)
        return SY_EINVAL;
    if (!key || !*key || strlen(key) > SY_SLOT_KEY_MAX || !why || !*why || !asked)
        return sy_store_fail(s, SY_EINVAL, "request_slot_cancel: a key, a reason and asked");
    *asked = false;
    return s->ops->request_slot_cancel(s, key, now, why, asked);
}

int sy_store_list_cancel_requests(sy_store *s, const char *owner, int64_t now,
                                  int (*cb)(void *arg, const sy_cancel_request *r),
                                  void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!owner || !cb)
        return sy_store_fail(s, SY_EINVAL, "list_cancel_requests: an owner and a callback");
    return s->ops->list_cancel_requests(s, owner, now, cb, arg);
}
