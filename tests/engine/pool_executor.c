/* The engine tests' "pool" executor (pool_executor.h). */
#include "pool_executor.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libconfig.h>

#include "../helpers.h"
#include "service/runs.h"
#include "store/slots.h"

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

/* ---- the engine around two pools --------------------------------------- */

int64_t pool_env_now = 1700000000000;

static int64_t clock_ms(void) { return pool_env_now; }

const sy_pool_config *pool_env_pools;
size_t pool_env_n_pools;
const sy_rate_config *pool_env_rates;
size_t pool_env_n_rates;

/* The options of the last engine made, for pool_env_restart. */
static sy_engine_opts last_opts;

void turn(env *v)
{
    for (int i = 0; i < 64; i++)
        uv_run(&v->loop, UV_RUN_NOWAIT);
}

void pool_env_open_with(env *v, const char *workflow, const char *routes, int64_t local_slots,
                        int64_t burst_slots, int64_t aging_ms, const sy_tenant_config *tenants,
                        size_t n_tenants)
{
    memset(v, 0, sizeof *v);
    memset(pools, 0, sizeof pools);
    next_pool = 0;
    pool_env_now = 1700000000000;
    v->dir = th_mkdtemp();
    char *path = th_write(v->dir, "wf.cfg", workflow);
    sy_diags d;
    sy_diags_init(&d);
    int errors = sy_workflow_load_file(path, NULL, NULL, &v->wf, &d);
    free(path);
    config_t cfg;
    config_init(&cfg);
    assert_int_equal(config_read_string(&cfg, routes), CONFIG_TRUE);
    sy_routes_init(&v->routes);
    errors += sy_routes_add_group(&v->routes, config_lookup(&cfg, "routes"), &d);
    config_destroy(&cfg);
    if (errors)
        th_diag_dump(&d);
    sy_diags_free(&d);
    assert_int_equal(errors, 0);

    char url[4200], err[512];
    snprintf(url, sizeof url, "sqlite:%s/store.db", v->dir);
    assert_int_equal(sy_store_open(url, v->dir, &v->store, err, sizeof err), SY_OK);
    assert_int_equal(sy_runs_record(v->store, v->wf, "{}", &v->run_id, err, sizeof err), SY_OK);
    sy_instance_init(&v->inst[0], "local", &pool_executor, NULL);
    sy_instance_init(&v->inst[1], "burst", &pool_executor, NULL);
    for (int i = 0; i < 2; i++)
        assert_int_equal(sy_instance_create(&v->inst[i], err, sizeof err), SY_OK);
    pools[0].slots = local_slots;
    pools[1].slots = burst_slots;
    assert_int_equal(uv_loop_init(&v->loop), 0);
    sy_engine_opts o = {
        .store = v->store,
        .routes = &v->routes,
        .instances = v->inst,
        .n_instances = 2,
        .owner = "test:1",
        .clock = clock_ms,
        .lease_ms = (int64_t)24 * 3600 * 1000,
        .max_recoveries = 5,
        .priority_aging_ms = aging_ms,
        .tenants = tenants,
        .n_tenants = n_tenants,
        .pools = pool_env_pools,
        .n_pools = pool_env_n_pools,
        .rates = pool_env_rates,
        .n_rates = pool_env_n_rates,
    };
    last_opts = o;
    assert_int_equal(sy_engine_new(&v->engine, &v->loop, &o, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(v->engine, v->run_id, true, err, sizeof err), SY_OK);
    turn(v);
}

void pool_env_restart(env *v)
{
    char err[512];
    sy_engine_free(v->engine);
    turn(v);
    /* What the old engine handed out is gone with it. */
    for (int p = 0; p < 2; p++) {
        pools[p].n_held = 0;
        pools[p].got[0] = '\0';
    }
    assert_int_equal(sy_store_release(v->store, last_opts.owner), SY_OK);
    assert_int_equal(sy_engine_new(&v->engine, &v->loop, &last_opts, err, sizeof err), SY_OK);
    assert_int_equal(sy_engine_adopt(v->engine, v->run_id, true, err, sizeof err), SY_OK);
    turn(v);
}

void pool_env_open(env *v, const char *workflow, const char *routes, int64_t local_slots,
                   int64_t burst_slots)
{
    pool_env_open_with(v, workflow, routes, local_slots, burst_slots, 0, NULL, 0);
}

void close_env(env *v)
{
    sy_engine_free(v->engine);
    assert_int_equal(uv_loop_close(&v->loop), 0);
    for (int i = 0; i < 2; i++)
        sy_instance_destroy(&v->inst[i]);
    sy_routes_free(&v->routes);
    sy_store_close(v->store);
    sy_workflow_free(v->wf);
    th_rmtree(v->dir);
}

/* Completes the attempt pool p holds for `task_id`, frees its slot and
 * says so (wake), then turns the loop. */
void finish(env *v, int p, const char *task_id)
{
    struct sy_instance *in = &pools[p];
    for (size_t i = 0; i < in->n_held; i++) {
        if (strcmp(in->held[i].task_id, task_id) != 0)
            continue;
        sy_completion *c = in->held[i].c;
        in->held[i] = in->held[--in->n_held];
        sy_result res = {.size = sizeof res, .outcome = SY_OUTCOME_SUCCEEDED};
        in->api->complete(c, &res);
        in->api->wake(in->host);
        turn(v);
        return;
    }
    fail_msg("pool %d holds no attempt of '%s'", p, task_id);
}

typedef struct { const char *key; int64_t live, rows; } held_arg;

static int count_key(void *arg, const sy_slot_record *r)
{
    held_arg *h = arg;
    h->rows++;
    if (strcmp(r->key, h->key) == 0 && r->live)
        h->live += r->n;
    return 0;
}

int64_t pool_env_held(env *v, const char *key, int64_t *rows)
{
    held_arg h = {key, 0, 0};
    assert_int_equal(sy_store_list_slots(v->store, pool_env_now, count_key, &h), SY_OK);
    if (rows)
        *rows = h.rows;
    return h.live;
}
