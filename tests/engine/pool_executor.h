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

#include <switchyard/executor.h>

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

#endif
