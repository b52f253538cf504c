/* The store's interface for slot waiters (store/waiters.h): the
 * arguments checked once here, for both implementations. */
#include <string.h>

#include "store/driver.h"
#include "store/waiters.h"

static bool key_ok(const char *key)
{
    return key && key[0] && strlen(key) <= SY_SLOT_KEY_MAX;
}

int sy_store_wait_slot(sy_store *s, const sy_store_fence *fence, const sy_slot_waiter *w)
{
    if (!s)
        return SY_EINVAL;
    if (!fence || !fence->owner || !w || !key_ok(w->key) || !w->tenant || w->n < 1 ||
        w->task.run_id <= 0)
        return sy_store_fail(s, SY_EINVAL, "wait_slot: a fence with its owner, a key of 1 "
                                           "to %d bytes, a run, a tenant and slots >= 1",
                             SY_SLOT_KEY_MAX);
    return s->ops->waiters->wait(s, fence, w);
}

int sy_store_unwait_slot(sy_store *s, const sy_slot_holder *t, bool whole_run)
{
    if (!s)
        return SY_EINVAL;
    if (!t || t->run_id <= 0)
        return sy_store_fail(s, SY_EINVAL, "unwait_slot: a task of a run is required");
    return s->ops->waiters->unwait(s, t, whole_run);
}

int sy_store_key_waiters(sy_store *s, const char *const *keys, size_t n, int64_t now,
                         sy_slot_waiter_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!keys || !cb || n < 1)
        return sy_store_fail(s, SY_EINVAL, "key_waiters: keys and a callback");
    for (size_t i = 0; i < n; i++)
        if (!key_ok(keys[i]))
            return sy_store_fail(s, SY_EINVAL, "key_waiters: key %zu: 1 to %d bytes", i,
                                 SY_SLOT_KEY_MAX);
    return s->ops->waiters->key_waiters(s, keys, n, now, cb, arg);
}

int sy_store_key_shares(sy_store *s, const char *key, int64_t now,
                        int (*cb)(void *arg, const char *tenant, int64_t held), void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!key_ok(key) || !cb)
        return sy_store_fail(s, SY_EINVAL, "key_shares: a key of 1 to %d bytes and a "
                                           "callback", SY_SLOT_KEY_MAX);
    return s->ops->waiters->key_shares(s, key, now, cb, arg);
}

int sy_store_reap_waiters(sy_store *s, int64_t now, size_t *n)
{
    if (!s)
        return SY_EINVAL;
    if (!n)
        return sy_store_fail(s, SY_EINVAL, "reap_waiters: n is required");
    return s->ops->waiters->reap(s, now, n);
}

int sy_store_list_waiters(sy_store *s, int64_t now, sy_slot_waiter_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!cb)
        return sy_store_fail(s, SY_EINVAL, "list_waiters: a callback is required");
    return s->ops->waiters->list(s, now, cb, arg);
}
