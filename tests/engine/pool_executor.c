/* The engine tests' "pool" executor (pool_executor.h). */
#include "pool_executor.h"

#include <stdio.h>
#include <string.h>

struct sy_instance pools[2];
int next_pool;

static int pool_create(const sy_host_api *api, sy_host *host, const sy_params *config,
                       sy_instance **out, char *err, size_t err_len)
{
    (void)config, (void)err, (void)err_len;
    struct sy_instance *p = &pools[next_pool++];
    p->api = api;
    p->host = host;
    *out = p;
    return SY_OK;
}

static void pool_destroy(sy_instance *p) { (void)p; }

static int64_t pool_capacity(sy_instance *p)
{
    return p->slots > (int64_t)p->n_held ? p->slots - (int64_t)p->n_held : 0;
}

static int pool_submit(sy_instance *p, const sy_task *task, sy_completion *c, char *err,
                       size_t err_len)
{
    (void)err, (void)err_len;
    if ((int64_t)p->n_held >= p->slots || p->n_held == MAX_HELD)
        return SY_EBUSY;
    p->held[p->n_held].c = c;
    snprintf(p->held[p->n_held].task_id, sizeof p->held[p->n_held].task_id, "%s", task->task_id);
    p->n_held++;
    size_t n = strlen(p->got);
    snprintf(p->got + n, sizeof p->got - n, "%s%s", n ? " " : "", task->task_id);
    return SY_OK;
}

static int pool_cancel(sy_instance *p, sy_completion *c)
{
    (void)p, (void)c;
    return SY_ENOENT;
}

const sy_executor pool_executor = {
    .abi_major = SY_EXECUTOR_ABI_MAJOR,
    .abi_minor = SY_EXECUTOR_ABI_MINOR,
    .size = sizeof(sy_executor),
    .name = "pool",
    .version = "1",
    .create = pool_create,
    .destroy = pool_destroy,
    .capacity = pool_capacity,
    .submit = pool_submit,
    .cancel = pool_cancel,
};
