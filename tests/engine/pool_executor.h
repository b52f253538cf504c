/*
 * pool_executor.h -- the engine tests' "pool" executor (test_overflow,
 * test_priority): an in-memory plugin with a number of slots that holds
 * every attempt it takes until the test completes it, and records the
 * task ids it was given, in order.  Test thread only.
 */
#ifndef SY_TEST_POOL_EXECUTOR_H
#define SY_TEST_POOL_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include <switchyard/executor.h>

#include "config/routes.h"
#include "engine/engine.h"
#include "executor/instance.h"
#include "store/store.h"
#include "workflow/workflow.h"

#define MAX_HELD 16

/* One instance: its slots, and the attempts it holds. */
struct sy_instance {
    const sy_host_api *api;
    sy_host *host;
    int64_t slots;
    struct {
        sy_completion *c;
        char task_id[32];
    } held[MAX_HELD];
    size_t n_held;
    char got[256]; /* the task ids submitted to it, in order, space-separated */
};

/* The instances create() hands out, in order; next_pool is the next one
 * (reset both before making an engine). */
extern struct sy_instance pools[2];
extern int next_pool;

extern const sy_executor pool_executor;

/* An engine on the fake clock driving one run of `workflow` (libconfig
 * text) on a SQLite store in a temp dir, routed by `routes` to two pool
 * instances, "local" (pools[0]) and "burst" (pools[1]). */
typedef struct env {
    char *dir;
    sy_store *store;
    sy_workflow *wf;
    sy_routes routes;
    sy_instance_entry inst[2];
    uv_loop_t loop;
    sy_engine *engine;
    int64_t run_id;
} env;

void pool_env_open(env *v, const char *workflow, const char *routes, int64_t local_slots,
                   int64_t burst_slots);
/* The same with the engine's priority aging and tenants' weights. */
void pool_env_open_with(env *v, const char *workflow, const char *routes, int64_t local_slots,
                        int64_t burst_slots, int64_t aging_ms, const sy_tenant_config *tenants,
                        size_t n_tenants);
void close_env(env *v);

/* Stops the engine as a killed host would (its attempts left Running in
 * the store, its claim released) and adopts the run in a new one with
 * the same options: the pools forget what the old one gave them. */
void pool_env_restart(env *v);
/* The engines' clock: fixed unless a test moves it (pool_env_open sets
 * it back to its start). */
extern int64_t pool_env_now;

/* What the store says the live holders of slot key `key` hold, at
 * pool_env_now; *rows (when not NULL) every slot row there is, of any
 * key, live or not. */
int64_t pool_env_held(env *v, const char *key, int64_t *rows);

/* The pools the next engine made is given (switchyard.cfg `pools`):
 * none unless a test sets them. */
extern const sy_pool_config *pool_env_pools;
extern size_t pool_env_n_pools;
/* The same for named rate limits (`rate_limits`). */
extern const sy_rate_config *pool_env_rates;
extern size_t pool_env_n_rates;

/* Turns the loop until nothing is left to do now (bounded). */
void turn(env *v);

/* Completes the attempt pool p holds for `task_id`, frees its slot and
 * says so (wake), then turns the loop. */
void finish(env *v, int p, const char *task_id);

#endif
