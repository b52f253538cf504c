/* A turn's task-row writes in one call (store.h, sy_store_update_tasks):
 * the arguments checked here, for both implementations; a store without
 * a batched write makes them one by one. */
#include "store/driver.h"

/* What sy_store_update_task checks before its store sees a write. */
static int check(sy_store *s, const sy_store_task_write *w)
{
    const sy_task_record *t = w->t;
    if (!t)
        return sy_store_fail(s, SY_EINVAL, "update_tasks: the task is required");
    if (w->fence && !w->fence->owner)
        return sy_store_fail(s, SY_EINVAL, "update_tasks: a fence names its owner");
    if ((unsigned)t->state >= SY_TASK_STATE_COUNT)
        return sy_store_fail(s, SY_EINVAL, "update_tasks: run %lld task %u: bad state %d",
                             (long long)w->run_id, t->idx, (int)t->state);
    if (w->fence && t->fence < w->token)
        return sy_store_fail(s, SY_EINVAL,
                             "update_tasks: run %lld task %u: attempt token "
                             "%lld would go back to %lld", (long long)w->run_id,
                             t->idx, (long long)w->token, (long long)t->fence);
    return SY_OK;
}

int sy_store_update_tasks(sy_store *s, const sy_store_task_write *w, size_t n,
                          sy_store_refused_cb refused, void *arg)
{
    if (!s)
        return SY_EINVAL;
    if (n && (!w || !refused))
        return sy_store_fail(s, SY_EINVAL, "update_tasks: the writes and the callback are required");
    for (size_t i = 0; i < n; i++) {
        int status = check(s, &w[i]);
        if (status != SY_OK)
            return status;
    }
    if (s->ops->update_tasks)
        return s->ops->update_tasks(s, w, n, refused, arg);
    for (size_t i = 0; i < n; i++) {
        int status = s->ops->update_task(s, w[i].run_id, w[i].fence, w[i].token, w[i].t);
        if (status == SY_STORE_EFENCED || status == SY_ENOENT)
            refused(arg, i, status);
        else if (status != SY_OK)
            return status;
    }
    return SY_OK;
}
