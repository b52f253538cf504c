/* The store's interface for mapped tasks (store.h, "mapped tasks"): the
 * arguments checked once here, for both implementations; a store without
 * a batched element write makes them one by one. */
#include "store/driver.h"

static int bad(sy_store *s, const char *fn, const char *what)
{
    return sy_store_fail(s, SY_EINVAL, "%s: %s", fn, what);
}

int sy_store_put_map(sy_store *s, int64_t run_id, const sy_store_fence *fence, uint32_t idx,
                     int64_t size)
{
    if (!s)
        return SY_EINVAL;
    if (size < 0 || (fence && !fence->owner))
        return bad(s, "put_map", "a size >= 0 and a fence that names its owner");
    return s->ops->put_map(s, run_id, fence, idx, size);
}

/* What both the single and the batched write check before the store
 * sees a write. */
static int check(sy_store *s, const sy_store_fence *fence, int64_t token, int64_t elem,
                 const sy_task_record *t, int64_t run_id)
{
    if (!t || elem < 0 || (fence && !fence->owner))
        return bad(s, "update_element", "an element >= 0, its row and a fence's owner");
    if ((unsigned)t->state >= SY_TASK_STATE_COUNT)
        return sy_store_fail(s, SY_EINVAL, "update_element: run %lld task %u[%lld]: bad state %d",
                             (long long)run_id, t->idx, (long long)elem, (int)t->state);
    if (fence && t->fence < token)
        return sy_store_fail(s, SY_EINVAL,
                             "update_element: run %lld task %u[%lld]: attempt token %lld "
                             "would go back to %lld",
                             (long long)run_id, t->idx, (long long)elem, (long long)token,
                             (long long)t->fence);
    return SY_OK;
}

int sy_store_update_element(sy_store *s, int64_t run_id, const sy_store_fence *fence,
                            int64_t token, int64_t elem, const sy_task_record *t)
{
    if (!s)
        return SY_EINVAL;
    int status = check(s, fence, token, elem, t, run_id);
    return status != SY_OK ? status : s->ops->update_element(s, run_id, fence, token, elem, t);
}

int sy_store_update_elements(sy_store *s, const sy_store_element_write *w, size_t n,
                             sy_store_refused_cb refused, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (n && (!w || !refused))
        return bad(s, "update_elements", "the writes and the callback are required");
    for (size_t i = 0; i < n; i++) {
        int status = check(s, w[i].fence, w[i].token, w[i].elem, w[i].t, w[i].run_id);
        if (status != SY_OK)
            return status;
    }
    if (s->ops->update_elements)
        return s->ops->update_elements(s, w, n, refused, arg);
    for (size_t i = 0; i < n; i++) {
        int status =
            s->ops->update_element(s, w[i].run_id, w[i].fence, w[i].token, w[i].elem, w[i].t);
        if (status == SY_STORE_EFENCED || status == SY_ENOENT)
            refused(arg, i, status);
        else if (status != SY_OK)
            return status;
    }
    return SY_OK;
}

int sy_store_list_maps(sy_store *s, int64_t run_id, sy_store_map_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!cb)
        return bad(s, "list_maps", "the callback is required");
    return s->ops->list_maps(s, run_id, cb, arg);
}

int sy_store_list_elements(sy_store *s, int64_t run_id, uint32_t idx, bool open_only,
                           sy_store_element_cb cb, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (!cb)
        return bad(s, "list_elements", "the callback is required");
    return s->ops->list_elements(s, run_id, idx, open_only, cb, arg);
}
