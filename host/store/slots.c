/* The store's interface for flow-control slots (store/slots.h): the
 * arguments checked once here, for both implementations. */
#include <string.h>

#include "store/driver.h"

int sy_store_take_slots(sy_store *s, const sy_store_fence *fence, const sy_slot_holder *h,
                        const sy_slot_claim *c, size_t n, int64_t now, bool *taken,
                        size_t *full, int64_t *held)
{
    if (!s)
        return SY_EINVAL;
    if (!fence || !fence->owner || !h || h->token <= 0 || (n && !c) || !taken || !full ||
        !held || n > SY_SLOT_CLAIMS_MAX)
        return sy_store_fail(s, SY_EINVAL, "take_slots: a fence with its owner, an attempt "
                                           "token > 0 and at most %d claims",
                             SY_SLOT_CLAIMS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!c[i].key || !c[i].key[0] || strlen(c[i].key) > SY_SLOT_KEY_MAX ||
            c[i].limit < 1 || c[i].n < 1)
            return sy_store_fail(s, SY_EINVAL, "take_slots: claim %zu: a key of 1 to %d "
                                               "bytes, a limit and slots >= 1",
                                 i, SY_SLOT_KEY_MAX);
        for (size_t k = 0; k < i; k++)
            if (strcmp(c[k].key, c[i].key) == 0)
                return sy_store_fail(s, SY_EINVAL, "take_slots: key '%s' twice", c[i].key);
    }
    *taken = n == 0;
    if (n == 0)
        return SY_OK;
    return s->ops->take_slots(s, fence, h, c, n, now, taken, full, held);
}

static bool key_ok(const char *key)
{
    return key && key[0] && strlen(key) <= SY_SLOT_KEY_MAX;
}

int sy_store_slot_room(sy_store *s, const sy_slot_claim *c, size_t n, int64_t now,
                       int64_t *held)
{
    return sy_store_slot_room_as(s, NULL, c, n, now, held);
}

int sy_store_slot_room_as(sy_store *s, const char *owner, const sy_slot_claim *c, size_t n,
                          int64_t now, int64_t *held)
{
    if (!s)
        return SY_EINVAL;
    if (n && (!c || !held))
        return sy_store_fail(s, SY_EINVAL, "slot_room: the claims and their counts");
    for (size_t i = 0; i < n; i++)
        if (!key_ok(c[i].key) || c[i].limit < 1 || c[i].n < 1)
            return sy_store_fail(s, SY_EINVAL, "slot_room: claim %zu: a key of 1 to %d "
                                               "bytes, a limit and slots >= 1",
                                 i, SY_SLOT_KEY_MAX);
    if (n == 0)
        return SY_OK;
    return s->ops->slot_room(s, owner, c, n, now, held);
}

int sy_store_put_slots(sy_store *s, const char *owner, const sy_slot_take *t, size_t n,
                       int64_t now, bool *put)
{
    if (!s)
        return SY_EINVAL;
    if (!owner || !put || (n && !t))
        return sy_store_fail(s, SY_EINVAL, "put_slots: an owner, the takes and *put");
    for (size_t i = 0; i < n; i++)
        if (!key_ok(t[i].key) || t[i].limit < 1 || t[i].n < 1 || t[i].holder.token <= 0 ||
            t[i].holder.run_id <= 0)
            return sy_store_fail(s, SY_EINVAL, "put_slots: take %zu: a key of 1 to %d bytes, "
                                               "a limit and slots >= 1, a run and an "
                                               "attempt token > 0", i, SY_SLOT_KEY_MAX);
    *put = true;
    if (n == 0)
        return SY_OK;
    return s->ops->put_slots(s, owner, t, n, now, put);
}

int sy_store_return_takes(sy_store *s, const char *owner, const sy_slot_take *t, size_t n)
{
    if (!s)
        return SY_EINVAL;
    if (!owner || (n && !t))
        return sy_store_fail(s, SY_EINVAL, "return_takes: an owner and the takes");
    for (size_t i = 0; i < n; i++)
        if (!key_ok(t[i].key) || t[i].n < 1)
            return sy_store_fail(s, SY_EINVAL, "return_takes: take %zu: a key of 1 to %d "
                                               "bytes and slots >= 1", i, SY_SLOT_KEY_MAX);
    if (n == 0)
        return SY_OK;
    return s->ops->return_takes(s, owner, t, n);
}

int sy_store_return_slots(sy_store *s, const sy_slot_holder *h, size_t n)
{
    if (!s)
        return SY_EINVAL;
    if (n && !h)
        return sy_store_fail(s, SY_EINVAL, "return_slots: the holders are required");
    for (size_t i = 0; i < n; i++)
        if (h[i].token < 0)
            return sy_store_fail(s, SY_EINVAL, "return_slots: an attempt token >= 0");
    if (n == 0)
        return SY_OK;
    return s->ops->return_slots(s, h, n);
}

int sy_store_reap_slots(sy_store *s, int64_t now, size_t *n)
{
    if (!s)
        return SY_EINVAL;
    if (!n)
        return sy_store_fail(s, SY_EINVAL, "reap_slots: n is required");
    return s->ops->reap_slots(s, now, n);
}

int sy_store_list_slots(sy_store *s, int64_t now,
                        int (*cb)(void *arg, const sy_slot_record *r), void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!cb)
        return sy_store_fail(s, SY_EINVAL, "list_slots: a callback is required");
    return s->ops->list_slots(s, now, cb, arg);
}
